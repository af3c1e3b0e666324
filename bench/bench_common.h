/* Shared harness of the Rail MPI benchmark programs.
 *
 * The benchmarks use the plain MPI API only, so each one builds with any
 * mpicc.  A program describes one operation through four callbacks and
 * bench_run() does the rest: it sweeps the sizes, warms up, chooses an
 * iteration count so that one trial lasts about -T milliseconds, runs the
 * trials, validates the data after every trial and prints one line per size:
 *
 *   RESULT bench=allreduce np=4 size=1024 median_us=3.210 min_us=3.150 ...
 *
 * The harness's own bookkeeping (start-of-trial barrier, collecting the
 * slowest rank's time, agreeing on the iteration count) uses point-to-point
 * messages only, so a point-to-point benchmark needs no collective, and a
 * collective benchmark exercises no collective other than its own.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { BENCH_TAG_DATA = 1, BENCH_TAG_ACK = 2, BENCH_TAG_CTRL = 32000 };

/* What the reported time means to a reader: the driver turns a per-message
 * time into a bandwidth (size / time) or a rate (1 / time). */
typedef enum { BENCH_LATENCY, BENCH_BANDWIDTH, BENCH_RATE } bench_metric;

typedef struct bench_opts {
    size_t min_size, max_size; /* -s MIN:MAX, bytes */
    int iters;                 /* -i: iterations per trial, 0 = calibrate */
    int warmup;                /* -w: untimed iterations before calibrating */
    double warmup_ms;          /* -m: and untimed calls for at least this long */
    int trials;                /* -t */
    double target_ms;          /* -T: wanted length of one trial */
    int window;                /* -W: messages in flight (bw, bibw, msgrate) */
} bench_opts;

typedef struct bench bench;
struct bench {
    const char *name;
    bench_metric metric;
    size_t unit;         /* sizes must be multiples of this (element size) */
    double ops_per_iter; /* operations one iteration performs; prepare may set it */
    /* untimed: set up buffers for a trial whose data is derived from seed */
    void (*prepare)(bench *b, size_t size, int seed);
    /* timed: perform the operation iters times */
    void (*iterate)(bench *b, size_t size, int iters);
    /* untimed: check the data the last iteration produced; fail on error */
    void (*check)(bench *b, size_t size, int seed);
    void *data;          /* the program's own state */
    MPI_Comm comm;
    int rank, np;
    bench_opts opt;
};

/* MPI_Init, option parsing (exits with usage on a bad option). */
void bench_init(bench *b, const char *name, int *argc, char ***argv);
/* Sweep the sizes, print one RESULT line per size on rank 0. */
void bench_run(bench *b);
/* MPI_Finalize; returns the process exit status. */
int bench_finalize(bench *b);

/* Page-aligned buffer of at least len bytes, already written once so that
 * no page fault lands in a timed loop.  Never returns NULL. */
void *bench_alloc(bench *b, size_t len);
/* Report a failure on stderr ("FAIL bench=... rank=...: ...") and abort
 * the job with exit code 3. */
void bench_fail(bench *b, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
/* For benchmarks that need pairs: fail unless np is even. */
void bench_require_even(bench *b);
/* The partner of this rank: pairs are (r, r + np/2). */
int bench_partner(const bench *b);

/* Messages in flight for a windowed benchmark at this size: -W, reduced
 * for large messages so that a window holds at most 16 MiB. */
int bench_window(const bench *b, size_t size);
/* Bytes a receive window needs for every size of the sweep. */
size_t bench_window_bytes(const bench *b);

/* Byte patterns: a sequence determined by (a, b, seed), e.g. sender,
 * receiver and trial, that differs at every offset from any other. */
uint32_t bench_key(int a, int b, int seed);
void bench_fill(void *buf, size_t len, uint32_t key);
/* Fail with the first differing offset when buf does not hold key's pattern. */
void bench_expect(bench *b, size_t size, const void *buf, size_t len,
                  uint32_t key, const char *what);

/* Reductions: element i of a rank's contribution is (rank + 1) * v(i), with v
 * a small integer from 1 to 16, so any order of summation gives the exact
 * sum v(i) * np * (np + 1) / 2. */
void bench_fill_sum(double *buf, size_t count, size_t first, int rank, int seed);
void bench_expect_sum(bench *b, size_t size, const double *buf, size_t count,
                      size_t first, int seed, const char *what);

/* Harness synchronisation over point-to-point messages (tag BENCH_TAG_CTRL). */
void bench_barrier(bench *b);

#endif
