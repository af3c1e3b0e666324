/*
 * Micro-benchmark of btl sm between two processes pinned to two CPUs (not
 * a test; built with `make check`, run by hand):
 *   - one-way latency of 8-byte active messages (ping-pong / 2), without a
 *     header and with a 24-byte one, next to a bare cache-line ping-pong
 *     through shared memory (the hardware's limit);
 *   - streaming rate of 8-byte messages;
 *   - get (CMA) bandwidth at 1 and 4 MiB next to memcpy of the same sizes;
 *   - copy in/copy out bandwidth: 4 MiB in max_send_size sends, copied out
 *     by the receiver (what the pml does when get is unavailable);
 *   - eager (send, copy out) against rendezvous (a small send, get, a small
 *     reply) one-way times by size: where the eager limit belongs.
 * Each figure is the best of 5 runs (the median too for latency).
 * Usage: bench_btl_sm [iterations]   (environment: RAIL_BTL_SM_* parameters)
 */
#include "test/btl/sm/sm_test.h"
#include "btl/sm/sm.h"
#include "runtime/rte.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PING_TAG 10
#define DATA_TAG 11
#define CARD_TAG 12
#define RNDV_TAG 13
#define EAGER_TAG 14
#define REPS 5
#define MIB (1 << 20)

static long iters = 200000;
static volatile long pings, data_bytes, cards, rts;
static btl_reg_t peer_reg;
static uint64_t peer_addr;
static uint8_t *sink;
static volatile uint64_t *line; /* shared with the peer, for the raw ping-pong */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pin(int rank)
{
    cpu_set_t have, want;
    int k = 0;
    if (sched_getaffinity(0, sizeof(have), &have) != 0)
        return;
    CPU_ZERO(&want);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &have) && k++ == rank) {
            CPU_SET(c, &want);
            sched_setaffinity(0, sizeof(want), &want);
            return;
        }
}

static void ping_recv(btl_module_t *m, btl_endpoint_t *ep, const void *h, size_t hl,
                      const void *p, size_t l) { pings++; }
static void data_recv(btl_module_t *m, btl_endpoint_t *ep, const void *h, size_t hl,
                      const void *p, size_t l)
{
    uint64_t off;
    memcpy(&off, h, sizeof(off));
    memcpy(sink + off, p, l);
    data_bytes += (long)l;
}
static void card_recv(btl_module_t *m, btl_endpoint_t *ep, const void *h, size_t hl,
                      const void *p, size_t l)
{
    memcpy(&peer_reg, p, sizeof(peer_reg));
    memcpy(&peer_addr, (const uint8_t *)p + sizeof(peer_reg), sizeof(peer_addr));
    cards++;
}

static void rts_recv(btl_module_t *m, btl_endpoint_t *ep, const void *h, size_t hl,
                     const void *p, size_t l) { rts++; }

static void eager_recv(btl_module_t *m, btl_endpoint_t *ep, const void *h, size_t hl,
                       const void *p, size_t l)
{
    memcpy(sink, p, l);
    pings++;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void send_spin(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                      size_t hl, const btl_payload_t *p)
{
    while (m->send(m, ep, tag, hdr, hl, p) == RAIL_AGAIN)
        m->progress(m);
}

/* One-way latency in us: best and median of REPS runs of `iters` round trips. */
static void latency(btl_module_t *m, btl_endpoint_t *ep, int rank, size_t hl, const char *what)
{
    uint64_t v = 42;
    uint8_t hdr[64] = {0};
    btl_payload_t p = {.data = &v, .len = sizeof(v)};
    double t[REPS];

    for (int r = 0; r < REPS; r++) {
        rte_fence(false);
        pings = 0;
        double t0 = now();
        for (long i = 0; i < iters; i++) {
            if (rank == 0)
                send_spin(m, ep, PING_TAG, hdr, hl, &p);
            while (pings <= i)
                m->progress(m);
            if (rank == 1)
                send_spin(m, ep, PING_TAG, hdr, hl, &p);
        }
        t[r] = (now() - t0) / (double)iters / 2 * 1e6;
    }
    qsort(t, REPS, sizeof(t[0]), cmp_double);
    if (rank == 0)
        printf("  %-44s %8.3f us  (median %.3f)\n", what, t[0], t[REPS / 2]);
}

static void cacheline(int rank)
{
    double t[REPS];
    for (int r = 0; r < REPS; r++) {
        rte_fence(false);
        uint64_t base = (uint64_t)r * (uint64_t)iters * 2;
        double t0 = now();
        for (uint64_t i = 1; i <= (uint64_t)iters; i++) {
            if (rank == 0) {
                line[0] = base + i;
                while (line[8] != base + i)
                    ;
            } else {
                while (line[0] != base + i)
                    ;
                line[8] = base + i;
            }
        }
        t[r] = (now() - t0) / (double)iters / 2 * 1e6;
    }
    qsort(t, REPS, sizeof(t[0]), cmp_double);
    if (rank == 0)
        printf("  %-44s %8.3f us  (median %.3f)\n", "cache-line ping-pong, one way", t[0],
               t[REPS / 2]);
}

static void rate(btl_module_t *m, btl_endpoint_t *ep, int rank)
{
    uint64_t v = 7;
    btl_payload_t p = {.data = &v, .len = sizeof(v)};
    double best = 0;
    for (int r = 0; r < REPS; r++) {
        rte_fence(false);
        pings = 0;
        double t0 = now();
        if (rank == 0)
            for (long i = 0; i < iters; i++)
                send_spin(m, ep, PING_TAG, NULL, 0, &p);
        else
            while (pings < iters)
                m->progress(m);
        rte_fence(false);
        best = RAIL_MAX(best, (double)iters / (now() - t0));
    }
    if (rank == 0)
        printf("  %-44s %8.2f M/s\n", "8-byte messages, streaming", best / 1e6);
}

static double gbps(size_t bytes, long n, double secs)
{
    return (double)bytes * (double)n / secs / 1e9;
}

static void bandwidth(btl_module_t *m, btl_endpoint_t *ep, int rank, size_t size, uint8_t *src,
                      uint8_t *dst)
{
    long n = RAIL_MAX(20L, (long)(2e9 / (double)size) / 10);
    double best_get = 0, best_cpy = 0;
    for (int r = 0; r < REPS; r++) {
        struct iovec l = {dst, size}, rv = {(void *)(uintptr_t)peer_addr, size};
        double t0 = now();
        for (long i = 0; (m->flags & BTL_FLAG_GET) && i < n; i++)
            m->get(m, ep, &l, 1, &peer_reg, &rv, 1, 0, NULL, NULL);
        double t1 = now();
        for (long i = 0; i < n; i++) {
            memcpy(dst, src, size);
            __asm__ __volatile__("" ::: "memory");
        }
        double t2 = now();
        best_get = RAIL_MAX(best_get, gbps(size, n, t1 - t0));
        best_cpy = RAIL_MAX(best_cpy, gbps(size, n, t2 - t1));
    }
    if (m->flags & BTL_FLAG_GET)
        printf("  %-44s %8.2f GB/s  (memcpy %.2f GB/s)\n",
               size == MIB ? "get, 1 MiB" : "get, 4 MiB", best_get, best_cpy);
    else
        printf("  get unavailable (memcpy %zu bytes: %.2f GB/s)\n", size, best_cpy);
}

static void copy_in_out(btl_module_t *m, btl_endpoint_t *ep, int rank, uint8_t *src)
{
    size_t total = 4 * MIB, piece = m->max_send_size - 8;
    double best = 0;
    for (int r = 0; r < REPS; r++) {
        rte_fence(false);
        data_bytes = 0;
        double t0 = now();
        for (int k = 0; k < 10; k++) {
            if (rank == 0)
                for (uint64_t off = 0; off < total; off += piece) {
                    btl_payload_t p = {.data = src + off, .len = RAIL_MIN(piece, total - off)};
                    send_spin(m, ep, DATA_TAG, &off, sizeof(off), &p);
                }
            else
                while (data_bytes < (long)total * (k + 1))
                    m->progress(m);
        }
        rte_fence(false);
        best = RAIL_MAX(best, gbps(total, 10, now() - t0));
    }
    if (rank == 0)
        printf("  %-44s %8.2f GB/s\n", "copy in/out through sends, 4 MiB", best);
}

/* One way, in us, best of REPS: eager send of n bytes copied out, or
 * rendezvous (a 32-byte send, a get of n bytes, a 32-byte reply). */
static double one_way(btl_module_t *m, btl_endpoint_t *ep, int rank, size_t n, bool rndv,
                      uint8_t *src, uint8_t *dst, long reps)
{
    uint8_t hdr[32] = {0};
    btl_payload_t p = {.data = src, .len = n};
    struct iovec l = {dst, n}, r = {(void *)(uintptr_t)peer_addr, n};
    double best = 1e9;
    for (int k = 0; k < REPS; k++) {
        rte_fence(false);
        pings = rts = 0;
        double t0 = now();
        for (long i = 0; i < reps; i++) {
            bool mine = (rank == 0);
            for (int turn = 0; turn < 2; turn++, mine = !mine) {
                if (mine && !rndv) {
                    send_spin(m, ep, EAGER_TAG, hdr, sizeof(hdr), &p);
                } else if (mine) {
                    send_spin(m, ep, RNDV_TAG, hdr, sizeof(hdr), NULL);
                    while (rts <= 2 * i + turn)
                        m->progress(m);   /* the peer's "done" */
                } else if (!rndv) {
                    while (pings <= i)
                        m->progress(m);
                } else {
                    while (rts <= 2 * i + turn)
                        m->progress(m);
                    m->get(m, ep, &l, 1, &peer_reg, &r, 1, 0, NULL, NULL);
                    send_spin(m, ep, RNDV_TAG, hdr, sizeof(hdr), NULL);
                }
            }
        }
        best = RAIL_MIN(best, (now() - t0) / (double)reps / 2 * 1e6);
    }
    return best;
}

static void eager_vs_rndv(btl_module_t *m, btl_endpoint_t *ep, int rank, uint8_t *src,
                          uint8_t *dst)
{
    if (!(m->flags & BTL_FLAG_GET))
        return;
    if (rank == 0)
        printf("  %-10s %12s %12s\n", "bytes", "eager us", "rendezvous us");
    for (size_t n = 1024; n <= 64 * 1024 && n + 32 <= m->max_send_size; n *= 2) {
        long reps = RAIL_MAX(2000L, iters / 20);
        double e = one_way(m, ep, rank, n, false, src, dst, reps);
        double r = one_way(m, ep, rank, n, true, src, dst, reps);
        if (rank == 0)
            printf("  %-10zu %12.3f %12.3f\n", n, e, r);
    }
}

/* sm_test_init, timed: component init (segment creation, pre-fault) and
 * add_procs (mapping the peer). */
static btl_module_t *timed_init(btl_endpoint_t **eps, int rank)
{
    btl_module_t *mods[1];
    btl_proc_t procs[2] = {{.rank = 0, .local = true}, {.rank = 1, .local = true}};
    int n = 1;
    CHECK(btl_sm_component.register_params() == MPI_SUCCESS, "params");
    double t0 = now();
    CHECK(btl_sm_component.init(mods, &n) == MPI_SUCCESS && n == 1, "init");
    double t1 = now();
    rte_fence(true);
    double t2 = now();
    CHECK(mods[0]->add_procs(mods[0], 2, procs, eps) == MPI_SUCCESS, "add_procs");
    double t3 = now();
    if (rank == 0)
        printf("btl sm micro-benchmark, 2 processes: init %.2f ms (segment %zu KiB), "
               "add_procs %.3f ms\n", (t1 - t0) * 1e3, btl_sm_module.seg_size >> 10,
               (t3 - t2) * 1e3);
    return mods[0];
}

static int bench_main(int rank, int size, void *arg)
{
    pin(rank);
    btl_endpoint_t **eps = calloc(2, sizeof(*eps));
    btl_module_t *m = timed_init(eps, rank);
    btl_endpoint_t *ep = eps[1 - rank];
    uint8_t *src = malloc(4 * MIB), *dst = malloc(4 * MIB);
    sink = malloc(4 * MIB);
    CHECK(src && dst && sink, "out of memory");
    memset(src, 1, 4 * MIB), memset(dst, 2, 4 * MIB), memset(sink, 3, 4 * MIB);
    btl_register_recv(PING_TAG, ping_recv);
    btl_register_recv(EAGER_TAG, eager_recv);
    btl_register_recv(DATA_TAG, data_recv);
    btl_register_recv(CARD_TAG, card_recv);
    btl_register_recv(RNDV_TAG, rts_recv);

    cacheline(rank);
    latency(m, ep, rank, 0, "8-byte AM, no header, one way");
    latency(m, ep, rank, 24, "8-byte AM + 24-byte header, one way");
    rate(m, ep, rank);
    uint8_t card[sizeof(btl_reg_t) + 8];
    btl_reg_t reg = {0};
    uint64_t addr = (uintptr_t)src;
    if (m->flags & BTL_FLAG_GET)
        m->register_mem(m, src, 4 * MIB, &reg);
    memcpy(card, &reg, sizeof(reg)), memcpy(card + sizeof(reg), &addr, 8);
    btl_payload_t p = {.data = card, .len = sizeof(card)};
    send_spin(m, ep, CARD_TAG, NULL, 0, &p);
    while (cards < 1)
        m->progress(m);
    rte_fence(false);
    if (rank == 0) {
        bandwidth(m, ep, rank, MIB, src, dst);
        bandwidth(m, ep, rank, 4 * MIB, src, dst);
    }
    copy_in_out(m, ep, rank, src);
    eager_vs_rndv(m, ep, rank, src, dst);
    sm_test_fini(m, eps);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iters = atol(argv[1]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    sm_test_opts_t o = {.kill_rank = -1, .timeout_s = 600};
    sm_test_run("bench", 2, bench_main, NULL, &o);
    return 0;
}
