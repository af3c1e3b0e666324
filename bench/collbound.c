/* collbound: what a node-local collective costs when nothing but its data
 * moves.  No MPI: NP processes (forked, unpinned, as the MPIs' ranks run)
 * whose buffers all lie in one shared mapping, so every process reads and
 * writes every other's buffers directly, as single-copy hardware support
 * (XPMEM) would allow, with no staging, no protocol and no point-to-point
 * layer; a shared-memory barrier ends each call.  Each operation moves the
 * bytes its result needs once:
 *
 *   bcast           every non-root copies the root's buffer
 *   reduce          process r sums slice r of every input into the root's output
 *   allreduce       the faster of: everyone sums every input into its own
 *                   output; or slice r of every input summed into a shared
 *                   result by process r, a barrier, everyone copies the result
 *   reduce_scatter  process r sums block r of every input into its output
 *   allgather       everyone copies every block (its own too) into its output
 *   gather/scatter  every non-root copies its block into / out of the root's
 *   alltoall        everyone copies block r of every input into its output
 *
 * and each is timed twice, with plain stores and with streaming
 * (non-temporal) stores, which do not read a destination line before
 * writing it and so move less for data larger than the caches; the faster
 * counts.
 *
 * With -k (the copying operations only: bcast, allgather, gather, scatter,
 * alltoall), every copy between two processes' buffers goes through the
 * kernel instead, as single copy does where the only mechanism is
 * cross-memory attach (process_vm_readv; a gather's senders push with
 * process_vm_writev, the fastest way, in parallel): the bound for any MPI
 * on a node without XPMEM.  A process's copies of its own block stay
 * memcpy, and the buffers are private memory, as user buffers are (each
 * process's at the same address in every process).
 * Sizes mean what they mean in the benchmarks of this directory (doubles
 * summed; block per rank for reduce_scatter, allgather, gather, scatter;
 * block per pair for alltoall).  The driver (run_bench.py) reports each
 * MPI's time as a multiple of this one: how close it comes to the machine's
 * memory bandwidth, the bound for large collectives.
 *
 * Build: cc -O2 -o collbound collbound.c
 * Usage: collbound -b BENCH -n NP [-k] [-s MIN:MAX] [-t TRIALS] [-T MS] [-i ITERS]
 * Prints "RESULT bench=... np=... size=... median_us=..." per size, like
 * the benchmarks.
 */
#define _GNU_SOURCE
#include <sched.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_NP 64
#define MAX_TRIALS 64
#define MAX_ITERS 1000000

typedef struct {
    _Alignas(64) atomic_uint count;
    _Alignas(64) atomic_uint gen;
    _Alignas(64) double secs[MAX_NP];      /* each process's time of the last run */
    pid_t pid[MAX_NP];                     /* each process's, for -k */
} shared_t;

static shared_t *sh;
static char *base;                         /* every process's buffers */
static size_t in_len, out_len;             /* per process */
static int np, me, crowded;
static const char *op;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void barrier(void)
{
    unsigned g = atomic_load(&sh->gen);
    if (atomic_fetch_add(&sh->count, 1) == (unsigned)np - 1) {
        atomic_store(&sh->count, 0);
        atomic_store(&sh->gen, g + 1);
        return;
    }
    while (atomic_load(&sh->gen) == g)
        if (crowded)
            sched_yield();             /* more processes than cores */
}

static char *in_of(int r) { return base + (size_t)r * (in_len + out_len); }
static char *out_of(int r) { return in_of(r) + in_len; }
static double *result(void) { return (double *)(base + (size_t)np * (in_len + out_len)); }

static int nt;                             /* streaming stores in this run */
static int kernel;                         /* -k: copies across processes by the kernel */

/* len bytes from process r's src into my dst (pull), or from my src into
 * process r's dst (push), by cross-memory attach: the buffers lie at the
 * same address in every process (one inherited mapping). */
static void kcopy(int r, void *dst, const void *src, size_t len, int push)
{
    struct iovec local = {push ? (void *)src : dst, len}, remote = {push ? dst : (void *)src, len};
    ssize_t got = push ? process_vm_writev(sh->pid[r], &local, 1, &remote, 1, 0)
                       : process_vm_readv(sh->pid[r], &local, 1, &remote, 1, 0);
    if (got != (ssize_t)len) {
        perror("collbound: cross-memory attach");
        _exit(1);
    }
}

static void copy(void *dst, const void *src, size_t len);

/* A copy whose other end is process r's buffer: by the kernel with -k
 * (push: into r's), else as every other copy. */
static void move(int r, void *dst, const void *src, size_t len, int push)
{
    if (kernel && r != me)
        kcopy(r, dst, src, len, push);
    else
        copy(dst, src, len);
}

/* memcpy, or with streaming stores where nt and the CPU offer them */
static void copy(void *dst, const void *src, size_t len)
{
#ifdef __SSE2__
    if (nt && len >= 4096 && !(((uintptr_t)dst | (uintptr_t)src) & 15)) {
        __m128i *d = dst;
        const __m128i *x = src;
        size_t i = 0, n = len / 64 * 4;
        for (; i < n; i += 4) {
            __m128i a = _mm_load_si128(x + i), b = _mm_load_si128(x + i + 1);
            __m128i c = _mm_load_si128(x + i + 2), e = _mm_load_si128(x + i + 3);
            _mm_stream_si128(d + i, a);
            _mm_stream_si128(d + i + 1, b);
            _mm_stream_si128(d + i + 2, c);
            _mm_stream_si128(d + i + 3, e);
        }
        _mm_sfence();
        memcpy((char *)dst + i * 16, (const char *)src + i * 16, len - i * 16);
        return;
    }
#endif
    memcpy(dst, src, len);
}

/* out[i] = sum over r of in_of(r)[off + i], doubles, in one pass over out */
static void sum_all(double *restrict out, size_t off, size_t n)
{
    const double *x[MAX_NP];
    for (int r = 0; r < np; r++)
        x[r] = (const double *)(in_of(r) + off);
    size_t i = 0;
#ifdef __SSE2__
    for (; i < n && ((uintptr_t)(out + i) & 15); i++) {
        double v = x[0][i];
        for (int r = 1; r < np; r++)
            v += x[r][i];
        out[i] = v;
    }
    for (; i + 8 <= n; i += 8) {
        const double *p = x[0] + i;
        __m128d a = _mm_loadu_pd(p), b = _mm_loadu_pd(p + 2);
        __m128d c = _mm_loadu_pd(p + 4), d = _mm_loadu_pd(p + 6);
        for (int r = 1; r < np; r++) {
            p = x[r] + i;
            a = _mm_add_pd(a, _mm_loadu_pd(p));
            b = _mm_add_pd(b, _mm_loadu_pd(p + 2));
            c = _mm_add_pd(c, _mm_loadu_pd(p + 4));
            d = _mm_add_pd(d, _mm_loadu_pd(p + 6));
        }
        if (nt) {
            _mm_stream_pd(out + i, a);
            _mm_stream_pd(out + i + 2, b);
            _mm_stream_pd(out + i + 4, c);
            _mm_stream_pd(out + i + 6, d);
        } else {
            _mm_store_pd(out + i, a);
            _mm_store_pd(out + i + 2, b);
            _mm_store_pd(out + i + 4, c);
            _mm_store_pd(out + i + 6, d);
        }
    }
    if (nt)
        _mm_sfence();
#endif
    for (; i < n; i++) {
        double v = x[0][i];
        for (int r = 1; r < np; r++)
            v += x[r][i];
        out[i] = v;
    }
}

/* Slice r of n elements: [*a, *a + *len) */
static void slice(size_t n, int r, size_t *a, size_t *len)
{
    size_t q = n / (size_t)np, rem = n % (size_t)np;
    *a = (size_t)r * q + ((size_t)r < rem ? (size_t)r : rem);
    *len = q + ((size_t)r < rem);
}

static int allreduce_rsag;                 /* which allreduce is being timed */

static void one_call(size_t size)
{
    size_t n = size / sizeof(double), a, len;
    if (!strcmp(op, "bcast")) {
        if (me != 0)
            move(0, out_of(me), in_of(0), size, 0);
    } else if (!strcmp(op, "reduce")) {
        slice(n, me, &a, &len);
        sum_all((double *)out_of(0) + a, a * sizeof(double), len);
    } else if (!strcmp(op, "allreduce") && !allreduce_rsag) {
        sum_all((double *)out_of(me), 0, n);
    } else if (!strcmp(op, "allreduce")) {
        slice(n, me, &a, &len);
        sum_all(result() + a, a * sizeof(double), len);
        barrier();
        copy(out_of(me), result(), size);
    } else if (!strcmp(op, "reduce_scatter")) {
        sum_all((double *)out_of(me), (size_t)me * size, n);
    } else if (!strcmp(op, "allgather")) {
        for (int k = 0; k < np; k++) {
            int r = (me + k) % np;
            move(r, out_of(me) + (size_t)r * size, in_of(r), size, 0);
        }
    } else if (!strcmp(op, "gather")) {
        if (me != 0)
            move(0, out_of(0) + (size_t)me * size, in_of(me), size, 1);
    } else if (!strcmp(op, "scatter")) {
        if (me != 0)
            move(0, out_of(me), in_of(0) + (size_t)me * size, size, 0);
    } else { /* alltoall */
        for (int k = 0; k < np; k++) {
            int r = (me + k) % np;
            move(r, out_of(me) + (size_t)r * size, in_of(r) + (size_t)me * size, size, 0);
        }
    }
    barrier();
}

/* Seconds the slowest process takes for iters calls (valid on every
 * process after the barrier). */
static double timed(size_t size, int iters)
{
    barrier();
    double t0 = now();
    for (int i = 0; i < iters; i++)
        one_call(size);
    sh->secs[me] = now() - t0;
    barrier();
    double worst = 0;
    for (int r = 0; r < np; r++)
        worst = sh->secs[r] > worst ? sh->secs[r] : worst;
    barrier();                         /* nobody overwrites secs before all read it */
    return worst;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The bench harness's calibration, simplified: grow fourfold until a run
 * lasts a twentieth of the target, then scale to the target (at least
 * MIN_ITERS iterations, as the harness's bench_common.c). */
#define MIN_ITERS 4
static int calibrate(size_t size, double target)
{
    for (int n = 1;; n *= 4) {
        double t = timed(size, n);
        if (t >= target / 20 || n * 4 > MAX_ITERS) {
            double want = t > 0 ? target * n / t : MAX_ITERS;
            return want < MIN_ITERS ? MIN_ITERS : want > MAX_ITERS ? MAX_ITERS : (int)want;
        }
    }
}

static double last_min, last_max;          /* of the last measure() */

/* Median time per call over trials, in us (every process returns it). */
static double measure(size_t size, int trials, double target, int fixed, int *iters_out)
{
    double us[MAX_TRIALS];
    timed(size, 2);                                /* warm-up */
    int iters = fixed ? fixed : calibrate(size, target);
    for (int t = 0; t < trials; t++) {
        memset(in_of(me), t + 1, in_len);          /* as the benchmarks refill inputs */
        us[t] = timed(size, iters) * 1e6 / iters;
    }
    qsort(us, (size_t)trials, sizeof(double), cmp_double);
    *iters_out = iters;
    last_min = us[0];
    last_max = us[trials - 1];
    return trials % 2 ? us[trials / 2] : (us[trials / 2 - 1] + us[trials / 2]) / 2;
}

static size_t parse_size(const char *s, char **end)
{
    size_t v = strtoull(s, end, 10);
    switch (**end) {
    case 'k': case 'K': v <<= 10; (*end)++; break;
    case 'm': case 'M': v <<= 20; (*end)++; break;
    case 'g': case 'G': v <<= 30; (*end)++; break;
    }
    return v;
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s -b BENCH -n NP [-k] [-s MIN:MAX] [-t TRIALS] [-T MS] [-i ITERS]\n"
            "  BENCH: bcast reduce allreduce reduce_scatter allgather gather scatter alltoall\n"
            "  -k: copies between processes by cross-memory attach (not for reductions)\n",
            argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    static const char *ops[] = {"bcast", "reduce", "allreduce", "reduce_scatter", "allgather",
                                "gather", "scatter", "alltoall"};
    size_t lo = 8, hi = 1 << 20;
    int trials = 5, fixed = 0, c;
    double target_ms = 5;
    char *end;
    np = 0;
    op = NULL;
    while ((c = getopt(argc, argv, "b:n:ks:t:T:i:w:")) != -1) {
        switch (c) {
        case 'b': op = optarg; break;
        case 'n': np = atoi(optarg); break;
        case 'k': kernel = 1; break;
        case 's':
            lo = parse_size(optarg, &end);
            if (*end != ':')
                usage(argv[0]);
            hi = parse_size(end + 1, &end);
            break;
        case 't': trials = atoi(optarg); break;
        case 'T': target_ms = atof(optarg); break;
        case 'i': fixed = atoi(optarg); break;
        case 'w': break;                           /* the benchmarks' -w: ignored */
        default: usage(argv[0]);
        }
    }
    int known = 0;
    for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
        known |= !strcmp(op, ops[i]);
    if (kernel && (!strcmp(op, "reduce") || !strcmp(op, "allreduce") ||
                   !strcmp(op, "reduce_scatter")))
        known = 0;
    if (!known || np < 1 || np > MAX_NP || trials < 1 || trials > MAX_TRIALS || hi < lo ||
        target_ms <= 0)
        usage(argv[0]);
    if (lo < sizeof(double))
        lo = sizeof(double);
    crowded = np > (int)sysconf(_SC_NPROCESSORS_ONLN);

    /* per process: input and output large enough for the largest size */
    int blocks = !strcmp(op, "reduce_scatter") || !strcmp(op, "alltoall") ||
                 !strcmp(op, "scatter") ? np : 1;
    int oblocks = !strcmp(op, "allgather") || !strcmp(op, "alltoall") ||
                  !strcmp(op, "gather") ? np : 1;
    in_len = (hi * (size_t)blocks + 4095) & ~(size_t)4095;
    out_len = (hi * (size_t)oblocks + 4095) & ~(size_t)4095;
    size_t total = (size_t)np * (in_len + out_len) + ((hi + 4095) & ~(size_t)4095);
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    /* -k: private memory, as an MPI's user buffers are (the kernel pins
     * private anonymous pages faster than shared ones), each process's own
     * pages at the same address in every process */
    base = mmap(NULL, total, PROT_READ | PROT_WRITE,
                (kernel ? MAP_PRIVATE : MAP_SHARED) | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED || base == MAP_FAILED) {
        perror("collbound: mmap");
        return 1;
    }
    pid_t pids[MAX_NP];
    for (int r = 1; r < np; r++) {
        pids[r] = fork();
        if (pids[r] < 0) {
            perror("collbound: fork");
            return 1;
        }
        if (pids[r] == 0) {
            me = r;
            break;
        }
    }
    sh->pid[me] = getpid();
    /* each process touches its own buffers first, as its owner would */
    memset(in_of(me), 1, in_len);
    memset(out_of(me), 0, out_len);
    if (me == 0)
        memset(result(), 0, (hi + 4095) & ~(size_t)4095);
    barrier();

    for (size_t size = lo; size <= hi; size *= 2) {
        /* the fastest of the variants: allreduce's two ways, each with
         * plain and (where the CPU has them) streaming stores */
        int iters = 0, algos = !strcmp(op, "allreduce") && np > 1 ? 2 : 1;
#ifdef __SSE2__
        int stores = 2;
#else
        int stores = 1;
#endif
        double us = 0, mn = 0, mx = 0;
        for (int v = 0; v < algos * stores; v++) {
            int it;
            allreduce_rsag = v / stores;
            nt = v % stores;
            double t = measure(size, trials, target_ms * 1e-3, fixed, &it);
            if (v == 0 || t < us) {
                us = t;
                iters = it;
                mn = last_min;
                mx = last_max;
            }
        }
        if (me == 0) {
            printf("RESULT bench=%s np=%d size=%zu median_us=%.4f min_us=%.4f max_us=%.4f "
                   "trials=%d iters=%d\n", op, np, size, us, mn, mx, trials, iters);
            fflush(stdout);
        }
        if (size > hi / 2)
            break;
    }
    if (me != 0)
        _exit(0);
    int bad = 0;
    for (int r = 1; r < np; r++) {
        int st;
        bad |= waitpid(pids[r], &st, 0) != pids[r] || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    return bad;
}
