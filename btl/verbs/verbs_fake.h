/*
 * btl verbs: the emulated HCA (internal definitions).
 *
 * One fake HCA per process.  Opening it claims an HCA number for the job
 * (the symbolic link /dev/shm/rail-<jobid>-verbs-hca<n> pointing to the
 * pid, made atomically) and creates
 *   /dev/shm/rail-<jobid>-verbs-<pid>      the segment (fake_seg_t): GID
 *       table, MR table, CQ rings, SRQ rings, QP table with their receive
 *       rings, and the pages registered memory had when registered;
 *   /dev/shm/rail-<jobid>-verbs-<pid>.ch   the completion channel: a FIFO
 *       that the owner reads and every writer of a CQE into an armed CQ
 *       writes one byte (the CQ's number) to, so the channel's fd becomes
 *       readable (a FIFO in /dev/shm works between network namespaces of
 *       one machine, which share /dev/shm and the kernel).
 * All are removed at close, at exit (atexit) and, for a killed job, by the
 * launcher, which removes every /dev/shm/rail-<jobid>-* entry.
 *
 * A queue pair's number is (HCA number + 1) << 12 | slot, so a requester
 * finds the responder's segment from the destination QPN alone.  The
 * requester does all the work of a transfer inside post_send (or, when the
 * responder has no receive posted, later, from poll_cq: an RNR retry):
 * checks the responder's QP (connected back to it, RTR or RTS: until it
 * is, the request waits, as a real HCA retries, for the time the QP's
 * timeout and retry_cnt give, then completes with IBV_WC_RETRY_EXC_ERR;
 * at once when the responder's process is gone), its GID,
 * the memory keys, access flags and bounds, the registered pages' identity
 * (/proc/<pid>/pagemap frame numbers where readable, else the mappings of
 * /proc/<pid>/maps); moves the bytes by base/cma.h (process_vm_readv/writev); and
 * writes the completions into both segments.  Work requests of one QP run
 * in order, so RC ordering holds.  A failed check completes the request
 * with the status a real HCA gives and moves the QP to the error state.
 *
 * Faults (btl_verbs_fake_faults): a comma-separated list of
 *   post_fail=N   the Nth post_send returns ENOMEM (nothing is posted);
 *   qp_error=N    the Nth post_send's request completes with
 *                 IBV_WC_RETRY_EXC_ERR and its QP goes to the error state
 *                 (as if the peer stopped answering);
 *   bad_rkey=N    the Nth RDMA read or write carries a wrong rkey;
 * each optionally followed by @R: only in the process of rank R.
 */
#ifndef BTL_VERBS_VERBS_FAKE_H
#define BTL_VERBS_VERBS_FAKE_H

#include "btl/verbs/verbs_ops.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define FAKE_MAGIC 0x52564631u         /* "RVF1" */
#define FAKE_MAX_GID 16
#define FAKE_MAX_MR 1024
#define FAKE_MAX_CQ 4
#define FAKE_CQ_CAP 16384
#define FAKE_MAX_SRQ 2
#define FAKE_SRQ_CAP 16384
#define FAKE_MAX_QP 1024
#define FAKE_QP_RQ_CAP 64
#define FAKE_MAX_SGE 16
#define FAKE_MAX_INLINE 256
#define FAKE_MAX_HCA 4094
#define FAKE_PFN_POOL (1u << 20)       /* pages whose identity the segment keeps (4 GiB) */
#define FAKE_QPN(idx, slot) ((((uint32_t)(idx) + 1) << 12) | (uint32_t)(slot))
#define FAKE_QPN_HCA(qpn) ((int)((qpn) >> 12) - 1)
#define FAKE_QPN_SLOT(qpn) ((int)((qpn) & 0xfff))

enum { FAKE_IDENT_NONE, FAKE_IDENT_PFN, FAKE_IDENT_MAPS };

typedef struct fake_rwqe {             /* a posted receive */
    uint64_t wr_id, addr;
    uint32_t length, lkey;
} fake_rwqe_t;

typedef struct fake_cqe {
    uint64_t wr_id;
    uint32_t status, opcode, byte_len, qp_num, src_qp, wc_flags;
} fake_cqe_t;

typedef struct fake_mr {
    uint32_t used, key, access, ident_kind;
    uint64_t addr, len;
    uint64_t ident;                    /* MAPS: hash of the mappings */
    uint64_t pfn_off, pfn_n;           /* PFN: the pages' frames in fake_seg_t.pfn */
} fake_mr_t;

typedef struct fake_cq {
    uint32_t used, armed, overflow, cap;
    uint32_t head, tail;
    fake_cqe_t ent[FAKE_CQ_CAP];
} fake_cq_t;

typedef struct fake_srq {
    uint32_t used, cap, head, tail;
    fake_rwqe_t ent[FAKE_SRQ_CAP];
} fake_srq_t;

typedef struct fake_qp {
    uint32_t used, state, qpn, dest_qpn;
    int32_t srq, recv_cq;
    uint32_t head, tail;
    fake_rwqe_t rq[FAKE_QP_RQ_CAP];
} fake_qp_t;

typedef struct fake_seg {
    uint32_t magic, idx, closed, n_gids;
    int32_t pid;
    uint32_t pad;
    pthread_mutex_t lock;              /* robust, process-shared */
    struct ibv_gid_entry gids[FAKE_MAX_GID];
    fake_mr_t mr[FAKE_MAX_MR];
    fake_cq_t cq[FAKE_MAX_CQ];
    fake_srq_t srq[FAKE_MAX_SRQ];
    fake_qp_t qp[FAKE_MAX_QP];
    uint64_t pfn[FAKE_PFN_POOL];
} fake_seg_t;

/* A send-side work request kept until it ran (its RNR retries). */
typedef struct fake_swqe {
    uint64_t wr_id, remote_addr;
    uint32_t opcode, flags, rkey, num_sge;
    struct ibv_sge sge[FAKE_MAX_SGE];
    uint8_t *inl;                      /* IBV_SEND_INLINE: a copy of the bytes */
    uint64_t t_first;                  /* first try found no responder ready (ns; 0: not yet) */
} fake_swqe_t;

typedef struct fake_qp_priv {
    struct ibv_qp ibv;
    int slot;
    bool sig_all;
    uint64_t retry_ns;                 /* how long a request may find no responder (0: forever) */
    fake_swqe_t *pend;                 /* requests not run yet, in order */
    int n_pend, cap_pend;
} fake_qp_priv_t;

typedef struct fake_cq_priv {
    struct ibv_cq ibv;
    int slot;
} fake_cq_priv_t;

typedef struct fake_srq_priv {
    struct ibv_srq ibv;
    int slot;
} fake_srq_priv_t;

typedef struct fake_mr_priv {
    struct ibv_mr ibv;
    int slot;
} fake_mr_priv_t;

typedef struct fake_peer {             /* another process's HCA, opened on first use */
    int idx;
    pid_t pid;
    fake_seg_t *seg;
    int ch_fd;                         /* its completion channel, for writing */
} fake_peer_t;

typedef struct btl_verbs_fake_ctx {
    struct ibv_context ibv;
    fake_seg_t *seg;
    size_t seg_size;
    char seg_path[256], claim_path[256], ch_path[256];
    int ch_rd, ch_wr;                  /* our channel: read end, and our own write end */
    struct ibv_comp_channel *channel;
    fake_cq_priv_t *cqs[FAKE_MAX_CQ];
    fake_qp_priv_t *qps[FAKE_MAX_QP];
    int n_pend;                        /* requests waiting in QPs (RNR) */
    fake_peer_t *peers;
    int n_peers;
    uint64_t n_posts, n_rdma;          /* for faults */
} fake_ctx_t;

typedef struct btl_verbs_fake_faults {
    uint64_t post_fail, qp_error, bad_rkey;  /* 0: none */
} fake_faults_t;

extern fake_ctx_t *btl_verbs_fake_ctx;
extern fake_faults_t btl_verbs_fake_faults;
extern char btl_verbs_fake_jobid[128];

/* verbs_fake.c */
void btl_verbs_fake_lock(fake_seg_t *s);
void btl_verbs_fake_unlock(fake_seg_t *s);
fake_peer_t *btl_verbs_fake_peer_get(fake_ctx_t *c, int idx);
/* Write a CQE into CQ cq of seg and wake its channel (ch_fd) when armed. */
void btl_verbs_fake_cq_push(fake_seg_t *seg, int cq, const fake_cqe_t *e, int ch_fd);

/* verbs_fake.c: the device */
struct ibv_device **btl_verbs_fake_get_device_list(int *n);
void btl_verbs_fake_free_device_list(struct ibv_device **l);
const char *btl_verbs_fake_get_device_name(struct ibv_device *d);
struct ibv_context *btl_verbs_fake_open_device(struct ibv_device *d);
int btl_verbs_fake_close_device(struct ibv_context *ibv);
int btl_verbs_fake_query_device(struct ibv_context *ibv, struct ibv_device_attr *a);
int btl_verbs_fake_query_port(struct ibv_context *ibv, uint8_t port, struct ibv_port_attr *a);
int btl_verbs_fake_query_gid_ex(struct ibv_context *ibv, uint32_t port, uint32_t index,
                      struct ibv_gid_entry *e);

/* verbs_fake_mr.c */
int btl_verbs_fake_mr_record(fake_seg_t *s, fake_mr_t *mr);
void btl_verbs_fake_mr_release(fake_seg_t *s, fake_mr_t *mr);
/* Whether key covers [addr, addr+len) of process pid with access (IBV_ACCESS_*;
 * 0: read), and still maps the pages it was registered with. */
bool btl_verbs_fake_mr_check(fake_seg_t *s, pid_t pid, uint32_t key, uint64_t addr, uint64_t len,
                   int access);

/* verbs_fake_xfer.c */
int btl_verbs_fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int btl_verbs_fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int btl_verbs_fake_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int btl_verbs_fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
/* Complete every request waiting in qp with IBV_WC_WR_FLUSH_ERR. */
void btl_verbs_fake_qp_flush(fake_ctx_t *c, fake_qp_priv_t *qp);

#endif
