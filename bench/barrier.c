/* MPI_Barrier: time per call.  Validation: the last rank enters 50 ms late,
 * and every other rank must have waited for it. */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"

#include <time.h>

static void prepare(bench *b, size_t size, int seed)
{
    (void)b, (void)size, (void)seed;
}

static void iterate(bench *b, size_t size, int iters)
{
    (void)size;
    for (int i = 0; i < iters; i++)
        MPI_Barrier(b->comm);
}

static void check(bench *b, size_t size, int seed)
{
    const double late_s = 0.05;
    if (seed != 1 || b->np == 1)
        return;
    bench_barrier(b);
    double t0 = MPI_Wtime();
    if (b->rank == b->np - 1)
        nanosleep(&(struct timespec){ .tv_nsec = (long)(late_s * 1e9) }, NULL);
    MPI_Barrier(b->comm);
    double waited = MPI_Wtime() - t0;
    if (b->rank != b->np - 1 && waited < late_s / 5)
        bench_fail(b, size, "MPI_Barrier returned after %.3f ms although rank %d entered it "
                   "%.0f ms late", waited * 1e3, b->np - 1, late_s * 1e3);
}

int main(int argc, char **argv)
{
    bench b = { .metric = BENCH_LATENCY, .prepare = prepare, .iterate = iterate,
                .check = check };
    bench_init(&b, "barrier", &argc, &argv);
    b.opt.min_size = b.opt.max_size = 0; /* no payload */
    bench_run(&b);
    return bench_finalize(&b);
}
