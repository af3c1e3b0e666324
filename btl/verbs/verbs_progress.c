/* btl verbs: completions (frames received, sends and RDMA done), sleeping. */
#include "btl/verbs/verbs.h"
#include "base/log.h"

#include <stdlib.h>
#include <string.h>

static btl_endpoint_t *btl_verbs_ep_of_qpn(btl_verbs_module_t *m, uint32_t qpn)
{
    for (int r = 0; r < m->nprocs; r++)
        if (m->eps[r] && m->eps[r]->qp->qp_num == qpn)
            return m->eps[r];
    return NULL;
}

static void btl_verbs_recv(btl_verbs_module_t *m, const struct ibv_wc *wc)
{
    int idx = (int)wc->wr_id;
    const char *buf = m->rbufs + (size_t)idx * m->rbuf_size;
    const btl_verbs_fhdr_t *f = (const btl_verbs_fhdr_t *)buf;
    btl_endpoint_t *ep = f->rank >= 0 && f->rank < m->nprocs ? m->eps[f->rank] : NULL;
    if (!ep || wc->byte_len < sizeof(*f) ||
        wc->byte_len != sizeof(*f) + btl_verbs_pad8(f->hdr_len) + f->payload_len) {
        rail_warn("btl verbs: dropped a malformed frame of %u bytes (rank %d)", wc->byte_len,
                  f->rank);
        btl_verbs_post_recv(m, idx);
        return;
    }
    ep->credits += f->credits;
    if (f->tag != BTL_VERBS_TAG_CREDIT) {
        btl_recv_cb_t cb = f->tag < BTL_TAG_MAX ? btl_recv_table[f->tag] : NULL;
        const char *hdr = buf + sizeof(*f);
        if (cb)
            cb(&m->super, ep, hdr, f->hdr_len, hdr + btl_verbs_pad8(f->hdr_len), f->payload_len);
        ep->consumed++;
    }
    if (btl_verbs_post_recv(m, idx) != MPI_SUCCESS)
        btl_verbs_fatal(m, ep->rank, "reposting a receive", IBV_WC_GENERAL_ERR);
    if (ep->consumed >= btl_verbs_params.credits / 2)
        btl_verbs_send_credits(m, ep);
}

static void btl_verbs_completion(btl_verbs_module_t *m, const struct ibv_wc *wc)
{
    if (wc->status != IBV_WC_SUCCESS) {
        /* an error completion's opcode is undefined: receives' wr_ids are
         * buffer numbers, sends' are pointers */
        bool recv = wc->wr_id < (uint64_t)m->n_rbufs;
        btl_verbs_op_t *op = recv ? NULL : (btl_verbs_op_t *)wc->wr_id;
        btl_endpoint_t *ep = btl_verbs_ep_of_qpn(m, wc->qp_num);
        const char *what = op && op->kind == BTL_VERBS_OP_RDMA ? "an RDMA read or write"
                         : op ? "a send" : "a receive";
        btl_verbs_fatal(m, ep ? ep->rank : op && op->ep ? op->ep->rank : -1, what, wc->status);
    }
    if (wc->opcode & IBV_WC_RECV) {
        btl_verbs_recv(m, wc);
        return;
    }
    btl_verbs_op_t *op = (btl_verbs_op_t *)wc->wr_id;
    op->ep->outstanding--;
    m->outstanding--;
    if (op->kind == BTL_VERBS_OP_SBUF) {
        btl_verbs_sbuf_t *s = (btl_verbs_sbuf_t *)op;
        s->next = m->sfree;
        m->sfree = s;
    } else if (op->kind == BTL_VERBS_OP_RDMA) {
        btl_verbs_rdma_done(m, (btl_verbs_rdma_t *)op);
    }
}

int btl_verbs_progress(btl_module_t *base)
{
    btl_verbs_module_t *m = (btl_verbs_module_t *)base;
    struct ibv_wc wc[BTL_VERBS_POLL];
    if (m->in_progress)
        return 0;
    m->in_progress = true;
    int n = m->n_stash, events = 0;
    if (n) {
        memcpy(wc, m->stash, sizeof(wc[0]) * (size_t)n);
        m->n_stash = 0;
    } else {
        n = m->ops->poll_cq(m->cq, BTL_VERBS_POLL, wc);
        if (n < 0)
            btl_verbs_fatal(m, -1, "polling the completion queue (overrun)", IBV_WC_GENERAL_ERR);
    }
    for (int i = 0; i < n; i++)
        btl_verbs_completion(m, &wc[i]);
    events += n;
    for (int r = 0; m->n_owed && r < m->nprocs; r++)
        if (m->eps[r] && m->eps[r]->credit_owed)
            btl_verbs_send_credits(m, m->eps[r]);
    m->in_progress = false;
    return events;
}

/* Arm the CQ, then look once more: what arrived before arming makes no event. */
bool btl_verbs_sleep_prepare(btl_module_t *base)
{
    btl_verbs_module_t *m = (btl_verbs_module_t *)base;
    if (m->n_stash || m->n_owed)
        return false;
    if (m->ops->req_notify_cq(m->cq, 0) != 0)
        return false;
    int n = m->ops->poll_cq(m->cq, BTL_VERBS_POLL, m->stash);
    if (n != 0) {
        m->n_stash = n > 0 ? n : 0;
        return false;
    }
    return true;
}

void btl_verbs_sleep_finish(btl_module_t *base)
{
    btl_verbs_module_t *m = (btl_verbs_module_t *)base;
    struct ibv_cq *cq;
    void *ctx;
    while (m->ops->get_cq_event(m->ch, &cq, &ctx) == 0)
        m->ops->ack_cq_events(cq, 1);
}
