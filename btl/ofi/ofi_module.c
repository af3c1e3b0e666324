/* btl ofi: add_procs (business cards into the address vector), progress
 * (the completion queue), sleeping, shutdown. */
#include "btl/ofi/ofi.h"
#include "base/log.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The peer's card, checked; NULL (said at verbose level) when unusable. */
static btl_ofi_card_t *get_card(btl_ofi_module_t *m, int rank)
{
    void *data = NULL;
    size_t len = 0;
    if (rte_modex_get(rank, BTL_OFI_MODEX_KEY, &data, &len) != MPI_SUCCESS) {
        RAIL_VERBOSE(btl_verbose, 1, "btl ofi: rank %d does not use btl ofi", rank);
        return NULL;
    }
    btl_ofi_card_t *c = data;
    if (len < offsetof(btl_ofi_card_t, name) || c->magic != BTL_OFI_CARD_MAGIC ||
        c->name_len > BTL_OFI_NAME_MAX || len < offsetof(btl_ofi_card_t, name) + c->name_len) {
        rail_warn("btl ofi: the business card of rank %d is not one this build understands", rank);
        free(data);
        return NULL;
    }
    c->prov[sizeof(c->prov) - 1] = '\0';
    if (strcmp(c->prov, m->info->fabric_attr->prov_name) != 0) {
        RAIL_VERBOSE(btl_verbose, 1, "btl ofi: rank %d (%s) uses provider %s, this process %s: "
                     "not reached", rank, rte_hostname_of(rank), c->prov,
                     m->info->fabric_attr->prov_name);
        free(data);
        return NULL;
    }
    return c;
}

static btl_endpoint_t *ep_create(btl_ofi_module_t *m, int rank)
{
    btl_ofi_card_t *c = get_card(m, rank);
    btl_endpoint_t *ep = c ? calloc(1, sizeof(*ep)) : NULL;
    if (!ep) {
        free(c);
        return NULL;
    }
    ep->rank = rank;
    int n = fi_av_insert(m->av, c->name, 1, &ep->addr, 0, NULL);
    free(c);
    if (n != 1) {
        rail_warn("btl ofi: cannot insert the address of rank %d (%s): %s", rank,
                  rte_hostname_of(rank), btl_ofi_strerror(n < 0 ? n : -FI_EINVAL));
        free(ep);
        return NULL;
    }
    return ep;
}

btl_endpoint_t *btl_ofi_ep_of(btl_ofi_module_t *m, int rank)
{
    if (!m->eps && !(m->eps = calloc((size_t)m->nprocs, sizeof(*m->eps))))
        return NULL;
    if (!m->eps[rank])
        m->eps[rank] = ep_create(m, rank);
    return m->eps[rank];
}

int btl_ofi_add_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    btl_ofi_module_t *m = (btl_ofi_module_t *)base;
    if (!m->eps && !(m->eps = calloc((size_t)m->nprocs, sizeof(*m->eps))))
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        int r = procs[i].rank;
        eps[i] = NULL;
        if (r == m->my_rank || r < 0 || r >= m->nprocs ||
            (procs[i].local && !btl_ofi_params.local_peers))
            continue;
        eps[i] = btl_ofi_ep_of(m, r);
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ progress */

static void cq_error(btl_ofi_module_t *m)
{
    struct fi_cq_err_entry err;
    memset(&err, 0, sizeof(err));
    if (fi_cq_readerr(m->cq, &err, 0) != 1)
        return;
    btl_ofi_ctx_t *c = err.op_context;
    char buf[256] = "";
    fi_cq_strerror(m->cq, err.prov_errno, err.err_data, buf, sizeof(buf));
    /* the peer, where the operation knows it: a receive does not */
    int peer = -1;
    if (c && c->kind == BTL_OFI_OP_RMA && ((btl_ofi_rma_op_t *)c)->req->ep)
        peer = ((btl_ofi_rma_op_t *)c)->req->ep->rank;
    if (c && c->kind == BTL_OFI_OP_SEND)
        peer = ((btl_ofi_sbuf_t *)c)->rank;
    char who[320] = "";
    if (peer >= 0)
        snprintf(who, sizeof(who), " with rank %d on host %s", peer, rte_hostname_of(peer));
    if (c && c->kind == BTL_OFI_OP_RMA) {
        RAIL_VERBOSE(btl_verbose, 1, "btl ofi: a get/put%s failed: %s (%s)", who,
                     btl_ofi_strerror(err.err), buf);
        btl_ofi_rma_done(m, (btl_ofi_rma_op_t *)c, MPI_ERR_OTHER);
        return;
    }
    if (c && c->kind == BTL_OFI_OP_SEND)
        btl_ofi_send_done(m, (btl_ofi_sbuf_t *)c);
    if (c && c->kind == BTL_OFI_OP_RECV && err.err == FI_ECANCELED)
        return;
    rail_error("btl ofi: %s on host %s%s failed: %s (%s)",
               !c ? "an operation" : c->kind == BTL_OFI_OP_SEND ? "a send" : "a receive",
               rte_info.hostname, who, btl_ofi_strerror(err.err), buf);
    rte_abort(1, "btl ofi: communication failed");
}

static void completion(btl_ofi_module_t *m, const struct fi_cq_data_entry *e)
{
    btl_ofi_ctx_t *c = e->op_context;
    if (!c)
        return;
    switch (c->kind) {
    case BTL_OFI_OP_SEND:
        btl_ofi_send_done(m, (btl_ofi_sbuf_t *)c);
        break;
    case BTL_OFI_OP_RECV:
        btl_ofi_recv_done(m, (btl_ofi_rbuf_t *)c, e);
        break;
    case BTL_OFI_OP_RMA:
        btl_ofi_rma_done(m, (btl_ofi_rma_op_t *)c, MPI_SUCCESS);
        break;
    }
}

int btl_ofi_progress(btl_module_t *base)
{
    btl_ofi_module_t *m = (btl_ofi_module_t *)base;
    struct fi_cq_data_entry e[BTL_OFI_CQ_BATCH];
    if (m->in_progress)
        return 0;
    m->in_progress = true;
    int total = 0;
    for (;;) {
        ssize_t n = fi_cq_read(m->cq, e, BTL_OFI_CQ_BATCH);
        if (n == -FI_EAVAIL) {
            cq_error(m);
            total++;
            continue;
        }
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            completion(m, &e[i]);
        total += (int)n;
        if (n < BTL_OFI_CQ_BATCH)
            break;
    }
    if (RAIL_UNLIKELY(m->deferred != NULL))
        total += btl_ofi_rma_retry(m);
    m->in_progress = false;
    return total;
}

/* A sleep on wait_fd is safe only when fi_trywait says so (a provider with
 * manual progress may hold work that its fd does not show yet). */
bool btl_ofi_sleep_prepare(btl_module_t *base)
{
    btl_ofi_module_t *m = (btl_ofi_module_t *)base;
    struct fid *f = &m->cq->fid;
    return fi_trywait(m->fabric, &f, 1) == FI_SUCCESS;
}

size_t btl_ofi_pending(btl_module_t *base)
{
    return ((btl_ofi_module_t *)base)->in_flight;
}

/* ------------------------------------------------------------ shutdown */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Progress until every send has completed (or the time is up). */
static void drain(btl_ofi_module_t *m)
{
    uint64_t deadline = now_ms() + (uint64_t)btl_ofi_params.finalize_timeout_ms;
    while (m->in_flight > 0 && now_ms() < deadline) {
        if (btl_ofi_progress(&m->super) == 0) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    if (m->in_flight > 0)
        rail_warn("btl ofi: finalize: %zu bytes of sends did not complete within %d ms",
                  m->in_flight, btl_ofi_params.finalize_timeout_ms);
}

int btl_ofi_del_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    btl_ofi_module_t *m = (btl_ofi_module_t *)base;
    if (!m->eps)
        return MPI_SUCCESS;
    drain(m);
    for (int i = 0; i < n; i++) {
        int r = procs[i].rank;
        if (r >= 0 && r < m->nprocs && m->eps[r]) {
            for (btl_ofi_held_t *h = m->eps[r]->held, *next; h; h = next) {
                next = h->next;
                free(h);
            }
            free(m->eps[r]);
            m->eps[r] = NULL;
        }
    }
    return MPI_SUCCESS;
}
