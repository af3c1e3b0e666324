/* MPI_Scatter from rank 0: the root sends np blocks of SIZE bytes, every
 * rank receives one.  Time per call. */
#include "bench_common.h"

typedef struct {
    char *in, *out;
} blocks;

static void prepare(bench *b, size_t size, int seed)
{
    blocks *p = b->data;
    for (int r = 0; b->rank == 0 && r < b->np; r++)
        bench_fill(p->in + size * (size_t)r, size, bench_key(r, 0, seed));
    memset(p->out, 0, size);
}

static void iterate(bench *b, size_t size, int iters)
{
    blocks *p = b->data;
    for (int i = 0; i < iters; i++)
        MPI_Scatter(p->in, (int)size, MPI_BYTE, p->out, (int)size, MPI_BYTE, 0, b->comm);
}

static void check(bench *b, size_t size, int seed)
{
    blocks *p = b->data;
    bench_expect(b, size, p->out, size, bench_key(b->rank, 0, seed), "scattered block");
}

int main(int argc, char **argv)
{
    bench b = { .metric = BENCH_LATENCY, .prepare = prepare, .iterate = iterate,
                .check = check };
    bench_init(&b, "scatter", &argc, &argv);
    blocks p = { bench_alloc(&b, b.rank == 0 ? b.opt.max_size * (size_t)b.np : 0),
                 bench_alloc(&b, b.opt.max_size) };
    b.data = &p;
    bench_run(&b);
    return bench_finalize(&b);
}
