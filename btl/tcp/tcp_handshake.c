/*
 * btl tcp: the connection handshake.
 *
 * Every rank r puts a random 32-byte secret S_r in its business card, which
 * only processes of the job can read (the modex).  Two ranks lo < hi share
 * the pair key K = HMAC(S_lo || S_hi, "rail btl tcp pair key" || lo || hi ||
 * jobtag), where jobtag = SHA-256("rail btl tcp job" || nspace)[0..16).
 *
 *   initiator I                                    acceptor A
 *   greeting  "RAILTCP1" version I A 0 jobtag nI macI   ->
 *             macI = HMAC(K, "I" || the 72 bytes before it)
 *                                                       checks, in order: magic and
 *                                                       version, jobtag, A, I, macI,
 *                                                       nI never seen from I before
 *   verdict   <-  "RAILTCP+" (kept) or "RAILTCP=" (duplicate), macA
 *             macA = HMAC(K, "A" || greeting || verdict word)
 *   checks macA (A is the rank it wanted, and answers this greeting)
 *
 * nI is a fresh random nonce; A remembers the nonces of every greeting it
 * accepted from I, so a recorded greeting is refused as a replay, and a
 * greeting whose nonce was changed no longer matches its MAC.  Without K
 * (a process outside the job, or of another job, whose secrets differ) no
 * greeting can be made.  The "I"/"A" labels keep a verdict's MAC from ever
 * passing as a greeting's.  A reads exactly the greeting's bytes and
 * nothing else before it checked out, and I sends frames only after a good
 * verdict, so no byte of an unauthenticated peer reaches a receive callback.
 * A rejected connection is logged once with its address and closed.
 *
 * Why two messages and not a challenge and a response: after its greeting
 * the initiator has nothing more to say, so a legitimate peer that is busy
 * computing (MPI_Isend, then no MPI call for a minute) is never timed out
 * by the acceptor; only a connection that does not even greet within
 * btl_tcp_handshake_timeout_ms is (the initiator greets within the send
 * call that connects, see btl_tcp_ep_connect).
 *
 * Simultaneous connects: a proven greeting from rank P is a duplicate when
 * we are already connected to P, or when our own connection to P is under
 * way and we have the lower rank (the connection the lower rank started is
 * kept).  Otherwise it is kept and our own attempt, if any, is abandoned: it
 * still gets its verdict ("duplicate") and closes quietly, so that the peer
 * never sees a legitimate connection vanish without a greeting.
 */
#include "btl/tcp/tcp.h"
#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char hs_magic[8] = {'R', 'A', 'I', 'L', 'T', 'C', 'P', '1'};
static const char hs_keep[8] = {'R', 'A', 'I', 'L', 'T', 'C', 'P', '+'};
static const char hs_dup[8] = {'R', 'A', 'I', 'L', 'T', 'C', 'P', '='};

/* Greeting layout */
#define G_VERSION 8
#define G_SRC 12
#define G_DST 16
#define G_FLAGS 20                 /* G_REPLACE */
#define G_REPLACE 1u               /* replaces the connection the acceptor has (failover) */
#define G_JOBTAG 24
#define G_NONCE 40
#define G_MAC BTL_TCP_GREETING_MAC
_Static_assert(G_MAC + BTL_TCP_MAC_LEN == BTL_TCP_GREETING_LEN, "greeting layout");
_Static_assert(8 + BTL_TCP_MAC_LEN == BTL_TCP_VERDICT_LEN, "verdict layout");

#define HS_RETRIES 3               /* reconnects to an address that closed before answering */

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
    uint8_t h[RAIL_SHA256_LEN];
    rail_sha256_t c;
    rail_sha256_init(&c);
    rail_sha256_update(&c, label, sizeof(label));
    rail_sha256_update(&c, nspace, strlen(nspace));
    rail_sha256_final(&c, h);
    memcpy(tag, h, BTL_TCP_JOBTAG_LEN);
}

void btl_tcp_pair_key(const btl_tcp_module_t *m, int peer, const uint8_t *peer_secret,
                      uint8_t key[RAIL_SHA256_LEN])
{
    static const char label[] = "rail btl tcp pair key";
    bool me_lo = m->my_rank < peer;
    uint8_t secrets[2 * BTL_TCP_SECRET_LEN], ranks[8];
    memcpy(secrets, me_lo ? m->secret : peer_secret, BTL_TCP_SECRET_LEN);
    memcpy(secrets + BTL_TCP_SECRET_LEN, me_lo ? peer_secret : m->secret, BTL_TCP_SECRET_LEN);
    put32(ranks, (uint32_t)(me_lo ? m->my_rank : peer));
    put32(ranks + 4, (uint32_t)(me_lo ? peer : m->my_rank));
    rail_hmac_t h;
    rail_hmac_init(&h, secrets, sizeof(secrets));
    rail_hmac_update(&h, label, sizeof(label));
    rail_hmac_update(&h, ranks, sizeof(ranks));
    rail_hmac_update(&h, m->jobtag, sizeof(m->jobtag));
    rail_hmac_final(&h, key);
    memset(secrets, 0, sizeof(secrets));
}

/* HMAC(key, label || a || b) */
static void hs_mac(const uint8_t *key, const char *label, const void *a, size_t alen,
                   const void *b, size_t blen, uint8_t out[BTL_TCP_MAC_LEN])
{
    rail_hmac_t h;
    rail_hmac_init(&h, key, RAIL_SHA256_LEN);
    rail_hmac_update(&h, label, 1);
    rail_hmac_update(&h, a, alen);
    rail_hmac_update(&h, b, blen);
    rail_hmac_final(&h, out);
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
    uint8_t *g = c->greeting;
    memset(g, 0, BTL_TCP_GREETING_LEN);
    memcpy(g, hs_magic, 8);
    put32(g + G_VERSION, BTL_TCP_VERSION);
    put32(g + G_SRC, (uint32_t)m->my_rank);
    put32(g + G_DST, (uint32_t)c->ep->rank);
    put32(g + G_FLAGS, c->replace ? G_REPLACE : 0);
    memcpy(g + G_JOBTAG, m->jobtag, BTL_TCP_JOBTAG_LEN);
    if (btl_tcp_random(g + G_NONCE, BTL_TCP_NONCE_LEN) != MPI_SUCCESS) {
        btl_tcp_attempt_failed(c, "no random numbers");
        return MPI_ERR_OTHER;
    }
    hs_mac(c->ep->key, "I", g, G_MAC, "", 0, g + G_MAC);
    hs_expect(c, BTL_TCP_HS_VERDICT, BTL_TCP_VERDICT_LEN);
    return btl_tcp_conn_write(c, g, BTL_TCP_GREETING_LEN);
}

/* The acceptor keeps the peer's connection instead of ours: the peer's own
 * connection is coming (or is there already). */
static void hs_duplicate(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    RAIL_VERBOSE(btl_tcp_verbosity(), 2, "btl tcp: rank %d keeps its own connection to us",
                 ep->rank);
    btl_tcp_conn_close(c);
    if (ep->state == BTL_TCP_EP_CONNECTING && !ep->out)
        btl_tcp_ep_wait_peer(ep);
}

static void hs_on_verdict(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    uint8_t mac[BTL_TCP_MAC_LEN];
    char addr[64];
    hs_mac(ep->key, "A", c->greeting, BTL_TCP_GREETING_LEN, c->hs_in, 8, mac);
    bool keep = memcmp(c->hs_in, hs_keep, 8) == 0;
    if ((!keep && memcmp(c->hs_in, hs_dup, 8) != 0) ||
        !rail_mac_equal(mac, c->hs_in + 8, BTL_TCP_MAC_LEN)) {
        btl_tcp_attempt_failed(c, "the process listening there failed authentication (it is not "
                                  "this rank of this job)");
        return;
    }
    ep->retries = 0;
    if (!keep) {
        hs_duplicate(c);
        return;
    }
    if (c->replace && !c->abandoned && ep->failover)
        btl_tcp_ft_replace(c);
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
    hs_expect(c, BTL_TCP_HS_GREETING, BTL_TCP_GREETING_LEN);
}

/* The peer named in greeting g, or NULL after rejecting c. */
static btl_endpoint_t *hs_claimed_peer(btl_tcp_conn_t *c, const uint8_t *g)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    uint32_t src = get32(g + G_SRC), dst = get32(g + G_DST);
    if (memcmp(g, hs_magic, 8) != 0 || get32(g + G_VERSION) != BTL_TCP_VERSION)
        btl_tcp_reject(c, "not a Rail MPI tcp peer of this version (unexpected greeting)");
    else if (memcmp(g + G_JOBTAG, m->jobtag, BTL_TCP_JOBTAG_LEN) != 0)
        btl_tcp_reject(c, "a process of another job");
    else if (dst != (uint32_t)m->my_rank)
        btl_tcp_reject(c, "addressed to rank %u, this is rank %d", dst, m->my_rank);
    else if (src >= (uint32_t)m->nprocs || !m->eps || !m->eps[src])
        btl_tcp_reject(c, "claims to be rank %u, which is not a peer of this rank", src);
    else
        return m->eps[src];
    return NULL;
}

/* Was this nonce in an earlier greeting of ep's rank?  If not, remember it. */
static bool hs_replayed(btl_endpoint_t *ep, const uint8_t *nonce)
{
    for (int i = 0; i < ep->n_seen; i++)
        if (memcmp(ep->seen[i], nonce, BTL_TCP_NONCE_LEN) == 0)
            return true;
    if (ep->n_seen == ep->cap_seen) {
        int cap = ep->cap_seen ? 2 * ep->cap_seen : 4;
        void *p = realloc(ep->seen, (size_t)cap * BTL_TCP_NONCE_LEN);
        if (!p)
            return true;           /* cannot remember it: refuse rather than risk a replay */
        ep->seen = p;
        ep->cap_seen = cap;
    }
    memcpy(ep->seen[ep->n_seen++], nonce, BTL_TCP_NONCE_LEN);
    return false;
}

/* Keep this proven connection, or answer "duplicate" (see the top).  A
 * connection that says "replace" (failover) replaces an established one. */
static bool hs_is_duplicate(const btl_endpoint_t *ep, bool replace)
{
    if (ep->state == BTL_TCP_EP_CONNECTED)
        return !(replace && ep->failover);
    return ep->out && !ep->out->abandoned && btl_tcp_module.my_rank < ep->rank;
}

static void hs_on_greeting(btl_tcp_conn_t *c)
{
    const uint8_t *g = c->hs_in;
    uint8_t mac[BTL_TCP_MAC_LEN], verdict[BTL_TCP_VERDICT_LEN];
    char addr[64];
    btl_endpoint_t *ep = hs_claimed_peer(c, g);
    if (!ep)
        return;
    hs_mac(ep->key, "I", g, G_MAC, "", 0, mac);
    if (!rail_mac_equal(mac, g + G_MAC, BTL_TCP_MAC_LEN)) {
        btl_tcp_reject(c, "claims rank %d but failed authentication (wrong secret, or an altered "
                          "greeting)", ep->rank);
        return;
    }
    if (hs_replayed(ep, g + G_NONCE)) {
        btl_tcp_reject(c, "claims rank %d with a replayed handshake", ep->rank);
        return;
    }
    btl_tcp_conn_authenticated(c);
    bool replace = (get32(g + G_FLAGS) & G_REPLACE) != 0;
    bool dup = hs_is_duplicate(ep, replace);
    memcpy(verdict, dup ? hs_dup : hs_keep, 8);
    hs_mac(ep->key, "A", g, BTL_TCP_GREETING_LEN, verdict, 8, verdict + 8);
    if (dup) {
        RAIL_VERBOSE(btl_tcp_verbosity(), 2, "btl tcp: keeping our connection to rank %d, "
                     "not the one it started", ep->rank);
        btl_tcp_conn_write(c, verdict, sizeof(verdict));
        btl_tcp_conn_close(c);
        return;
    }
    if (ep->out) {
        ep->out->abandoned = true;
        ep->out = NULL;
    }
    c->ep = ep;
    if (replace && ep->failover)
        btl_tcp_ft_replace(c);
    btl_tcp_conn_write(c, verdict, sizeof(verdict));
    btl_tcp_conn_established(c);
    RAIL_VERBOSE(btl_tcp_verbosity(), 2, "btl tcp: rank %d connected from %s", ep->rank,
                 btl_tcp_addr_str(&c->peer, addr, sizeof(addr)));
}

/* ------------------------------------------------------------ input */

static void hs_closed(btl_tcp_conn_t *c, const char *why)
{
    char msg[128];
    if (c->outgoing) {
        btl_endpoint_t *ep = c->ep;
        /* Closed before answering: busy too long, or under attack.  It is
         * listening, so try the same address again, a few times. */
        if (!c->abandoned && ep->retries < HS_RETRIES && ep->next_addr > 0) {
            ep->retries++;
            ep->next_addr--;
        } else {
            ep->retries = 0;       /* the next address starts afresh */
        }
        snprintf(msg, sizeof(msg), "%s before answering", why);
        btl_tcp_attempt_failed(c, msg);
    } else if (c->hs_have == 0) {
        btl_tcp_reject(c, "%s before any greeting", why);
    } else {
        btl_tcp_reject(c, "%s in the middle of its greeting", why);
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
    if (c->state == BTL_TCP_HS_GREETING)
        hs_on_greeting(c);
    else if (c->state == BTL_TCP_HS_VERDICT)
        hs_on_verdict(c);
}
