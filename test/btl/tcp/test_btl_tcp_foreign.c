/*
 * btl tcp: connections from processes that are not peers of the job.
 *
 *   foreign   rank 0 talks to rank 1 through the btl while rank 2, with raw
 *             sockets, connects to rank 0's port: without a greeting,
 *             with garbage, from "another job", with a wrong secret,
 *             replaying a recorded (legitimate) greeting, the same with its
 *             nonce changed, too slowly, as a rank that does not exist,
 *             addressed to another rank.
 *             Every one of these is closed by rank 0 and logged once with
 *             its address; the legitimate handshake (made with the secrets
 *             of the modex) is accepted; no byte of the attacker reaches a
 *             receive callback; rank 0 and rank 1 keep talking.
 *   other job a process of job B whose modex (wrongly) points at a rank of
 *             job A: job A rejects it ("another job"), job B's send fails
 *             with an error instead of hanging.
 */
#include "test/btl/tcp/tcp_test.h"
#include "btl/tcp/tcp.h"
#include "runtime/rte.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENV "RAIL_BTL_TCP_IF_INCLUDE=lo RAIL_BTL_TCP_HANDSHAKE_TIMEOUT_MS=700"
#define MARKER "FOREIGN!"

static const char magic1[8] = {'R', 'A', 'I', 'L', 'T', 'C', 'P', '1'};

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

/* ------------------------------------------------------------ the victim side */

static volatile long foreign_seen;

/* Tags the test traffic does not use: anything arriving here is foreign. */
static void spy_cb(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                   const void *payload, size_t len)
{
    foreign_seen++;
    fprintf(stderr, "rank %d: unexpected message (%zu + %zu bytes) from rank %d\n", tcp_test_rank,
            hdr_len, len, ep->rank);
}

/* Talk to peer (and receive from it) until the file `done` appears and
 * something came from the peer.  The second condition matters: `done` may
 * appear before this rank sent anything, and the peer may be waiting for
 * this rank to take its connection; leaving for the closing fence at once,
 * without progress, would leave that peer's send pending. */
static void talk_until(btl_module_t *m, btl_endpoint_t **eps, int peer, const char *done)
{
    long sent = 0;
    for (uint8_t t = 0; t < BTL_TAG_MAX; t++)
        if (t != TCP_TEST_TAG)
            btl_register_recv(t, spy_cb);
    double start = tcp_test_now();
    while (!file_exists(done) || tcp_test_received == 0) {
        if (sent < tcp_test_received + 4)
            tcp_test_msg_send(m, eps[peer], peer, (size_t)(sent++ * 997 % 70000));
        tcp_test_progress(m, 2);
        CHECK(tcp_test_now() - start < 40, "%s never appeared", done);
    }
    CHECK(foreign_seen == 0, "%ld foreign messages delivered", foreign_seen);
}

/* ------------------------------------------------------------ the attacker */

static struct sockaddr_in target_addr(int rank)
{
    void *data;
    size_t len;
    CHECK(rte_modex_get(rank, BTL_TCP_MODEX_KEY, &data, &len) == MPI_SUCCESS, "card");
    btl_tcp_card_t *card = data;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = card->addrs[0].ip,
                            .sin_port = card->addrs[0].port};
    free(data);
    return a;
}

static int att_connect(const struct sockaddr_in *a)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0, "socket");
    CHECK(connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0, "connect: %s", strerror(errno));
    return fd;
}

static void att_write(int fd, const void *p, size_t n)
{
    CHECK(send(fd, p, n, MSG_NOSIGNAL) == (ssize_t)n, "write: %s", strerror(errno));
}

static void att_read(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        CHECK(poll(&pf, 1, 5000) == 1, "no answer within 5 s");
        ssize_t r = recv(fd, (char *)p + got, n - got, 0);
        CHECK(r > 0, "connection closed while reading %zu bytes", n);
        got += (size_t)r;
    }
}

/* The victim must close the connection (EOF or reset) within 5 s. */
static void att_expect_closed(int fd, const char *what)
{
    char buf[256];
    double start = tcp_test_now();
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        CHECK(poll(&pf, 1, 5000) == 1 && tcp_test_now() - start < 5, "%s: not closed", what);
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET))
            break;
        CHECK(r > 0, "%s: recv: %s", what, strerror(errno));
    }
    close(fd);
}

static void hmac(const uint8_t *key, const char *label, const void *a, size_t alen,
                 const void *b, size_t blen, uint8_t *out)
{
    rail_hmac_t h;
    rail_hmac_init(&h, key, RAIL_SHA256_LEN);
    rail_hmac_update(&h, label, 1);
    rail_hmac_update(&h, a, alen);
    rail_hmac_update(&h, b, blen);
    rail_hmac_final(&h, out);
}

/* A greeting as the handshake defines it (tcp_handshake.c), its MAC under key. */
static void make_greeting(uint8_t *g, uint32_t src, uint32_t dst, const uint8_t *jobtag,
                          const uint8_t *key)
{
    memset(g, 0, BTL_TCP_GREETING_LEN);
    memcpy(g, magic1, 8);
    g[8] = BTL_TCP_VERSION;
    memcpy(g + 12, &src, 4);       /* little endian, as the handshake encodes */
    memcpy(g + 16, &dst, 4);
    memcpy(g + 24, jobtag, BTL_TCP_JOBTAG_LEN);
    CHECK(btl_tcp_random(g + 40, BTL_TCP_NONCE_LEN) == MPI_SUCCESS, "random");
    hmac(key, "I", g, BTL_TCP_GREETING_MAC, "", 0, g + BTL_TCP_GREETING_MAC);
}

/* Send a greeting, and (frame) a frame after it as the btl would send one,
 * with the marker as payload. */
static int att_greet(const struct sockaddr_in *a, const uint8_t *g, bool frame)
{
    uint8_t f[64];
    btl_tcp_fhdr_t fh = {.tag = TCP_TEST_TAG, .hdr_len = 48, .payload_len = 8};
    int fd = att_connect(a);
    att_write(fd, g, BTL_TCP_GREETING_LEN);
    if (frame) {
        memset(f, 'F', sizeof(f));
        memcpy(f, &fh, sizeof(fh));
        memcpy(f + 56, MARKER, 8);
        att_write(fd, f, sizeof(f));
    }
    return fd;
}

static void attack_greetings(btl_tcp_module_t *tm, const struct sockaddr_in *a)
{
    uint8_t g[BTL_TCP_GREETING_LEN], junk[200], other[BTL_TCP_JOBTAG_LEN], key[RAIL_SHA256_LEN];
    int fd;
    /* a. connect and close */
    close(att_connect(a));
    /* b. garbage */
    fd = att_connect(a);
    btl_tcp_random(junk, sizeof(junk));
    att_write(fd, junk, sizeof(junk));
    att_expect_closed(fd, "garbage");
    /* c. a greeting of another job */
    btl_tcp_jobtag("rail.some-other-job", other);
    btl_tcp_random(key, sizeof(key));
    make_greeting(g, 1, 0, other, key);
    att_expect_closed(att_greet(a, g, false), "other job");
    /* d. as rank 2 (not connected: a frame that got in would be delivered),
     * authenticated under a wrong secret, and a frame after it */
    make_greeting(g, 2, 0, tm->jobtag, key);
    att_expect_closed(att_greet(a, g, true), "wrong secret");
}

/* e. a legitimate handshake as rank 2 (we have the modex), recorded;
 * f. its replay; g. the same with another nonce (the MAC no longer fits). */
static void attack_replays(btl_tcp_module_t *tm, const struct sockaddr_in *a)
{
    uint8_t g[BTL_TCP_GREETING_LEN], key02[RAIL_SHA256_LEN], v[BTL_TCP_VERDICT_LEN];
    uint8_t mac[BTL_TCP_MAC_LEN];
    void *card;
    size_t len;
    CHECK(rte_modex_get(0, BTL_TCP_MODEX_KEY, &card, &len) == MPI_SUCCESS, "card");
    btl_tcp_pair_key(tm, 0, ((btl_tcp_card_t *)card)->secret, key02);
    free(card);
    make_greeting(g, 2, 0, tm->jobtag, key02);
    int legit = att_greet(a, g, false);
    att_read(legit, v, sizeof(v));
    hmac(key02, "A", g, sizeof(g), v, 8, mac);
    CHECK(memcmp(v, "RAILTCP+", 8) == 0, "legitimate handshake not accepted");
    CHECK(memcmp(mac, v + 8, sizeof(mac)) == 0, "rank 0 failed to prove itself");
    /* Say goodbye as the btl does and close: rank 2 is not connected any
     * more, so a replay that got in would have its frame delivered. */
    btl_tcp_fhdr_t bye = {.tag = BTL_TCP_TAG_BYE};
    att_write(legit, &bye, sizeof(bye));
    shutdown(legit, SHUT_WR);
    att_expect_closed(legit, "goodbye");
    att_expect_closed(att_greet(a, g, true), "replay");
    g[40] ^= 1;
    att_expect_closed(att_greet(a, g, true), "changed nonce");
}

static int t_attacker(btl_module_t *m)
{
    btl_tcp_module_t *tm = &btl_tcp_module;
    struct sockaddr_in a = target_addr(0);
    uint8_t g[BTL_TCP_GREETING_LEN], key[RAIL_SHA256_LEN];
    int fd;

    attack_greetings(tm, &a);
    attack_replays(tm, &a);
    /* h. too slow */
    fd = att_connect(&a);
    att_write(fd, magic1, 8);
    att_expect_closed(fd, "slow");
    /* i. a rank that does not exist; j. addressed to another rank */
    btl_tcp_random(key, sizeof(key));
    make_greeting(g, 7, 0, tm->jobtag, key);
    att_expect_closed(att_greet(&a, g, false), "rank 7");
    make_greeting(g, 2, 1, tm->jobtag, key);
    att_expect_closed(att_greet(&a, g, false), "addressed to rank 1");
    file_touch("attack.done");
    return 0;
}

static int t_foreign(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = tcp_test_init(&eps);
    tcp_test_msg_init(m);
    if (rank < 2)
        talk_until(m, eps, 1 - rank, "attack.done");
    else
        t_attacker(m);
    tcp_test_fini(m, eps);
    return 0;
}

static void check_foreign_logs(void)
{
    char *log = tcp_test_log(0), *log1 = tcp_test_log(1);
    static const char *reasons[] = {"before any greeting", "unexpected greeting", "another job",
                                    "rank 2 with a replayed handshake",
                                    "sent no complete greeting", "rank 7, which is not a peer",
                                    "addressed to rank 1"};
    bool ok = tcp_test_count(log, "rejected a connection from 127.0.0.1:") == 9 &&
              tcp_test_count(log, "warning") == 9 && tcp_test_count(log, "error") == 0 &&
              tcp_test_count(log, "rank 2 but failed authentication") == 2;
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
        ok = ok && tcp_test_count(log, reasons[i]) == 1;
    if (!ok)
        fprintf(stderr, "rank 0 logged:\n%s", log);
    check_case("foreign: each rejected connection logged once, with its address", ok);
    check_case("foreign: the legitimate peer logged nothing", log1[0] == '\0');
    free(log);
    free(log1);
}

/* ------------------------------------------------------------ another job */

static void join_job(const char *sub, const char *jobid, int rank)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/%s", tcp_test_dir, sub);
    mkdir(dir, 0700);
    tcp_fake_rte_setup(dir, jobid, 2, NULL);
    tcp_fake_rte_rank(rank);
}

static int t_other_job(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    join_job(rank < 2 ? "a" : "b", rank < 2 ? "jobA" : "jobB", rank % 2);
    if (rank == 3) {
        /* Job B's rank 1 "publishes" job A's rank 0 card. */
        void *card = NULL;
        size_t len = 0;
        char path[512];
        snprintf(path, sizeof(path), "%s/a", tcp_test_dir);
        double start = tcp_test_now();
        tcp_fake_rte_setup(path, "jobA", 2, NULL);
        while (rte_modex_get(0, BTL_TCP_MODEX_KEY, &card, &len) != MPI_SUCCESS) {
            usleep(1000);
            CHECK(tcp_test_now() - start < 20, "job A never published");
        }
        join_job("b", "jobB", 1);
        CHECK(tcp_fake_rte_put_as(1, BTL_TCP_MODEX_KEY, card, len) == MPI_SUCCESS, "put");
        free(card);
        CHECK(rte_fence(true) == MPI_SUCCESS, "fence");
        return 0;
    }
    btl_module_t *m = tcp_test_init(&eps);
    tcp_test_msg_init(m);
    if (rank < 2) {
        talk_until(m, eps, 1 - rank, "b.done");
        tcp_test_fini(m, eps);
        return 0;
    }
    uint64_t h[6] = {0};
    btl_payload_t p = {.data = MARKER, .len = 8};
    int rc;
    double start = tcp_test_now();
    while ((rc = m->send(m, eps[1], TCP_TEST_TAG, h, sizeof(h), &p)) == RAIL_AGAIN) {
        tcp_test_progress(m, 1);
        CHECK(tcp_test_now() - start < 10, "send to the wrong job's rank still pending");
    }
    CHECK(rc != MPI_SUCCESS, "send to a rank of another job succeeded");
    file_touch("b.done");
    m->finalize(m);
    return 0;
}

static void check_other_job_logs(void)
{
    char *a0 = tcp_test_log(0), *a1 = tcp_test_log(1), *b0 = tcp_test_log(2);
    /* Job B tries a few times (the acceptor closed before answering). */
    int n = tcp_test_count(a0, "rejected a connection from 127.0.0.1:");
    bool ok = n >= 1 && n <= 4 && tcp_test_count(a0, "a process of another job") == n &&
              a1[0] == '\0';
    check_case("other job: rejected and logged by job A", ok);
    ok = tcp_test_count(b0, "cannot connect") == 1;
    check_case("other job: job B reports that it cannot connect", ok);
    if (!ok)
        fprintf(stderr, "job B rank 0 logged:\n%s", b0);
    free(a0);
    free(a1);
    free(b0);
}

int main(void)
{
    tcp_test_opts_t o = {.timeout_s = 90, .env = ENV};
    if (tcp_test_run("foreign connections", 3, t_foreign, NULL, &o) == 0)
        check_foreign_logs();
    if (tcp_test_run("other job", 4, t_other_job, NULL, &o) == 0)
        check_other_job_logs();
    return tcp_test_summary("test_btl_tcp_foreign");
}
