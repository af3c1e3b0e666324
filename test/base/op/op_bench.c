/*
 * Micro-benchmark of the host reduction kernels (not a test): GB/s of
 * rail_op_reduce SUM on double and int32, and of rail_op_reduce3, against
 * memcpy of the same size, at 4 KiB (L1), 256 KiB (L2) and 16 MiB (memory),
 * for each kernel set the CPU runs.
 *
 * GB/s = bytes of one buffer / time: a reduction reads two buffers and
 * writes one (reduce3: three distinct buffers), memcpy reads one and writes
 * one; the best of many ~2 ms timings.
 *
 *   op_bench [seconds-per-point]   (default 0.2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/rail.h"
#include "base/op.h"
#include "base/op_impl.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef enum what { W_MEMCPY, W_REDUCE, W_REDUCE3 } what_t;

static char *buf_a, *buf_b, *buf_c;

static void run_once(what_t w, rail_op_t op, rail_typekind_t tk, size_t bytes, size_t count)
{
    switch (w) {
    case W_MEMCPY:
        memcpy(buf_b, buf_a, bytes);
        break;
    case W_REDUCE:
        rail_op_reduce(op, tk, buf_a, buf_b, count);
        break;
    case W_REDUCE3:
        rail_op_reduce3(op, tk, buf_a, buf_b, buf_c, count);
        break;
    }
}

/* GB/s of one configuration: the best of many short timings (about 2 ms
 * each, over secs in all), which on a busy machine approaches the speed of
 * an undisturbed run. */
static double measure(what_t w, rail_op_t op, rail_typekind_t tk, size_t esize, size_t bytes,
                      double secs)
{
    const size_t count = bytes / esize;
    const double slice = 2e-3, start = now();
    size_t reps = 1;
    double best = 1e30;

    for (;;) { /* calibrate reps to one slice (and warm the caches) */
        const double t0 = now();
        for (size_t r = 0; r < reps; r++)
            run_once(w, op, tk, bytes, count);
        const double dt = now() - t0;
        if (dt > slice / 2 || reps > (1u << 30))
            break;
        reps *= 2;
    }
    do {
        const double t0 = now();
        for (size_t r = 0; r < reps; r++)
            run_once(w, op, tk, bytes, count);
        const double dt = (now() - t0) / (double)reps;
        if (dt < best)
            best = dt;
    } while (now() - start < secs);
    return (double)bytes / best / 1e9;
}

int main(int argc, char **argv)
{
    static const char *const isas[] = {"generic", "avx2"};
    static const size_t sizes[] = {4 << 10, 256 << 10, 16 << 20};
    static const char *const size_names[] = {"4 KiB", "256 KiB", "16 MiB"};
    const double secs = argc > 1 ? atof(argv[1]) : 0.2;
    const size_t max = 16 << 20;

    /* Cache-line aligned, but at different offsets within a 4 KiB page:
     * buffers at the same page offset make the loads of one alias the
     * stores of the other in the CPU's 4 KiB store-forwarding check, which
     * halves the in-cache speed of some kernels (measured on Zen 3). */
    char *mem_a = aligned_alloc(4096, max + 4096);
    char *mem_b = aligned_alloc(4096, max + 4096);
    char *mem_c = aligned_alloc(4096, max + 4096);
    if (!mem_a || !mem_b || !mem_c) {
        fprintf(stderr, "op_bench: out of memory\n");
        return 1;
    }
    buf_a = mem_a;
    buf_b = mem_b + 17 * 64;
    buf_c = mem_c + 34 * 64;
    /* fault the pages in; small values so sums stay finite */
    for (size_t i = 0; i < max / sizeof(double); i++) {
        ((double *)buf_a)[i] = 1e-3 * (double)(i % 1000);
        ((double *)buf_b)[i] = 1.0;
    }
    memset(buf_c, 0, max);

    printf("%-8s %-8s %9s %9s %9s %9s %9s %9s\n", "kernels", "size", "memcpy", "sum_f64",
           "sum_i32", "max_f64", "sum3_f64", "sum_f16");
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(isas); i++) {
        if (rail_op_isa_set(isas[i]) != MPI_SUCCESS)
            continue;
        for (size_t s = 0; s < RAIL_ARRAY_SIZE(sizes); s++) {
            const size_t n = sizes[s];
            printf("%-8s %-8s %9.2f %9.2f %9.2f %9.2f %9.2f", isas[i], size_names[s],
                   measure(W_MEMCPY, RAIL_OP_NONE, RAIL_TK_NONE, 1, n, secs),
                   measure(W_REDUCE, RAIL_OP_SUM, RAIL_TK_DOUBLE, 8, n, secs),
                   measure(W_REDUCE, RAIL_OP_SUM, RAIL_TK_INT32, 4, n, secs),
                   measure(W_REDUCE, RAIL_OP_MAX, RAIL_TK_DOUBLE, 8, n, secs),
                   measure(W_REDUCE3, RAIL_OP_SUM, RAIL_TK_DOUBLE, 8, n, secs));
            if (rail_op_kernel(RAIL_OP_SUM, RAIL_TK_FLOAT16))
                printf(" %9.2f", measure(W_REDUCE, RAIL_OP_SUM, RAIL_TK_FLOAT16, 2, n, secs));
            printf("\n");
        }
    }
    printf("GB/s = bytes of one buffer / time (reduce: 2 reads + 1 write per element)\n");
    free(mem_a);
    free(mem_b);
    free(mem_c);
    return 0;
}
