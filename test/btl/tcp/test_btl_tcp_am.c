/*
 * btl tcp: active messages between forked processes over loopback.
 *
 *   sizes    every rank sends every other rank logical messages of 0 B to
 *            3 MiB (split into max_send_size frames by the test), all at
 *            once (simultaneous connects), with several buffer settings;
 *            checks every byte, order per pair, one connection per pair,
 *            and a clean finalize (nothing logged).
 *   flood    two ranks flood each other while one does not progress for a
 *            while: send must say RAIL_AGAIN, and everything arrives in
 *            order once it does.
 *   sleep    wait_fd is quiet when nothing happens (no busy loop) and wakes
 *            a sleeper when a message arrives.
 *   busy     rank 0 stops progressing right after its first send to rank 1
 *            (MPI_Isend, then compute) for longer than the handshake
 *            timeout, while rank 1 accepts: the greeting has left within
 *            the send, so nothing times out and nothing is logged.
 */
#include "test/btl/tcp/tcp_test.h"
#include "btl/tcp/tcp.h"
#include "runtime/rte.h"

#include <poll.h>
#include <string.h>
#include <unistd.h>

#define LO "RAIL_BTL_TCP_IF_INCLUDE=lo "

static const size_t sizes[] = {0, 1, 7, 8, 9, 63, 64, 65, 100, 1000, 4095, 4096, 4097, 65535,
                               65536, 65537, 200000, 0 /* max frame */, 1 /* max + 1 */,
                               3 * 1024 * 1024 + 17};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static size_t size_at(btl_module_t *m, size_t i)
{
    if (i == 17)
        return m->max_send_size - 64;
    if (i == 18)
        return m->max_send_size - 63;
    return sizes[i];
}

/* Connections of the module in each state. */
static void count_conns(int *established, int *other)
{
    *established = *other = 0;
    for (btl_tcp_conn_t *c = btl_tcp_module.conns; c; c = c->next) {
        if (c->state == BTL_TCP_ESTABLISHED)
            (*established)++;
        else if (c->state != BTL_TCP_DEAD)
            (*other)++;
    }
}

static int t_sizes(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = tcp_test_init(&eps);
    long expect = 0;
    tcp_test_msg_init(m);
    for (size_t i = 0; i < N_SIZES; i++)
        for (int k = 1; k < size; k++) {
            int dst = (rank + k) % size;
            tcp_test_msg_send(m, eps[dst], dst, size_at(m, i));
            expect += tcp_test_msg_frames(m, size_at(m, i));
        }
    tcp_test_progress_until(m, &tcp_test_received, expect, 60);
    tcp_test_fence(m);
    /* Abandoned attempts of simultaneous connects finish quickly. */
    int est, other;
    double start = tcp_test_now();
    do {
        tcp_test_progress(m, 5);
        count_conns(&est, &other);
    } while (other > 0 && tcp_test_now() - start < 5);
    CHECK(est == size - 1 && other == 0, "%d established and %d other connections for %d peers",
          est, other, size - 1);
    tcp_test_fini(m, eps);
    return 0;
}

/* Nothing but progress output may appear on stderr of a clean run. */
static bool quiet_logs(int nprocs)
{
    bool ok = true;
    for (int r = 0; r < nprocs; r++) {
        char *log = tcp_test_log(r);
        if (log[0]) {
            fprintf(stderr, "rank %d logged:\n%s", r, log);
            ok = false;
        }
        free(log);
    }
    return ok;
}

static void run_sizes(const char *name, int nprocs, const char *env)
{
    tcp_test_opts_t o = {.timeout_s = 120, .env = env};
    char what[128];
    if (tcp_test_run(name, nprocs, t_sizes, NULL, &o) == 0) {
        snprintf(what, sizeof(what), "%s: nothing logged", name);
        check_case(what, quiet_logs(nprocs));
    }
}

/* ------------------------------------------------------------ flood */

typedef struct flood_arg {
    int count;
    size_t len;
} flood_arg_t;

static int t_flood(int rank, int size, void *argp)
{
    const flood_arg_t *a = argp;
    btl_endpoint_t **eps;
    btl_module_t *m = tcp_test_init(&eps);
    int peer = rank ^ 1;
    long again = 0;
    tcp_test_msg_init(m);
    /* Connect first, so that the stall below is about full sockets. */
    again += tcp_test_msg_send(m, eps[peer], peer, 8);
    tcp_test_progress_until(m, &tcp_test_received, 1, 30);
    tcp_test_fence(m);
    if (rank == 1)
        usleep(500 * 1000);          /* rank 0 floods a peer that does not read */
    for (int i = 0; i < a->count; i++)
        again += tcp_test_msg_send(m, eps[peer], peer, a->len + (size_t)(i % 5) * 8);
    long frames = 1 + a->count * tcp_test_msg_frames(m, a->len + 32);
    tcp_test_progress_until(m, &tcp_test_received, frames, 60);
    if (rank == 0)
        CHECK(again > 0, "send never said RAIL_AGAIN while the peer did not read");
    fprintf(stdout, "rank %d: %ld RAIL_AGAIN\n", rank, again);
    tcp_test_fini(m, eps);
    return 0;
}

/* ------------------------------------------------------------ sleep */

static volatile long pings;
static void ping_cb(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                    const void *payload, size_t len)
{
    CHECK(hdr_len == 0 && len == 3 && memcmp(payload, "abc", 3) == 0,
          "ping: header %zu, payload %zu bytes", hdr_len, len);
    pings++;
}

static int t_sleep(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = tcp_test_init(&eps);
    btl_payload_t none = {.data = "abc", .len = 3};   /* and no header at all */
    uint64_t h = 0;
    struct pollfd p = {.fd = m->wait_fd, .events = POLLIN};
    btl_register_recv(5, ping_cb);
    if (rank == 1)
        tcp_test_send(m, eps[0], 5, &h, 0, &none);
    tcp_test_progress_until(m, rank == 0 ? &pings : &(volatile long){1}, 1, 30);
    /* Idle: wait_fd must not be readable (after one progress to settle). */
    tcp_test_fence(m);
    for (int i = 0; i < 3; i++)
        m->progress(m);
    int r = poll(&p, 1, 200);
    CHECK(r == 0, "wait_fd readable although nothing happens (revents 0x%x)", p.revents);
    CHECK(m->progress(m) == 0, "progress found work while idle");
    tcp_test_fence(m);
    if (rank == 1) {
        usleep(200 * 1000);
        tcp_test_send(m, eps[0], 5, &h, 0, &none);
    } else {
        double t0 = tcp_test_now();
        r = poll(&p, 1, 5000);
        double waited = tcp_test_now() - t0;
        CHECK(r == 1, "no wakeup within 5 s");
        CHECK(waited < 1.0, "woke after %.3f s", waited);
        tcp_test_progress_until(m, &pings, 2, 10);
    }
    tcp_test_fini(m, eps);
    return 0;
}

static int t_busy(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = tcp_test_init(&eps);
    btl_payload_t p = {.data = "abc", .len = 3};
    uint64_t h = 0;
    btl_register_recv(5, ping_cb);
    if (rank == 0) {
        int rc = m->send(m, eps[1], 5, &h, 0, &p);
        CHECK(rc == RAIL_AGAIN, "first send returned %d", rc);
        usleep(1000 * 1000);       /* "computing" right after the send */
        tcp_test_send(m, eps[1], 5, &h, 0, &p);
    } else {
        usleep(200 * 1000);        /* then accepts, and waits for the greeting */
        tcp_test_progress_until(m, &pings, 1, 10);
    }
    tcp_test_fini(m, eps);
    return 0;
}

int main(int argc, char **argv)
{
    int procs[] = {2, 3, 8};
    for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
        run_sizes("sizes", procs[i], LO);
    run_sizes("sizes, small buffers and frames", 3,
              LO "RAIL_BTL_TCP_MAX_SEND_SIZE=64k RAIL_BTL_TCP_EAGER_LIMIT=4k "
                 "RAIL_BTL_TCP_RECV_BUF_SIZE=16k RAIL_BTL_TCP_SNDBUF=16k RAIL_BTL_TCP_RCVBUF=16k "
                 "RAIL_BTL_TCP_QUEUE_LIMIT=8k");
    run_sizes("sizes, 1 MiB frames, no queue", 2,
              LO "RAIL_BTL_TCP_MAX_SEND_SIZE=1m RAIL_BTL_TCP_QUEUE_LIMIT=0 "
                 "RAIL_BTL_TCP_SNDBUF=64k RAIL_BTL_TCP_RCVBUF=64k");

    tcp_test_opts_t o = {.timeout_s = 120,
                         .env = LO "RAIL_BTL_TCP_SNDBUF=64k RAIL_BTL_TCP_RCVBUF=64k "
                                   "RAIL_BTL_TCP_QUEUE_LIMIT=128k"};
    flood_arg_t small = {4000, 4000}, large = {64, 900 * 1024};
    tcp_test_run("flood of 4 KB messages", 2, t_flood, &small, &o);
    o.env = LO "RAIL_BTL_TCP_SNDBUF=64k RAIL_BTL_TCP_RCVBUF=64k RAIL_BTL_TCP_MAX_SEND_SIZE=1m";
    tcp_test_run("flood of 900 KB messages", 2, t_flood, &large, &o);

    o.env = LO;
    tcp_test_run("sleep on wait_fd", 2, t_sleep, NULL, &o);
    o.env = LO "RAIL_BTL_TCP_HANDSHAKE_TIMEOUT_MS=300";
    if (tcp_test_run("busy peers", 2, t_busy, NULL, &o) == 0)
        check_case("busy peers: nothing logged", quiet_logs(2));
    return tcp_test_summary("test_btl_tcp_am");
}
