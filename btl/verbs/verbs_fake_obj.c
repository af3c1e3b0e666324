/*
 * btl verbs, emulated HCA: its objects (protection domains, memory regions,
 * completion channel and queues, shared receive queues, queue pairs) and
 * the operations table (see verbs_fake.h).
 */
#include "btl/verbs/verbs_fake.h"
#include "base/rail.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct ibv_pd *fake_alloc_pd(struct ibv_context *ctx)
{
    struct ibv_pd *pd = calloc(1, sizeof(*pd));
    if (pd)
        pd->context = ctx;
    return pd;
}

static int fake_dealloc_pd(struct ibv_pd *pd)
{
    free(pd);
    return 0;
}

/* ------------------------------------------------------------ memory */

static struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    fake_ctx_t *c = (fake_ctx_t *)pd->context;
    fake_seg_t *s = c->seg;
    if (len == 0 || ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
                     !(access & IBV_ACCESS_LOCAL_WRITE))) {
        errno = EINVAL;
        return NULL;
    }
    fake_mr_priv_t *m = calloc(1, sizeof(*m));
    int slot = -1;
    for (int i = 0; i < FAKE_MAX_MR && m && slot < 0; i++)
        if (!s->mr[i].used)
            slot = i;
    if (slot < 0) {
        free(m);
        errno = ENOMEM;
        return NULL;
    }
    fake_mr_t *r = &s->mr[slot];
    uint32_t gen = ((r->key >> 10) + 1) & 0x3fffff;
    r->addr = (uintptr_t)addr;
    r->len = len;
    r->access = (uint32_t)access;
    if (btl_verbs_fake_mr_record(s, r) != 0) {
        free(m);
        errno = EFAULT;            /* memory that is not mapped */
        return NULL;
    }
    r->key = gen << 10 | (uint32_t)slot;
    __atomic_store_n(&r->used, 1, __ATOMIC_RELEASE);
    m->slot = slot;
    m->ibv = (struct ibv_mr){.context = pd->context, .pd = pd, .addr = addr, .length = len,
                             .lkey = r->key, .rkey = r->key};
    return &m->ibv;
}

static int fake_dereg_mr(struct ibv_mr *ibv)
{
    fake_mr_priv_t *m = (fake_mr_priv_t *)ibv;
    fake_seg_t *s = btl_verbs_fake_ctx->seg;
    fake_mr_t *r = &s->mr[m->slot];
    __atomic_store_n(&r->used, 0, __ATOMIC_RELEASE);
    btl_verbs_fake_mr_release(s, r);
    free(m);
    return 0;
}

/* ------------------------------------------------------------ completions */

static struct ibv_comp_channel *fake_create_comp_channel(struct ibv_context *ctx)
{
    fake_ctx_t *c = (fake_ctx_t *)ctx;
    if (c->channel) {
        errno = EBUSY;             /* one channel per HCA */
        return NULL;
    }
    c->channel = calloc(1, sizeof(*c->channel));
    if (c->channel) {
        c->channel->context = ctx;
        c->channel->fd = c->ch_rd;
    }
    return c->channel;
}

static int fake_destroy_comp_channel(struct ibv_comp_channel *ch)
{
    fake_ctx_t *c = (fake_ctx_t *)ch->context;
    c->channel = NULL;
    free(ch);
    return 0;
}

static struct ibv_cq *fake_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                                     struct ibv_comp_channel *ch, int vec)
{
    fake_ctx_t *c = (fake_ctx_t *)ctx;
    (void)vec;
    int slot = -1;
    for (int i = 0; i < FAKE_MAX_CQ && slot < 0; i++)
        if (!c->cqs[i])
            slot = i;
    if (slot < 0 || cqe < 1 || cqe > FAKE_CQ_CAP) {
        errno = slot < 0 ? ENOMEM : EINVAL;
        return NULL;
    }
    fake_cq_priv_t *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    fake_cq_t *sq = &c->seg->cq[slot];
    btl_verbs_fake_lock(c->seg);
    sq->head = sq->tail = sq->armed = sq->overflow = 0;
    sq->cap = (uint32_t)cqe;
    sq->used = 1;
    btl_verbs_fake_unlock(c->seg);
    q->slot = slot;
    q->ibv.context = ctx;
    q->ibv.channel = ch;
    q->ibv.cq_context = cq_context;
    q->ibv.cqe = cqe;
    c->cqs[slot] = q;
    return &q->ibv;
}

static int fake_destroy_cq(struct ibv_cq *cq)
{
    fake_cq_priv_t *q = (fake_cq_priv_t *)cq;
    btl_verbs_fake_ctx->seg->cq[q->slot].used = 0;
    btl_verbs_fake_ctx->cqs[q->slot] = NULL;
    free(q);
    return 0;
}

static int fake_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
    fake_cq_priv_t *q = (fake_cq_priv_t *)cq;
    (void)solicited_only;
    if (!cq->channel)
        return EINVAL;
    __atomic_store_n(&btl_verbs_fake_ctx->seg->cq[q->slot].armed, 1, __ATOMIC_SEQ_CST);
    return 0;
}

/* Read one event (a byte naming the CQ); honours O_NONBLOCK on the fd. */
static int fake_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
    fake_ctx_t *c = (fake_ctx_t *)ch->context;
    uint8_t b;
    for (;;) {
        ssize_t n = read(ch->fd, &b, 1);
        if (n == 1 && b < FAKE_MAX_CQ && c->cqs[b])
            break;
        if (n == 1)
            continue;              /* a destroyed CQ's event */
        return -1;                 /* errno: EAGAIN when the fd is nonblocking */
    }
    *cq = &c->cqs[b]->ibv;
    *cq_context = (*cq)->cq_context;
    return 0;
}

static void fake_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
    cq->comp_events_completed += n;
}

/* ------------------------------------------------------------ queues */

static struct ibv_srq *fake_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
    fake_ctx_t *c = (fake_ctx_t *)pd->context;
    int slot = -1;
    for (int i = 0; i < FAKE_MAX_SRQ && slot < 0; i++)
        if (!c->seg->srq[i].used)
            slot = i;
    if (slot < 0 || a->attr.max_wr < 1 || a->attr.max_wr > FAKE_SRQ_CAP || a->attr.max_sge > 1) {
        errno = slot < 0 ? ENOMEM : EINVAL;
        return NULL;
    }
    fake_srq_priv_t *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    fake_srq_t *s = &c->seg->srq[slot];
    btl_verbs_fake_lock(c->seg);
    s->head = s->tail = 0;
    s->cap = a->attr.max_wr;
    s->used = 1;
    btl_verbs_fake_unlock(c->seg);
    q->slot = slot;
    q->ibv.context = pd->context;
    q->ibv.pd = pd;
    q->ibv.srq_context = a->srq_context;
    return &q->ibv;
}

static int fake_destroy_srq(struct ibv_srq *srq)
{
    fake_srq_priv_t *q = (fake_srq_priv_t *)srq;
    btl_verbs_fake_ctx->seg->srq[q->slot].used = 0;
    free(q);
    return 0;
}

static struct ibv_qp *fake_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    fake_ctx_t *c = (fake_ctx_t *)pd->context;
    int slot = -1;
    for (int i = 0; i < FAKE_MAX_QP && slot < 0; i++)
        if (!c->qps[i])
            slot = i;
    if (slot < 0 || a->qp_type != IBV_QPT_RC || !a->send_cq || !a->recv_cq ||
        a->cap.max_inline_data > FAKE_MAX_INLINE || a->cap.max_send_sge > FAKE_MAX_SGE) {
        errno = slot < 0 ? ENOMEM : EINVAL;
        return NULL;
    }
    fake_qp_priv_t *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    fake_qp_t *s = &c->seg->qp[slot];
    btl_verbs_fake_lock(c->seg);
    memset(s, 0, offsetof(fake_qp_t, rq));
    s->qpn = FAKE_QPN(c->seg->idx, slot);
    s->state = IBV_QPS_RESET;
    s->srq = a->srq ? ((fake_srq_priv_t *)a->srq)->slot : -1;
    s->recv_cq = ((fake_cq_priv_t *)a->recv_cq)->slot;
    s->used = 1;
    btl_verbs_fake_unlock(c->seg);
    q->slot = slot;
    q->sig_all = a->sq_sig_all != 0;
    q->ibv = (struct ibv_qp){.context = pd->context, .qp_context = a->qp_context, .pd = pd,
                             .send_cq = a->send_cq, .recv_cq = a->recv_cq, .srq = a->srq,
                             .qp_num = s->qpn, .state = IBV_QPS_RESET, .qp_type = IBV_QPT_RC};
    c->qps[slot] = q;
    return &q->ibv;
}

/* The transitions a real RC QP takes, with the attributes each needs. */
static int fake_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    fake_qp_priv_t *q = (fake_qp_priv_t *)qp;
    fake_qp_t *s = &btl_verbs_fake_ctx->seg->qp[q->slot];
    if (!(mask & IBV_QP_STATE))
        return EINVAL;
    uint32_t cur = s->state, next = a->qp_state;
    bool ok = next == IBV_QPS_ERR || next == IBV_QPS_RESET ||
              (cur == IBV_QPS_RESET && next == IBV_QPS_INIT && (mask & IBV_QP_PORT)) ||
              (cur == IBV_QPS_INIT && next == IBV_QPS_RTR && (mask & IBV_QP_DEST_QPN) &&
               (mask & IBV_QP_AV) && (mask & IBV_QP_PATH_MTU)) ||
              (cur == IBV_QPS_RTR && next == IBV_QPS_RTS && (mask & IBV_QP_SQ_PSN));
    if (!ok)
        return EINVAL;
    if (next == IBV_QPS_INIT && a->port_num != 1)
        return EINVAL;
    btl_verbs_fake_lock(btl_verbs_fake_ctx->seg);
    if (next == IBV_QPS_RTR)
        s->dest_qpn = a->dest_qp_num;
    if (next == IBV_QPS_RTS)           /* 4.096 us << timeout per try, retry_cnt + 1 tries */
        q->retry_ns = (mask & IBV_QP_TIMEOUT) && a->timeout ?
                      (UINT64_C(4096) << RAIL_MIN(a->timeout, 31)) * (a->retry_cnt + 1u) : 0;
    if (next == IBV_QPS_RESET)
        s->head = s->tail = 0;
    s->state = next;
    btl_verbs_fake_unlock(btl_verbs_fake_ctx->seg);
    qp->state = (enum ibv_qp_state)next;
    if (next == IBV_QPS_ERR || next == IBV_QPS_RESET)
        btl_verbs_fake_qp_flush(btl_verbs_fake_ctx, q);
    return 0;
}

static int fake_destroy_qp(struct ibv_qp *qp)
{
    fake_qp_priv_t *q = (fake_qp_priv_t *)qp;
    btl_verbs_fake_lock(btl_verbs_fake_ctx->seg);
    btl_verbs_fake_ctx->seg->qp[q->slot].used = 0;
    btl_verbs_fake_ctx->seg->qp[q->slot].state = IBV_QPS_RESET;
    btl_verbs_fake_unlock(btl_verbs_fake_ctx->seg);
    btl_verbs_fake_ctx->n_pend -= q->n_pend;
    for (int i = 0; i < q->n_pend; i++)
        free(q->pend[i].inl);
    free(q->pend);
    btl_verbs_fake_ctx->qps[q->slot] = NULL;
    free(q);
    return 0;
}

int btl_verbs_fake_qp_state(struct ibv_qp *qp)
{
    return (int)btl_verbs_fake_ctx->seg->qp[((fake_qp_priv_t *)qp)->slot].state;
}

const btl_verbs_ops_t btl_verbs_ops_fake = {
    .name = "fake",
    .get_device_list = btl_verbs_fake_get_device_list,
    .free_device_list = btl_verbs_fake_free_device_list,
    .get_device_name = btl_verbs_fake_get_device_name,
    .open_device = btl_verbs_fake_open_device,
    .close_device = btl_verbs_fake_close_device,
    .query_device = btl_verbs_fake_query_device,
    .query_port = btl_verbs_fake_query_port,
    .query_gid_ex = btl_verbs_fake_query_gid_ex,
    .alloc_pd = fake_alloc_pd,
    .dealloc_pd = fake_dealloc_pd,
    .reg_mr = fake_reg_mr,
    .dereg_mr = fake_dereg_mr,
    .create_comp_channel = fake_create_comp_channel,
    .destroy_comp_channel = fake_destroy_comp_channel,
    .create_cq = fake_create_cq,
    .destroy_cq = fake_destroy_cq,
    .req_notify_cq = fake_req_notify_cq,
    .get_cq_event = fake_get_cq_event,
    .ack_cq_events = fake_ack_cq_events,
    .poll_cq = btl_verbs_fake_poll_cq,
    .create_srq = fake_create_srq,
    .destroy_srq = fake_destroy_srq,
    .post_srq_recv = btl_verbs_fake_post_srq_recv,
    .create_qp = fake_create_qp,
    .modify_qp = fake_modify_qp,
    .destroy_qp = fake_destroy_qp,
    .post_send = btl_verbs_fake_post_send,
    .post_recv = btl_verbs_fake_post_recv,
};
