/* One-sided communication (RMA) between partners r (origin) and r + np/2
 * (target) on a window from MPI_Win_allocate.  One source, built once per
 * benchmark: the program's name says what it measures.
 *
 *   rma_put_lat, rma_get_lat   SIZE-byte Put / Get + Win_flush (latency)
 *   rma_fop_lat, rma_cas_lat   8-byte Fetch_and_op SUM / Compare_and_swap
 *                              + Win_flush (latency; sizes other than 8
 *                              are not run)
 *   rma_put_bw                 a window of SIZE-byte Puts + one Win_flush
 *                              (bandwidth)
 *   rma_acc_rate               a window of SIZE-byte Accumulate SUM of
 *                              doubles + one Win_flush (accumulates per s)
 *
 * Under passive target: every rank is in one MPI_Win_lock_all epoch for
 * the whole run and the target makes no RMA call.  The same names with
 * "rma_fence_" in place of "rma_" (rma_fence_put_lat ...) close each
 * iteration with MPI_Win_fence on every rank instead of a flush.
 * The data are checked after every trial: Put by reading back, Get against
 * the target's pattern, Fetch_and_op / Compare_and_swap by the sequence of
 * fetched values, Accumulate by the exact sums. */
#include "bench_common.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

enum rma_kind { PUT_LAT, GET_LAT, FOP_LAT, CAS_LAT, PUT_BW, ACC_RATE };
static const char *const kind_names[] = { "put_lat", "get_lat", "fop_lat",
                                          "cas_lat", "put_bw",  "acc_rate" };

typedef struct {
    enum rma_kind kind;
    int fence, origin, partner;
    MPI_Win win;
    char *base, *buf, *back; /* window, origin buffer, read-back buffer */
    int64_t next;            /* fop / cas: the value the next fetch must see */
    long long calls;         /* acc: accumulates into each slot since prepare */
    int bad;                 /* a fetched value was wrong (checked in check) */
} rma_bench;

static void sync_end(rma_bench *p)
{
    if (p->fence)
        MPI_Win_fence(0, p->win);
    else if (p->origin)
        MPI_Win_flush(p->partner, p->win);
}

static void prepare(bench *b, size_t size, int seed)
{
    rma_bench *p = b->data;
    int window = p->kind == PUT_BW || p->kind == ACC_RATE ? bench_window(b, size) : 1;
    b->ops_per_iter = window;
    /* the target must not reset its window while the origin still works
     * on the last phase (nothing else holds a passive target back) */
    bench_barrier(b);
    if (!p->origin) {
        if (p->kind == GET_LAT)
            bench_fill(p->base, size, bench_key(b->rank, 1, seed));
        else
            memset(p->base, 0, size * (size_t)window > 8 ? size * (size_t)window : 8);
        if (!p->fence)
            MPI_Win_sync(p->win);
    } else {
        bench_fill(p->buf, size, bench_key(b->rank, 0, seed));
        if (p->kind == ACC_RATE)
            for (size_t i = 0; i < size / 8; i++)
                ((double *)p->buf)[i] = 1.0;
    }
    p->next = 0;
    p->calls = 0;
    p->bad = 0;
}

static void one_iter(bench *b, rma_bench *p, size_t size)
{
    int64_t one = 1, got = -1, want;
    int n = (int)size, t = p->partner;
    switch (p->kind) {
    case PUT_LAT: MPI_Put(p->buf, n, MPI_BYTE, t, 0, n, MPI_BYTE, p->win); break;
    case GET_LAT: MPI_Get(p->back, n, MPI_BYTE, t, 0, n, MPI_BYTE, p->win); break;
    case FOP_LAT: MPI_Fetch_and_op(&one, &got, MPI_INT64_T, t, 0, MPI_SUM, p->win); break;
    case CAS_LAT:
        want = p->next + 1;
        MPI_Compare_and_swap(&want, &p->next, &got, MPI_INT64_T, t, 0, p->win);
        break;
    case PUT_BW:
    case ACC_RATE:
        for (int w = 0; w < bench_window(b, size); w++) {
            MPI_Aint d = (MPI_Aint)size * w;
            if (p->kind == PUT_BW)
                MPI_Put(p->buf, n, MPI_BYTE, t, d, n, MPI_BYTE, p->win);
            else
                MPI_Accumulate(p->buf, n / 8, MPI_DOUBLE, t, d, n / 8, MPI_DOUBLE, MPI_SUM,
                               p->win);
        }
        p->calls++;
        break;
    }
    sync_end(p);
    if (p->kind == FOP_LAT || p->kind == CAS_LAT)
        p->bad |= got != p->next++;
}

static void iterate(bench *b, size_t size, int iters)
{
    rma_bench *p = b->data;
    for (int i = 0; i < iters; i++) {
        if (p->origin)
            one_iter(b, p, size);
        else if (p->fence)
            MPI_Win_fence(0, p->win);
    }
}

/* The origin reads SIZE * window bytes of the target's window back. */
static void read_back(rma_bench *p, size_t bytes)
{
    if (p->origin)
        MPI_Get(p->back, (int)bytes, MPI_BYTE, p->partner, 0, (int)bytes, MPI_BYTE, p->win);
    sync_end(p);
}

static void check(bench *b, size_t size, int seed)
{
    rma_bench *p = b->data;
    int window = bench_window(b, size);
    if (p->kind == PUT_LAT || p->kind == PUT_BW || p->kind == ACC_RATE)
        read_back(p, size * (size_t)(p->kind == PUT_LAT ? 1 : window));
    if (!p->origin)
        return;
    if (p->bad)
        bench_fail(b, size, "%s: a fetched value was not the one before plus 1",
                   kind_names[p->kind]);
    if (p->kind == GET_LAT)
        bench_expect(b, size, p->back, size, bench_key(p->partner, 1, seed), "got data");
    if (p->kind == PUT_LAT || p->kind == PUT_BW)
        for (int w = 0; w < (p->kind == PUT_LAT ? 1 : window); w++)
            bench_expect(b, size, p->back + size * (size_t)w, size, bench_key(b->rank, 0, seed),
                         "put data read back");
    for (size_t i = 0; p->kind == ACC_RATE && i < size * (size_t)window / 8; i++)
        if (((double *)p->back)[i] != (double)p->calls)
            bench_fail(b, size, "accumulate: element %zu = %g, want %lld", i,
                       ((double *)p->back)[i], p->calls);
}

/* rma_put_lat or rma_fence_put_lat: the kind and whether fence. */
static void parse_name(const char *argv0, rma_bench *p, char *name, size_t len)
{
    const char *s = strrchr(argv0, '/');
    s = s ? s + 1 : argv0;
    snprintf(name, len, "%s", s);
    p->fence = strncmp(s, "rma_fence_", 10) == 0;
    const char *k = s + (p->fence ? 10 : 4);
    for (int i = 0; i <= ACC_RATE; i++)
        if (strcmp(k, kind_names[i]) == 0) {
            p->kind = (enum rma_kind)i;
            return;
        }
    fprintf(stderr, "%s: unknown RMA benchmark (see bench/rma.c)\n", s);
    exit(2);
}

int main(int argc, char **argv)
{
    static char name[64];
    rma_bench p = { 0 };
    parse_name(argv[0], &p, name, sizeof(name));
    bool fetch = p.kind == FOP_LAT || p.kind == CAS_LAT;
    bench b = { .metric = p.kind == PUT_BW ? BENCH_BANDWIDTH
                          : p.kind == ACC_RATE ? BENCH_RATE : BENCH_LATENCY,
                .unit = fetch || p.kind == ACC_RATE ? 8 : 1, .prepare = prepare,
                .iterate = iterate, .check = check };
    bench_init(&b, name, &argc, &argv);
    bench_require_even(&b);
    if (fetch) {
        b.opt.min_size = 8;
        b.opt.max_size = 8;
    }
    p.origin = b.rank < b.np / 2;
    p.partner = bench_partner(&b);
    size_t bytes = bench_window_bytes(&b) + 64;
    p.buf = bench_alloc(&b, bytes);
    p.back = bench_alloc(&b, bytes);
    MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, b.comm, &p.base, &p.win);
    memset(p.base, 0, bytes);
    if (!p.fence)
        MPI_Win_lock_all(0, p.win);
    else
        MPI_Win_fence(0, p.win);
    b.data = &p;
    bench_run(&b);
    if (!p.fence)
        MPI_Win_unlock_all(p.win);
    else
        MPI_Win_fence(0, p.win);
    MPI_Win_free(&p.win);
    return bench_finalize(&b);
}
