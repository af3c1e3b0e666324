/* btl verbs: connections, active messages, credits, progress, sleeping, errors. */
#include "btl/verbs/verbs.h"
#include "base/log.h"
#include "runtime/rte.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *btl_verbs_wc_status_str(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_SUCCESS: return "success";
    case IBV_WC_LOC_LEN_ERR: return "local length error";
    case IBV_WC_LOC_QP_OP_ERR: return "local QP operation error";
    case IBV_WC_LOC_PROT_ERR: return "local protection error";
    case IBV_WC_WR_FLUSH_ERR: return "work request flushed";
    case IBV_WC_REM_INV_REQ_ERR: return "remote invalid request error";
    case IBV_WC_REM_ACCESS_ERR: return "remote access error";
    case IBV_WC_REM_OP_ERR: return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
    default: return "error";
    }
}

void btl_verbs_fatal(btl_verbs_module_t *m, int rank, const char *what, enum ibv_wc_status st)
{
    char msg[512];
    snprintf(msg, sizeof(msg), "btl verbs: the queue pair between rank %d (%s) and rank %d (%s) "
             "went to the error state: %s completed with \"%s\" (status %d) on %s",
             m->my_rank, rte_hostname_of(m->my_rank), rank,
             rank >= 0 ? rte_hostname_of(rank) : "?", what, btl_verbs_wc_status_str(st),
             (int)st, m->dev_name);
    if (st == IBV_WC_WR_FLUSH_ERR) {
        /* A flushed request is a consequence: the queue pair went to the
         * error state for a reason the peer (or a later completion here)
         * reports.  Let that report end the job first; end it ourselves
         * after a second, ten times the longest sleep of a wait
         * (progress_sleep_timeout_ms), should the peer be gone. */
        rail_error("%s; waiting 1 s for the cause to be reported", msg);
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    rte_abort(1, msg);
}

/* ------------------------------------------------------------ connections */

static int btl_verbs_connect(btl_verbs_module_t *m, struct ibv_qp *qp, const btl_verbs_card_t *c,
                             uint32_t qpn)
{
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = (enum ibv_mtu)RAIL_MIN(m->mtu, c->mtu);
    a.dest_qp_num = qpn;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = m->port;
    a.ah_attr.dlid = c->lid;
    if (m->link_layer == IBV_LINK_LAYER_ETHERNET || c->link_layer == IBV_LINK_LAYER_ETHERNET) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, c->gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)m->gid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    int rc = m->ops->modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                           IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = (uint8_t)btl_verbs_params.timeout;
    a.retry_cnt = 7;
    a.rnr_retry = 7;               /* infinite: credits keep the SRQ from running dry */
    a.max_rd_atomic = 4;
    if (rc == 0)
        rc = m->ops->modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                           IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                           IBV_QP_MAX_QP_RD_ATOMIC);
    return rc;
}

/* The endpoint of rank r, or NULL when r is not reached (said why at level 2). */
static btl_endpoint_t *btl_verbs_ep_new(btl_verbs_module_t *m, const btl_proc_t *p)
{
    btl_verbs_card_t *c = NULL;
    size_t len = 0;
    btl_endpoint_t *ep = NULL;
    if (rte_modex_get(p->rank, BTL_VERBS_MODEX_KEY, (void **)&c, &len) != MPI_SUCCESS) {
        RAIL_VERBOSE(btl_verbs_verbosity(), 2, "btl verbs: rank %d has no verbs card", p->rank);
        return NULL;
    }
    if (len < sizeof(*c) || c->magic != BTL_VERBS_CARD_MAGIC || (int)c->nprocs != m->nprocs ||
        len < sizeof(*c) + c->nprocs * sizeof(uint32_t) || c->qpn[m->my_rank] == 0) {
        rail_warn("btl verbs: rank %d (%s) published an unusable card; not reaching it",
                  p->rank, rte_hostname_of(p->rank));
    } else if (btl_verbs_connect(m, m->qps[p->rank], c, c->qpn[m->my_rank]) != 0) {
        rail_warn("btl verbs: cannot connect to rank %d (%s): %s", p->rank,
                  rte_hostname_of(p->rank), strerror(errno));
    } else if ((ep = calloc(1, sizeof(*ep)))) {
        ep->rank = p->rank;
        ep->local = p->local;
        ep->qp = m->qps[p->rank];
        ep->credits = btl_verbs_params.credits;
        ep->inline_op = (btl_verbs_op_t){BTL_VERBS_OP_INLINE, ep};
    }
    free(c);
    return ep;
}

int btl_verbs_add_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    btl_verbs_module_t *m = (btl_verbs_module_t *)base;
    for (int i = 0; i < n; i++) {
        int r = procs[i].rank;
        eps[i] = NULL;
        if (r == m->my_rank || r >= m->nprocs || !m->qps[r])
            continue;
        if (procs[i].local && !btl_verbs_params.local_peers) {
            m->ops->destroy_qp(m->qps[r]);     /* sm's peer: btl_verbs_local_peers=0 */
            m->qps[r] = NULL;
            continue;
        }
        eps[i] = m->eps[r] = btl_verbs_ep_new(m, &procs[i]);
        if (!eps[i]) {
            m->ops->destroy_qp(m->qps[r]);
            m->qps[r] = NULL;
        }
    }
    return MPI_SUCCESS;
}

int btl_verbs_del_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    (void)base, (void)n, (void)procs, (void)eps;   /* finalize releases everything */
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ sending */

int btl_verbs_post_recv(btl_verbs_module_t *m, int idx)
{
    struct ibv_sge sge = {(uintptr_t)(m->rbufs + (size_t)idx * m->rbuf_size),
                          (uint32_t)m->rbuf_size, m->rmr->lkey};
    struct ibv_recv_wr wr = {.wr_id = (uint64_t)idx, .sg_list = &sge, .num_sge = 1}, *bad;
    return m->ops->post_srq_recv(m->srq, &wr, &bad) == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
}

/* Post one frame of len bytes at buf (inline: op is ep's inline op). */
static int btl_verbs_post_frame(btl_verbs_module_t *m, btl_endpoint_t *ep, const void *buf,
                                size_t len, btl_verbs_op_t *op, uint32_t lkey)
{
    struct ibv_sge sge = {(uintptr_t)buf, (uint32_t)len, lkey};
    struct ibv_send_wr wr = {.wr_id = (uintptr_t)op, .sg_list = &sge, .num_sge = 1,
                             .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED}, *bad;
    if (op->kind == BTL_VERBS_OP_INLINE)
        wr.send_flags |= IBV_SEND_INLINE;
    int rc = m->ops->post_send(ep->qp, &wr, &bad);
    if (rc != 0) {
        rail_error("btl verbs: rank %d (%s): post_send to rank %d (%s) failed: %s",
                   m->my_rank, rte_hostname_of(m->my_rank), ep->rank, rte_hostname_of(ep->rank),
                   strerror(rc));
        return MPI_ERR_OTHER;
    }
    ep->outstanding++;
    m->outstanding++;
    return MPI_SUCCESS;
}

static bool btl_verbs_can_post(const btl_verbs_module_t *m, const btl_endpoint_t *ep)
{
    return ep->outstanding < btl_verbs_params.sq_depth && m->outstanding < m->max_outstanding;
}

/* A credit-only frame (needs no credit: the SRQ keeps a reserve for them). */
void btl_verbs_send_credits(btl_verbs_module_t *m, btl_endpoint_t *ep)
{
    if (!btl_verbs_can_post(m, ep)) {
        m->n_owed += !ep->credit_owed;
        ep->credit_owed = true;
        return;
    }
    btl_verbs_fhdr_t f = {.tag = BTL_VERBS_TAG_CREDIT, .credits = (uint16_t)ep->consumed,
                          .rank = m->my_rank};
    ep->consumed = 0;
    m->n_owed -= ep->credit_owed;
    ep->credit_owed = false;
    if (btl_verbs_post_frame(m, ep, &f, sizeof(f), &ep->inline_op, 0) != MPI_SUCCESS)
        btl_verbs_fatal(m, ep->rank, "a credit frame", IBV_WC_GENERAL_ERR);
}

static void btl_verbs_fill(btl_verbs_module_t *m, btl_endpoint_t *ep, char *buf, uint8_t tag,
                           const void *hdr, size_t hdr_len, const btl_payload_t *pl)
{
    btl_verbs_fhdr_t *f = (btl_verbs_fhdr_t *)buf;
    *f = (btl_verbs_fhdr_t){.tag = tag, .hdr_len = (uint8_t)hdr_len,
                            .credits = (uint16_t)ep->consumed,
                            .payload_len = (uint32_t)(pl ? pl->len : 0), .rank = m->my_rank};
    m->n_owed -= ep->credit_owed;
    ep->credit_owed = false;
    ep->consumed = 0;
    memcpy(buf + sizeof(*f), hdr, hdr_len);
    char *dst = buf + sizeof(*f) + btl_verbs_pad8(hdr_len);
    if (pl && pl->len && pl->pack)
        pl->pack(pl->ctx, dst, pl->len);
    else if (pl && pl->len)
        memcpy(dst, pl->data, pl->len);
}

int btl_verbs_send(btl_module_t *base, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                   size_t hdr_len, const btl_payload_t *payload)
{
    btl_verbs_module_t *m = (btl_verbs_module_t *)base;
    size_t plen = payload ? payload->len : 0;
    size_t len = sizeof(btl_verbs_fhdr_t) + btl_verbs_pad8(hdr_len) + plen;
    if (hdr_len > BTL_VERBS_HDR_MAX || len > m->rbuf_size)
        return MPI_ERR_ARG;
    if (ep->credits == 0 || !btl_verbs_can_post(m, ep))
        return RAIL_AGAIN;
    int rc;
    if (len <= m->max_inline) {
        uint64_t buf[(256 + 7) / 8];
        btl_verbs_fill(m, ep, (char *)buf, tag, hdr, hdr_len, payload);
        rc = btl_verbs_post_frame(m, ep, buf, len, &ep->inline_op, 0);
    } else {
        btl_verbs_sbuf_t *s = m->sfree;
        if (!s)
            return RAIL_AGAIN;
        m->sfree = s->next;
        s->op.ep = ep;
        btl_verbs_fill(m, ep, s->data, tag, hdr, hdr_len, payload);
        rc = btl_verbs_post_frame(m, ep, s->data, len, &s->op, m->smr->lkey);
    }
    if (rc == MPI_SUCCESS)
        ep->credits--;
    return rc;
}

size_t btl_verbs_pending(btl_module_t *base)
{
    btl_verbs_module_t *m = (btl_verbs_module_t *)base;
    return (size_t)m->outstanding + (size_t)m->n_owed;
}
