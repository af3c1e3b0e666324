/*
 * Copy-callback mode: the user buffer is a PROT_NONE view of a memfd (any
 * host access faults, like fake device memory); the callback copies through
 * a second, read-write view.  Checks pack, unpack, seek, type-to-type copy
 * and external32 against the reference, the number of callback calls, and
 * recovery from a failing callback.  Usage: dt_copycb [seed] [iterations]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dt_testlib.h"
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define T_REGION (1 << 17)

struct t_dev {
    unsigned char *none, *rw;   /* two views of the same memory */
    size_t calls, fail_at;      /* fail_at: fail that call (1-based), 0 never */
};

static void *t_translate(struct t_dev *d, const void *p)
{
    const unsigned char *c = p;
    if (c >= d->none && c < d->none + T_REGION)
        return d->rw + (c - d->none);
    return (void *)p;
}

static int t_copy(void *dst, const void *src, size_t len, void *ctx)
{
    struct t_dev *d = ctx;
    if (++d->calls == d->fail_at)
        return MPI_ERR_ARG;
    memcpy(t_translate(d, dst), t_translate(d, src), len);
    return MPI_SUCCESS;
}

static int t_dev_open(struct t_dev *d)
{
    int fd = memfd_create("dt_copycb", 0);
    if (fd < 0 || ftruncate(fd, 2 * T_REGION) != 0)
        return -1;
    d->none = mmap(NULL, T_REGION, PROT_NONE, MAP_SHARED, fd, 0);
    d->rw = mmap(NULL, T_REGION, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    d->calls = d->fail_at = 0;
    return d->none == MAP_FAILED || d->rw == MAP_FAILED ? -1 : 0;
}

/* A random type placed in the device region at offset base. */
struct t_case {
    struct rail_dt *dt;
    int64_t count;
    size_t size;
    int64_t lo, hi;            /* data bounds relative to buf */
    unsigned char *dbuf, *hbuf; /* buf in the PROT_NONE view, the same in the rw view */
};

static bool t_case_make(struct t_case *c, struct t_dev *d, size_t base)
{
    c->dt = t_rand_type(4, 2048);
    c->count = t_range(0, 3);
    rail_dt_commit(c->dt);
    c->size = (size_t)(c->count * c->dt->size);
    c->lo = c->hi = 0;
    t_ref_bounds(c->dt, c->count, &c->lo, &c->hi);
    if (c->hi - c->lo > T_REGION / 2 - 64) {
        rail_dt_release(c->dt);
        return false;
    }
    c->dbuf = d->none + base - c->lo;
    c->hbuf = d->rw + base - c->lo;
    return true;
}

/* Pack in random pieces (and once after a seek) through the callback. */
static int t_pack(struct t_case *c, struct t_dev *d)
{
    unsigned char *ref = malloc(c->size + 1), *out = malloc(c->size + 1);
    struct rail_dt_cursor cur;
    size_t calls = 0, pieces = 0;
    t_ref_pack(c->dt, c->count, c->hbuf, ref);
    rail_dt_cursor_init(&cur, c->dt, c->count, c->dbuf);
    rail_dt_cursor_set_copy(&cur, t_copy, d);
    for (size_t pos = 0; pos < c->size; pieces++) {
        size_t want = (size_t)t_range(1, (int64_t)c->size), got;
        d->calls = 0;
        got = rail_dt_pack(&cur, out + pos, want);
        calls += d->calls;
        T_REQUIRE(got == RAIL_MIN(want, c->size - pos), "piece");
        pos += got;
    }
    T_REQUIRE(!memcmp(out, ref, c->size), "callback pack differs");
    T_REQUIRE(calls <= (size_t)c->count * (size_t)c->dt->nelem + pieces, "too many calls: %zu",
              calls);
    if (rail_dt_is_contig(c->dt, c->count))
        T_REQUIRE(calls == pieces, "contiguous: one call per piece");
    if (c->size) {
        size_t off = (size_t)t_range(0, (int64_t)c->size - 1);
        rail_dt_cursor_seek(&cur, off);
        T_REQUIRE(rail_dt_pack(&cur, out, c->size) == c->size - off &&
                      !memcmp(out, ref + off, c->size - off),
                  "seek %zu", off);
    }
    free(ref);
    free(out);
    return 0;
}

/* Unpack through the callback; a failing call is recovered by resuming. */
static int t_unpack(struct t_case *c, struct t_dev *d)
{
    unsigned char *in = malloc(c->size + 1), *bg = malloc(T_REGION), *want = malloc(T_REGION);
    struct rail_dt_cursor cur;
    t_fill_random(in, c->size);
    t_fill_random(bg, T_REGION);
    memcpy(d->rw, bg, T_REGION);
    memcpy(want, bg, T_REGION);
    t_ref_unpack(c->dt, c->count, want + (c->hbuf - d->rw), in);
    rail_dt_cursor_init(&cur, c->dt, c->count, c->dbuf);
    rail_dt_cursor_set_copy(&cur, t_copy, d);
    d->calls = 0;
    d->fail_at = (size_t)t_range(1, 3);
    size_t got = rail_dt_unpack(&cur, in, c->size);
    if (got < c->size) {
        T_REQUIRE(rail_dt_cursor_status(&cur) == MPI_ERR_ARG && cur.pos == got, "failure state");
        d->fail_at = 0;
        got += rail_dt_unpack(&cur, in + got, c->size - got);
    }
    d->fail_at = 0;
    T_REQUIRE(got == c->size && !memcmp(d->rw, want, T_REGION), "callback unpack differs");
    free(in);
    free(bg);
    free(want);
    return 0;
}

/* Type-to-type copy between two device buffers, and external32. */
static int t_copy_x32(struct t_case *c, struct t_case *e, struct t_dev *d)
{
    unsigned char *packed = malloc(c->size + 1), *want = malloc(T_REGION);
    t_ref_pack(c->dt, c->count, c->hbuf, packed);
    memcpy(want, d->rw, T_REGION);
    t_ref_unpack_n(e->dt, e->count, want + (e->hbuf - d->rw), packed, RAIL_MIN(c->size, e->size));
    int rc = rail_dt_copy_cb(e->dt, e->count, e->dbuf, c->dt, c->count, c->dbuf, t_copy, d);
    T_REQUIRE(rc == (c->size > e->size ? MPI_ERR_TRUNCATE : MPI_SUCCESS), "copy rc %d", rc);
    T_REQUIRE(!memcmp(d->rw, want, T_REGION), "callback copy differs");
    size_t n, pos = 0, pos2 = 0;
    if (rail_dt_external32_size(c->dt, c->count, &n) == MPI_SUCCESS) {
        unsigned char *x = malloc(n + 1);
        memcpy(want, d->rw, T_REGION);
        rc = rail_dt_pack_external32_cb(c->dt, c->count, c->dbuf, x, n, &pos, t_copy, d);
        T_REQUIRE(rc == MPI_SUCCESS && pos == n, "external32 pack rc %d", rc);
        rc = rail_dt_unpack_external32_cb(c->dt, c->count, c->dbuf, x, n, &pos2, t_copy, d);
        T_REQUIRE(rc == MPI_SUCCESS && pos2 == n, "external32 unpack rc %d", rc);
        T_REQUIRE(!memcmp(d->rw, want, T_REGION), "external32 round trip");
        free(x);
    }
    free(packed);
    free(want);
    return 0;
}

int main(int argc, char **argv)
{
    struct t_dev d;
    t_seed_from_args(argc, argv);
    if (t_dev_open(&d) != 0)
        check_skip("memfd_create/mmap unavailable");
    t_leaf_ext32_safe = true;   /* long double padding does not survive external32 */
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    for (int i = 0; i < iters && check_failures < 5; i++) {
        struct t_case c, e;
        if (!t_case_make(&c, &d, 64))
            continue;
        if (!t_case_make(&e, &d, T_REGION / 2)) {
            rail_dt_release(c.dt);
            continue;
        }
        t_fill_random(d.rw, T_REGION);
        if (t_pack(&c, &d) || t_unpack(&c, &d) || t_copy_x32(&c, &e, &d)) {
            fprintf(stderr, "iteration %d (count %lld):\n", i, (long long)c.count);
            rail_dt_dump(c.dt, stderr);
        }
        rail_dt_release(c.dt);
        rail_dt_release(e.dt);
    }
    return check_report("dt_copycb");
}
