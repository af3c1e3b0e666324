/* Unidirectional bandwidth: rank r streams windows of nonblocking sends of
 * SIZE bytes to r + np/2, which answers each window with an empty ack.  With
 * np > 2 all pairs stream at once and the slowest pair counts.
 *
 * Built with BENCH_MSGRATE defined (msgrate.c) the same stream measures the
 * message rate: messages per second summed over all np/2 pairs. */
#include "bench_common.h"

typedef struct {
    char *sbuf, *rbuf;
    MPI_Request *req;
    int partner, sender;
} stream;

static void prepare(bench *b, size_t size, int seed)
{
    stream *p = b->data;
    int window = bench_window(b, size);
#ifdef BENCH_MSGRATE
    b->ops_per_iter = (double)window * (b->np / 2);
#else
    b->ops_per_iter = window;
#endif
    if (p->sender)
        bench_fill(p->sbuf, size, bench_key(b->rank, 0, seed));
    else
        memset(p->rbuf, 0, size * (size_t)window);
}

static void iterate(bench *b, size_t size, int iters)
{
    stream *p = b->data;
    int window = bench_window(b, size);
    for (int i = 0; i < iters; i++) {
        for (int w = 0; w < window; w++) {
            if (p->sender)
                MPI_Isend(p->sbuf, (int)size, MPI_BYTE, p->partner, BENCH_TAG_DATA, b->comm,
                          &p->req[w]);
            else
                MPI_Irecv(p->rbuf + size * (size_t)w, (int)size, MPI_BYTE, p->partner,
                          BENCH_TAG_DATA, b->comm, &p->req[w]);
        }
        MPI_Waitall(window, p->req, MPI_STATUSES_IGNORE);
        if (p->sender)
            MPI_Recv(NULL, 0, MPI_BYTE, p->partner, BENCH_TAG_ACK, b->comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(NULL, 0, MPI_BYTE, p->partner, BENCH_TAG_ACK, b->comm);
    }
}

static void check(bench *b, size_t size, int seed)
{
    stream *p = b->data;
    if (p->sender)
        return;
    for (int w = 0; w < bench_window(b, size); w++)
        bench_expect(b, size, p->rbuf + size * (size_t)w, size,
                     bench_key(p->partner, 0, seed), "received message");
}

int main(int argc, char **argv)
{
#ifdef BENCH_MSGRATE
    bench b = { .metric = BENCH_RATE, .prepare = prepare, .iterate = iterate, .check = check };
    bench_init(&b, "msgrate", &argc, &argv);
#else
    bench b = { .metric = BENCH_BANDWIDTH, .prepare = prepare, .iterate = iterate,
                .check = check };
    bench_init(&b, "bw", &argc, &argv);
#endif
    bench_require_even(&b);
    stream p = { .partner = bench_partner(&b), .sender = b.rank < b.np / 2 };
    p.sbuf = bench_alloc(&b, b.opt.max_size);
    p.rbuf = bench_alloc(&b, p.sender ? 0 : bench_window_bytes(&b));
    p.req = bench_alloc(&b, sizeof *p.req * (size_t)b.opt.window);
    b.data = &p;
    bench_run(&b);
    return bench_finalize(&b);
}
