/* MPI_Allgather: every rank contributes SIZE bytes and receives np * SIZE.
 * Time per call. */
#include "bench_common.h"

typedef struct {
    char *in, *out;
} blocks;

static void prepare(bench *b, size_t size, int seed)
{
    blocks *p = b->data;
    bench_fill(p->in, size, bench_key(b->rank, 0, seed));
    memset(p->out, 0, size * (size_t)b->np);
}

static void iterate(bench *b, size_t size, int iters)
{
    blocks *p = b->data;
    for (int i = 0; i < iters; i++)
        MPI_Allgather(p->in, (int)size, MPI_BYTE, p->out, (int)size, MPI_BYTE, b->comm);
}

static void check(bench *b, size_t size, int seed)
{
    blocks *p = b->data;
    for (int r = 0; r < b->np; r++)
        bench_expect(b, size, p->out + size * (size_t)r, size, bench_key(r, 0, seed),
                     "gathered block");
}

int main(int argc, char **argv)
{
    bench b = { .metric = BENCH_LATENCY, .prepare = prepare, .iterate = iterate,
                .check = check };
    bench_init(&b, "allgather", &argc, &argv);
    blocks p = { bench_alloc(&b, b.opt.max_size),
                 bench_alloc(&b, b.opt.max_size * (size_t)b.np) };
    b.data = &p;
    bench_run(&b);
    return bench_finalize(&b);
}
