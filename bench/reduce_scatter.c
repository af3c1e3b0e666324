/* MPI_Reduce_scatter (MPI_SUM of doubles, equal counts): SIZE is the block
 * each rank receives, so every rank contributes np * SIZE bytes.  Time per
 * call. */
#include "bench_common.h"

typedef struct {
    double *in, *out;
    int *counts;
} sums;

static void prepare(bench *b, size_t size, int seed)
{
    sums *p = b->data;
    size_t count = size / sizeof(double);
    bench_fill_sum(p->in, count * (size_t)b->np, 0, b->rank, seed);
    memset(p->out, 0, size);
    for (int r = 0; r < b->np; r++)
        p->counts[r] = (int)count;
}

static void iterate(bench *b, size_t size, int iters)
{
    sums *p = b->data;
    (void)size;
    for (int i = 0; i < iters; i++)
        MPI_Reduce_scatter(p->in, p->out, p->counts, MPI_DOUBLE, MPI_SUM, b->comm);
}

static void check(bench *b, size_t size, int seed)
{
    sums *p = b->data;
    size_t count = size / sizeof(double);
    bench_expect_sum(b, size, p->out, count, count * (size_t)b->rank, seed, "reduced block");
}

int main(int argc, char **argv)
{
    bench b = { .metric = BENCH_LATENCY, .unit = sizeof(double), .prepare = prepare,
                .iterate = iterate, .check = check };
    bench_init(&b, "reduce_scatter", &argc, &argv);
    sums p = { bench_alloc(&b, b.opt.max_size * (size_t)b.np),
               bench_alloc(&b, b.opt.max_size), bench_alloc(&b, sizeof(int) * (size_t)b.np) };
    b.data = &p;
    bench_run(&b);
    return bench_finalize(&b);
}
