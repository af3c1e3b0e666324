/* Bidirectional bandwidth: partners r and r + np/2 exchange windows of
 * nonblocking messages of SIZE bytes in both directions at once.  The time
 * is per message in either direction, so SIZE / time is the sum of both
 * directions.  With np > 2 all pairs run at once and the slowest counts. */
#include "bench_common.h"

typedef struct {
    char *sbuf, *rbuf;
    MPI_Request *req;
    int partner;
} exchange;

static void prepare(bench *b, size_t size, int seed)
{
    exchange *p = b->data;
    int window = bench_window(b, size);
    b->ops_per_iter = 2.0 * window;
    bench_fill(p->sbuf, size, bench_key(b->rank, 0, seed));
    memset(p->rbuf, 0, size * (size_t)window);
}

static void iterate(bench *b, size_t size, int iters)
{
    exchange *p = b->data;
    int window = bench_window(b, size);
    for (int i = 0; i < iters; i++) {
        for (int w = 0; w < window; w++)
            MPI_Irecv(p->rbuf + size * (size_t)w, (int)size, MPI_BYTE, p->partner,
                      BENCH_TAG_DATA, b->comm, &p->req[w]);
        for (int w = 0; w < window; w++)
            MPI_Isend(p->sbuf, (int)size, MPI_BYTE, p->partner, BENCH_TAG_DATA, b->comm,
                      &p->req[window + w]);
        MPI_Waitall(2 * window, p->req, MPI_STATUSES_IGNORE);
    }
}

static void check(bench *b, size_t size, int seed)
{
    exchange *p = b->data;
    for (int w = 0; w < bench_window(b, size); w++)
        bench_expect(b, size, p->rbuf + size * (size_t)w, size,
                     bench_key(p->partner, 0, seed), "received message");
}

int main(int argc, char **argv)
{
    bench b = { .metric = BENCH_BANDWIDTH, .prepare = prepare, .iterate = iterate,
                .check = check };
    bench_init(&b, "bibw", &argc, &argv);
    bench_require_even(&b);
    exchange p = { .partner = bench_partner(&b) };
    p.sbuf = bench_alloc(&b, b.opt.max_size);
    p.rbuf = bench_alloc(&b, bench_window_bytes(&b));
    p.req = bench_alloc(&b, sizeof *p.req * 2 * (size_t)b.opt.window);
    b.data = &p;
    bench_run(&b);
    return bench_finalize(&b);
}
