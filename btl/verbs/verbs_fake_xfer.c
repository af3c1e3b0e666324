/*
 * btl verbs, emulated HCA: the data path.  post_send queues the requests
 * on the QP and runs them in order (a send waiting for a receive to be
 * posted stops the QP until a later poll_cq retries it, as RNR retries
 * would); each run checks what a real HCA checks and moves the bytes with
 * base/cma.h (process_vm_readv/writev; see verbs_fake.h).
 */
#include "btl/verbs/verbs_fake.h"
#include "base/cma.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { RUN_DONE, RUN_RNR };

/* Move len bytes between the local pieces and [raddr, raddr+len) of pid,
 * by the single-copy service (a failure is a completion error, no
 * warning). */
static int fake_cma(pid_t pid, const struct iovec *l, int nl, uint64_t raddr, size_t len,
                    bool write)
{
    struct iovec r = {(void *)(uintptr_t)raddr, len};
    return rail_cma_xfer(pid, l, nl, &r, 1, RAIL_CMA_QUIET | (write ? RAIL_CMA_WRITE : 0)) ==
                   MPI_SUCCESS
               ? 0
               : -1;
}

/* The local pieces of w, checked against our MR table; the total length. */
static int local_iov(fake_ctx_t *c, const fake_swqe_t *w, int access, struct iovec *iov,
                     size_t *total)
{
    *total = 0;
    if (w->inl) {
        for (uint32_t i = 0; i < w->num_sge; i++)
            *total += w->sge[i].length;
        iov[0] = (struct iovec){w->inl, *total};
        return 1;
    }
    for (uint32_t i = 0; i < w->num_sge; i++) {
        if (!btl_verbs_fake_mr_check(c->seg, getpid(), w->sge[i].lkey, w->sge[i].addr, w->sge[i].length,
                           access))
            return -1;
        iov[i] = (struct iovec){(void *)(uintptr_t)w->sge[i].addr, w->sge[i].length};
        *total += w->sge[i].length;
    }
    return (int)w->num_sge;
}

static void set_state(fake_seg_t *s, fake_qp_t *q, uint32_t state)
{
    btl_verbs_fake_lock(s);
    q->state = state;
    btl_verbs_fake_unlock(s);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The responder's QP for ours, or NULL: *peer NULL when its process is
 * gone, else its QP is not (yet) connected back to ours. */
static fake_qp_t *responder(fake_ctx_t *c, fake_qp_t *me, fake_peer_t **peer)
{
    *peer = btl_verbs_fake_peer_get(c, FAKE_QPN_HCA(me->dest_qpn));
    if (!*peer)
        return NULL;
    fake_qp_t *t = &(*peer)->seg->qp[FAKE_QPN_SLOT(me->dest_qpn) % FAKE_MAX_QP];
    uint32_t st = __atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
    if (!t->used || t->qpn != me->dest_qpn || t->dest_qpn != me->qpn ||
        (st != IBV_QPS_RTR && st != IBV_QPS_RTS))
        return NULL;
    return t;
}

/* No responder ready: wait while the QP's retries last (RUN_RNR), then fail. */
static int no_responder(const fake_qp_priv_t *q, fake_swqe_t *w, bool gone)
{
    uint64_t now = now_ns();
    if (gone)
        return IBV_WC_RETRY_EXC_ERR;
    if (!w->t_first)
        w->t_first = now;
    return q->retry_ns && now - w->t_first > q->retry_ns ? IBV_WC_RETRY_EXC_ERR : -1;
}

/* Take one posted receive of t (its SRQ or its own queue). */
static bool take_recv(fake_seg_t *s, fake_qp_t *t, fake_rwqe_t *out)
{
    bool ok = false;
    btl_verbs_fake_lock(s);
    if (t->srq >= 0) {
        fake_srq_t *q = &s->srq[t->srq];
        if (q->used && q->head != q->tail) {
            *out = q->ent[q->head++ % q->cap];
            ok = true;
        }
    } else if (t->head != t->tail) {
        *out = t->rq[t->head++ % FAKE_QP_RQ_CAP];
        ok = true;
    }
    btl_verbs_fake_unlock(s);
    return ok;
}

static int run_send(fake_ctx_t *c, fake_qp_t *me, fake_peer_t *p, fake_qp_t *t,
                    const fake_swqe_t *w, uint32_t *len)
{
    struct iovec iov[FAKE_MAX_SGE];
    size_t total;
    int n = local_iov(c, w, 0, iov, &total);
    if (n < 0)
        return IBV_WC_LOC_PROT_ERR;
    fake_rwqe_t r;
    if (!take_recv(p->seg, t, &r))
        return -1;                 /* RNR */
    fake_cqe_t e = {.wr_id = r.wr_id, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
                    .byte_len = (uint32_t)total, .qp_num = t->qpn, .src_qp = me->qpn};
    int st = IBV_WC_SUCCESS;
    if (total > r.length) {
        e.status = IBV_WC_LOC_LEN_ERR;
        st = IBV_WC_REM_INV_REQ_ERR;
    } else if (total && !btl_verbs_fake_mr_check(p->seg, p->pid, r.lkey, r.addr, total,
                                       IBV_ACCESS_LOCAL_WRITE)) {
        e.status = IBV_WC_LOC_PROT_ERR;
        st = IBV_WC_REM_OP_ERR;
    } else if (total && fake_cma(p->pid, iov, n, r.addr, total, true) != 0) {
        return IBV_WC_RETRY_EXC_ERR;   /* the responder went away */
    }
    if (e.status != IBV_WC_SUCCESS)
        set_state(p->seg, t, IBV_QPS_ERR);
    btl_verbs_fake_cq_push(p->seg, t->recv_cq, &e, p->ch_fd);
    *len = (uint32_t)total;
    return st;
}

static int run_rdma(fake_ctx_t *c, fake_peer_t *p, fake_qp_t *t, const fake_swqe_t *w,
                    uint32_t *len)
{
    bool write = w->opcode == IBV_WR_RDMA_WRITE;
    struct iovec iov[FAKE_MAX_SGE];
    size_t total;
    int n = local_iov(c, w, write ? 0 : IBV_ACCESS_LOCAL_WRITE, iov, &total);
    if (n < 0)
        return IBV_WC_LOC_PROT_ERR;
    uint32_t rkey = w->rkey;
    if (btl_verbs_fake_faults.bad_rkey && ++c->n_rdma == btl_verbs_fake_faults.bad_rkey)
        rkey ^= 0x5a5a5a00u;
    if (!btl_verbs_fake_mr_check(p->seg, p->pid, rkey, w->remote_addr, total,
                       write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ)) {
        set_state(p->seg, t, IBV_QPS_ERR);
        return IBV_WC_REM_ACCESS_ERR;
    }
    if (total && fake_cma(p->pid, iov, n, w->remote_addr, total, write) != 0)
        return IBV_WC_RETRY_EXC_ERR;
    *len = (uint32_t)total;
    return IBV_WC_SUCCESS;
}

static void complete(fake_ctx_t *c, fake_qp_priv_t *q, const fake_swqe_t *w, int status,
                     uint32_t len)
{
    static const uint32_t wc_op[] = {[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
                                     [IBV_WR_SEND] = IBV_WC_SEND,
                                     [IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ};
    if (status == IBV_WC_SUCCESS && !q->sig_all && !(w->flags & IBV_SEND_SIGNALED))
        return;
    fake_cqe_t e = {.wr_id = w->wr_id, .status = (uint32_t)status,
                    .opcode = w->opcode < 5 ? wc_op[w->opcode] : IBV_WC_SEND,
                    .byte_len = len, .qp_num = q->ibv.qp_num};
    btl_verbs_fake_cq_push(c->seg, ((fake_cq_priv_t *)q->ibv.send_cq)->slot, &e, c->ch_wr);
}

/* Run one request of q: RUN_DONE (completed, maybe with an error) or RUN_RNR. */
static int run_one(fake_ctx_t *c, fake_qp_priv_t *q, fake_swqe_t *w, bool fault)
{
    fake_qp_t *me = &c->seg->qp[q->slot];
    fake_peer_t *p = NULL;
    fake_qp_t *t = me->state == IBV_QPS_RTS && !fault ? responder(c, me, &p) : NULL;
    uint32_t len = 0;
    int st;
    if (me->state == IBV_QPS_ERR)
        st = IBV_WC_WR_FLUSH_ERR;
    else if (fault)
        st = IBV_WC_RETRY_EXC_ERR;
    else if (!t)
        st = no_responder(q, w, p == NULL);
    else if (w->opcode == IBV_WR_SEND)
        st = run_send(c, me, p, t, w, &len);
    else if (w->opcode == IBV_WR_RDMA_WRITE || w->opcode == IBV_WR_RDMA_READ)
        st = run_rdma(c, p, t, w, &len);
    else
        st = IBV_WC_LOC_QP_OP_ERR;
    if (st < 0)
        return RUN_RNR;
    if (st != IBV_WC_SUCCESS && st != IBV_WC_WR_FLUSH_ERR)
        set_state(c->seg, me, IBV_QPS_ERR);
    complete(c, q, w, st, len);
    return RUN_DONE;
}

/* Run q's waiting requests in order, until one waits for a receive. */
static void qp_progress(fake_ctx_t *c, fake_qp_priv_t *q)
{
    int k = 0;
    while (k < q->n_pend && run_one(c, q, &q->pend[k], false) == RUN_DONE)
        free(q->pend[k++].inl);
    if (k) {
        memmove(q->pend, q->pend + k, sizeof(*q->pend) * (size_t)(q->n_pend - k));
        q->n_pend -= k;
        c->n_pend -= k;
    }
}

void btl_verbs_fake_qp_flush(fake_ctx_t *c, fake_qp_priv_t *q)
{
    if (c->seg->qp[q->slot].state == IBV_QPS_ERR)
        qp_progress(c, q);         /* each completes with a flush error */
}

static int copy_wr(const struct ibv_send_wr *wr, int max_inline, fake_swqe_t *w)
{
    if (wr->num_sge < 0 || wr->num_sge > FAKE_MAX_SGE)
        return EINVAL;
    memset(w, 0, sizeof(*w));
    w->wr_id = wr->wr_id;
    w->opcode = wr->opcode;
    w->flags = wr->send_flags;
    w->num_sge = (uint32_t)wr->num_sge;
    w->remote_addr = wr->wr.rdma.remote_addr;
    w->rkey = wr->wr.rdma.rkey;
    memcpy(w->sge, wr->sg_list, sizeof(*w->sge) * (size_t)wr->num_sge);
    if (!(wr->send_flags & IBV_SEND_INLINE))
        return 0;
    size_t total = 0;
    for (int i = 0; i < wr->num_sge; i++)
        total += wr->sg_list[i].length;
    if (total > (size_t)max_inline || wr->opcode == IBV_WR_RDMA_READ)
        return EINVAL;
    w->inl = malloc(total ? total : 1);
    if (!w->inl)
        return ENOMEM;
    for (int i = 0, off = 0; i < wr->num_sge; off += (int)wr->sg_list[i].length, i++)
        memcpy(w->inl + off, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
    return 0;
}

int btl_verbs_fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    fake_ctx_t *c = btl_verbs_fake_ctx;
    fake_qp_priv_t *q = (fake_qp_priv_t *)qp;
    uint32_t st = c->seg->qp[q->slot].state;
    if (st != IBV_QPS_RTS && st != IBV_QPS_ERR) {
        *bad = wr;
        return EINVAL;
    }
    for (; wr; wr = wr->next) {
        uint64_t nth = ++c->n_posts;
        int rc = btl_verbs_fake_faults.post_fail == nth ? ENOMEM : 0;
        if (q->n_pend == q->cap_pend && !rc) {
            int cap = q->cap_pend ? 2 * q->cap_pend : 16;
            fake_swqe_t *p = realloc(q->pend, sizeof(*p) * (size_t)cap);
            rc = p ? 0 : ENOMEM;
            if (p) {
                q->pend = p;
                q->cap_pend = cap;
            }
        }
        if (!rc)
            rc = copy_wr(wr, FAKE_MAX_INLINE, &q->pend[q->n_pend]);
        if (rc) {
            *bad = wr;
            return rc;
        }
        if (btl_verbs_fake_faults.qp_error == nth) {
            run_one(c, q, &q->pend[0], true);
            free(q->pend[0].inl);
            continue;
        }
        q->n_pend++;
        c->n_pend++;
        qp_progress(c, q);
    }
    return 0;
}

static int post_rwqe(fake_seg_t *s, fake_rwqe_t *ring, uint32_t cap, uint32_t *head,
                     uint32_t *tail, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    int rc = 0;
    btl_verbs_fake_lock(s);
    for (; wr; wr = wr->next) {
        if (wr->num_sge > 1 || *tail - *head >= cap) {
            rc = wr->num_sge > 1 ? EINVAL : ENOMEM;
            *bad = wr;
            break;
        }
        fake_rwqe_t r = {.wr_id = wr->wr_id};
        if (wr->num_sge == 1)
            r = (fake_rwqe_t){wr->wr_id, wr->sg_list[0].addr, wr->sg_list[0].length,
                              wr->sg_list[0].lkey};
        ring[(*tail)++ % cap] = r;
    }
    btl_verbs_fake_unlock(s);
    return rc;
}

int btl_verbs_fake_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    fake_srq_t *q = &btl_verbs_fake_ctx->seg->srq[((fake_srq_priv_t *)srq)->slot];
    return post_rwqe(btl_verbs_fake_ctx->seg, q->ent, q->cap, &q->head, &q->tail, wr, bad);
}

int btl_verbs_fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    fake_qp_t *q = &btl_verbs_fake_ctx->seg->qp[((fake_qp_priv_t *)qp)->slot];
    if (q->srq >= 0 || q->state == IBV_QPS_RESET) {
        *bad = wr;
        return EINVAL;
    }
    return post_rwqe(btl_verbs_fake_ctx->seg, q->rq, FAKE_QP_RQ_CAP, &q->head, &q->tail, wr, bad);
}

int btl_verbs_fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    fake_ctx_t *c = btl_verbs_fake_ctx;
    fake_cq_priv_t *p = (fake_cq_priv_t *)cq;
    if (c->n_pend)                 /* RNR retries of QPs sending into this CQ */
        for (int i = 0; i < FAKE_MAX_QP; i++)
            if (c->qps[i] && c->qps[i]->n_pend && c->qps[i]->ibv.send_cq == cq)
                qp_progress(c, c->qps[i]);
    fake_cq_t *q = &c->seg->cq[p->slot];
    int k = 0;
    btl_verbs_fake_lock(c->seg);
    if (q->overflow) {
        btl_verbs_fake_unlock(c->seg);
        return -1;
    }
    for (; k < n && q->head != q->tail; k++) {
        const fake_cqe_t *e = &q->ent[q->head++ % q->cap];
        memset(&wc[k], 0, sizeof(wc[k]));
        wc[k].wr_id = e->wr_id;
        wc[k].status = (enum ibv_wc_status)e->status;
        wc[k].opcode = (enum ibv_wc_opcode)e->opcode;
        wc[k].byte_len = e->byte_len;
        wc[k].qp_num = e->qp_num;
        wc[k].src_qp = e->src_qp;
        wc[k].wc_flags = e->wc_flags;
    }
    btl_verbs_fake_unlock(c->seg);
    return k;
}
