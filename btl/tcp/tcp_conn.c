/*
 * btl tcp: connection life cycle.
 *
 *   initiator: btl_tcp_ep_connect -> CONNECTING -> (connected) greeting -> VERDICT
 *   acceptor:  btl_tcp_accept -> GREETING
 *   both:      -> ESTABLISHED -> DEAD (closed; freed by btl_tcp_conn_reap at the end
 *                                      of progress, so callbacks never see freed memory)
 *
 * btl_tcp_ep_connect waits up to btl_tcp_connect_wait_us for the TCP
 * connection to come up, so that the greeting normally leaves within the
 * send call that starts the connection, even if the caller then computes
 * for a long time without progressing.  Deadlines (btl_tcp_handshake_timeout_ms):
 * a connect() that does not complete, an accepted connection that does not
 * greet.  A greeted acceptor is waited for as long as it takes (it may be
 * busy); a closed connection or a reset ends the wait.
 *
 * An endpoint tries the peer's addresses in order (btl_tcp_if_order_peer);
 * an attempt that fails (refused, timed out, failed authentication) moves
 * on to the next address, and the endpoint fails when none is left.  A lost
 * connection fails its endpoint for good: sends to it return an error the
 * pml reports (a peer that said goodbye - finalize - is not an error until
 * something is sent to it).
 */
#include "btl/tcp/tcp.h"
#include "base/log.h"
#include "btl/btl_rail.h"
#include "runtime/rte.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static void conn_set_deadline(btl_tcp_conn_t *c)
{
    int ms = btl_tcp_params.handshake_timeout_ms;
    if (!c->timed) {
        c->timed = true;
        btl_tcp_module.n_timed++;
    }
    if (c->ep && c->ep->failover && btl_tcp_params.user_timeout_ms > 0)
        ms = RAIL_MIN(ms, btl_tcp_params.user_timeout_ms);   /* another path may work */
    c->deadline = btl_tcp_now_ms() + (uint64_t)ms;
}

static void conn_clear_deadline(btl_tcp_conn_t *c)
{
    if (c->timed) {
        c->timed = false;
        btl_tcp_module.n_timed--;
    }
}

btl_tcp_conn_t *btl_tcp_conn_new(btl_tcp_module_t *m, int fd, const struct sockaddr_in *peer)
{
    btl_tcp_conn_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->kind = BTL_TCP_KIND_CONN;
    c->fd = fd;
    c->peer = *peer;
    struct epoll_event ev = {.events = 0, .data.ptr = c};
    if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        free(c);
        return NULL;
    }
    c->next = m->conns;
    if (m->conns)
        m->conns->prev = c;
    m->conns = c;
    return c;
}

void btl_tcp_conn_set_events(btl_tcp_conn_t *c, uint32_t events)
{
    if (c->events == events || c->fd < 0)
        return;
    struct epoll_event ev = {.events = events, .data.ptr = c};
    epoll_ctl(btl_tcp_module.epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->events = events;
}

void btl_tcp_conn_update_events(btl_tcp_conn_t *c)
{
    if (c->state == BTL_TCP_DEAD)
        return;
    if (c->state == BTL_TCP_CONNECTING) {
        btl_tcp_conn_set_events(c, EPOLLOUT);
        return;
    }
    btl_tcp_conn_set_events(c, EPOLLIN | ((c->qhead || c->want_write) ? EPOLLOUT : 0));
}

static void handshake_slot_free(btl_tcp_conn_t *c)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    if (!c->counted)
        return;
    c->counted = false;
    m->n_handshakes--;
    if (!m->listening && !m->finalizing && m->n_handshakes < btl_tcp_params.max_handshakes)
        btl_tcp_listen_enable(m, true);
}

void btl_tcp_conn_close(btl_tcp_conn_t *c)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    if (c->state == BTL_TCP_DEAD)
        return;
    conn_clear_deadline(c);
    handshake_slot_free(c);
    epoll_ctl(m->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->state = BTL_TCP_DEAD;
    btl_tcp_queue_free(c);
    if (c->ep && c->ep->conn == c)
        c->ep->conn = NULL;
    if (c->ep && c->ep->out == c)
        c->ep->out = NULL;
    m->n_dead++;
}

void btl_tcp_conn_reap(btl_tcp_module_t *m)
{
    btl_tcp_conn_t *c = m->conns, *next;
    for (; c && m->n_dead > 0; c = next) {
        next = c->next;
        if (c->state != BTL_TCP_DEAD)
            continue;
        if (c->prev)
            c->prev->next = c->next;
        else
            m->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        btl_tcp_recv_bufs_release(c);
        free(c);
        m->n_dead--;
    }
}

/* An incoming connection proved it is ep's peer. */
void btl_tcp_conn_authenticated(btl_tcp_conn_t *c)
{
    conn_clear_deadline(c);
    handshake_slot_free(c);
}

/* A connection off this process's rail: ours to another rail of the peer's
 * host, or the peer's when its host lacks our rail.  Counted
 * (btl_rail_cross_rail) and said once at verbose level. */
static void conn_check_rail(const btl_tcp_conn_t *c)
{
    const btl_endpoint_t *ep = c->ep;
    int mine = btl_tcp_module.my_rail;
    char addr[64];
    if (mine < 0 || ep->local || (c->outgoing ? c->rail == mine : !ep->lacks_my_rail))
        return;
    btl_rail_cross++;
    if (btl_rail_cross == 1)
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: rank %d (%s) is reached off rail %d%s "
                     "(%s), cross-rail", ep->rank, rte_hostname_of(ep->rank), mine,
                     ep->lacks_my_rail ? ": its host has no interface on it" : "",
                     btl_tcp_addr_str(&c->peer, addr, sizeof(addr)));
}

void btl_tcp_conn_established(btl_tcp_conn_t *c)
{
    btl_endpoint_t *ep = c->ep;
    conn_clear_deadline(c);
    if (ep->state == BTL_TCP_EP_WAIT_PEER)
        btl_tcp_module.n_timed--;
    if (ep->out == c)
        ep->out = NULL;
    c->state = BTL_TCP_ESTABLISHED;
    conn_check_rail(c);
    socklen_t len = sizeof(c->local);
    if (getsockname(c->fd, (struct sockaddr *)&c->local, &len) != 0)
        memset(&c->local, 0, sizeof(c->local));
    ep->conn = c;
    ep->state = BTL_TCP_EP_CONNECTED;
    ep->reported = false;
    ep->why[0] = '\0';
    btl_tcp_conn_update_events(c);
    if (ep->failover)
        btl_tcp_ft_resume(c);
}

void btl_tcp_ep_wait_peer(btl_endpoint_t *ep)
{
    ep->state = BTL_TCP_EP_WAIT_PEER;
    ep->wait_deadline = btl_tcp_now_ms() + (uint64_t)btl_tcp_params.handshake_timeout_ms;
    btl_tcp_module.n_timed++;
}

/* ------------------------------------------------------------ failures */

void btl_tcp_ep_fail(btl_endpoint_t *ep, const char *fmt, ...)
{
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (ep->state == BTL_TCP_EP_WAIT_PEER)
        btl_tcp_module.n_timed--;
    ep->state = BTL_TCP_EP_FAILED;
    if (ep->out)
        btl_tcp_conn_close(ep->out);
    if (ep->conn)
        btl_tcp_conn_close(ep->conn);
    if (!ep->reported && !btl_tcp_module.finalizing)
        rail_error("btl tcp: rank %d (%s): %s", ep->rank, rte_hostname_of(ep->rank), msg);
    ep->reported = true;
}

/* An established connection broke (why NULL: the peer closed it after
 * saying goodbye). */
void btl_tcp_conn_lost(btl_tcp_conn_t *c, const char *why)
{
    btl_endpoint_t *ep = c->ep;
    size_t dropped = c->queued;
    bool quiet = c->bye && dropped == 0;
    btl_tcp_conn_close(c);
    if (ep->conn || ep->state != BTL_TCP_EP_CONNECTED)
        return;
    if (quiet) {
        ep->state = BTL_TCP_EP_FAILED;
        ep->reported = true;
        snprintf(ep->why, sizeof(ep->why), "it has finalized");
        return;
    }
    if (!c->bye && btl_tcp_ft_lost(c, why))
        return;
    btl_tcp_ep_fail(ep, "connection lost: %s%s", why ? why : "closed by the peer",
                    dropped ? " (bytes still queued for it are dropped)" : "");
}

static void add_why(btl_endpoint_t *ep, const btl_tcp_conn_t *c, const char *why)
{
    char addr[64];
    size_t len = strlen(ep->why);
    if (len + 8 < sizeof(ep->why))
        snprintf(ep->why + len, sizeof(ep->why) - len, "%s%s: %s", len ? "; " : "",
                 btl_tcp_addr_str(&c->peer, addr, sizeof(addr)), why);
}

/* Our connection attempt failed: try the next address of the peer. */
void btl_tcp_attempt_failed(btl_tcp_conn_t *c, const char *why)
{
    btl_endpoint_t *ep = c->ep;
    bool abandoned = c->abandoned;
    char addr[64];
    RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: connecting to rank %d at %s: %s", ep->rank,
                 btl_tcp_addr_str(&c->peer, addr, sizeof(addr)), why);
    if (btl_tcp_ft_attempt_failed(c, why))
        return;
    if (!abandoned)
        add_why(ep, c, why);
    btl_tcp_conn_close(c);
    if (abandoned || ep->state != BTL_TCP_EP_CONNECTING)
        return;
    btl_tcp_ep_connect(ep);
}

void btl_tcp_conn_error(btl_tcp_conn_t *c, const char *why)
{
    if (c->state == BTL_TCP_DEAD)
        return;
    if (c->state == BTL_TCP_ESTABLISHED)
        btl_tcp_conn_lost(c, why);
    else if (c->outgoing)
        btl_tcp_attempt_failed(c, why);
    else
        btl_tcp_reject(c, "%s during the handshake", why);
}

/* ------------------------------------------------------------ making connections */

static void conn_connected(btl_tcp_conn_t *c);

btl_tcp_conn_t *btl_tcp_conn_start(btl_endpoint_t *ep, int idx)
{
    const struct sockaddr_in *a = &ep->addrs[idx];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    btl_tcp_conn_t tmp = {.peer = *a}, *c = NULL;
    if (fd >= 0) {
        btl_tcp_sockopts(fd);
        if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0 || errno == EINPROGRESS)
            c = btl_tcp_conn_new(&btl_tcp_module, fd, a);
    }
    if (!c) {
        add_why(ep, &tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    c->outgoing = true;
    c->ep = ep;
    c->addr_idx = idx;
    c->rail = ep->addr_rail[idx];
    c->state = BTL_TCP_CONNECTING;
    conn_set_deadline(c);
    btl_tcp_conn_update_events(c);
    return c;
}

/* Start a connection to the next address of ep; fails ep when none is left. */
int btl_tcp_ep_connect(btl_endpoint_t *ep)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    while (ep->next_addr < ep->n_addrs) {
        int idx = ep->next_addr++;
        if (!btl_tcp_ft_addr_usable(ep, idx))
            continue;
        btl_tcp_conn_t *c = btl_tcp_conn_start(ep, idx);
        if (!c)
            continue;
        c->replace = ep->resuming;
        ep->out = c;
        if (ep->state == BTL_TCP_EP_WAIT_PEER)
            m->n_timed--;
        ep->state = BTL_TCP_EP_CONNECTING;
        /* Greet now if the connection comes up quickly (it does on a LAN). */
        struct pollfd p = {.fd = c->fd, .events = POLLOUT};
        struct timespec ts = {0, (long)btl_tcp_params.connect_wait_us * 1000L};
        if (ppoll(&p, 1, &ts, NULL) == 1)
            conn_connected(c);
        return MPI_SUCCESS;
    }
    if (ep->failover && !btl_tcp_module.finalizing)
        btl_tcp_ft_no_path(ep);
    btl_tcp_ep_fail(ep, "cannot connect: %s", ep->why[0] ? ep->why : "no usable address");
    return MPI_ERR_OTHER;
}

void btl_tcp_accept(btl_tcp_module_t *m, btl_tcp_listener_t *l)
{
    while (m->n_handshakes < btl_tcp_params.max_handshakes) {
        struct sockaddr_in a;
        socklen_t len = sizeof(a);
        int fd = accept4(l->fd, (struct sockaddr *)&a, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE)
                rail_warn_once("btl_tcp_accept", "btl tcp: cannot accept connections: %s",
                               strerror(errno));
            return;
        }
        btl_tcp_sockopts(fd);
        btl_tcp_conn_t *c = btl_tcp_conn_new(m, fd, &a);
        if (!c) {
            close(fd);
            return;
        }
        c->counted = true;
        m->n_handshakes++;
        conn_set_deadline(c);
        btl_tcp_hs_accepted(c);
        btl_tcp_conn_update_events(c);
    }
    btl_tcp_listen_enable(m, false);   /* the rest waits in the backlog */
}

/* ------------------------------------------------------------ events */

static void conn_connected(btl_tcp_conn_t *c)
{
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err) {
        btl_tcp_attempt_failed(c, strerror(err));
        return;
    }
    conn_clear_deadline(c);        /* a greeted peer is waited for (see the top) */
    btl_tcp_hs_start(c);
}

void btl_tcp_conn_event(btl_tcp_conn_t *c, uint32_t events)
{
    if (c->state == BTL_TCP_CONNECTING) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            conn_connected(c);
        return;
    }
    if (events & EPOLLOUT) {
        c->want_write = false;
        c->full = false;
        if (c->qhead)
            btl_tcp_flush(c);
        else
            btl_tcp_conn_update_events(c);
    }
    if (c->state == BTL_TCP_DEAD || !(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        return;
    if (c->state == BTL_TCP_ESTABLISHED)
        btl_tcp_recv(c);
    else
        btl_tcp_hs_input(c);
}

void btl_tcp_check_deadlines(btl_tcp_module_t *m)
{
    uint64_t now = btl_tcp_now_ms();
    for (btl_tcp_conn_t *c = m->conns; c; c = c->next) {
        if (!c->timed || now < c->deadline)
            continue;
        if (c->outgoing)
            btl_tcp_attempt_failed(c, "connect timed out");
        else
            btl_tcp_reject(c, "sent no complete greeting within %d ms",
                           btl_tcp_params.handshake_timeout_ms);
    }
    for (int r = 0; r < m->nprocs && m->eps; r++) {
        btl_endpoint_t *ep = m->eps[r];
        if (ep && ep->state == BTL_TCP_EP_WAIT_PEER && now >= ep->wait_deadline) {
            /* The peer's connection never came: try ours again. */
            m->n_timed--;
            ep->state = BTL_TCP_EP_IDLE;
            ep->next_addr = 0;
            if (ep->resuming)      /* kept frames wait: no send will start it */
                btl_tcp_ep_connect(ep);
        }
    }
}
