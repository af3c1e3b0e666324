/*
 * btl ofi: the libfabric byte transfer layer (internal definitions).
 *
 * One module per process on one reliable-datagram endpoint (FI_EP_RDM) of
 * the provider chosen at init (ofi_prov.c): btl_ofi_provider restricts the
 * candidates; hardware providers rank above btl tcp, software ones (tcp,
 * udp, sockets, shm, net) only when named there or when btl tcp is not in
 * use.  The endpoint has one completion queue (FI_WAIT_FD where the provider
 * offers it: its fd is the module's wait_fd, and sleep_prepare asks
 * fi_trywait) and a table address vector.  The business card (modex key
 * "btl_ofi") is the provider's name and the endpoint's address; add_procs
 * inserts the addresses of the peers it reaches: those on other nodes, and
 * node-local ones too with btl_ofi_local_peers (testing on one host).
 *
 * Active messages (ofi_am.c): a 16-byte wire header (tag, header length,
 * payload length, source rank), the header padded to 8 bytes, the payload
 * padded to 8 bytes, copied into a registered send buffer and sent with
 * fi_send.  Receives land in FI_MULTI_RECV buffers where the provider offers
 * them, else in a ring of single posted buffers; each is handed to the
 * callback in place and posted again after it.  A send that finds no free
 * buffer, or that the provider answers -FI_EAGAIN, progresses once and
 * says RAIL_AGAIN.
 *
 * One-sided (ofi_rma.c): register_mem registers through the registration
 * cache and describes the region (base, key) in btl_reg_t; get/put are
 * fi_readmsg/fi_writemsg with as many iovecs as the provider takes (more
 * are split into several operations).  A put completes with
 * FI_DELIVERY_COMPLETE: tcp;ofi_rxm reports a plain write before the peer
 * can see the data.  Every mode bit of the provider is honoured (FI_MR_LOCAL
 * local descriptors, FI_MR_VIRT_ADDR, FI_MR_PROV_KEY, FI_MR_ENDPOINT
 * bind + enable, FI_MR_ALLOCATED); btl_ofi_mr_strict takes all of those
 * paths where the provider needs none of them.
 */
#ifndef BTL_OFI_OFI_H
#define BTL_OFI_OFI_H

#include "base/rail.h"
#include "btl/btl.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_errno.h>
#include <stdbool.h>
#include <stdint.h>

#define BTL_OFI_FI_VERSION FI_VERSION(1, 10)   /* FI_MR_HMEM and fi_context2 */
#define BTL_OFI_MODEX_KEY "btl_ofi"
#define BTL_OFI_CARD_MAGIC 0x52544f31u         /* "RTO1" */
#define BTL_OFI_NAME_MAX 256                   /* endpoint address bytes */
#define BTL_OFI_PROV_MAX 64
#define BTL_OFI_HDR_MAX 64                     /* largest active-message header (btl.h) */
#define BTL_OFI_CQ_BATCH 16
#define BTL_OFI_IOV_MAX 16                     /* iovecs of one fi operation */

static inline size_t btl_ofi_pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* ------------------------------------------------------------ wire */

typedef struct btl_ofi_whdr {
    uint8_t tag;
    uint8_t hdr_len;
    uint16_t reserved;
    uint32_t payload_len;
    uint32_t src;                 /* sender's job rank */
    uint32_t seq;                 /* frames from src to us so far */
} btl_ofi_whdr_t;
#define BTL_OFI_WHDR_LEN 16
_Static_assert(sizeof(btl_ofi_whdr_t) == BTL_OFI_WHDR_LEN, "wire header size");

static inline size_t btl_ofi_frame_size(size_t hdr_len, size_t payload_len)
{
    return BTL_OFI_WHDR_LEN + btl_ofi_pad8(hdr_len) + btl_ofi_pad8(payload_len);
}

typedef struct btl_ofi_card {
    uint32_t magic;
    uint32_t name_len;
    char prov[BTL_OFI_PROV_MAX];  /* provider name: both ends must use the same */
    uint8_t name[BTL_OFI_NAME_MAX];
} btl_ofi_card_t;

/* What register_mem puts in btl_reg_t. */
typedef struct btl_ofi_regwire {
    uint64_t base;                /* start of the registration */
    uint64_t key;
    uint64_t handle;              /* the owner's registration (deregister_mem) */
} btl_ofi_regwire_t;
_Static_assert(sizeof(btl_ofi_regwire_t) <= BTL_REG_MAX, "btl_reg_t too small");

/* ------------------------------------------------------------ state */

/* What a completion's op_context points to: the provider's scratch space
 * first (FI_CONTEXT / FI_CONTEXT2 mode), then what completed. */
enum { BTL_OFI_OP_SEND = 1, BTL_OFI_OP_RECV, BTL_OFI_OP_RMA };
typedef struct btl_ofi_ctx {
    struct fi_context2 fi;
    int kind;
} btl_ofi_ctx_t;

/* A registration: the cache's record first (base/rcache.h). */
typedef struct btl_ofi_mr btl_ofi_mr_t;

typedef struct btl_ofi_sbuf {
    btl_ofi_ctx_t ctx;            /* BTL_OFI_OP_SEND */
    struct btl_ofi_sbuf *next;
    size_t len;                   /* frame bytes in flight */
    int rank;                     /* the peer it goes to (errors name it) */
    void *data;
} btl_ofi_sbuf_t;

typedef struct btl_ofi_spool {
    btl_ofi_sbuf_t *bufs;
    btl_ofi_sbuf_t *free;
    size_t size;                  /* bytes of each buffer */
    int n;
    void *mem;
    btl_ofi_mr_t *mr;
} btl_ofi_spool_t;

typedef struct btl_ofi_rbuf {
    btl_ofi_ctx_t ctx;            /* BTL_OFI_OP_RECV */
    void *data;
    size_t size;
} btl_ofi_rbuf_t;

/* One get or put: done when every fi operation it took has completed. */
typedef struct btl_ofi_rma {
    btl_ofi_ctx_t ctx;            /* BTL_OFI_OP_RMA: the request's own (unused) */
    struct btl_ofi_rma *next;     /* free list */
    int ops;                      /* fi operations not yet completed */
    int status;
    bool issuing;                 /* still posting operations */
    btl_done_cb_t done;
    void *cbdata;
    btl_ofi_mr_t *local;          /* registration of the local iovecs, or NULL */
    /* The provider's queue was full: what is left to post, copied (the
     * caller's iovecs live on its stack), posted again by progress. */
    struct btl_ofi_rma *next_deferred;
    btl_endpoint_t *ep;
    bool write;
    btl_ofi_regwire_t w;
    struct iovec *left;           /* n_left local, then n_right remote pieces */
    int n_left, n_right;
} btl_ofi_rma_t;

typedef struct btl_ofi_rma_op {
    btl_ofi_ctx_t ctx;            /* BTL_OFI_OP_RMA */
    struct btl_ofi_rma_op *next;
    btl_ofi_rma_t *req;
} btl_ofi_rma_op_t;

/* A frame that arrived before one sent earlier (a provider completes a
 * large message, sent by its own rendezvous, after later small ones):
 * copied, delivered in order. */
typedef struct btl_ofi_held {
    struct btl_ofi_held *next;
    uint32_t seq;
    size_t len;
    uint64_t frame[];
} btl_ofi_held_t;

struct btl_endpoint {
    int rank;
    fi_addr_t addr;
    uint32_t send_seq, recv_seq;  /* frames sent to / delivered from the peer */
    btl_ofi_held_t *held;         /* early frames, in order of seq */
};

typedef struct btl_ofi_params {
    const char *provider;
    int priority;
    int priority_soft;
    bool local_peers;
    bool mr_strict;
    bool multi_recv;
    size_t eager_limit;
    size_t max_send_size;
    int send_bufs;
    int recv_bufs;
    size_t multi_recv_size;
    int finalize_timeout_ms;
} btl_ofi_params_t;

typedef struct btl_ofi_module {
    btl_module_t super;
    struct fi_info *info;         /* the chosen provider */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    uint64_t mr_mode;             /* effective: the provider's, or every bit (strict) */
    bool multi_recv;
    bool in_progress;             /* a callback runs: progress() returns 0 */
    uint64_t next_key;            /* requested keys without FI_MR_PROV_KEY */
    size_t iov_limit, rma_iov_limit;
    size_t max_msg;
    char name[BTL_OFI_NAME_MAX];
    size_t name_len;
    int my_rank, nprocs;
    btl_endpoint_t **eps;
    btl_ofi_spool_t small, large; /* send buffers */
    size_t in_flight;             /* bytes of sends not completed */
    btl_ofi_rbuf_t *rbufs;
    int n_rbufs;
    void *rmem;
    btl_ofi_mr_t *rmr;
    btl_ofi_rma_t *free_rma;
    btl_ofi_rma_op_t *free_ops;
    btl_ofi_rma_t *deferred;      /* get/put with operations left to post */
    struct rail_rcache *rcache;   /* registrations (base/rcache.h) */
    char why[256];                /* why init declined */
} btl_ofi_module_t;

extern btl_ofi_module_t btl_ofi_module;
extern btl_ofi_params_t btl_ofi_params;
extern const btl_component_t btl_ofi_component;

/* ofi_prov.c */
/* Check the names of btl_ofi_provider: MPI_ERR_ARG (said) on an unknown one. */
int btl_ofi_prov_check_names(const char *list);
/* Choose the provider: the fi_info to use (caller frees), its priority;
 * NULL with m->why set when none fits. */
struct fi_info *btl_ofi_prov_choose(btl_ofi_module_t *m, int *priority);
const char *btl_ofi_strerror(int rc);

/* ofi_am.c */
int btl_ofi_am_init(btl_ofi_module_t *m);
void btl_ofi_am_fini(btl_ofi_module_t *m);
int btl_ofi_send(btl_module_t *base, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                 size_t hdr_len, const btl_payload_t *payload);
void btl_ofi_send_done(btl_ofi_module_t *m, btl_ofi_sbuf_t *b);
void btl_ofi_recv_done(btl_ofi_module_t *m, btl_ofi_rbuf_t *b, const struct fi_cq_data_entry *e);

/* ofi_module.c */
/* The endpoint of rank (made from its card if add_procs has not yet). */
btl_endpoint_t *btl_ofi_ep_of(btl_ofi_module_t *m, int rank);
int btl_ofi_add_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps);
int btl_ofi_del_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps);
int btl_ofi_progress(btl_module_t *base);
size_t btl_ofi_pending(btl_module_t *base);
bool btl_ofi_sleep_prepare(btl_module_t *base);

/* ofi_rma.c */
int btl_ofi_mr_init(btl_ofi_module_t *m);
void btl_ofi_mr_fini(btl_ofi_module_t *m);
/* A registration covering [base, base+len) (cached); release with mr_put. */
int btl_ofi_mr_get(btl_ofi_module_t *m, const void *base, size_t len, btl_ofi_mr_t **mr);
void btl_ofi_mr_put(btl_ofi_module_t *m, btl_ofi_mr_t *mr);
void *btl_ofi_mr_desc(btl_ofi_mr_t *mr);
int btl_ofi_register_mem(btl_module_t *base, void *addr, size_t len, btl_reg_t *reg);
int btl_ofi_deregister_mem(btl_module_t *base, btl_reg_t *reg);
int btl_ofi_get(btl_module_t *base, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                const btl_reg_t *reg, const struct iovec *remote, int n_remote, unsigned flags,
                btl_done_cb_t done, void *cbdata);
int btl_ofi_put(btl_module_t *base, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                const btl_reg_t *reg, const struct iovec *remote, int n_remote,
                btl_done_cb_t done, void *cbdata);
void btl_ofi_rma_done(btl_ofi_module_t *m, btl_ofi_rma_op_t *op, int status);
void btl_ofi_rma_fini(btl_ofi_module_t *m);
/* Post what deferred get/put have left; the operations posted. */
int btl_ofi_rma_retry(btl_ofi_module_t *m);

#endif
