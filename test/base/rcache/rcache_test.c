/*
 * base/rcache.h with a stand-in device that counts registrations and
 * remembers which ranges it holds:
 *   - a repeated get of the same buffer, or of a part of it, registers once
 *     (hits and misses through the MPI_T counters);
 *   - munmap, then new memory mapped at the same address: the next get
 *     registers again (the old registration was dropped), also through
 *     madvise(MADV_DONTNEED), mmap(MAP_FIXED) over it, mremap and shmdt;
 *   - a registration held while its memory is unmapped is dropped at the
 *     holder's put, not before;
 *   - more releases than the hooks' ring holds drop everything;
 *   - rcache_max_unused evicts the least recently used; rcache_enable=0
 *     registers and deregisters every time; a refused registration is
 *     retried after the unused ones are dropped;
 *   - while a cache exists, a large malloc comes from the heap, not from
 *     mmap (free() must not unmap behind the hooks).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base/rail.h"
#include "base/param.h"
#include "base/pvar.h"
#include "base/rcache.h"
#include "test/check.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

typedef struct dev_reg {
    rail_rcache_reg_t r;
    int id;
} dev_reg_t;

typedef struct dev {
    int regs, deregs, live, refuse_next;
} dev_t_;

static int dev_reg(void *ctx, rail_rcache_reg_t *r)
{
    dev_t_ *d = ctx;
    if (d->refuse_next) {
        d->refuse_next--;
        return MPI_ERR_NO_MEM;
    }
    ((dev_reg_t *)r)->id = ++d->regs;
    d->live++;
    return MPI_SUCCESS;
}

static int dev_dereg(void *ctx, rail_rcache_reg_t *r)
{
    dev_t_ *d = ctx;
    d->deregs++;
    d->live--;
    return MPI_SUCCESS;
}

static const rail_rcache_ops_t dev_ops = {sizeof(dev_reg_t), dev_reg, dev_dereg};

static uint64_t pvar(const char *what)
{
    char name[96];
    snprintf(name, sizeof name, "test_rcache_%s", what);
    const rail_pvar_t *v = rail_pvar_find(name);
    CHECK(v != NULL, "no pvar %s", name);
    return rail_pvar_sample(v);
}

#define MB ((size_t)1 << 20)

static void *map_at(void *want, size_t len, char fill)
{
    void *p = mmap(want, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (want ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    CHECK(p != MAP_FAILED && (!want || p == want), "mmap at %p", want);
    memset(p, fill, len);
    return p;
}

/* get + put, returning the registration's id. */
static int use(rail_rcache_t *c, const void *p, size_t len)
{
    rail_rcache_reg_t *r;
    CHECK_OK(rail_rcache_get(c, p, len, &r));
    CHECK(r->base <= (uintptr_t)p && r->base + r->len >= (uintptr_t)p + len);
    int id = ((dev_reg_t *)r)->id;
    rail_rcache_put(c, r);
    return id;
}

static bool case_reuse(rail_rcache_t *c, dev_t_ *d, const char *unused)
{
    char *a = map_at(NULL, 4 * MB, 1);
    uint64_t h0 = pvar("hits"), m0 = pvar("misses");
    int id = use(c, a, 4 * MB);
    for (int i = 0; i < 5; i++)
        CHECK(use(c, a, 4 * MB) == id);
    bool ok = EXPECT(use(c, a + 12345, 1000) == id, "a part of a registered buffer");
    ok &= EXPECT(pvar("hits") - h0 == 6 && pvar("misses") - m0 == 1);
    ok &= EXPECT(d->regs == 1, "%d registrations", d->regs);
    munmap(a, 4 * MB);
    return ok;
}

/* Release a by `how`, map new memory there, and expect a new registration. */
static bool released_by(rail_rcache_t *c, dev_t_ *d, const char *how)
{
    char *a = map_at(NULL, MB, 2);
    int id = use(c, a, MB);
    uint64_t inv0 = pvar("invalidations");
    if (strcmp(how, "munmap") == 0) {
        munmap(a, MB);
        map_at(a, MB, 3);
    } else if (strcmp(how, "madvise") == 0) {
        madvise(a, MB, MADV_DONTNEED);
    } else if (strcmp(how, "mmap_fixed") == 0) {
        void *p = mmap(a, MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
        CHECK(p == a);
    } else if (strcmp(how, "mremap") == 0) {
        char *b = mremap(a, MB, 2 * MB, MREMAP_MAYMOVE);
        CHECK(b != MAP_FAILED);
        a = b;
    }
    int id2 = use(c, a, MB);
    bool ok = EXPECT(id2 != id, "%s: the old registration was used again", how) &&
              EXPECT(pvar("invalidations") == inv0 + 1, "%s", how) &&
              EXPECT(d->live == 1, "%s: the old registration was not deregistered", how);
    munmap(a, strcmp(how, "mremap") == 0 ? 2 * MB : MB);
    return ok;
}

static bool case_shmdt(rail_rcache_t *c, dev_t_ *d, const char *unused)
{
    int id = shmget(IPC_PRIVATE, MB, IPC_CREAT | 0600);
    CHECK(id >= 0);
    char *a = shmat(id, NULL, 0);
    shmctl(id, IPC_RMID, NULL);
    CHECK(a != (void *)-1);
    int r1 = use(c, a, MB);
    shmdt(a);
    char *b = map_at(NULL, MB, 1);
    use(c, b, MB);
    bool ok = EXPECT(d->live == 1, "the shm registration is still there") && r1 > 0;
    munmap(b, MB);
    return ok;
}

static bool case_held(rail_rcache_t *c, dev_t_ *d, const char *unused)
{
    char *a = map_at(NULL, MB, 1), *b = map_at(NULL, MB, 1);
    rail_rcache_reg_t *r;
    CHECK_OK(rail_rcache_get(c, a, MB, &r));
    int live = d->live;
    munmap(a, MB);
    use(c, b, MB); /* drains the release while a's registration is held */
    bool ok = EXPECT(d->live == live + 1, "a held registration was deregistered");
    rail_rcache_put(c, r);
    ok &= EXPECT(d->live == live, "the put of an invalidated registration kept it");
    munmap(b, MB);
    return ok;
}

static bool case_overflow(rail_rcache_t *c, dev_t_ *d, const char *unused)
{
    char *a = map_at(NULL, MB, 1);
    int id = use(c, a, MB);
    for (int i = 0; i < 1000; i++)
        munmap(map_at(NULL, 4096, 0), 4096);
    bool ok = EXPECT(use(c, a, MB) != id, "1000 releases elsewhere kept the registration");
    munmap(a, MB);
    return ok;
}

static bool case_evict(rail_rcache_t *c, dev_t_ *d, const char *unused)
{
    CHECK_OK(rail_param_set("rcache_max_unused", "2", RAIL_PARAM_SRC_API));
    char *a[3];
    int id[3];
    uint64_t e0 = pvar("evictions");
    for (int i = 0; i < 3; i++)
        id[i] = use(c, a[i] = map_at(NULL, MB, 1), MB);
    bool ok = EXPECT(pvar("evictions") == e0 + 1) && EXPECT(use(c, a[0], MB) != id[0]) &&
              EXPECT(use(c, a[2], MB) == id[2]);
    d->refuse_next = 1;
    char *x = map_at(NULL, MB, 1);
    ok &= EXPECT(use(c, x, MB) > 0, "a refused registration is retried after trimming");
    d->refuse_next = 2;
    rail_rcache_reg_t *r;
    ok &= EXPECT(rail_rcache_get(c, map_at(NULL, MB, 1), MB, &r) == MPI_ERR_NO_MEM);
    CHECK_OK(rail_param_set("rcache_max_unused", "64", RAIL_PARAM_SRC_API));
    return ok;
}

static bool case_disabled(void)
{
    dev_t_ d = {0};
    CHECK_OK(rail_param_set("rcache_enable", "0", RAIL_PARAM_SRC_API));
    rail_rcache_t *c = rail_rcache_create("test", &dev_ops, &d);
    char *a = map_at(NULL, MB, 1);
    int id = use(c, a, MB);
    bool ok = EXPECT(use(c, a, MB) != id) && EXPECT(d.regs == 2 && d.live == 0);
    rail_rcache_destroy(c);
    CHECK_OK(rail_param_set("rcache_enable", "1", RAIL_PARAM_SRC_API));
    munmap(a, MB);
    return ok;
}

static bool case_malloc_hold(void)
{
    void *p = malloc(64 * MB);
    struct mallinfo2 mi = mallinfo2();
    bool ok = EXPECT(mi.hblks == 0, "a 64 MiB malloc was mmapped (%zu blocks)", mi.hblks);
    free(p);
    return ok;
}

typedef bool (*case_fn)(rail_rcache_t *c, dev_t_ *d, const char *arg);

/* A case on a cache of its own; afterwards everything is deregistered. */
static void run_case(const char *name, case_fn fn, const char *arg)
{
    dev_t_ d = {0};
    rail_rcache_t *c = rail_rcache_create("test", &dev_ops, &d);
    CHECK(c != NULL);
    bool ok = fn(c, &d, arg);
    rail_rcache_destroy(c);
    ok &= EXPECT(d.live == 0, "%s: %d registrations left after destroy", name, d.live);
    check_case(name, ok);
}

int main(void)
{
    CHECK_OK(rail_rcache_register_params());
    run_case("repeated use registers once", case_reuse, NULL);
    const char *hows[] = {"munmap", "madvise", "mmap_fixed", "mremap"};
    for (size_t i = 0; i < sizeof hows / sizeof *hows; i++) {
        char name[64];
        snprintf(name, sizeof name, "released by %s", hows[i]);
        run_case(name, released_by, hows[i]);
    }
    run_case("released by shmdt", case_shmdt, NULL);
    run_case("held registration dropped at put", case_held, NULL);
    run_case("ring overflow drops all", case_overflow, NULL);
    run_case("eviction and refusal", case_evict, NULL);
    check_case("malloc holds memory", case_malloc_hold());
    check_case("rcache_enable=0", case_disabled());
    return check_report("rcache_test");
}
