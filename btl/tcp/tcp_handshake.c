/*
 * btl tcp: the connection handshake.
 *
 * Every rank r puts a random 32-byte secret S_r in its business card, which
 * only processes of the job can read (the modex).  Two ranks lo < hi share
 * the pair key K = HMAC(S_lo || S_hi, "rail btl tcp pair key" || lo || hi ||
 * jobtag), where jobtag = SHA-256("rail btl tcp job" || nspace)[0..16).
 *
 *   initiator I                              acceptor A
 *   MSG1  "RAILTCP1" version I A jobtag nI   ->  checks magic, job, ranks
 *   MSG2                                     <-  "RAILTCP2" nA  macA
 *         macA = HMAC(K, "A" || MSG1 || nA)
 *   checks macA (A is the rank it wanted)
 *   MSG3  "RAILTCP3" macI                    ->  checks macI
 *         macI = HMAC(K, "I" || MSG1 || MSG2)
 *   MSG4                                     <-  "RAILTCP+" (kept) or "RAILTCP=" (duplicate)
 *
 * nI and nA are fresh random nonces.  macI covers nA, which A drew for this
 * connection, so a recorded MSG3 is worthless on any other connection
 * (replay); the "A"/"I" labels keep macA from being reflected as a macI.
 * Without K (a process outside the job, or another job, whose secrets
 * differ) macI cannot be made.  The acceptor reads exactly the bytes of
 * each message and nothing else until macI checks out, and the initiator
 * sends frames only after MSG4, so no byte of an unauthenticated peer ever
 * reaches a receive callback.  A rejected connection is logged once with
 * its address and closed.
 *
 * Simultaneous connects: a proven connection from rank P is a duplicate
 * when we are already connected to P, or when our own connection to P is
 * under way and we have the lower rank (the connection the lower rank
 * started is kept).  Otherwise it is kept and our own attempt, if any, is
 * abandoned: it finishes its handshake (the peer answers "duplicate") and
 * closes quietly, so that the peer never sees a legitimate connection
 * vanish mid-handshake.
 */
#include "btl/tcp/tcp.h"
#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char hs_magic1[8] = {'R', 'A', 'I', 'L', 'T', 'C', 'P', '1'};
static const char hs_magic2[8] = {'R', 'A', 'I', 'L', 'T', 'C', 'P', '2'};
static const char hs_magic3[8] = {'R', 'A', 'I', 'L', 'T', 'C', 'P', '3'};
static const char hs_keep[8] = {'R', 'A', 'I', 'L', 'T', 'C', 'P', '+'};
static const char hs_dup[8] = {'R', 'A', 'I', 'L', 'T', 'C', 'P', '='};

/* MSG1 layout */
#define M1_VERSION 8
#define M1_SRC 12
#define M1_DST 16
#define M1_JOBTAG 24
#define M1_NONCE 40
/* MSG2 layout */
#define M2_NONCE 8
#define M2_MAC 40

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void btl_tcp_jobtag(const char *nspace, uint8_t tag[BTL_TCP_JOBTAG_LEN])
{
    static const char label[] = "rail btl tcp job";
    uint8_t h[BTL_TCP_SHA256_LEN];
    btl_tcp_sha256_t c;
    btl_tcp_sha256_init(&c);
    btl_tcp_sha256_update(&c, label, sizeof(label));
    btl_tcp_sha256_update(&c, nspace, strlen(nspace));
    btl_tcp_sha256_final(&c, h);
    memcpy(tag, h, BTL_TCP_JOBTAG_LEN);
}

void btl_tcp_pair_key(const btl_tcp_module_t *m, int peer, const uint8_t *peer_secret,
                      uint8_t key[BTL_TCP_SHA256_LEN])
{
    static const char label[] = "rail btl tcp pair key";
    bool me_lo = m->my_rank < peer;
    uint8_t secrets[2 * BTL_TCP_SECRET_LEN], ranks[8];
    memcpy(secrets, me_lo ? m->secret : peer_secret, BTL_TCP_SECRET_LEN);
    memcpy(secrets + BTL_TCP_SECRET_LEN, me_lo ? peer_secret : m->secret, BTL_TCP_SECRET_LEN);
    put32(ranks, (uint32_t)(me_lo ? m->my_rank : peer));
    put32(ranks + 4, (uint32_t)(me_lo ? peer : m->my_rank));
    btl_tcp_hmac_t h;
    btl_tcp_hmac_init(&h, secrets, sizeof(secrets));
    btl_tcp_hmac_update(&h, label, sizeof(label));
    btl_tcp_hmac_update(&h, ranks, sizeof(ranks));
    btl_tcp_hmac_update(&h, m->jobtag, sizeof(m->jobtag));
    btl_tcp_hmac_final(&h, key);
    memset(secrets, 0, sizeof(secrets));
}

/* macA = HMAC(K, "A" || MSG1 || nA) */
static void mac_acceptor(const uint8_t *key, const uint8_t *msg1, const uint8_t *nonce,
                         uint8_t out[BTL_TCP_MAC_LEN])
{
    btl_tcp_hmac_t h;
    btl_tcp_hmac_init(&h, key, BTL_TCP_SHA256_LEN);
    btl_tcp_hmac_update(&h, "A", 1);
    btl_tcp_hmac_update(&h, msg1, BTL_TCP_MSG1_LEN);
    btl_tcp_hmac_update(&h, nonce, BTL_TCP_NONCE_LEN);
    btl_tcp_hmac_final(&h, out);
}

/* macI = HMAC(K, "I" || MSG1 || MSG2) */
static void mac_initiator(const uint8_t *key, const uint8_t *msg1, const uint8_t *msg2,
                          uint8_t out[BTL_TCP_MAC_LEN])
{
    btl_tcp_hmac_t h;
    btl_tcp_hmac_init(&h, key, BTL_TCP_SHA256_LEN);
    btl_tcp_hmac_update(&h, "I", 1);
    btl_tcp_hmac_update(&h, msg1, BTL_TCP_MSG1_LEN);
    btl_tcp_hmac_update(&h, msg2, BTL_TCP_MSG2_LEN);
    btl_tcp_hmac_final(&h, out);
}

static void hs_expect(btl_tcp_conn_t *c, int state, size_t len)
{
    c->state = (uint8_t)state;
    c->hs_have = 0;
    c->hs_want = len;
}

void btl_tcp_reject(btl_tcp_conn_t *c, const char *fmt, ...)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    char why[256], addr[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    btl_tcp_addr_str(&c->peer, addr, sizeof(addr));
    if (m->n_rejected < BTL_TCP_LOG_REJECTS)
        rail_warn("btl tcp: rejected a connection from %s: %s", addr, why);
    else if (m->n_rejected == BTL_TCP_LOG_REJECTS)
        rail_warn("btl tcp: rejected a connection from %s: %s (further rejected connections are "
                  "reported only with btl_tcp_verbose >= 1)", addr, why);
    else
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: rejected a connection from %s: %s", addr,
                     why);
    m->n_rejected++;
    btl_tcp_conn_close(c);
}

/* ------------------------------------------------------------ initiator */

int btl_tcp_hs_start(btl_tcp_conn_t *c)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    uint8_t *p = c->msg1;
    memset(p, 0, BTL_TCP_MSG1_LEN);
    memcpy(p, hs_magic1, 8);
    put32(p + M1_VERSION, BTL_TCP_VERSION);
    put32(p + M1_SRC, (uint32_t)m->my_rank);
    put32(p + M1_DST, (uint32_t)c->ep->rank);
    memcpy(p + M1_JOBTAG, m->jobtag, BTL_TCP_JOBTAG_LEN);
    if (btl_tcp_random(p + M1_NONCE, BTL_TCP_NONCE_LEN) != MPI_SUCCESS) {
        btl_tcp_attempt_failed(c, "no random numbers");
        return MPI_ERR_OTHER;
    }
    hs_expect(c, BTL_TCP_HS_WAIT2, BTL_TCP_MSG2_LEN);
    return btl_tcp_conn_write(c, p, BTL_TCP_MSG1_LEN);
}

static void hs_on_msg2(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    uint8_t mac[BTL_TCP_MAC_LEN], msg3[BTL_TCP_MSG3_LEN];
    if (memcmp(c->hs_in, hs_magic2, 8) != 0) {
        btl_tcp_attempt_failed(c, "the process listening there is not a Rail MPI tcp peer");
        return;
    }
    mac_acceptor(ep->key, c->msg1, c->hs_in + M2_NONCE, mac);
    if (!btl_tcp_mac_equal(mac, c->hs_in + M2_MAC, BTL_TCP_MAC_LEN)) {
        btl_tcp_attempt_failed(c, "the process listening there failed authentication (it is not "
                                  "this rank of this job)");
        return;
    }
    memcpy(c->msg2, c->hs_in, BTL_TCP_MSG2_LEN);
    memcpy(msg3, hs_magic3, 8);
    mac_initiator(ep->key, c->msg1, c->msg2, msg3 + 8);
    hs_expect(c, BTL_TCP_HS_WAIT4, BTL_TCP_MSG4_LEN);
    btl_tcp_conn_write(c, msg3, sizeof(msg3));
}

/* The acceptor keeps the peer's connection instead of ours (or said nothing
 * more after proving itself): the peer's own connection is coming. */
static void hs_duplicate(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    RAIL_VERBOSE(btl_tcp_verbosity(), 2, "btl tcp: rank %d keeps its own connection to us",
                 ep->rank);
    btl_tcp_conn_close(c);
    if (ep->out == c)
        ep->out = NULL;
    if (ep->state == BTL_TCP_EP_CONNECTING && !ep->out)
        btl_tcp_ep_wait_peer(ep);
}

static void hs_on_msg4(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    char addr[64];
    if (memcmp(c->hs_in, hs_dup, 8) == 0) {
        hs_duplicate(c);
        return;
    }
    if (memcmp(c->hs_in, hs_keep, 8) != 0) {
        btl_tcp_attempt_failed(c, "unexpected handshake verdict");
        return;
    }
    if (c->abandoned || (ep->conn && ep->conn != c)) {
        /* Cannot happen with peers that follow the rule; keep the one we have. */
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: rank %d kept a connection we abandoned",
                     ep->rank);
        btl_tcp_conn_close(c);
        return;
    }
    btl_tcp_conn_established(c);
    RAIL_VERBOSE(btl_tcp_verbosity(), 2, "btl tcp: connected to rank %d at %s", ep->rank,
                 btl_tcp_addr_str(&c->peer, addr, sizeof(addr)));
}

/* ------------------------------------------------------------ acceptor */

void btl_tcp_hs_accepted(btl_tcp_conn_t *c)
{
    hs_expect(c, BTL_TCP_HS_WAIT1, BTL_TCP_MSG1_LEN);
}

static void hs_on_msg1(btl_tcp_conn_t *c)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    const uint8_t *p = c->hs_in;
    uint8_t msg2[BTL_TCP_MSG2_LEN];
    uint32_t src = get32(p + M1_SRC), dst = get32(p + M1_DST);

    if (memcmp(p, hs_magic1, 8) != 0 || get32(p + M1_VERSION) != BTL_TCP_VERSION) {
        btl_tcp_reject(c, "not a Rail MPI tcp peer of this version (unexpected greeting)");
        return;
    }
    if (memcmp(p + M1_JOBTAG, m->jobtag, BTL_TCP_JOBTAG_LEN) != 0) {
        btl_tcp_reject(c, "a process of another job");
        return;
    }
    if (dst != (uint32_t)m->my_rank) {
        btl_tcp_reject(c, "addressed to rank %u, this is rank %d", dst, m->my_rank);
        return;
    }
    if (src >= (uint32_t)m->nprocs || !m->eps || !m->eps[src]) {
        btl_tcp_reject(c, "claims to be rank %u, which is not a peer of this rank", src);
        return;
    }
    c->ep = m->eps[src];           /* a claim until MSG3 proves it */
    memcpy(c->msg1, p, BTL_TCP_MSG1_LEN);
    memcpy(msg2, hs_magic2, 8);
    if (btl_tcp_random(msg2 + M2_NONCE, BTL_TCP_NONCE_LEN) != MPI_SUCCESS) {
        btl_tcp_reject(c, "no random numbers to challenge it with");
        return;
    }
    mac_acceptor(c->ep->key, c->msg1, msg2 + M2_NONCE, msg2 + M2_MAC);
    memcpy(c->msg2, msg2, sizeof(msg2));
    hs_expect(c, BTL_TCP_HS_WAIT3, BTL_TCP_MSG3_LEN);
    btl_tcp_conn_write(c, msg2, sizeof(msg2));
}

/* Keep this proven connection, or answer "duplicate" (see the top). */
static bool hs_is_duplicate(const btl_endpoint_t *ep)
{
    if (ep->state == BTL_TCP_EP_CONNECTED)
        return true;
    return ep->out && !ep->out->abandoned && btl_tcp_module.my_rank < ep->rank;
}

static void hs_on_msg3(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    uint8_t mac[BTL_TCP_MAC_LEN];
    char addr[64];
    if (memcmp(c->hs_in, hs_magic3, 8) != 0) {
        btl_tcp_reject(c, "claims rank %d but sent no proof", ep->rank);
        return;
    }
    mac_initiator(ep->key, c->msg1, c->msg2, mac);
    if (!btl_tcp_mac_equal(mac, c->hs_in + 8, BTL_TCP_MAC_LEN)) {
        btl_tcp_reject(c, "claims rank %d but failed authentication (wrong secret or a replayed "
                          "handshake)", ep->rank);
        return;
    }
    btl_tcp_conn_authenticated(c);
    if (hs_is_duplicate(ep)) {
        RAIL_VERBOSE(btl_tcp_verbosity(), 2, "btl tcp: keeping our connection to rank %d, "
                     "not the one it started", ep->rank);
        btl_tcp_conn_write(c, hs_dup, 8);
        btl_tcp_conn_close(c);
        return;
    }
    if (ep->out) {
        ep->out->abandoned = true;
        ep->out = NULL;
    }
    btl_tcp_conn_write(c, hs_keep, 8);
    if (c->state == BTL_TCP_DEAD)
        return;
    btl_tcp_conn_established(c);
    RAIL_VERBOSE(btl_tcp_verbosity(), 2, "btl tcp: rank %d connected from %s", ep->rank,
                 btl_tcp_addr_str(&c->peer, addr, sizeof(addr)));
}

/* ------------------------------------------------------------ input */

static void hs_closed(btl_tcp_conn_t *c, const char *why)
{
    if (c->outgoing) {
        if (c->state == BTL_TCP_HS_WAIT4)
            hs_duplicate(c);       /* it proved itself, then kept its own connection */
        else
            btl_tcp_attempt_failed(c, why);
    } else if (c->state == BTL_TCP_HS_WAIT1 && c->hs_have == 0) {
        btl_tcp_reject(c, "%s before any greeting", why);
    } else {
        btl_tcp_reject(c, "%s during the handshake", why);
    }
}

/* Read the rest of the current handshake message; never beyond it. */
void btl_tcp_hs_input(btl_tcp_conn_t *c)
{
    ssize_t n;
    do
        n = recv(c->fd, c->hs_in + c->hs_have, c->hs_want - c->hs_have, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        hs_closed(c, n == 0 ? "closed the connection" : strerror(errno));
        return;
    }
    c->hs_have += (size_t)n;
    if (c->hs_have < c->hs_want)
        return;
    switch (c->state) {
    case BTL_TCP_HS_WAIT1: hs_on_msg1(c); break;
    case BTL_TCP_HS_WAIT2: hs_on_msg2(c); break;
    case BTL_TCP_HS_WAIT3: hs_on_msg3(c); break;
    case BTL_TCP_HS_WAIT4: hs_on_msg4(c); break;
    default: break;
    }
}
