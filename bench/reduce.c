/* MPI_Reduce (MPI_SUM of doubles) of SIZE bytes to rank 0: time per call. */
#include "bench_common.h"

typedef struct {
    double *in, *out;
} sums;

static void prepare(bench *b, size_t size, int seed)
{
    sums *p = b->data;
    bench_fill_sum(p->in, size / sizeof(double), 0, b->rank, seed);
    memset(p->out, 0, size);
}

static void iterate(bench *b, size_t size, int iters)
{
    sums *p = b->data;
    for (int i = 0; i < iters; i++)
        MPI_Reduce(p->in, p->out, (int)(size / sizeof(double)), MPI_DOUBLE, MPI_SUM, 0,
                   b->comm);
}

static void check(bench *b, size_t size, int seed)
{
    sums *p = b->data;
    if (b->rank == 0)
        bench_expect_sum(b, size, p->out, size / sizeof(double), 0, seed, "reduced buffer");
}

int main(int argc, char **argv)
{
    bench b = { .metric = BENCH_LATENCY, .unit = sizeof(double), .prepare = prepare,
                .iterate = iterate, .check = check };
    bench_init(&b, "reduce", &argc, &argv);
    sums p = { bench_alloc(&b, b.opt.max_size), bench_alloc(&b, b.opt.max_size) };
    b.data = &p;
    bench_run(&b);
    return bench_finalize(&b);
}
