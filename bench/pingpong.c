/* Ping-pong latency: half the round-trip time of a message of SIZE bytes
 * between partners r and r + np/2 (with np > 2 all pairs run at once and the
 * slowest pair counts).  The receiver sends back what it got, so both
 * directions are checked. */
#include "bench_common.h"

typedef struct {
    char *sbuf, *rbuf;
    int partner, leader;
} pingpong;

static void prepare(bench *b, size_t size, int seed)
{
    pingpong *p = b->data;
    bench_fill(p->sbuf, size, bench_key(p->leader ? b->rank : p->partner, 0, seed));
    memset(p->rbuf, 0, size);
}

static void iterate(bench *b, size_t size, int iters)
{
    pingpong *p = b->data;
    for (int i = 0; i < iters; i++) {
        if (p->leader) {
            MPI_Send(p->sbuf, (int)size, MPI_BYTE, p->partner, BENCH_TAG_DATA, b->comm);
            MPI_Recv(p->rbuf, (int)size, MPI_BYTE, p->partner, BENCH_TAG_DATA, b->comm,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(p->rbuf, (int)size, MPI_BYTE, p->partner, BENCH_TAG_DATA, b->comm,
                     MPI_STATUS_IGNORE);
            MPI_Send(p->rbuf, (int)size, MPI_BYTE, p->partner, BENCH_TAG_DATA, b->comm);
        }
    }
}

static void check(bench *b, size_t size, int seed)
{
    pingpong *p = b->data;
    int leader = p->leader ? b->rank : p->partner;
    bench_expect(b, size, p->rbuf, size, bench_key(leader, 0, seed),
                 p->leader ? "echoed message" : "received message");
}

int main(int argc, char **argv)
{
    bench b = { .metric = BENCH_LATENCY, .ops_per_iter = 2, .prepare = prepare,
                .iterate = iterate, .check = check };
    bench_init(&b, "pingpong", &argc, &argv);
    bench_require_even(&b);
    pingpong p = { .partner = bench_partner(&b), .leader = b.rank < b.np / 2 };
    p.sbuf = bench_alloc(&b, b.opt.max_size);
    p.rbuf = bench_alloc(&b, b.opt.max_size);
    b.data = &p;
    bench_run(&b);
    return bench_finalize(&b);
}
