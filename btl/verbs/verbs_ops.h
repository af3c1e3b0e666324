/*
 * btl verbs: the one narrow table through which the btl reaches rdma-core.
 *
 * Every verbs call btl verbs makes goes through a btl_verbs_ops_t, so that
 * the same data path runs on a real HCA (btl_verbs_ops_real: libibverbs)
 * and on the emulated one (btl_verbs_ops_fake, verbs_fake*.c), selected
 * only by the parameter btl_verbs_fake=1.  The types are libibverbs' own
 * (struct ibv_qp, ibv_send_wr, ibv_wc, ...): the fake fills the public
 * fields the btl reads (lkey/rkey, qp_num, fd of a completion channel) and
 * keeps its own state around them.
 */
#ifndef BTL_VERBS_VERBS_OPS_H
#define BTL_VERBS_VERBS_OPS_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct btl_verbs_ops {
    const char *name;              /* "libibverbs" or "fake" */
    /* devices */
    struct ibv_device **(*get_device_list)(int *n);
    void (*free_device_list)(struct ibv_device **list);
    const char *(*get_device_name)(struct ibv_device *dev);
    struct ibv_context *(*open_device)(struct ibv_device *dev);
    int (*close_device)(struct ibv_context *ctx);
    int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
    int (*query_port)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
    int (*query_gid_ex)(struct ibv_context *ctx, uint32_t port, uint32_t index,
                        struct ibv_gid_entry *entry);
    /* protection domain, memory */
    struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
    int (*dealloc_pd)(struct ibv_pd *pd);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
    int (*dereg_mr)(struct ibv_mr *mr);
    /* completions */
    struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *ctx);
    int (*destroy_comp_channel)(struct ibv_comp_channel *ch);
    struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context,
                                struct ibv_comp_channel *ch, int comp_vector);
    int (*destroy_cq)(struct ibv_cq *cq);
    int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
    int (*get_cq_event)(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context);
    void (*ack_cq_events)(struct ibv_cq *cq, unsigned int n);
    int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
    /* shared receive queue */
    struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
    int (*destroy_srq)(struct ibv_srq *srq);
    int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
    /* queue pairs */
    struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
    int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
    int (*destroy_qp)(struct ibv_qp *qp);
    int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
    int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
} btl_verbs_ops_t;

/* libibverbs (verbs_ops_real.c). */
extern const btl_verbs_ops_t btl_verbs_ops_real;
/* The emulated HCA (verbs_fake.c): one per process, moving bytes between
 * processes through shared memory and CMA. */
extern const btl_verbs_ops_t btl_verbs_ops_fake;

/* Configure the fake before its first get_device_list: jobid names its
 * files (/dev/shm/rail-<jobid>-verbs-*), faults is the injection list
 * (btl_verbs_fake_faults, see verbs_fake.h), rank the process's rank for
 * faults aimed at one rank (-1: none).  MPI_SUCCESS or MPI_ERR_ARG with a
 * warning for a fault list it cannot parse. */
int btl_verbs_fake_setup(const char *jobid, const char *faults, int rank);
/* The fake's state of a queue pair (IBV_QPS_*), as its peers see it. */
int btl_verbs_fake_qp_state(struct ibv_qp *qp);

/* Short name of a completion status ("remote access error"). */
const char *btl_verbs_wc_status_str(enum ibv_wc_status s);

#endif
