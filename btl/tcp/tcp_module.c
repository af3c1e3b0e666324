/* btl tcp: add_procs (business cards), progress (the epoll loop), shutdown. */
#include "btl/tcp/tcp.h"
#include "base/log.h"
#include "btl/btl_rail.h"
#include "runtime/rte.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

void btl_tcp_listen_enable(btl_tcp_module_t *m, bool on)
{
    if (m->listening == on)
        return;
    for (int i = 0; i < m->n_listeners; i++) {
        btl_tcp_listener_t *l = &m->listeners[i];
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
        epoll_ctl(m->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, l->fd, &ev);
    }
    m->listening = on;
}

/* The peer's card, checked; NULL (said at verbose level) when unusable. */
static btl_tcp_card_t *get_card(int rank)
{
    void *data = NULL;
    size_t len = 0;
    btl_tcp_card_t *card;
    if (rte_modex_get(rank, BTL_TCP_MODEX_KEY, &data, &len) != MPI_SUCCESS) {
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: rank %d does not use btl tcp", rank);
        return NULL;
    }
    card = data;
    if (len < offsetof(btl_tcp_card_t, addrs) || card->magic != BTL_TCP_CARD_MAGIC ||
        card->version != BTL_TCP_VERSION || card->n_addrs > BTL_TCP_MAX_ADDRS ||
        len < offsetof(btl_tcp_card_t, addrs) + card->n_addrs * sizeof(card->addrs[0])) {
        rail_warn("btl tcp: the business card of rank %d is not one this build understands", rank);
        free(data);
        return NULL;
    }
    return card;
}

/* Warn once per host whose number of rails differs from ours. */
static void check_rails(btl_tcp_module_t *m, int rank, const btl_tcp_card_t *card)
{
    char names[256] = "";
    for (int i = 0; i < card->n_addrs && i < BTL_TCP_MAX_ADDRS; i++)
        if (card->addrs[i].rail >= 0)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%.16s",
                     names[0] ? "," : "", card->addrs[i].name);
    btl_rail_check_peer(rte_hostname_of(rank), card->n_rails, names, m->n_rails, m->ifs,
                        m->n_ifs);
}

static btl_endpoint_t *ep_create(btl_tcp_module_t *m, const btl_proc_t *proc)
{
    btl_tcp_card_t *card = get_card(proc->rank);
    btl_endpoint_t *ep = card ? calloc(1, sizeof(*ep)) : NULL;
    if (!ep) {
        free(card);
        return NULL;
    }
    ep->rank = proc->rank;
    ep->local = proc->node_id == m->my_node;
    ep->state = BTL_TCP_EP_IDLE;
    ep->max_frame = card->max_frame;
    ep->n_addrs = btl_tcp_if_order_peer_rail(card, ep->local, m->ifs, m->n_ifs, m->my_rail,
                                             ep->addrs, ep->addr_rail, BTL_TCP_MAX_ADDRS);
    if (!ep->local)
        check_rails(m, proc->rank, card);
    ep->failover = m->failover && (card->flags & BTL_TCP_CARD_FAILOVER) &&
                   (!ep->local || btl_tcp_params.failover == 1);   /* asked for: tests */
    ep->cur_addr = -1;
    ep->lacks_my_rail = m->my_rail >= 0;
    for (int j = 0; j < card->n_addrs && j < BTL_TCP_MAX_ADDRS; j++)
        ep->lacks_my_rail &= card->addrs[j].rail != m->my_rail;
    for (int i = 0; i < ep->n_addrs; i++)
        for (int j = 0; j < card->n_addrs && j < BTL_TCP_MAX_ADDRS; j++)
            if (card->addrs[j].ip == ep->addrs[i].sin_addr.s_addr &&
                card->addrs[j].port == ep->addrs[i].sin_port)
                snprintf(ep->addr_name[i], sizeof(ep->addr_name[i]), "%.15s", card->addrs[j].name);
    btl_tcp_pair_key(m, proc->rank, card->secret, ep->key);
    memset(card->secret, 0, sizeof(card->secret));
    free(card);
    if (ep->n_addrs == 0) {
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: no address of rank %d (%s) is reachable "
                     "from here (only loopback, on another node)", proc->rank,
                     rte_hostname_of(proc->rank));
        free(ep);
        return NULL;
    }
    return ep;
}

int btl_tcp_add_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    if (!m->eps) {
        m->nprocs = rte_info.size;
        m->eps = calloc((size_t)m->nprocs, sizeof(*m->eps));
        if (!m->eps)
            return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++) {
        int r = procs[i].rank;
        eps[i] = NULL;
        if (r == m->my_rank || r < 0 || r >= m->nprocs)
            continue;
        if (!m->eps[r])
            m->eps[r] = ep_create(m, &procs[i]);
        eps[i] = m->eps[r];
        if (eps[i])
            m->bigs.size = RAIL_MAX(m->bigs.size, (size_t)eps[i]->max_frame);
    }
    btl_tcp_listen_enable(m, true);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ progress */

int btl_tcp_progress(btl_module_t *base)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    struct epoll_event ev[BTL_TCP_MAX_EVENTS];
    int n = epoll_wait(m->epfd, ev, BTL_TCP_MAX_EVENTS, 0);
    for (int i = 0; i < n; i++) {
        int kind = *(const int *)ev[i].data.ptr;
        if (kind == BTL_TCP_KIND_LISTENER)
            btl_tcp_accept(m, ev[i].data.ptr);
        else
            btl_tcp_conn_event(ev[i].data.ptr, ev[i].events);
    }
    if (RAIL_UNLIKELY(m->n_timed > 0))
        btl_tcp_check_deadlines(m);
    if (RAIL_UNLIKELY(m->n_recover > 0))
        btl_tcp_ft_check(m);
    if (RAIL_UNLIKELY(m->n_dead > 0))
        btl_tcp_conn_reap(m);
    return n > 0 ? n : 0;
}


/* ------------------------------------------------------------ shutdown */

size_t btl_tcp_pending(btl_module_t *base)
{
    size_t n = 0;
    btl_tcp_module_t *m = &btl_tcp_module;
    for (btl_tcp_conn_t *c = m->conns; c; c = c->next)
        if (c->state == BTL_TCP_ESTABLISHED)
            n += c->queued;
    for (int r = 0; m->failover && m->eps && r < m->nprocs; r++)
        if (m->eps[r])
            n += btl_tcp_ft_pending(m->eps[r]);   /* frames waiting for a new path */
    return n;
}

static bool any_queued(btl_tcp_module_t *m)
{
    return btl_tcp_pending(&m->super) > 0;
}

/* Keep progressing (sends and receives) until every queue is written out. */
static void drain(btl_tcp_module_t *m)
{
    uint64_t deadline = btl_tcp_now_ms() + (uint64_t)btl_tcp_params.finalize_timeout_ms;
    while (any_queued(m) && btl_tcp_now_ms() < deadline) {
        if (btl_tcp_progress(&m->super) == 0) {
            struct epoll_event ev;
            epoll_wait(m->epfd, &ev, 1, 10);
        }
    }
    if (any_queued(m))
        rail_warn("btl tcp: finalize: peers did not take all queued bytes within %d ms",
                  btl_tcp_params.finalize_timeout_ms);
}

/* Say goodbye (so the peer does not report a lost connection) and close. */
static void ep_close(btl_tcp_module_t *m, btl_endpoint_t *ep)
{
    btl_tcp_conn_t *c = ep->conn;
    if (c && c->state == BTL_TCP_ESTABLISHED && !c->qhead) {
        btl_tcp_fhdr_t bye = {.tag = BTL_TCP_TAG_BYE};
        btl_tcp_conn_write(c, &bye, sizeof(bye));
    }
    if (ep->conn)
        btl_tcp_conn_close(ep->conn);
    if (ep->out)
        btl_tcp_conn_close(ep->out);
    if (ep->state == BTL_TCP_EP_WAIT_PEER)
        m->n_timed--;
    for (btl_tcp_conn_t *k = m->conns; k; k = k->next)
        if (k->ep == ep)
            btl_tcp_conn_close(k);   /* abandoned attempts, unproven claims */
    m->eps[ep->rank] = NULL;
    if (ep->recover_at)
        m->n_recover--;
    btl_tcp_ft_free(ep);
    free(ep->seen);
    free(ep);
}

int btl_tcp_del_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    if (!m->eps)
        return MPI_SUCCESS;
    m->finalizing = true;
    drain(m);
    for (int i = 0; i < n; i++) {
        int r = procs[i].rank;
        if (r >= 0 && r < m->nprocs && m->eps[r])
            ep_close(m, m->eps[r]);
    }
    btl_tcp_conn_reap(m);
    return MPI_SUCCESS;
}

void btl_tcp_close_all(btl_tcp_module_t *m)
{
    RAIL_VERBOSE(btl_tcp_verbosity(), 2, "btl tcp: sent %llu frames, %llu payload bytes; "
                 "%llu bytes copied to queues (socket full), %llu sends said RAIL_AGAIN",
                 (unsigned long long)m->st_frames, (unsigned long long)m->st_bytes,
                 (unsigned long long)m->st_copied, (unsigned long long)m->st_again);
    m->finalizing = true;
    if (m->eps) {
        drain(m);
        for (int r = 0; r < m->nprocs; r++)
            if (m->eps[r])
                ep_close(m, m->eps[r]);
        free(m->eps);
        m->eps = NULL;
    }
    for (btl_tcp_conn_t *c = m->conns; c; c = c->next)
        btl_tcp_conn_close(c);
    btl_tcp_conn_reap(m);
    btl_tcp_listen_enable(m, false);
}
