/* MPI_Bcast of SIZE bytes from rank 0: time per call. */
#include "bench_common.h"

static void prepare(bench *b, size_t size, int seed)
{
    char *buf = b->data;
    if (b->rank == 0)
        bench_fill(buf, size, bench_key(0, 0, seed));
    else
        memset(buf, 0, size);
}

static void iterate(bench *b, size_t size, int iters)
{
    for (int i = 0; i < iters; i++)
        MPI_Bcast(b->data, (int)size, MPI_BYTE, 0, b->comm);
}

static void check(bench *b, size_t size, int seed)
{
    bench_expect(b, size, b->data, size, bench_key(0, 0, seed), "broadcast buffer");
}

int main(int argc, char **argv)
{
    bench b = { .metric = BENCH_LATENCY, .prepare = prepare, .iterate = iterate,
                .check = check };
    bench_init(&b, "bcast", &argc, &argv);
    b.data = bench_alloc(&b, b.opt.max_size);
    bench_run(&b);
    return bench_finalize(&b);
}
