/*
 * btl verbs: active messages and RDMA over rdma-core (internal definitions).
 *
 * One module per process, on one port of one HCA (verbs_select.c chooses:
 * btl_verbs_device, else an HCA with an active port close to the process's
 * cores; on RoCE the GID by type, v2 first, and by btl_verbs_roce_subnet).
 * Every verbs call goes through the operations table m->ops (verbs_ops.h):
 * libibverbs, or the emulated HCA with btl_verbs_fake=1.
 *
 * init() creates the protection domain, a completion channel (its fd is the
 * module's wait_fd), one CQ, a shared receive queue holding
 * btl_verbs_credits buffers per peer (plus a reserve for credit messages)
 * and one RC queue pair per other rank, and publishes the business card
 * (GID, LID, MTU, the QPN meant for each rank) under "btl_verbs".
 * add_procs() connects (INIT -> RTR -> RTS) the QPs of the peers it
 * reaches: ranks on other nodes, and node-local ones too with
 * btl_verbs_local_peers=1; QPs of other ranks are destroyed.
 *
 * Sends: a frame (btl_verbs_fhdr_t, the header padded to 8 bytes, the
 * payload) goes inline (IBV_SEND_INLINE) up to btl_verbs_inline bytes,
 * else from a registered send buffer.  Flow control: each peer may have
 * btl_verbs_credits frames in our SRQ; every frame carries the credits its
 * sender returns (frames it consumed), and a credit-only frame goes back
 * when half the credits are consumed and no traffic carried them.
 * get/put are RDMA read/write of memory that register_mem registered
 * (btl_reg_t holds base, length and rkey); the local side is registered
 * for the transfer, both through the registration cache (base/rcache.h).  RC delivers a put before any later send on the QP, so
 * the pml's FIN after a put finds the data there.
 *
 * A completion with an error status (the QP went to the error state:
 * peer died, retries exceeded, access error) ends the job with a message
 * naming both ranks and hosts.
 */
#ifndef BTL_VERBS_VERBS_H
#define BTL_VERBS_VERBS_H

#include "base/rail.h"
#include "btl/btl.h"
#include "btl/verbs/verbs_ops.h"

#include <stdbool.h>
#include <stdint.h>

#define BTL_VERBS_MODEX_KEY "btl_verbs"
#define BTL_VERBS_CARD_MAGIC 0x52564231u    /* "RVB1" */
#define BTL_VERBS_HDR_MAX 64
#define BTL_VERBS_TAG_CREDIT 0xff
#define BTL_VERBS_CREDIT_RESERVE 4          /* SRQ buffers per peer for credit frames */
#define BTL_VERBS_POLL 32

typedef struct btl_verbs_fhdr {
    uint8_t tag;
    uint8_t hdr_len;
    uint16_t credits;              /* frames of the receiver's that the sender consumed */
    uint32_t payload_len;
    int32_t rank;                  /* the sender */
    uint32_t reserved;
} btl_verbs_fhdr_t;
_Static_assert(sizeof(btl_verbs_fhdr_t) == 16, "frame header size");

static inline size_t btl_verbs_pad8(size_t n) { return (n + 7) & ~(size_t)7; }

typedef struct btl_verbs_card {
    uint32_t magic;
    uint16_t lid;
    uint8_t mtu;                   /* enum ibv_mtu */
    uint8_t link_layer;
    uint8_t gid[16];
    uint32_t nprocs;
    uint32_t qpn[];                /* the QP meant for each rank (0: none) */
} btl_verbs_card_t;

/* What register_mem puts in btl_reg_t. */
typedef struct btl_verbs_reg {
    uint64_t base, len;
    uint32_t rkey, reserved;
    uint64_t mr;                   /* the registering process's cache entry */
} btl_verbs_reg_t;

enum { BTL_VERBS_OP_INLINE = 1, BTL_VERBS_OP_SBUF, BTL_VERBS_OP_RDMA };

typedef struct btl_verbs_op {      /* what a send-side wr_id points to */
    uint8_t kind;
    btl_endpoint_t *ep;
} btl_verbs_op_t;

typedef struct btl_verbs_sbuf {
    btl_verbs_op_t op;
    struct btl_verbs_sbuf *next;
    char *data;
} btl_verbs_sbuf_t;

typedef struct btl_verbs_rreg btl_verbs_rreg_t;   /* a registration cache entry */
typedef struct btl_verbs_rdma {
    btl_verbs_op_t op;
    btl_verbs_rreg_t *reg;         /* the local side, held for the transfer */
    btl_done_cb_t done;
    void *cbdata;
} btl_verbs_rdma_t;

struct btl_endpoint {
    int rank;
    bool local;
    bool credit_owed;              /* a credit frame could not go yet */
    struct ibv_qp *qp;
    int credits;                   /* frames we may still send into the peer's SRQ */
    int consumed;                  /* the peer's frames we took, credits not yet returned */
    int outstanding;               /* our requests on the QP not completed */
    btl_verbs_op_t inline_op;
};

typedef struct btl_verbs_params {
    int priority;
    bool fake;
    const char *fake_faults;
    const char *device;
    const char *roce_subnet;
    int gid_index;
    bool local_peers;
    size_t eager_limit, max_send_size, inline_max, get_limit;
    int credits, send_bufs, sq_depth, timeout;
    int verbose;
} btl_verbs_params_t;

typedef struct btl_verbs_module {
    btl_module_t super;
    const btl_verbs_ops_t *ops;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *ch;
    struct ibv_cq *cq;
    struct ibv_srq *srq;
    char dev_name[64];
    uint8_t port, mtu, link_layer;
    int gid_index;
    union ibv_gid gid;
    uint16_t lid;
    uint32_t max_inline;
    int my_rank, nprocs;
    struct ibv_qp **qps;           /* [nprocs]: made at init, connected by add_procs */
    btl_endpoint_t **eps;          /* [nprocs] */
    char *rbufs;                   /* SRQ buffers, n_rbufs of rbuf_size */
    struct ibv_mr *rmr;
    int n_rbufs;
    size_t rbuf_size;
    char *sbufs;                   /* send buffers, n_sbufs of rbuf_size */
    struct ibv_mr *smr;
    btl_verbs_sbuf_t *sdesc, *sfree;
    int n_sbufs;
    struct rail_rcache *rcache;
    int outstanding, max_outstanding;
    int n_owed;                    /* endpoints with credit_owed */
    bool in_progress;
    struct ibv_wc stash[BTL_VERBS_POLL];   /* polled by sleep_prepare, handled by progress */
    int n_stash;
} btl_verbs_module_t;

extern btl_verbs_module_t btl_verbs_module;
extern btl_verbs_params_t btl_verbs_params;
extern const btl_component_t btl_verbs_component;

static inline int btl_verbs_verbosity(void)
{
    return RAIL_MAX(btl_verbs_params.verbose, btl_verbose);
}

/* verbs_component.c: for railinfo, the devices or why there are none. */
void btl_verbs_describe(char *buf, size_t len);

/* verbs_select.c: choices made from what the devices report (unit-tested). */
typedef struct btl_verbs_devinfo {
    const char *name;
    bool active;                   /* has an active port */
    int local;                     /* 1: close to our cores, 0: not, -1: unknown */
} btl_verbs_devinfo_t;
/* The device to use: the one named want (NULL or "": any), else an active
 * one, the closest to our cores first, ties by order; -1 if none. */
int btl_verbs_choose_device(const btl_verbs_devinfo_t *d, int n, const char *want);
/* The GID index to use on a port: on InfiniBand 0; on RoCE the non-zero
 * entry of highest rank (RoCE v2 over v1, IPv4-mapped over others), only
 * IPv4-mapped ones inside subnet when subnet is not "" ("10.1.0.0/16");
 * -1 if none, or when subnet cannot be parsed (*bad set). */
int btl_verbs_choose_gid(const struct ibv_gid_entry *g, int n, int link_layer, const char *subnet,
                         bool *bad);
/* Whether the device's PCI locality (sysfs local_cpulist) overlaps our CPUs. */
int btl_verbs_device_local(const char *name);

/* verbs_module.c */
int btl_verbs_add_procs(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps);
int btl_verbs_del_procs(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps);
int btl_verbs_send(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                   size_t hdr_len, const btl_payload_t *payload);
size_t btl_verbs_pending(btl_module_t *m);
void btl_verbs_fatal(btl_verbs_module_t *m, int rank, const char *what, enum ibv_wc_status st)
    __attribute__((noreturn));
int btl_verbs_post_recv(btl_verbs_module_t *m, int idx);
void btl_verbs_send_credits(btl_verbs_module_t *m, btl_endpoint_t *ep);

/* verbs_progress.c */
int btl_verbs_progress(btl_module_t *m);
bool btl_verbs_sleep_prepare(btl_module_t *m);
void btl_verbs_sleep_finish(btl_module_t *m);

/* verbs_rdma.c */
int btl_verbs_rcache_create(btl_verbs_module_t *m);
int btl_verbs_register_mem(btl_module_t *m, void *base, size_t len, btl_reg_t *reg);
int btl_verbs_deregister_mem(btl_module_t *m, btl_reg_t *reg);
int btl_verbs_get(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                  const btl_reg_t *reg, const struct iovec *remote, int n_remote, unsigned flags,
                  btl_done_cb_t done, void *cbdata);
int btl_verbs_put(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                  const btl_reg_t *reg, const struct iovec *remote, int n_remote,
                  btl_done_cb_t done, void *cbdata);
void btl_verbs_rdma_done(btl_verbs_module_t *m, btl_verbs_rdma_t *op);

#endif
