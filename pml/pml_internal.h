/*
 * pml internals: wire headers, per-peer and per-context state, requests.
 * Only the pml's own sources include this file.
 *
 * Wire protocol (btl active-message tags, all little-endian host order; the
 * pml only talks to processes of the same build):
 *
 *   MATCH  pml_match_hdr_t (16 B), type EAGER: payload = message data;
 *          with PML_HF_SYNC the header is pml_sync_hdr_t (+ sender request).
 *          type RNDV: pml_rts_hdr_t (32 B); with PML_HF_GET the payload is a
 *          pml_get_desc_t (registration + iovecs of the send buffer).
 *   ACK    pml_ctl_hdr_t: a synchronous eager send was matched.
 *   CTS    pml_ctl_hdr_t: send `len` bytes as FRAGs for receive request rreq.
 *   FRAG   pml_frag_hdr_t: `payload` bytes at `offset` of rreq's message.
 *   FIN    pml_ctl_hdr_t: the receiver pulled the data; sender completes.
 *   CREDIT pml_credit_hdr_t: n more eager messages may be sent.
 *
 * Ordering: each (context, sender, receiver) triple numbers its matchable
 * messages (seq, 16 bits, wrapping); a receiver matches them in that order
 * and parks early arrivals (pml_src_t.ooo), so a btl (or a future multi-btl
 * peer) may deliver out of order.  A sequence number is taken only when the
 * btl accepts the message, so queued sends stay cancellable.
 */
#ifndef PML_PML_INTERNAL_H
#define PML_PML_INTERNAL_H

#include "base/adapt.h"
#include "base/rail.h"
#include "base/atomic.h"
#include "base/copy.h"
#include "base/dt.h"
#include "base/list.h"
#include "base/log.h"
#include "base/progress.h"
#include "btl/btl.h"
#include "accel/accel.h"
#include "pml/pml.h"

/* ------------------------------------------------------------ wire */

enum {
    PML_TAG_MATCH = 1,
    PML_TAG_ACK = 2,
    PML_TAG_CTS = 3,
    PML_TAG_FRAG = 4,
    PML_TAG_FIN = 5,
    PML_TAG_CREDIT = 6,
    PML_TAG_CTS_STREAM = 7,   /* CTS: write the fragments past the caches (pml_rndv.c) */
};

enum { PML_HDR_EAGER = 0, PML_HDR_RNDV = 1 };
enum {
    PML_HF_SYNC = 1,
    PML_HF_GET = 2,
    PML_HF_NOCREDIT = 4,   /* RTS: the sender ran out of credits */
    PML_HF_CHOOSE = 8,     /* RTS with GET: the receiver may pipeline instead (by time) */
    PML_HF_IPC = 16,       /* RTS: payload pml_ipc_desc_t, the device buffer by IPC */
};

typedef struct pml_match_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t seq;
    int32_t src;        /* sender's rank in the communicator (its local group) */
    int32_t tag;
    uint32_t ctx;       /* context id */
} pml_match_hdr_t;

typedef struct pml_sync_hdr {
    pml_match_hdr_t m;
    uint64_t sreq;
} pml_sync_hdr_t;

typedef struct pml_rts_hdr {
    pml_match_hdr_t m;
    uint64_t sreq;
    uint64_t len;       /* message bytes */
} pml_rts_hdr_t;

typedef struct pml_ctl_hdr {
    uint64_t sreq;
    uint64_t rreq;
    uint64_t len;
} pml_ctl_hdr_t;

typedef struct pml_frag_hdr {
    uint64_t rreq;
    uint64_t offset;
} pml_frag_hdr_t;

typedef struct pml_credit_hdr {
    uint32_t n;
    int32_t world;      /* sender's job rank */
} pml_credit_hdr_t;

typedef struct pml_iov64 {
    uint64_t base, len;
} pml_iov64_t;

typedef struct pml_get_desc {
    btl_reg_t reg;
    uint32_t n_iov;
    uint32_t pad;
    pml_iov64_t iov[];
} pml_get_desc_t;

#define PML_RTS_MAX_IOV 256

/* A contiguous device send buffer on this node: the receiver opens the
 * allocation from the handle (accel IPC) and copies from base + off. */
typedef struct pml_ipc_desc {
    accel_ipc_handle_t h;
    uint64_t off;
} pml_ipc_desc_t;

/* ------------------------------------------------------------ buffers */

/* The user's buffer of a request, as bytes of a packed stream. */
typedef struct pml_buf {
    uintptr_t base;           /* user buffer */
    struct rail_dt *layout;   /* retained when noncontiguous */
    int64_t count;
    size_t bytes;             /* packed bytes: count * size */
    char *contig;             /* data address when contiguous, else NULL */
    const void *probe;        /* an address of the data (set when device is) */
    uint8_t device;           /* buffer in device memory */
    uint8_t cursor_ready;
    struct rail_dt_cursor cur;
} pml_buf_t;

int pml_buf_init(pml_buf_t *b, const void *buf, MPI_Count count, obj_datatype_t *dt);
void pml_buf_fini(pml_buf_t *b);
/* Copy packed bytes [off, off+len) out of / into the user buffer. */
int pml_buf_pack(pml_buf_t *b, size_t off, void *dst, size_t len);
int pml_buf_unpack_any(pml_buf_t *b, size_t off, const void *src, size_t len);
static inline int pml_buf_unpack(pml_buf_t *b, size_t off, const void *src, size_t len)
{
    if (RAIL_LIKELY(b->contig != NULL && !b->device)) {   /* the common case, inline */
        rail_copy(b->contig + off, src, len);
        return MPI_SUCCESS;
    }
    return pml_buf_unpack_any(b, off, src, len);
}
/* Export user memory from packed offset off as iovecs (at most max_iov,
 * at most max_bytes); returns the bytes covered. */
size_t pml_buf_iov(pml_buf_t *b, size_t off, struct iovec *iov, int max_iov, size_t max_bytes,
                   int *n_iov);
/* btl_payload_t pack callback (ctx: a send request, packs at its offset). */
int pml_buf_pack_cb(void *ctx, void *dst, size_t len);

/* ------------------------------------------------------------ peers */

/* Entries of a peer's pending queue. */
enum { PML_PEND_SEND = 1, PML_PEND_STREAM, PML_PEND_GET, PML_PEND_CTL };

typedef struct pml_pend {
    rail_list_item_t item;
    uint8_t kind;
} pml_pend_t;

typedef struct pml_peer {
    btl_module_t *btl;
    btl_endpoint_t *ep;
    uint32_t btl_flags;
    size_t eager_limit;       /* payload bytes of an eager message */
    size_t frag_size;         /* payload bytes of one FRAG */
    int rts_max_iov;          /* iovecs an RTS may carry (0: no get) */
    int credits;              /* eager messages we may still send it */
    int consumed;             /* its eager messages we matched, not yet credited back */
    int credit_batch;         /* return credits when consumed reaches this */
    int world;
    bool active;              /* in pml_active_peers */
    rail_adapt_t *adapt;      /* receiving from it: pipeline (0), get (1) or pipeline with
                               * streaming stores (2) by time, per size class; NULL until
                               * the first such choice (pml_rndv.c) */
    uint64_t adapt_done_ns;   /* when the last timed message from it completed */
    int sends_choosing;       /* our rendezvous sends to it whose path it chooses
                               * (PML_HF_CHOOSE), not complete (pml_rndv.c) */
    uint8_t adapt_flip;       /* pml_rndv_adapt_alternate: paths taken so far */
    bool ipc_failed;          /* opening its device buffers by IPC failed: pipeline them */
    bool ipc_small_off;       /* it answered a small device message offered by IPC with a
                               * CTS (host receive buffer, no IPC): small device
                               * messages to it go eager again */
    rail_list_t pending;      /* pml_pend_t: sends and control waiting for the btl */
    rail_list_item_t active_item;
} pml_peer_t;

extern pml_peer_t *pml_peers;
extern int pml_n_peers;

/* ------------------------------------------------------------ contexts */

typedef struct pml_src {
    rail_list_t posted;       /* receives naming this source, post order */
    rail_list_t unexp;        /* its unexpected messages, arrival order */
    rail_list_t ooo;          /* its messages ahead of sequence, by seq */
    uint16_t recv_seq;        /* next sequence number expected from it */
    uint16_t send_seq;        /* next sequence number we send it */
    pml_peer_t *peer;
} pml_src_t;

typedef struct pml_ctx {
    uint32_t cid;
    int size;                 /* ranks a peer argument may name */
    int my_rank;              /* our rank as peers see it (header src) */
    uint32_t post_seq;        /* post order, for MPI_ANY_SOURCE */
    obj_comm_t *comm;
    rail_list_t posted_any;   /* receives with MPI_ANY_SOURCE */
    rail_list_t unexp_all;    /* every unexpected message, arrival order */
    pml_src_t *src;
} pml_ctx_t;

struct pml_comm {
    pml_ctx_t ctx[2];         /* point-to-point, collective */
    struct part_seq *part_seq; /* partitioned initializations per peer and tag (pml_part.c) */
};

/* Hand the object layer the pml's layer and point-to-point (pml_obj.c). */
int pml_obj_register(void);

/* Frees comm->pml->part_seq (pml_part.c), when the communicator goes. */
void pml_part_seq_free(struct pml_comm *pc);

static inline pml_ctx_t *pml_ctx_of(obj_comm_t *comm, unsigned flags)
{
    return &comm->pml->ctx[flags & PML_COLL ? 1 : 0];
}
/* The table of contexts by id (pml_ctx.c); inline: every arriving message
 * looks its context up. */
extern pml_ctx_t **pml_ctx_table;
extern size_t pml_ctx_table_len;
static inline size_t pml_ctx_index(uint32_t cid)
{
    return (size_t)(cid & ~PML_CONTEXT_COLL_BIT) * 2 + ((cid & PML_CONTEXT_COLL_BIT) ? 1 : 0);
}
static inline pml_ctx_t *pml_ctx_lookup(uint32_t cid)
{
    size_t i = pml_ctx_index(cid);
    return RAIL_LIKELY(i < pml_ctx_table_len) ? pml_ctx_table[i] : NULL;
}

/* ------------------------------------------------------------ messages */

/* An arrived matchable message kept for later: unexpected, early (its
 * context does not exist here yet) or ahead of sequence. */
typedef struct pml_frag {
    rail_list_item_t src_item;   /* src->unexp, src->ooo or the early list */
    rail_list_item_t all_item;   /* ctx->unexp_all */
    pml_match_hdr_t hdr;
    uint64_t sreq;
    size_t msg_len;              /* message bytes */
    size_t data_len;             /* bytes at data: eager payload or get descriptor */
    pml_peer_t *peer;
    uint8_t *data;
    size_t cap;                  /* inline capacity (pooled frags) */
    uint8_t inline_data[];
} pml_frag_t;

/* An arrived message being matched (points into the btl's buffer or a frag). */
typedef struct pml_inmsg {
    const pml_match_hdr_t *hdr;
    uint64_t sreq;
    size_t msg_len;
    const void *data;
    size_t data_len;
    pml_peer_t *peer;
    pml_frag_t *frag;            /* when it comes from a frag */
} pml_inmsg_t;

pml_frag_t *pml_frag_alloc(size_t data_len);
void pml_frag_free(pml_frag_t *f);
pml_frag_t *pml_frag_from_inmsg(const pml_inmsg_t *m);

/* ------------------------------------------------------------ requests */

enum pml_req_state {
    PML_RS_INACTIVE = 0,
    PML_RS_QUEUED,        /* send: waiting in the peer's pending queue */
    PML_RS_WAIT_ACK,      /* sync eager: sent, waiting for ACK */
    PML_RS_RNDV,          /* send: RTS sent, waiting for CTS or FIN */
    PML_RS_STREAM,        /* send: streaming FRAGs after CTS */
    PML_RS_POSTED,        /* recv: in a posted queue */
    PML_RS_GET,           /* recv: pulling data with get */
    PML_RS_FRAGS,         /* recv: receiving FRAGs */
    PML_RS_DONE,
};

/* PML_RF_STREAM: rendezvous pipelined with BTL_PAYLOAD_STREAM fragments
 * (the receiver chose it; on a recv, the choice to time).  PML_RF_GET_ALONE
 * (recv): a get both ways at once, BTL_GET_ALONE (pml_rndv.c). */
enum { PML_RF_STATIC = 1, PML_RF_REGISTERED = 2, PML_RF_COMMREF = 4, PML_RF_SINGLE_COPY = 8,
       PML_RF_STREAM = 16, PML_RF_EAGER_DEVICE = 32, PML_RF_CHOOSING = 64,
       PML_RF_GET_ALONE = 128 };

typedef struct pml_request {
    obj_request_t req;           /* first: the handle points here */
    pml_pend_t pend;             /* posted queue, or peer pending queue */
    pml_ctx_t *ctx;
    pml_peer_t *peer;            /* send: destination; recv: sender once matched */
    int rank;                    /* dst or src argument (comm rank, ANY_SOURCE) */
    int tag;
    uint8_t mode;                /* pml_send_mode_t */
    uint8_t state;               /* enum pml_req_state */
    uint8_t rflags;              /* PML_RF_* */
    uint8_t hdr_flags;           /* send: PML_HF_* of the header sent */
    uint32_t post_seq;
    uint64_t remote;             /* the peer's request (rendezvous) */
    size_t xfer;                 /* bytes to move (rendezvous, after match) */
    size_t offset;               /* bytes moved so far (frags, gets issued) */
    size_t got;                  /* recv get: bytes whose get completed */
    int gets_pending;
    int error;
    /* recv get: where we are in the sender's iovec list */
    pml_frag_t *desc_frag;       /* holds the get descriptor */
    uint32_t get_ri;
    size_t get_roff;
    btl_reg_t reg;               /* send: registration of the buffer */
    rail_adapt_t *adapt;         /* recv rendezvous: the class this message is timed for, or
                                  * NULL (set in pml_rndv_matched, before any use) */
    uint64_t t0;                 /* ... and when it was matched */
    struct pml_request *next_free;
    pml_buf_t buf;               /* last: the cursor is large */
} pml_request_t;

extern const obj_request_ops_t pml_send_ops, pml_recv_ops;

pml_request_t *pml_req_alloc(void);
void pml_req_free(pml_request_t *r);
void pml_req_init_send(pml_request_t *r, const void *buf, MPI_Count count, obj_datatype_t *dt,
                       int dst, int tag, pml_send_mode_t mode, obj_comm_t *comm, unsigned flags);
int pml_req_init_recv(pml_request_t *r, void *buf, MPI_Count count, obj_datatype_t *dt, int src,
                      int tag, obj_comm_t *comm, unsigned flags);

/* Complete with the status already filled in. */
static inline void pml_req_complete(pml_request_t *r)
{
    r->state = PML_RS_DONE;
    obj_request_complete(&r->req);
}

/* ------------------------------------------------------------ protocol */

int pml_send_start(pml_request_t *r);
int pml_recv_start(pml_request_t *r);
/* Try to transmit the first message of a queued send; RAIL_AGAIN: btl full. */
int pml_send_try(pml_request_t *r);
/* Push FRAGs of a streaming send; MPI_SUCCESS when all are out (the
 * request is then complete).  Callers take queued requests off the
 * pending queue first and put them back on RAIL_AGAIN. */
int pml_stream_push(pml_request_t *r);
/* Issue (more) gets of a receive; RAIL_AGAIN when the btl is full. */
int pml_get_push(pml_request_t *r);
/* ipc_only: a device message below the eager limit, offered by IPC or
 * not at all (PML_RTS_NO_IPC: the caller sends it eager) */
int pml_rndv_send_rts(pml_request_t *r, pml_src_t *s, pml_peer_t *peer, bool ipc_only);
#define PML_RTS_NO_IPC 1
void pml_rndv_matched(pml_request_t *r, const pml_inmsg_t *m);
/* Register the rendezvous counters as MPI_T performance variables
 * (pml_rndv_recv_*), once per pml_register_params. */
int pml_rndv_register_pvars(void);
extern int pml_my_world;
extern const btl_payload_t pml_no_payload;   /* zero bytes */

/* Deliver a matchable message that is next in sequence. */
void pml_match_incoming(pml_ctx_t *ctx, pml_src_t *s, const pml_inmsg_t *m);
/* Find (and remove) the first unexpected message matching src/tag. */
pml_frag_t *pml_unexp_find(pml_ctx_t *ctx, int src, int tag, bool remove);
/* Return every consumed credit now (the peer ran out). */
void pml_credit_flush(pml_peer_t *peer);
/* Account an eager message of peer as consumed (returns credits). */
static inline void pml_credit_consumed(pml_peer_t *peer)
{
    if (++peer->consumed >= peer->credit_batch)
        pml_credit_flush(peer);
}

/* Send a control message now, or queue it. */
void pml_ctl_send(pml_peer_t *peer, uint8_t tag, const void *hdr, size_t len);
/* Put a pending item on the peer's queue (and the peer on the active list). */
void pml_peer_enqueue(pml_peer_t *peer, pml_pend_t *p);
int pml_progress(void *arg);
extern int pml_n_active_peers;   /* peers with pending work (lazy progress) */
void pml_queue_fini(void);
void pml_ctx_fini_all(void);

/* Callbacks (pml_match.c, pml_send.c, pml_rndv.c). */
void pml_cb_match(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                  const void *payload, size_t payload_len);
void pml_cb_ack(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                const void *payload, size_t payload_len);
void pml_cb_cts_stream(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                       const void *payload, size_t payload_len);
void pml_cb_cts(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                const void *payload, size_t payload_len);
void pml_cb_frag(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                 const void *payload, size_t payload_len);
void pml_cb_fin(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                const void *payload, size_t payload_len);
void pml_cb_credit(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                   const void *payload, size_t payload_len);

/* Early messages (unknown context): kept until pml_comm_create. */
void pml_early_add(const pml_inmsg_t *m);
void pml_early_replay(pml_ctx_t *ctx);

/* Take a reference on the request's communicator (user-visible requests). */
void pml_req_comm_ref(pml_request_t *r);
/* Drop it (deferred to the next progress call). */
void pml_req_comm_unref(pml_request_t *r);

extern bool pml_rndv_get;
extern size_t pml_rndv_get_min_host;
extern size_t pml_rndv_adapt_min;   /* pipeline or get by time from this size (0: never) */
extern bool pml_rndv_adapt_alternate; /* testing: every such choice alternates */
extern const char *pml_rndv_both_ways; /* auto|get|time: messages while sending to the peer */
extern bool pml_rndv_device_ipc;      /* device to device by IPC inside a node */
extern size_t pml_device_eager_max;   /* device messages above this go by IPC, eager or not */
extern size_t pml_frag_inline;

/* A matched message for receive r (data delivered, protocol started);
 * takes ownership of m->frag (frees or keeps it).  Inline: the eager path
 * of every matched message. */
static inline void pml_recv_matched(pml_request_t *r, const pml_inmsg_t *m)
{
    const pml_match_hdr_t *h = m->hdr;
    r->peer = m->peer;
    r->req.status.source = h->src;
    r->req.status.tag = h->tag;
    r->req.status.msg_len = (MPI_Count)m->msg_len;
    if (h->type != PML_HDR_EAGER) {
        pml_rndv_matched(r, m);
        return;
    }
    size_t n = m->data_len;
    if (RAIL_UNLIKELY(n > r->buf.bytes)) {
        n = r->buf.bytes;
        r->req.status.error = MPI_ERR_TRUNCATE;
    }
    if (n) {
        int rc = pml_buf_unpack(&r->buf, 0, m->data, n);
        if (RAIL_UNLIKELY(rc != MPI_SUCCESS))
            r->req.status.error = rc;
    }
    r->req.status.count = (MPI_Count)n;
    if (RAIL_UNLIKELY(h->flags & PML_HF_SYNC)) {
        pml_ctl_hdr_t a = { m->sreq, 0, 0 };
        pml_ctl_send(m->peer, PML_TAG_ACK, &a, sizeof(a));
    }
    pml_credit_consumed(m->peer);
    if (m->frag)
        pml_frag_free(m->frag);
    pml_req_complete(r);
}

#endif
