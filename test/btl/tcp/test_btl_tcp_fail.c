/*
 * btl tcp: peers that die, leave, or are not what the modex says.  In each
 * case rank 0's sends must end with an error (never hang, never succeed
 * silently), and the reason must be logged once - except for a peer that
 * finalized in order, which is only an error when something is sent to it.
 *
 *   killed      rank 1 dies (SIGKILL) while rank 0 floods it
 *   finalized   rank 1 finalizes (says goodbye); rank 0 then sends
 *   refused     rank 1's card names a port nobody listens on
 *   rejecting   rank 1's card names a process that closes every connection
 *   impostor    rank 1's card names a process that answers without the secret
 *   busy        rank 1's card names a socket that accepts and never answers:
 *               a peer busy computing looks like this, so rank 0 must keep
 *               waiting (send says RAIL_AGAIN), not fail, and say nothing
 */
#include "test/btl/tcp/tcp_test.h"
#include "btl/tcp/tcp.h"
#include "runtime/rte.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENV "RAIL_BTL_TCP_IF_INCLUDE=lo RAIL_BTL_TCP_HANDSHAKE_TIMEOUT_MS=500"

static bool file_exists(const char *name)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", tcp_test_dir, name);
    return stat(path, &st) == 0;
}

static void file_touch(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tcp_test_dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f, "cannot create %s", path);
    fclose(f);
}

static void wait_file(const char *name)
{
    double start = tcp_test_now();
    while (!file_exists(name)) {
        usleep(1000);
        CHECK(tcp_test_now() - start < 30, "%s never appeared", name);
    }
}

/* Send 64 KB messages to rank 1 until send fails; returns its error. */
static int send_until_error(btl_module_t *m, btl_endpoint_t *ep, int limit_s)
{
    static char buf[65536];
    uint64_t h[6] = {0};
    btl_payload_t p = {.data = buf, .len = sizeof(buf)};
    double start = tcp_test_now();
    int rc;
    while ((rc = m->send(m, ep, 9, h, sizeof(h), &p)) == MPI_SUCCESS || rc == RAIL_AGAIN) {
        tcp_test_progress(m, rc == RAIL_AGAIN ? 1 : 0);
        CHECK(tcp_test_now() - start < limit_s, "sends to rank 1 still succeed after %d s",
              limit_s);
    }
    return rc;
}

static void sink(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                 const void *payload, size_t len)
{
}

/* ------------------------------------------------------------ killed, finalized */

static int t_killed(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = tcp_test_init(&eps);
    tcp_test_msg_init(m);
    btl_register_recv(9, sink);
    if (rank == 1) {
        tcp_test_progress_until(m, &tcp_test_received, 1, 20);
        file_touch("connected");
        usleep(300 * 1000);        /* rank 0 fills the socket and its queue */
        raise(SIGKILL);
    }
    tcp_test_msg_send(m, eps[1], 1, 100);
    wait_file("connected");
    int rc = send_until_error(m, eps[1], 20);
    CHECK(rc == MPI_ERR_OTHER, "send failed with %d", rc);
    rc = send_until_error(m, eps[1], 1);
    CHECK(rc == MPI_ERR_OTHER, "second send failed with %d", rc);
    m->finalize(m);
    return 0;
}

static int t_finalized(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = tcp_test_init(&eps);
    btl_proc_t procs[2] = {{.rank = 0}, {.rank = 1}};
    tcp_test_msg_init(m);
    if (rank == 1) {
        tcp_test_progress_until(m, &tcp_test_received, 1, 20);
        tcp_test_msg_send(m, eps[0], 0, 100);
        CHECK(m->del_procs(m, 2, procs, eps) == MPI_SUCCESS, "del_procs");
        m->finalize(m);
        return 0;
    }
    tcp_test_msg_send(m, eps[1], 1, 100);
    tcp_test_progress_until(m, &tcp_test_received, 1, 20);
    double start = tcp_test_now();
    while (eps[1]->state != BTL_TCP_EP_FAILED && tcp_test_now() - start < 5)
        tcp_test_progress(m, 10);
    int rc = send_until_error(m, eps[1], 5);
    CHECK(rc == MPI_ERR_OTHER, "send failed with %d", rc);
    m->finalize(m);
    return 0;
}

/* ------------------------------------------------------------ wrong cards */

typedef enum { FAKE_REFUSED, FAKE_REJECTING, FAKE_IMPOSTOR, FAKE_BUSY } fake_kind_t;

/* Rank 1 of these tests: publish a card naming a socket of ours. */
static int fake_peer(fake_kind_t kind)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "bind");
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0, "getsockname");
    if (kind == FAKE_REFUSED)
        close(fd);                 /* nothing listens on that port any more */
    else
        CHECK(listen(fd, 4) == 0, "listen");
    btl_tcp_card_t card;
    memset(&card, 0, sizeof(card));
    card.magic = BTL_TCP_CARD_MAGIC;
    card.version = BTL_TCP_VERSION;
    card.n_addrs = 1;
    card.max_frame = 1 << 20;
    btl_tcp_random(card.secret, sizeof(card.secret));
    card.addrs[0] = (btl_tcp_card_addr_t){a.sin_addr.s_addr, a.sin_port, 8, BTL_TCP_ADDR_LOOPBACK};
    CHECK(rte_modex_put(BTL_TCP_MODEX_KEY, &card, sizeof(card)) == MPI_SUCCESS, "put");
    CHECK(rte_fence(true) == MPI_SUCCESS, "fence");
    if (kind == FAKE_IMPOSTOR) {
        /* Answer the greeting with a verdict whose proof is made up. */
        uint8_t g[BTL_TCP_GREETING_LEN], v[BTL_TCP_VERDICT_LEN];
        int c = accept(fd, NULL, NULL);
        CHECK(c >= 0, "accept");
        CHECK(recv(c, g, sizeof(g), MSG_WAITALL) == (ssize_t)sizeof(g), "greeting");
        memcpy(v, "RAILTCP+", 8);
        btl_tcp_random(v + 8, sizeof(v) - 8);
        CHECK(send(c, v, sizeof(v), MSG_NOSIGNAL) == (ssize_t)sizeof(v), "send");
        wait_file("done");
        close(c);
    }
    while (kind == FAKE_REJECTING && !file_exists("done")) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10) == 1)
            close(accept(fd, NULL, NULL));
    }
    wait_file("done");
    return 0;
}

static int t_wrong_card(int rank, int size, void *arg)
{
    fake_kind_t kind = *(const fake_kind_t *)arg;
    if (rank == 1)
        return fake_peer(kind);
    btl_endpoint_t **eps;
    btl_module_t *m = tcp_test_init(&eps);
    if (kind == FAKE_BUSY) {
        uint64_t h = 0;
        btl_payload_t p = {.data = "x", .len = 1};
        double start = tcp_test_now();
        while (tcp_test_now() - start < 2) {
            int rc = m->send(m, eps[1], 9, &h, sizeof(h), &p);
            CHECK(rc == RAIL_AGAIN, "send to a busy peer returned %d", rc);
            tcp_test_progress(m, 10);
        }
    } else {
        int rc = send_until_error(m, eps[1], 10);
        CHECK(rc == MPI_ERR_OTHER, "send failed with %d", rc);
    }
    file_touch("done");
    m->finalize(m);
    return 0;
}

static void check_log(const char *what, int rank, const char *needle, int count)
{
    char *log = tcp_test_log(rank), name[256];
    bool ok = tcp_test_count(log, needle) == count && tcp_test_count(log, "rail") == count;
    snprintf(name, sizeof(name), "%s: rank %d logged \"%s\" %s", what, rank, needle,
             count ? "once" : "nowhere");
    check_case(name, ok);
    if (!ok)
        fprintf(stderr, "rank %d logged:\n%s", rank, log);
    free(log);
}

int main(void)
{
    tcp_test_opts_t o = {.timeout_s = 60, .env = ENV, .may_fail = 1u << 1};
    if (tcp_test_run("killed", 2, t_killed, NULL, &o) == 0)
        check_log("killed", 0, "connection lost", 1);
    o.may_fail = 0;
    if (tcp_test_run("finalized", 2, t_finalized, NULL, &o) == 0) {
        check_log("finalized", 0, "rail", 0);
        check_log("finalized", 1, "rail", 0);
    }
    fake_kind_t k = FAKE_REFUSED;
    if (tcp_test_run("refused", 2, t_wrong_card, &k, &o) == 0)
        check_log("refused", 0, "Connection refused", 1);
    k = FAKE_REJECTING;
    if (tcp_test_run("rejecting", 2, t_wrong_card, &k, &o) == 0)
        check_log("rejecting", 0, "cannot connect", 1);
    k = FAKE_IMPOSTOR;
    if (tcp_test_run("impostor", 2, t_wrong_card, &k, &o) == 0)
        check_log("impostor", 0, "failed authentication", 1);
    k = FAKE_BUSY;
    if (tcp_test_run("busy", 2, t_wrong_card, &k, &o) == 0)
        check_log("busy", 0, "rail", 0);
    return tcp_test_summary("test_btl_tcp_fail");
}
