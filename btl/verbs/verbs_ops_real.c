/* btl verbs: the operations table on libibverbs (a real HCA). */
#include "btl/verbs/verbs_ops.h"

static struct ibv_device **real_get_device_list(int *n) { return ibv_get_device_list(n); }
static void real_free_device_list(struct ibv_device **l) { ibv_free_device_list(l); }
static const char *real_get_device_name(struct ibv_device *d) { return ibv_get_device_name(d); }
static struct ibv_context *real_open_device(struct ibv_device *d) { return ibv_open_device(d); }
static int real_close_device(struct ibv_context *c) { return ibv_close_device(c); }
static int real_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
    return ibv_query_device(c, a);
}
static int real_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a)
{
    return ibv_query_port(c, port, a);
}
static int real_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index,
                             struct ibv_gid_entry *e)
{
    return ibv_query_gid_ex(c, port, index, e, 0);
}
static struct ibv_pd *real_alloc_pd(struct ibv_context *c) { return ibv_alloc_pd(c); }
static int real_dealloc_pd(struct ibv_pd *pd) { return ibv_dealloc_pd(pd); }
static struct ibv_mr *real_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    return ibv_reg_mr(pd, addr, len, access);
}
static int real_dereg_mr(struct ibv_mr *mr) { return ibv_dereg_mr(mr); }
static struct ibv_comp_channel *real_create_comp_channel(struct ibv_context *c)
{
    return ibv_create_comp_channel(c);
}
static int real_destroy_comp_channel(struct ibv_comp_channel *ch)
{
    return ibv_destroy_comp_channel(ch);
}
static struct ibv_cq *real_create_cq(struct ibv_context *c, int cqe, void *ctx,
                                     struct ibv_comp_channel *ch, int vec)
{
    return ibv_create_cq(c, cqe, ctx, ch, vec);
}
static int real_destroy_cq(struct ibv_cq *cq) { return ibv_destroy_cq(cq); }
static int real_req_notify_cq(struct ibv_cq *cq, int solicited)
{
    return ibv_req_notify_cq(cq, solicited);
}
static int real_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **ctx)
{
    return ibv_get_cq_event(ch, cq, ctx);
}
static void real_ack_cq_events(struct ibv_cq *cq, unsigned int n) { ibv_ack_cq_events(cq, n); }
static int real_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc) { return ibv_poll_cq(cq, n, wc); }
static struct ibv_srq *real_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
    return ibv_create_srq(pd, a);
}
static int real_destroy_srq(struct ibv_srq *srq) { return ibv_destroy_srq(srq); }
static int real_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    return ibv_post_srq_recv(srq, wr, bad);
}
static struct ibv_qp *real_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    return ibv_create_qp(pd, a);
}
static int real_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    return ibv_modify_qp(qp, a, mask);
}
static int real_destroy_qp(struct ibv_qp *qp) { return ibv_destroy_qp(qp); }
static int real_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    return ibv_post_send(qp, wr, bad);
}
static int real_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    return ibv_post_recv(qp, wr, bad);
}

const btl_verbs_ops_t btl_verbs_ops_real = {
    .name = "libibverbs",
    .get_device_list = real_get_device_list,
    .free_device_list = real_free_device_list,
    .get_device_name = real_get_device_name,
    .open_device = real_open_device,
    .close_device = real_close_device,
    .query_device = real_query_device,
    .query_port = real_query_port,
    .query_gid_ex = real_query_gid_ex,
    .alloc_pd = real_alloc_pd,
    .dealloc_pd = real_dealloc_pd,
    .reg_mr = real_reg_mr,
    .dereg_mr = real_dereg_mr,
    .create_comp_channel = real_create_comp_channel,
    .destroy_comp_channel = real_destroy_comp_channel,
    .create_cq = real_create_cq,
    .destroy_cq = real_destroy_cq,
    .req_notify_cq = real_req_notify_cq,
    .get_cq_event = real_get_cq_event,
    .ack_cq_events = real_ack_cq_events,
    .poll_cq = real_poll_cq,
    .create_srq = real_create_srq,
    .destroy_srq = real_destroy_srq,
    .post_srq_recv = real_post_srq_recv,
    .create_qp = real_create_qp,
    .modify_qp = real_modify_qp,
    .destroy_qp = real_destroy_qp,
    .post_send = real_post_send,
    .post_recv = real_post_recv,
};
