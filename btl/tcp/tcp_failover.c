/*
 * btl tcp: failover between paths to a peer (rails, planes).
 *
 * When both ends offer it (BTL_TCP_CARD_FAILOVER: btl_tcp_failover, by
 * default where the host has several rails), every frame to a peer gets a
 * 16-bit number in its header, and the sender keeps a copy of it until the
 * receiver acknowledges it: after each batch of frames it reads, the
 * receiver sends an ACK frame carrying the number of the next frame it
 * expects.  At most btl_tcp_failover_window bytes (and 16384 frames, half
 * the number space) are kept per peer; beyond that send says "again".
 *
 * A connection that fails (an error, a reset, or TCP_USER_TIMEOUT when a
 * link goes down and the peer simply stops answering) is not the end: its
 * path is marked down (with a backoff of btl_tcp_reconnect_ms, doubled per
 * failure), and the endpoint connects over the next path in its order
 * (btl_tcp_if_order_peer_rail: its own rail first).  The greeting of such a
 * connection says "replace", so a peer that has not noticed the loss yet
 * drops its old connection for it.  Once established, each end sends an
 * ACK and then every frame it still keeps, in order; the receiver drops
 * those it has delivered already (numbers below the next expected).  So
 * nothing is lost and nothing is delivered twice.  Only when no path is
 * left does the peer fail, with a message naming both hosts and every path.
 *
 * Recovery: the end that started the connection tries a better path again
 * (its preferred one, a failed one whose backoff ran out) while the current
 * one keeps working; when that connection comes up it replaces the current
 * one the same way.  MPI_T counts failovers, recoveries, frames resent and
 * duplicates dropped.
 */
#include "btl/tcp/tcp.h"
#include "base/log.h"
#include "base/pvar.h"
#include "runtime/rte.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define FT_MAX_FRAMES 16384
#define FT_MAX_BACKOFF_SHIFT 4

int btl_tcp_ft_register_pvars(void)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    const rail_pvar_counter_t pvars[] = {
        {"btl_tcp_failovers", "Connections to a peer lost and replaced by another path",
         &m->st_failovers},
        {"btl_tcp_recoveries", "Connections moved back to a better path once it worked again",
         &m->st_recoveries},
        {"btl_tcp_frames_resent", "Frames sent again on a new path after a failover",
         &m->st_resent},
        {"btl_tcp_duplicates_dropped", "Frames received twice after a failover and dropped",
         &m->st_dups},
    };
    return rail_pvar_register_counters(pvars, RAIL_ARRAY_SIZE(pvars));
}

void btl_tcp_ft_sockopts(int fd)
{
    int ut = btl_tcp_params.user_timeout_ms, one = 1;
    /* Only with failover: a zero window (a peer not reading) that lasts
     * longer also ends the connection, which is survivable only there. */
    if (ut <= 0 || !btl_tcp_module.failover)
        return;
    int idle = RAIL_MAX(ut / 2000, 1), intvl = 1, cnt = RAIL_MAX(ut / 2000, 1);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/* ------------------------------------------------------------ kept frames */

static uint16_t ft_seq_of(const btl_tcp_qfrag_t *f)
{
    uint16_t seq;
    memcpy(&seq, (const uint8_t *)f->data + offsetof(btl_tcp_fhdr_t, reserved), sizeof(seq));
    return seq;
}

bool btl_tcp_ft_window_full(const btl_endpoint_t *ep, size_t frame)
{
    return ep->rt_frames > 0 && (ep->rt_bytes + frame > btl_tcp_params.failover_window ||
                                 ep->rt_frames >= FT_MAX_FRAMES);
}

int btl_tcp_ft_retain(btl_endpoint_t *ep, const struct iovec *iov, int n, size_t frame)
{
    btl_tcp_qfrag_t *f = malloc(sizeof(*f) + frame);
    uint8_t *p;
    if (!f)
        return MPI_ERR_NO_MEM;
    f->next = NULL;
    f->cap = f->len = frame;
    f->off = 0;
    p = (uint8_t *)f->data;
    for (int i = 0; i < n; i++) {
        memcpy(p, iov[i].iov_base, iov[i].iov_len);
        p += iov[i].iov_len;
    }
    if (ep->rt_tail)
        ep->rt_tail->next = f;
    else
        ep->rt_head = f;
    ep->rt_tail = f;
    ep->rt_bytes += frame;
    ep->rt_frames++;
    return MPI_SUCCESS;
}

/* Forget the newest kept frame (its send was answered "again"). */
void btl_tcp_ft_unretain(btl_endpoint_t *ep)
{
    btl_tcp_qfrag_t **pp = &ep->rt_head, *prev = NULL;
    while (*pp && (*pp)->next) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    ep->rt_bytes -= (*pp)->len;
    ep->rt_frames--;
    free(*pp);
    *pp = NULL;
    ep->rt_tail = prev;
    ep->tx_seq--;
}

void btl_tcp_ft_free(btl_endpoint_t *ep)
{
    while (ep->rt_head) {
        btl_tcp_qfrag_t *f = ep->rt_head;
        ep->rt_head = f->next;
        free(f);
    }
    ep->rt_tail = NULL;
    ep->rt_bytes = 0;
    ep->rt_frames = 0;
}

void btl_tcp_ft_acked(btl_endpoint_t *ep, uint16_t next)
{
    while (ep->rt_head && (int16_t)(ft_seq_of(ep->rt_head) - next) < 0) {
        btl_tcp_qfrag_t *f = ep->rt_head;
        ep->rt_head = f->next;
        ep->rt_bytes -= f->len;
        ep->rt_frames--;
        free(f);
    }
    if (!ep->rt_head)
        ep->rt_tail = NULL;
}

bool btl_tcp_ft_in_order(btl_tcp_conn_t *c, const btl_tcp_fhdr_t *fh)
{
    btl_endpoint_t *ep = c->ep;
    int16_t d = (int16_t)(fh->reserved - ep->rx_seq);
    if (RAIL_LIKELY(d == 0)) {
        ep->rx_seq++;
        return true;
    }
    if (d < 0) {
        btl_tcp_module.st_dups++;
        return false;
    }
    btl_tcp_conn_error(c, "frames missing (numbering gap after a failover)");
    return false;
}

void btl_tcp_ft_send_ack(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    if (!ep->failover || c->state != BTL_TCP_ESTABLISHED || ep->acked_rx == ep->rx_seq)
        return;
    btl_tcp_fhdr_t ack = {.tag = BTL_TCP_TAG_ACK, .reserved = ep->rx_seq};
    ep->acked_rx = ep->rx_seq;
    btl_tcp_conn_write(c, &ack, sizeof(ack));
}

size_t btl_tcp_ft_pending(const btl_endpoint_t *ep)
{
    if (!ep->failover || ep->state == BTL_TCP_EP_CONNECTED || ep->state == BTL_TCP_EP_FAILED)
        return 0;
    return ep->rt_bytes;
}

/* ------------------------------------------------------------ paths */

/* Our interface on the subnet of ip (host order), or NULL. */
static const btl_tcp_if_t *ft_local_if(uint32_t ip)
{
    const btl_tcp_module_t *m = &btl_tcp_module;
    for (int i = 0; i < m->n_ifs; i++) {
        uint32_t mask = rail_netif_prefix_mask(m->ifs[i].prefix);
        if (!m->ifs[i].loopback && (ip & mask) == (m->ifs[i].addr & mask))
            return &m->ifs[i];
    }
    return NULL;
}

/* "10.1.0.2 (rail0 of host b, from rail0)": path idx of ep, for messages. */
static const char *ft_path_str(const btl_endpoint_t *ep, int idx, char *buf, size_t len)
{
    char ip[INET_ADDRSTRLEN] = "?";
    const btl_tcp_if_t *mine = ft_local_if(ntohl(ep->addrs[idx].sin_addr.s_addr));
    inet_ntop(AF_INET, &ep->addrs[idx].sin_addr, ip, sizeof(ip));
    snprintf(buf, len, "%s (%.16s of %s, from %s)", ip, ep->addr_name[idx],
             rte_hostname_of(ep->rank), mine ? mine->name : "no interface on its subnet");
    return buf;
}

/* The path c used: ours by index; the peer's by our end's subnet. */
static int ft_path_of(const btl_endpoint_t *ep, const btl_tcp_conn_t *c)
{
    if (c->outgoing)
        return c->addr_idx;
    const btl_tcp_if_t *mine = ft_local_if(ntohl(c->local.sin_addr.s_addr));
    for (int i = 0; mine && i < ep->n_addrs; i++)
        if (ft_local_if(ntohl(ep->addrs[i].sin_addr.s_addr)) == mine)
            return i;
    return -1;
}

static void ft_mark_down(btl_endpoint_t *ep, int idx, const char *why)
{
    if (idx < 0 || idx >= ep->n_addrs)
        return;
    int shift = RAIL_MIN((int)ep->down_count[idx], FT_MAX_BACKOFF_SHIFT);
    ep->down_until[idx] = btl_tcp_now_ms() + ((uint64_t)btl_tcp_params.reconnect_ms << shift);
    if (ep->down_count[idx] < 255)
        ep->down_count[idx]++;
    snprintf(ep->down_why[idx], sizeof(ep->down_why[idx]), "%s", why);
}

bool btl_tcp_ft_addr_usable(btl_endpoint_t *ep, int idx)
{
    return !ep->failover || ep->down_until[idx] <= btl_tcp_now_ms();
}

/* Every path and why it is down: the message that ends the job. */
void btl_tcp_ft_no_path(btl_endpoint_t *ep)
{
    char msg[1024], path[128];
    int len = snprintf(msg, sizeof(msg), "btl tcp: no path left from %s to rank %d on %s:",
                       rte_info.hostname, ep->rank, rte_hostname_of(ep->rank));
    for (int i = 0; i < ep->n_addrs && len < (int)sizeof(msg); i++)
        len += snprintf(msg + len, sizeof(msg) - (size_t)len, "%s %s: %s", i ? ";" : "",
                        ft_path_str(ep, i, path, sizeof(path)),
                        ep->down_why[i][0] ? ep->down_why[i] : "not tried");
    rail_error("%s", msg);
    rte_abort(1, "btl tcp: no path left to a peer");
}

bool btl_tcp_ft_lost(btl_tcp_conn_t *c, const char *why)
{
    btl_endpoint_t *ep = c->ep;
    btl_tcp_module_t *m = &btl_tcp_module;
    char path[128] = "?";
    if (!ep->failover || m->finalizing)
        return false;
    if (ep->out && ep->out->replace && !ep->resuming) {
        /* Moving back to a better path: the peer took our new connection
         * and closed this one.  The new one carries on. */
        ep->state = BTL_TCP_EP_CONNECTING;
        return true;
    }
    int idx = ft_path_of(ep, c);
    if (idx >= 0) {
        ft_mark_down(ep, idx, why ? why : "closed");
        ft_path_str(ep, idx, path, sizeof(path));
    }
    m->st_failovers++;
    ep->resuming = true;
    RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: failover: the connection to rank %d over %s "
                 "failed (%s); %d frame(s) to resend, trying another path", ep->rank, path,
                 why ? why : "closed", ep->rt_frames);
    ep->next_addr = 0;
    if (ep->out) {                 /* a connection is being made: it replaces the lost one */
        ep->state = BTL_TCP_EP_CONNECTING;
        return true;
    }
    ep->state = BTL_TCP_EP_IDLE;
    btl_tcp_ep_connect(ep);
    return true;
}

/* Count endpoints waiting to try a better path, and when to look next. */
static void ft_schedule(btl_endpoint_t *ep, uint64_t when)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    if (!ep->recover_at && when)
        m->n_recover++;
    else if (ep->recover_at && !when)
        m->n_recover--;
    ep->recover_at = when;
}

/* When a path better than the current one may be tried, 0: none. */
static uint64_t ft_better_at(const btl_endpoint_t *ep)
{
    uint64_t when = 0;
    for (int i = 0; i < ep->cur_addr; i++)
        if (!when || ep->down_until[i] < when)
            when = RAIL_MAX(ep->down_until[i], (uint64_t)1);
    return when;
}

bool btl_tcp_ft_attempt_failed(btl_tcp_conn_t *c, const char *why)
{
    btl_endpoint_t *ep = c->ep;
    if (!ep->failover || c->abandoned)
        return false;
    ft_mark_down(ep, c->addr_idx, why);
    if (ep->state != BTL_TCP_EP_CONNECTED)
        return false;              /* failing over: the caller tries the next path */
    btl_tcp_conn_close(c);         /* a recovery attempt: stay where we are */
    ft_schedule(ep, ft_better_at(ep));
    return true;
}

void btl_tcp_ft_replace(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    btl_tcp_conn_t *old = ep->conn;
    char path[128];
    if (old && old != c)
        btl_tcp_conn_close(old);
    if (c->outgoing && !ep->resuming) {
        btl_tcp_module.st_recoveries++;
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: recovery: rank %d is reached over %s "
                     "again", ep->rank, ft_path_str(ep, c->addr_idx, path, sizeof(path)));
    } else if (!c->outgoing && old && old != c) {
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: rank %d replaced its connection to us "
                     "(it lost or left the old path)", ep->rank);
    }
}

void btl_tcp_ft_resume(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    bool resent = ep->resuming || ep->rt_frames > 0;
    ep->resuming = false;
    ep->cur_addr = c->outgoing ? c->addr_idx : -1;
    ep->acked_rx = (uint16_t)(ep->rx_seq - 1);
    btl_tcp_ft_send_ack(c);
    for (btl_tcp_qfrag_t *f = ep->rt_head; f && c->state == BTL_TCP_ESTABLISHED; f = f->next) {
        btl_tcp_conn_write(c, f->data, f->len);
        btl_tcp_module.st_resent++;
    }
    if (resent)
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: rank %d reached over %s; %d frame(s) "
                     "resent", ep->rank, c->outgoing ? "our connection" : "its connection",
                     ep->rt_frames);
    ft_schedule(ep, c->outgoing ? ft_better_at(ep) : 0);
}

/* Try the best usable path better than the current one. */
static void ft_recover(btl_endpoint_t *ep, uint64_t now)
{
    if (ep->state != BTL_TCP_EP_CONNECTED || ep->out || !ep->conn || !ep->conn->outgoing) {
        ft_schedule(ep, 0);
        return;
    }
    for (int i = 0; i < ep->cur_addr; i++) {
        if (ep->down_until[i] > now)
            continue;
        btl_tcp_conn_t *c = btl_tcp_conn_start(ep, i);
        if (!c) {
            ft_mark_down(ep, i, ep->why[0] ? ep->why : "connect failed");
            continue;
        }
        c->replace = true;
        ep->out = c;
        ft_schedule(ep, 0);
        return;
    }
    ft_schedule(ep, ft_better_at(ep));
}

void btl_tcp_ft_check(btl_tcp_module_t *m)
{
    static uint64_t next;
    uint64_t now = btl_tcp_now_ms();
    if (now < next)
        return;
    next = now + 50;
    for (int r = 0; r < m->nprocs && m->eps && m->n_recover > 0; r++) {
        btl_endpoint_t *ep = m->eps[r];
        if (ep && ep->recover_at && ep->recover_at <= now)
            ft_recover(ep, now);
    }
}
