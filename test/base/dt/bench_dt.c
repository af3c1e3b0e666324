/*
 * Datatype engine bandwidth: pack / unpack of a vector of B-byte blocks
 * (stride 2B) against memcpy of the same number of bytes, plus contiguous
 * pack and pipelined (64 KiB fragment) pack.  Not a test: it always exits 0.
 * Usage: bench_dt [-r runs] [-b block] [MiB ...]   (default: 21 runs, all
 * block sizes, 1 4 16 MiB).  Runs are interleaved and the best and median
 * reported, so that a shared machine can still give a fair comparison.
 */
#include "base/dt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_MAX_REPS 1001

static int bench_reps = 21;
static int64_t bench_block;   /* 0: all sizes */

static double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct bench {
    const struct rail_dt *dt;
    unsigned char *user, *packed;
    size_t bytes;
    int what;  /* 0 memcpy, 1 pack, 2 unpack, 3 pack in 64 KiB fragments */
};

static void bench_once(const struct bench *b)
{
    struct rail_dt_cursor cur;
    switch (b->what) {
    case 0:
        memcpy(b->packed, b->user, b->bytes);
        break;
    case 1:
        rail_dt_pack_all(b->dt, 1, b->user, b->packed, b->bytes, NULL);
        break;
    case 2:
        rail_dt_unpack_all(b->dt, 1, b->user, b->packed, b->bytes, NULL);
        break;
    default:
        rail_dt_cursor_init(&cur, b->dt, 1, b->user);
        for (size_t pos = 0; pos < b->bytes;)
            pos += rail_dt_pack(&cur, b->packed + pos, 65536);
        break;
    }
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Seconds of one run of b (repeated to last >= 2 ms). */
static double bench_time(const struct bench *b)
{
    int inner = 1;
    double t0 = bench_now();
    bench_once(b);
    double one = bench_now() - t0;
    if (one < 0.002)
        inner = (int)(0.002 / (one + 1e-9)) + 1;
    t0 = bench_now();
    for (int i = 0; i < inner; i++)
        bench_once(b);
    return (bench_now() - t0) / inner;
}

/* GB/s of memcpy, pack, unpack and fragment pack, measured interleaved
 * (the machine may be shared): best[] from the fastest run, med[] the
 * median of the runs. */
static void bench_rates(struct bench *b, double best[4], double med[4])
{
    static double t[4][BENCH_MAX_REPS];
    for (int r = 0; r < bench_reps; r++)
        for (b->what = 0; b->what < 4; b->what++)
            t[b->what][r] = bench_time(b);
    for (int w = 0; w < 4; w++) {
        qsort(t[w], (size_t)bench_reps, sizeof(t[w][0]), bench_cmp);
        best[w] = (double)b->bytes / t[w][0] / 1e9;
        med[w] = (double)b->bytes / t[w][bench_reps / 2] / 1e9;
    }
}

static void bench_report(const char *what, const double best[4], const double med[4], int nw)
{
    static const char *const names[] = {"memcpy", "pack", "unpack", "pack/64K"};
    printf("  %s\n", what);
    for (int w = 0; w < nw; w++)
        printf("    %-9s best %6.2f GB/s (%3.0f%% of memcpy)  median %6.2f GB/s (%3.0f%%)\n",
               names[w], best[w], 100 * best[w] / best[0], med[w], 100 * med[w] / med[0]);
}

static void bench_size(size_t mib)
{
    size_t bytes = mib << 20;
    unsigned char *user, *packed;   /* page-aligned, like most large arrays */
    if (posix_memalign((void **)&user, 4096, 2 * bytes + 4096) ||
        posix_memalign((void **)&packed, 4096, bytes + 4096))
        return;
    memset(user, 1, 2 * bytes + 4096);   /* pre-fault */
    memset(packed, 2, bytes + 4096);
    struct bench b = {NULL, user, packed, bytes, 0};
    double best[4], med[4];
    char what[64];
    printf("%zu MiB packed (%d interleaved runs)\n", mib, bench_reps);
    static const int64_t blocks[] = {8, 16, 32, 64, 256};
    for (size_t k = 0; k < sizeof(blocks) / sizeof(blocks[0]); k++) {
        int64_t bl = blocks[k];
        struct rail_dt *v;
        if (bench_block && bl != bench_block)
            continue;
        rail_dt_create_hvector((int64_t)bytes / bl, bl, 2 * bl,
                               rail_dt_predefined(RAIL_TK_BYTE), &v);
        rail_dt_commit(v);
        b.dt = v;
        bench_rates(&b, best, med);
        snprintf(what, sizeof(what), "vector of %lld-B blocks, stride %lld",
                 (long long)bl, (long long)(2 * bl));
        bench_report(what, best, med, 4);
        rail_dt_release(v);
    }
    struct rail_dt *c;
    rail_dt_create_contiguous((int64_t)bytes / 8, rail_dt_predefined(RAIL_TK_DOUBLE), &c);
    rail_dt_commit(c);
    b.dt = c;
    bench_rates(&b, best, med);
    bench_report("contiguous doubles", best, med, 3);
    rail_dt_release(c);
    free(user);
    free(packed);
}

int main(int argc, char **argv)
{
    static const size_t defaults[] = {1, 4, 16};
    int i = 1, sizes = 0;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "-r"))
            bench_reps = RAIL_MAX(1, RAIL_MIN(atoi(argv[i + 1]), BENCH_MAX_REPS));
        else if (!strcmp(argv[i], "-b"))
            bench_block = atoi(argv[i + 1]);
    }
    for (; i < argc; i++, sizes++)
        bench_size((size_t)atoi(argv[i]));
    for (size_t k = 0; !sizes && k < 3; k++)
        bench_size(defaults[k]);
    return 0;
}
