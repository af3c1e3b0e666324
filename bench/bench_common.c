/* Shared harness of the Rail MPI benchmark programs: see bench_common.h. */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_TRIALS = 1000, MAX_ITERS = 1 << 22 };
#define MAX_SIZE ((unsigned long long)1 << 40)

/* Prints the usage on rank 0 and ends every rank cleanly. */
static void usage(const bench *b, const char *name, int code)
{
    if (b->rank == 0)
        fprintf(code ? stderr : stdout,
                "usage: %s [-s MIN:MAX] [-i ITERS] [-w WARMUP] [-m MS] [-t TRIALS] [-T MS] [-W WINDOW]\n"
                "  -s MIN:MAX  message sizes in bytes, powers of two from MIN (suffix K, M, G)\n"
                "  -i ITERS    iterations per trial (default: enough for -T milliseconds, at least 4)\n"
                "  -w WARMUP   untimed iterations before each size (default 2)\n"
                "  -m MS       and untimed calls until they took MS ms (default 50; before the\n"
                "              sweep, the largest size for 4 x MS)\n"
                "  -t TRIALS   timed trials per size; the median is reported (default 5)\n"
                "  -T MS       wanted duration of one trial when -i is not given (default 5)\n"
                "  -W WINDOW   messages in flight for bw, bibw, msgrate (default 64)\n",
                name);
    MPI_Finalize();
    exit(code);
}

/* A byte count with an optional K, M or G suffix; returns the end, or NULL. */
static const char *parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (end == s || *s == '-' || v > (MAX_SIZE >> shift))
        return NULL;
    *out = (size_t)(v << shift);
    return end;
}

/* "MIN:MAX" or a single size. */
static int parse_range(const char *arg, bench_opts *o)
{
    const char *e = parse_size(arg, &o->min_size);
    if (e && *e == '\0')
        o->max_size = o->min_size;
    else if (!e || *e != ':' || !(e = parse_size(e + 1, &o->max_size)) || *e)
        return -1;
    return o->max_size >= o->min_size ? 0 : -1;
}

static int parse_int(const char *arg, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static void parse_options(bench *b, int argc, char **argv)
{
    bench_opts *o = &b->opt;
    *o = (bench_opts){ .min_size = 0, .max_size = 1 << 20, .iters = 0, .warmup = 2,
                       .warmup_ms = 50, .trials = 5, .target_ms = 5, .window = 64 };
    int c, ms = 0, bad = 0;
    opterr = b->rank == 0; /* one complaint, not one per rank */
    while ((c = getopt(argc, argv, "s:i:w:m:t:T:W:h")) != -1) {
        switch (c) {
        case 's': bad |= parse_range(optarg, o); break;
        case 'i': bad |= parse_int(optarg, 1, MAX_ITERS, &o->iters); break;
        case 'w': bad |= parse_int(optarg, 0, MAX_ITERS, &o->warmup); break;
        case 'm': bad |= parse_int(optarg, 0, 60000, &ms); o->warmup_ms = ms; break;
        case 't': bad |= parse_int(optarg, 1, MAX_TRIALS, &o->trials); break;
        case 'T': bad |= parse_int(optarg, 1, 60000, &ms); o->target_ms = ms; break;
        case 'W': bad |= parse_int(optarg, 1, 4096, &o->window); break;
        case 'h': usage(b, argv[0], 0); break;
        default: bad = 1; break;
        }
    }
    if (bad || optind != argc) {
        if (b->rank == 0)
            fprintf(stderr, "%s: invalid arguments\n", b->name);
        usage(b, argv[0], 2);
    }
}

void bench_init(bench *b, const char *name, int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    b->name = name;
    b->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(b->comm, &b->rank);
    MPI_Comm_size(b->comm, &b->np);
    if (b->unit == 0)
        b->unit = 1;
    if (b->ops_per_iter == 0)
        b->ops_per_iter = 1;
    parse_options(b, *argc, *argv);
    if (b->opt.max_size > INT_MAX / (size_t)b->np)
        bench_fail(b, b->opt.max_size, "size too large for %d ranks (int counts)", b->np);
    if (b->rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# %s np=%d library: %s\n", name, b->np, lib);
    }
}

int bench_finalize(bench *b)
{
    (void)b;
    MPI_Finalize();
    return 0;
}

void bench_fail(bench *b, size_t size, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL bench=%s np=%d rank=%d size=%zu: %s\n", b->name, b->np, b->rank,
            size, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

void bench_require_even(bench *b)
{
    if (b->np % 2)
        bench_fail(b, 0, "needs an even number of ranks, got %d", b->np);
}

int bench_partner(const bench *b)
{
    int half = b->np / 2;
    return b->rank < half ? b->rank + half : b->rank - half;
}

void *bench_alloc(bench *b, size_t len)
{
    size_t rounded = (len + 4095) / 4096 * 4096;
    void *p = aligned_alloc(4096, rounded ? rounded : 4096);
    if (!p)
        bench_fail(b, len, "cannot allocate %zu bytes", len);
    memset(p, 0xa5, rounded ? rounded : 4096); /* non-zero: a real write per page */
    return p;
}

#define WINDOW_BYTES ((size_t)16 << 20)

int bench_window(const bench *b, size_t size)
{
    size_t fit = size ? WINDOW_BYTES / size : (size_t)b->opt.window;
    return fit < 1 ? 1 : fit < (size_t)b->opt.window ? (int)fit : b->opt.window;
}

size_t bench_window_bytes(const bench *b)
{
    size_t most = 0;
    for (size_t s = b->opt.min_size; s <= b->opt.max_size; s = s ? s * 2 : 1) {
        size_t need = s * (size_t)bench_window(b, s);
        if (need > most)
            most = need;
    }
    return most;
}

uint32_t bench_key(int a, int b, int seed)
{
    uint32_t k = (uint32_t)a * 0x9e3779b1u ^ (uint32_t)(b + 1) * 0x85ebca77u ^
                 (uint32_t)(seed + 1) * 0xc2b2ae3du;
    return k ^ (k >> 15);
}

/* The pattern is a sequence of 32-bit words stored in native byte order. */
static inline uint32_t pattern_word(size_t w, uint32_t key)
{
    uint32_t x = ((uint32_t)w ^ key) * 0x9e3779b1u;
    return x ^ (x >> 16);
}

static inline uint8_t pattern_byte(size_t i, uint32_t key)
{
    uint32_t w = pattern_word(i / 4, key);
    uint8_t bytes[4];
    memcpy(bytes, &w, 4);
    return bytes[i % 4];
}

void bench_fill(void *buf, size_t len, uint32_t key)
{
    uint8_t *p = buf;
    size_t words = len / 4;
    for (size_t w = 0; w < words; w++) {
        uint32_t x = pattern_word(w, key);
        memcpy(p + 4 * w, &x, 4);
    }
    for (size_t i = 4 * words; i < len; i++)
        p[i] = pattern_byte(i, key);
}

void bench_expect(bench *b, size_t size, const void *buf, size_t len, uint32_t key,
                  const char *what)
{
    const uint8_t *p = buf;
    size_t words = len / 4, i = 4 * words;
    for (size_t w = 0; w < words; w++) {
        uint32_t x;
        memcpy(&x, p + 4 * w, 4);
        if (x != pattern_word(w, key)) {
            i = 4 * w;
            break;
        }
    }
    for (; i < len; i++)
        if (p[i] != pattern_byte(i, key))
            bench_fail(b, size, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, len,
                       p[i], pattern_byte(i, key));
}

static inline double sum_term(size_t i, int seed)
{
    uint32_t x = ((uint32_t)i ^ (uint32_t)seed * 0x9e3779b1u) * 0x85ebca77u;
    return (double)((x >> 28) + 1);
}

void bench_fill_sum(double *buf, size_t count, size_t first, int rank, int seed)
{
    for (size_t i = 0; i < count; i++)
        buf[i] = (rank + 1) * sum_term(first + i, seed);
}

void bench_expect_sum(bench *b, size_t size, const double *buf, size_t count, size_t first,
                      int seed, const char *what)
{
    double ranks = (double)b->np * (b->np + 1) / 2;
    for (size_t i = 0; i < count; i++)
        if (buf[i] != sum_term(first + i, seed) * ranks)
            bench_fail(b, size, "%s: element %zu of %zu is %g, expected %g", what, i, count,
                       buf[i], sum_term(first + i, seed) * ranks);
}

/* ---- harness synchronisation, point-to-point only ---- */

void bench_barrier(bench *b)
{
    for (int k = 1; k < b->np; k <<= 1)
        MPI_Sendrecv(NULL, 0, MPI_BYTE, (b->rank + k) % b->np, BENCH_TAG_CTRL, NULL, 0,
                     MPI_BYTE, (b->rank - k + b->np) % b->np, BENCH_TAG_CTRL, b->comm,
                     MPI_STATUS_IGNORE);
}

/* The largest of every rank's x, valid on rank 0. */
static double max_to_root(bench *b, double x)
{
    if (b->rank != 0) {
        MPI_Send(&x, 1, MPI_DOUBLE, 0, BENCH_TAG_CTRL, b->comm);
        return x;
    }
    for (int r = 1; r < b->np; r++) {
        double y;
        MPI_Recv(&y, 1, MPI_DOUBLE, r, BENCH_TAG_CTRL, b->comm, MPI_STATUS_IGNORE);
        if (y > x)
            x = y;
    }
    return x;
}

static int bcast_int(bench *b, int x)
{
    if (b->rank != 0) {
        MPI_Recv(&x, 1, MPI_INT, 0, BENCH_TAG_CTRL, b->comm, MPI_STATUS_IGNORE);
        return x;
    }
    for (int r = 1; r < b->np; r++)
        MPI_Send(&x, 1, MPI_INT, r, BENCH_TAG_CTRL, b->comm);
    return x;
}

/* ---- the sweep ---- */

/* Seconds the slowest rank takes for iters iterations (valid on rank 0). */
static double timed(bench *b, size_t size, int iters)
{
    bench_barrier(b);
    double t0 = MPI_Wtime();
    b->iterate(b, size, iters);
    return max_to_root(b, MPI_Wtime() - t0);
}

/* Calibrated trials run at least this many iterations: each trial's first
 * call follows prepare()'s writes to the buffers and a barrier that
 * oversubscribed ranks leave at different times; a trial of one 1 MiB
 * alltoall at np 8 on 2 cores took 12.5-15.7 ms per call in every MPI
 * against 7.1-7.3 over eight calls (docs/performance.md, thirty-first
 * run). */
#define MIN_ITERS 4

/* Grow a probe run fourfold until it lasts a twentieth of the target (and
 * there were two probes, unless one call alone fills the target), then scale
 * the fastest probe's time per iteration to the target (at least
 * MIN_ITERS): a probe slowed down by a descheduled rank must not shrink
 * every trial to one iteration.
 * Rank 0 decides; a negative value means "final". */
static int calibrate(bench *b, size_t size)
{
    double target = b->opt.target_ms * 1e-3, fastest = 0;
    for (int n = 1;;) {
        double t = timed(b, size, n);
        if (n == 1 || t / n < fastest)
            fastest = t / n;
        int next = n * 4;
        if ((t >= target / 20 && (n > 1 || t >= target)) || next > MAX_ITERS) {
            double want = fastest > 0 ? target / fastest : MAX_ITERS;
            next = -(want < MIN_ITERS ? MIN_ITERS : want > MAX_ITERS ? MAX_ITERS : (int)want);
        }
        next = bcast_int(b, next);
        if (next < 0)
            return -next;
        n = next;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void report(bench *b, size_t size, int iters, double *us)
{
    int n = b->opt.trials;
    double med = median(us, n);
    printf("RESULT bench=%s np=%d size=%zu median_us=%.4f min_us=%.4f max_us=%.4f trials=%d "
           "iters=%d",
           b->name, b->np, size, med, us[0], us[n - 1], n, iters);
    if (b->metric == BENCH_BANDWIDTH)
        printf(" MBps=%.2f", med > 0 ? size / med : 0.0);
    else if (b->metric == BENCH_RATE)
        printf(" Mmsgs=%.4f", med > 0 ? 1 / med : 0.0);
    printf("\n");
    fflush(stdout);
}

/* Untimed calls in growing batches until they have taken warmup_ms (rank 0
 * decides).  Why by time: an MPI's first passes through memory it has not
 * used yet can be slow for a long while.  On the VMs we measure on, every
 * process's first access to each page costs ~7 us however the page was
 * prepared (docs/performance.md): Rail MPI's coll sm, whose operations
 * rotate through 4 MiB per process, took 20 us per 2 KiB allreduce for its
 * first ~1000 calls at np 2 (1.5 us after), and np 8 alltoalls of 32 KiB
 * 4.3 ms for their first ~100 (0.15 ms after); two iterations measured
 * that instead of the steady state every MPI is compared in. */
static void warm_up(bench *b, size_t size, double ms)
{
    double want = ms * 1e-3, spent = 0;
    for (int n = 1; want > 0;) {
        spent += timed(b, size, n);
        int go = bcast_int(b, spent < want);
        if (!go)
            break;
        if (n < MAX_ITERS / 2)
            n *= 2;
    }
}

static void run_size(bench *b, size_t size, double *us)
{
    b->prepare(b, size, 0);
    if (b->opt.warmup)
        b->iterate(b, size, b->opt.warmup);
    warm_up(b, size, b->opt.warmup_ms);
    int iters = b->opt.iters ? b->opt.iters : calibrate(b, size);
    for (int trial = 0; trial < b->opt.trials; trial++) {
        b->prepare(b, size, trial + 1);
        double t = timed(b, size, iters);
        b->check(b, size, trial + 1);
        us[trial] = t * 1e6 / ((double)iters * b->ops_per_iter);
    }
    if (b->rank == 0)
        report(b, size, iters, us);
}

/* Exchange messages for a moment before measuring anything, so that the
 * scheduler has spread unpinned ranks over the cores. */
static void settle(bench *b)
{
    const double settle_s = 0.2;
    double t0 = MPI_Wtime();
    for (int more = 1; more;) {
        for (int i = 0; i < 16; i++)
            bench_barrier(b);
        more = bcast_int(b, MPI_Wtime() - t0 < settle_s);
    }
}

static size_t next_size(size_t s)
{
    return s ? s * 2 : 1;
}

void bench_run(bench *b)
{
    const bench_opts *o = &b->opt;
    if (b->rank == 0) {
        printf("PLAN bench=%s np=%d sizes=", b->name, b->np);
        const char *sep = "";
        for (size_t s = o->min_size; s <= o->max_size; s = next_size(s))
            if (s % b->unit == 0) {
                printf("%s%zu", sep, s);
                sep = ",";
            }
        printf("\n");
        fflush(stdout);
    }
    double *us = malloc(sizeof *us * (size_t)o->trials);
    if (!us)
        bench_fail(b, 0, "out of memory");
    settle(b);
    /* first, the largest size for four times as long: its calls pass
     * through every buffer an MPI cycles through (np 8 on 2 cores: the
     * first eight allgathers of 1 MiB blocks took 90-120 ms each, later
     * ones 3-4) */
    size_t big = 0;
    for (size_t s = o->min_size; s <= o->max_size; s = next_size(s))
        if (s % b->unit == 0)
            big = s;
    if (o->warmup_ms > 0 && big > 0) {
        b->prepare(b, big, 0);
        warm_up(b, big, 4 * o->warmup_ms);
    }
    for (size_t s = o->min_size; s <= o->max_size; s = next_size(s))
        if (s % b->unit == 0)
            run_size(b, s, us);
    free(us);
}
