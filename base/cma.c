/* Single copy by cross-memory attach (see cma.h). */
#include "base/cma.h"
#include "base/adapt.h"
#include "base/atomic.h"
#include "base/log.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(RAIL_CMA_IOV_BATCH <= IOV_MAX, "a batch the kernel takes");

/* ------------------------------------------------------------- transfers */

/* A position in an iovec list. */
typedef struct cma_cursor {
    const struct iovec *iov;
    int n, i;
    size_t off;                    /* bytes of iov[i] already moved */
} cma_cursor_t;

/* The next (at most RAIL_CMA_IOV_BATCH) non-empty pieces into out[], at
 * most `budget` bytes in all; returns the number of pieces. */
static unsigned long cma_take(const cma_cursor_t *c, struct iovec *out, size_t budget)
{
    unsigned long k = 0;
    size_t off = c->off;
    for (int i = c->i; i < c->n && budget && k < RAIL_CMA_IOV_BATCH; i++, off = 0) {
        size_t len = RAIL_MIN(c->iov[i].iov_len - off, budget);
        if (!len)
            continue;
        out[k].iov_base = (char *)c->iov[i].iov_base + off;
        out[k++].iov_len = len;
        budget -= len;
    }
    return k;
}

static void cma_advance(cma_cursor_t *c, size_t bytes)
{
    while (c->i < c->n && bytes >= c->iov[c->i].iov_len - c->off) {
        bytes -= c->iov[c->i].iov_len - c->off;
        c->i++;
        c->off = 0;
    }
    c->off += bytes;
}

static __thread char cma_msg[256];

const char *rail_cma_error(void)
{
    return cma_msg;
}

/* What a user can do about it. */
static const char *cma_hint(int err)
{
    switch (err) {
    case EPERM:
        return " (not allowed: another user's process, one that is not dumpable, or ptrace "
               "restrictions, /proc/sys/kernel/yama/ptrace_scope)";
    case ESRCH:
        return " (it has exited)";
    case ENOSYS:
        return " (the kernel has no cross-memory attach)";
    case EFAULT:
        return " (an address outside either process's memory)";
    default:
        return "";
    }
}

static int cma_fail(int err, pid_t pid, const struct iovec *local, int n_local, unsigned flags)
{
    bool write = flags & RAIL_CMA_WRITE;
    size_t bytes = 0;
    for (int i = 0; i < n_local; i++)
        bytes += local[i].iov_len;
    snprintf(cma_msg, sizeof(cma_msg), "%s of %zu bytes %s process %d failed: %s%s",
             write ? "process_vm_writev" : "process_vm_readv", bytes, write ? "to" : "from",
             (int)pid, strerror(err), cma_hint(err));
    if (!(flags & RAIL_CMA_QUIET))
        rail_warn_once("rail_cma", "single copy: %s", cma_msg);
    errno = err;
    return err == EFAULT || err == EINVAL ? MPI_ERR_ARG : MPI_ERR_OTHER;
}

int rail_cma_xfer(pid_t pid, const struct iovec *local, int n_local, const struct iovec *remote,
                  int n_remote, unsigned flags)
{
    cma_cursor_t l = {local, n_local, 0, 0}, r = {remote, n_remote, 0, 0};
    struct iovec lv[RAIL_CMA_IOV_BATCH], rv[RAIL_CMA_IOV_BATCH];

    for (;;) {
        unsigned long nl = cma_take(&l, lv, SSIZE_MAX);
        unsigned long nr = cma_take(&r, rv, SSIZE_MAX);
        if (nl == 0 || nr == 0)
            return MPI_SUCCESS;
        ssize_t got = flags & RAIL_CMA_WRITE ? process_vm_writev(pid, lv, nl, rv, nr, 0)
                                             : process_vm_readv(pid, lv, nl, rv, nr, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return cma_fail(got < 0 ? errno : EFAULT, pid, local, n_local, flags);
        cma_advance(&l, (size_t)got);
        cma_advance(&r, (size_t)got);
    }
}

/* ---------------------------------------------------------------- probes */

int rail_cma_probe_self(void)
{
    static volatile uint64_t word = 0x5241494c434d4131ULL;   /* "RAILCMA1" */
    uint64_t got = 0;
    int rc = rail_cma_read(getpid(), &got, (uint64_t)(uintptr_t)&word, sizeof(got),
                           RAIL_CMA_QUIET);
    if (rc != MPI_SUCCESS)
        return errno;
    return got == word ? 0 : EIO;
}

int rail_cma_probe_peer(pid_t pid, uint64_t addr, uint64_t expect)
{
    uint64_t got = 0;
    if (rail_cma_read(pid, &got, addr, sizeof(got), RAIL_CMA_QUIET) != MPI_SUCCESS)
        return errno;
    return got == expect ? 0 : EIO;
}

/* The figure, as a double's bits (0: not measured yet): threads may ask at once. */
static uint64_t cma_ratio_bits;

static double cma_measure_ratio(void)
{
    const size_t len = 64 << 10;
    char *a = malloc(2 * len);
    uint64_t copy = UINT64_MAX, cma = UINT64_MAX;
    bool ok = a != NULL;
    if (ok)
        memset(a, 1, 2 * len);
    for (int i = 0; i < 8 && ok; i++) {
        uint64_t t0 = rail_now_ns();
        memcpy(a + len, a, len);
        __asm__ volatile("" ::: "memory");
        uint64_t t1 = rail_now_ns();
        ok = rail_cma_read(getpid(), a + len, (uint64_t)(uintptr_t)a, len, RAIL_CMA_QUIET) ==
             MPI_SUCCESS;
        uint64_t t2 = rail_now_ns();
        copy = RAIL_MIN(copy, t1 - t0);
        cma = RAIL_MIN(cma, t2 - t1);
    }
    free(a);
    return ok ? (double)cma / (double)RAIL_MAX(copy, (uint64_t)1) : 1e9;
}

double rail_cma_kernel_ratio(void)
{
    uint64_t bits = rail_atomic_load_relaxed(&cma_ratio_bits);
    double ratio;
    if (bits == 0) {
        ratio = cma_measure_ratio();
        memcpy(&bits, &ratio, sizeof(bits));
        rail_atomic_store_relaxed(&cma_ratio_bits, bits);
    }
    memcpy(&ratio, &bits, sizeof(ratio));
    return ratio;
}

/* ---------------------------------------------------- shared single copy */

#define SHARE_MINE(w) ((uint32_t)((w) & 0xffff))
#define SHARE_HELPERS(w) ((uint32_t)(((w) >> 16) & 0xffff))
#define SHARE_GEN(w) ((uint32_t)((w) >> 32))

size_t rail_cma_share_chunk(size_t len)
{
    return RAIL_ALIGN_UP(RAIL_MAX(len / 2, RAIL_CMA_SHARE_CHUNK_MIN), (size_t)4096);
}

static uint32_t share_chunks(uint64_t len, uint64_t chunk)
{
    return (uint32_t)((len + chunk - 1) / chunk);
}

void rail_cma_share_publish(rail_cma_share_t *t, const rail_cma_share_ctl_t *ctl, uint32_t gen,
                            pid_t pid, void *dst, uint64_t src, size_t len, unsigned flags)
{
    *t = (rail_cma_share_t){.ctl = *ctl, .pid = pid, .gen = gen, .flags = flags, .dst = dst,
                            .src = src, .len = len, .chunk = rail_cma_share_chunk(len)};
    t->nch = share_chunks(len, t->chunk);
    rail_cma_share_desc_t *d = ctl->desc;
    rail_atomic_store_relaxed(ctl->done, 0);
    rail_atomic_store_relaxed(&d->dst, (uint64_t)(uintptr_t)dst);
    rail_atomic_store_relaxed(&d->src, src);
    rail_atomic_store_relaxed(&d->len, (uint64_t)len);
    rail_atomic_store_relaxed(&d->chunk, (uint64_t)t->chunk);
    rail_atomic_store_release(ctl->claim, (uint64_t)gen << 32);
}

void rail_cma_share_cancel(rail_cma_share_t *t)
{
    rail_atomic_store_relaxed(t->ctl.claim, 0);
}

static int share_copy(const rail_cma_share_t *t, uint32_t idx)
{
    size_t off = (size_t)idx * t->chunk;
    return rail_cma_read(t->pid, t->dst + off, t->src + off, RAIL_MIN(t->chunk, t->len - off),
                         t->flags);
}

/* Until the helper has finished the n chunks it claimed; returns the done word. */
static uint64_t share_wait(const rail_cma_share_t *t, uint32_t n)
{
    uint64_t d;
    for (unsigned spins = 0; (uint32_t)(d = rail_atomic_load_acquire(t->ctl.done)) < n; spins++) {
        if (spins < 1024)
            rail_cpu_relax();
        else
            sched_yield();
    }
    return d;
}

int rail_cma_share_read(rail_cma_share_t *t)
{
    int rc = MPI_SUCCESS;
    uint32_t mine = 0;
    for (;;) {   /* the reader's chunks are 0 .. mine - 1, the helper's the rest */
        uint64_t w = rail_atomic_fetch_add(t->ctl.claim, 1);
        if (SHARE_MINE(w) + SHARE_HELPERS(w) >= t->nch)
            break;
        if (rc == MPI_SUCCESS)
            rc = share_copy(t, SHARE_MINE(w));
        mine++;
    }
    uint64_t done = share_wait(t, t->nch - mine);
    rail_atomic_store_relaxed(t->ctl.claim, 0);   /* a late helper claims nothing */
    t->mine = mine;
    t->helped = t->nch - mine;
    t->failed = done >= RAIL_CMA_SHARE_FAILED;
    for (uint32_t i = mine; t->failed && i < t->nch && rc == MPI_SUCCESS; i++)
        rc = share_copy(t, i);
    return rc;
}

/* Write chunk idx of the reader's transfer d; false where it was refused. */
static bool share_write(const rail_cma_share_desc_t *d, pid_t reader, uint32_t idx, unsigned flags)
{
    if (flags & RAIL_CMA_SHARE_REFUSE)
        return false;
    size_t off = (size_t)idx * d->chunk;
    return rail_cma_write(reader, d->dst + off, (const char *)(uintptr_t)d->src + off,
                          RAIL_MIN((size_t)d->chunk, (size_t)(d->len - off)),
                          RAIL_CMA_QUIET) == MPI_SUCCESS;
}

int rail_cma_share_help(const rail_cma_share_ctl_t *ctl, uint32_t gen, pid_t reader, uint32_t max,
                        unsigned flags, bool *failed)
{
    uint64_t w = rail_atomic_load_acquire(ctl->claim);
    if (SHARE_GEN(w) != gen)
        return -1;
    int claimed = 0;
    while ((uint32_t)claimed < max && SHARE_GEN(w) == gen) {
        /* read after the claim word; a compare and swap that succeeds
         * proves they describe this transfer (published before it) */
        rail_cma_share_desc_t d = {rail_atomic_load_relaxed(&ctl->desc->dst),
                                   rail_atomic_load_relaxed(&ctl->desc->src),
                                   rail_atomic_load_relaxed(&ctl->desc->len),
                                   rail_atomic_load_relaxed(&ctl->desc->chunk)};
        uint32_t nch = d.chunk ? share_chunks(d.len, d.chunk) : 0;
        if (SHARE_MINE(w) + SHARE_HELPERS(w) >= nch)
            break;
        if (!rail_atomic_cas(ctl->claim, &w, w + ((uint64_t)1 << 16)))
            continue;
        bool ok = share_write(&d, reader, nch - 1 - SHARE_HELPERS(w), flags);
        rail_atomic_fetch_add(ctl->done, ok ? 1 : 1 + RAIL_CMA_SHARE_FAILED);
        claimed++;
        if (!ok) {
            *failed = true;
            break;
        }
        w = rail_atomic_load_acquire(ctl->claim);
    }
    return claimed;
}
