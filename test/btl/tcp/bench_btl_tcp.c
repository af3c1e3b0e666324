/*
 * btl tcp micro-benchmark (built by `make check`, not run by it).
 *
 *   bench_btl_tcp [options] bw|plain|lat|plainlat
 *
 *   bw        rank 0 streams --total bytes to rank 1 as active messages of
 *             --frag bytes (max_send_size is raised to fit), rank 1 answers
 *             with one message when all arrived; GB/s = total / time to answer
 *   plain     the same over one plain blocking TCP socket (write/read of
 *             --frag bytes): what the btl is compared with
 *   lat       ping-pong of active messages with --frag payload bytes
 *             (default 0): half the round trip
 *   plainlat  the same over a plain socket (TCP_NODELAY, blocking)
 *   check     both ranks send each other checked messages of 0 B to 3 MiB
 *             (every byte and the order verified; for the namespace test)
 *
 * Both ends are forked on this host (loopback) unless --rank is given: then
 * this process is that rank of a 2-rank job whose fake rte lives in --dir
 * (the other rank is started the same way, e.g. in another network
 * namespace).  --nodes a,b gives the ranks' node numbers (default 0,1 with
 * --rank, else 0,0); plain modes need --addr (rank 1's address).
 * Options: --total N (1g), --frag N (1m; lat: 0), --reps N (5), --iters N
 * (lat: 20000), --sleep (wait on wait_fd when idle, as the progress engine
 * does; default: poll without sleeping), --spin N (idle polls before such a
 * wait, default 0).
 */
#include "test/btl/tcp/tcp_test.h"
#include "btl/tcp/tcp.h"
#include "base/param.h"
#include "runtime/rte.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct bench_opts {
    const char *mode;
    size_t total, frag;
    int reps, iters;
    bool sleep;
    int spin;                      /* idle polls before sleeping (with --sleep) */
    const char *addr;
} bench_opts_t;

static bench_opts_t opt = {.total = (size_t)1 << 30, .frag = 1 << 20, .reps = 5, .iters = 20000};
static volatile long got_msgs, got_bytes;

static void on_data(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                    const void *payload, size_t len)
{
    got_msgs++;
    got_bytes += (long)len;
}

/* Progress; when idle for a while, wait on wait_fd if --sleep. */
static void bench_progress(btl_module_t *m, int *idle)
{
    if (m->progress(m) > 0) {
        *idle = 0;
        return;
    }
    if (opt.sleep && ++*idle > opt.spin) {
        struct pollfd p = {.fd = m->wait_fd, .events = POLLIN};
        poll(&p, 1, 10);
    }
}

static void bench_send(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *data,
                       size_t len)
{
    uint64_t h[2] = {0};
    btl_payload_t p = {.data = data, .len = len};
    int rc, idle = 0;
    while ((rc = m->send(m, ep, tag, h, sizeof(h), &p)) == RAIL_AGAIN)
        bench_progress(m, &idle);
    CHECK(rc == MPI_SUCCESS, "send: %d", rc);
}

static void bench_wait(btl_module_t *m, volatile long *counter, long target)
{
    int idle = 0;
    while (*counter < target)
        bench_progress(m, &idle);
}

static void report(const char *what, double *v, int n, const char *unit)
{
    double best = v[0], sum = 0;
    for (int i = 0; i < n; i++) {
        best = strcmp(unit, "us") == 0 ? RAIL_MIN(best, v[i]) : RAIL_MAX(best, v[i]);
        sum += v[i];
    }
    printf("%-11s frag %8zu: best %8.3f %s, mean %8.3f %s (%d runs)\n", what, opt.frag, best,
           unit, sum / n, unit, n);
    fflush(stdout);
}

/* CPU time this process used, per GB moved (robust on a busy machine). */
static void report_cpu(int rank, double gb)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
    double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    printf("%-11s rank %d (%s): cpu %.3f s user + %.3f s sys per GB\n", opt.mode, rank,
           rank ? "receiver" : "sender", user / gb, sys / gb);
    fflush(stdout);
}

/* ------------------------------------------------------------ btl */

static void btl_bw(btl_module_t *m, btl_endpoint_t **eps, int rank)
{
    char *buf = malloc(opt.frag);
    long per_rep = (long)(opt.total / opt.frag);
    double gbs[64];
    CHECK(buf, "out of memory");
    memset(buf, 1, opt.frag);
    btl_register_recv(1, on_data);
    btl_register_recv(2, on_data);
    for (int rep = 0; rep <= opt.reps; rep++) {      /* rep 0 warms up */
        if (rank == 0) {
            long acks = got_msgs;
            double t0 = tcp_test_now();
            for (long i = 0; i < per_rep; i++)
                bench_send(m, eps[1], 1, buf, opt.frag);
            bench_wait(m, &got_msgs, acks + 1);
            if (rep > 0)
                gbs[rep - 1] = (double)per_rep * (double)opt.frag / (tcp_test_now() - t0) / 1e9;
        } else {
            bench_wait(m, &got_msgs, (rep + 1) * per_rep);
            bench_send(m, eps[0], 2, buf, 0);
        }
    }
    if (rank == 0)
        report(opt.sleep ? "btl bw/slp" : "btl bw", gbs, opt.reps, "GB/s");
    report_cpu(rank, (double)(opt.reps + 1) * (double)per_rep * (double)opt.frag / 1e9);
    free(buf);
}

static void btl_lat(btl_module_t *m, btl_endpoint_t **eps, int rank)
{
    char *buf = calloc(1, opt.frag + 1);
    double us[64];
    btl_register_recv(1, on_data);
    for (int rep = 0; rep <= opt.reps; rep++) {
        long base = got_msgs;
        double t0 = tcp_test_now();
        for (int i = 0; i < opt.iters; i++) {
            if (rank == 0) {
                bench_send(m, eps[1], 1, buf, opt.frag);
                bench_wait(m, &got_msgs, base + i + 1);
            } else {
                bench_wait(m, &got_msgs, base + i + 1);
                bench_send(m, eps[0], 1, buf, opt.frag);
            }
        }
        if (rep > 0)
            us[rep - 1] = (tcp_test_now() - t0) / opt.iters / 2 * 1e6;
    }
    if (rank == 0)
        report(opt.sleep ? "btl lat/slp" : "btl lat", us, opt.reps, "us");
    free(buf);
}

/* Checked messages of many sizes both ways, all at once. */
static void btl_check(btl_module_t *m, btl_endpoint_t **eps, int rank)
{
    static const size_t sizes[] = {0, 1, 7, 64, 1000, 4096, 65535, 65537, 200000, 1 << 20,
                                   3 * 1024 * 1024 + 17};
    long frames = 0;
    tcp_test_msg_init(m);
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            tcp_test_msg_send(m, eps[1 - rank], 1 - rank, sizes[i]);
            frames += tcp_test_msg_frames(m, sizes[i]);
        }
    tcp_test_progress_until(m, &tcp_test_received, frames, 60);
    if (rank == 0)
        printf("check: %ld frames, %ld bytes each way verified\n", frames, tcp_test_bytes);
}

static int run_btl(int rank)
{
    btl_endpoint_t **eps;
    btl_module_t *m = tcp_test_init(&eps);
    if (strcmp(opt.mode, "check") == 0) {
        btl_check(m, eps, rank);
        tcp_test_fini(m, eps);
        return 0;
    }
    CHECK(m->max_send_size >= opt.frag + 16, "max_send_size %zu < frag %zu", m->max_send_size,
          opt.frag);
    if (strcmp(opt.mode, "bw") == 0)
        btl_bw(m, eps, rank);
    else
        btl_lat(m, eps, rank);
    tcp_test_fini(m, eps);
    return 0;
}

/* ------------------------------------------------------------ plain sockets */

static void full_io(int fd, char *buf, size_t len, bool wr)
{
    while (len) {
        ssize_t n = wr ? send(fd, buf, len, MSG_NOSIGNAL) : recv(fd, buf, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        CHECK(n > 0, "%s: %s", wr ? "send" : "recv", n == 0 ? "closed" : strerror(errno));
        buf += n;
        len -= (size_t)n;
    }
}

/* Rank 1 listens and writes its port to <dir>/plain.port; rank 0 connects. */
static int plain_connect(int rank)
{
    char path[512];
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    snprintf(path, sizeof(path), "%s/plain.port", tcp_test_dir);
    CHECK(fd >= 0, "socket");
    if (rank == 1) {
        CHECK(inet_pton(AF_INET, opt.addr ? opt.addr : "127.0.0.1", &a.sin_addr) == 1, "addr");
        CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 1) == 0, "listen");
        CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0, "getsockname");
        FILE *f = fopen(path, "w");
        CHECK(f, "%s", path);
        fprintf(f, "%u\n", (unsigned)ntohs(a.sin_port));
        fclose(f);
        CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
        int c = accept(fd, NULL, NULL);
        CHECK(c >= 0, "accept");
        close(fd);
        fd = c;
    } else {
        unsigned port = 0;
        CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
        FILE *f = fopen(path, "r");
        CHECK(f && fscanf(f, "%u", &port) == 1, "port");
        fclose(f);
        CHECK(inet_pton(AF_INET, opt.addr ? opt.addr : "127.0.0.1", &a.sin_addr) == 1, "addr");
        a.sin_port = htons((uint16_t)port);
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s", strerror(errno));
    }
    if (strcmp(opt.mode, "plainlat") == 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static int run_plain(int rank)
{
    int fd = plain_connect(rank);
    bool lat = strcmp(opt.mode, "plainlat") == 0;
    size_t msg = lat ? opt.frag + 16 : opt.frag;
    long per_rep = lat ? opt.iters : (long)(opt.total / opt.frag);
    char *buf = calloc(1, msg + 1), ack = 0;
    double v[64];
    for (int rep = 0; rep <= opt.reps; rep++) {
        double t0 = tcp_test_now();
        for (long i = 0; i < per_rep; i++) {
            if (lat) {
                full_io(fd, buf, msg, rank == 0);
                full_io(fd, buf, msg, rank != 0);
            } else {
                full_io(fd, buf, opt.frag, rank == 0);
            }
        }
        if (!lat)
            full_io(fd, &ack, 1, rank != 0);
        double t = tcp_test_now() - t0;
        if (rep > 0)
            v[rep - 1] = lat ? t / per_rep / 2 * 1e6 : (double)per_rep * (double)opt.frag / t / 1e9;
    }
    if (rank == 0)
        report(lat ? "plain lat" : "plain bw", v, opt.reps, lat ? "us" : "GB/s");
    if (!lat)
        report_cpu(rank, (double)(opt.reps + 1) * (double)per_rep * (double)opt.frag / 1e9);
    close(fd);
    free(buf);
    return 0;
}

/* ------------------------------------------------------------ main */

static int bench_rank(int rank, int size, void *arg)
{
    tcp_test_rank = rank;
    if (strncmp(opt.mode, "plain", 5) == 0)
        return run_plain(rank);
    return run_btl(rank);
}

static size_t size_arg(const char *s)
{
    size_t v;
    if (!rail_param_parse_size(s, &v)) {
        fprintf(stderr, "bad size %s\n", s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    int rank = -1, nodes[2] = {0, 0};
    bool nodes_set = false, frag_set = false;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(a, "--rank") == 0) rank = atoi(v), i++;
        else if (strcmp(a, "--dir") == 0) dir = v, i++;
        else if (strcmp(a, "--nodes") == 0) nodes_set = sscanf(v, "%d,%d", &nodes[0], &nodes[1]) == 2, i++;
        else if (strcmp(a, "--addr") == 0) opt.addr = v, i++;
        else if (strcmp(a, "--total") == 0) opt.total = size_arg(v), i++;
        else if (strcmp(a, "--frag") == 0) opt.frag = size_arg(v), frag_set = true, i++;
        else if (strcmp(a, "--reps") == 0) opt.reps = RAIL_MIN(atoi(v), 64), i++;
        else if (strcmp(a, "--iters") == 0) opt.iters = atoi(v), i++;
        else if (strcmp(a, "--sleep") == 0) opt.sleep = true;
        else if (strcmp(a, "--spin") == 0) opt.spin = atoi(v), i++;
        else opt.mode = a;
    }
    if (!opt.mode || (strcmp(opt.mode, "bw") && strcmp(opt.mode, "plain") &&
                      strcmp(opt.mode, "lat") && strcmp(opt.mode, "plainlat") &&
                      strcmp(opt.mode, "check"))) {
        fprintf(stderr, "usage: %s [--rank R --dir D [--nodes a,b]] [--addr A] [--total N] "
                        "[--frag N] [--reps N] [--iters N] [--sleep [--spin N]] "
                        "bw|plain|lat|plainlat|check\n",
                argv[0]);
        return 2;
    }
    if (!frag_set && strstr(opt.mode, "lat"))
        opt.frag = 0;
    if (!frag_set && strcmp(opt.mode, "check") == 0)
        opt.frag = 256 * 1024;     /* frames of 256 KiB: large messages are split */
    if (opt.frag == 0 && !strstr(opt.mode, "lat"))
        opt.frag = 1;
    char max_send[64];
    snprintf(max_send, sizeof(max_send), "%zu", RAIL_MAX(opt.frag + 64, (size_t)128 * 1024));
    setenv("RAIL_BTL_TCP_MAX_SEND_SIZE", max_send, 0);
    if (rank < 0) {
        /* Both ends here, over loopback. */
        setenv("RAIL_BTL_TCP_IF_INCLUDE", "lo", 0);
        tcp_test_opts_t o = {.timeout_s = 600, .nodes = nodes_set ? nodes : NULL};
        int rc = tcp_test_run(opt.mode, 2, bench_rank, NULL, &o);
        tcp_test_summary("bench_btl_tcp");
        return rc;
    }
    if (!dir || rank > 1) {
        fprintf(stderr, "--rank needs --dir, and a rank of 0 or 1\n");
        return 2;
    }
    if (!nodes_set)
        nodes[1] = 1;
    snprintf(tcp_test_dir, sizeof(tcp_test_dir), "%s", dir);
    tcp_fake_rte_setup(dir, "bench", 2, nodes);
    tcp_fake_rte_rank(rank);
    return bench_rank(rank, 2, NULL);
}
