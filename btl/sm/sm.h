/*
 * btl sm: the shared-memory byte transfer layer (internal definitions).
 *
 * One segment per process, /dev/shm/rail-<jobid>-sm-<rank>, created and
 * pre-faulted by its owner in init(), announced with rte_modex_put("btl_sm"),
 * mapped by every local peer in add_procs() and unlinked by the last of them
 * (so a normal run leaves nothing in /dev/shm once wire-up is over; a crash
 * before that is cleaned by the launcher's rail-<jobid>-* sweep).
 *
 * Segment layout (offsets from the segment base; lines are 64 bytes):
 *
 *   0      btl_sm_seg_hdr_t   line 0 read-mostly identity, wake_mode
 *                             line 1 attach counter, line 2 futex word,
 *                             line 3 FIFO tail, line 4 FIFO stub node,
 *                             lines 5-6 a shared get's claims,
 *                             transfer and completions (sm_cma.c)
 *   4096   fast-box control   one line per sender: bytes consumed so far
 *   page   fast-box rings     one ring of fbox_size bytes per sender
 *   page   FIFO buffers       frag_count frags of frag_size bytes, owned by
 *                             this process as a *sender*
 *
 * A process receives through the rings and FIFO of its own segment; it
 * sends by writing into the receiver's ring, or by filling one of its own
 * frags and pushing it on the receiver's FIFO.  See sm_fastbox.h and
 * sm_fifo.h for the protocols, sm_wait.c for sleeping, sm_cma.c for get/put.
 *
 * What the pml can rely on:
 *   - send() copies (or packs) the data before it returns, or returns
 *     RAIL_AGAIN having done nothing (ring full and no free frag: progress()
 *     and retry); messages to one peer arrive in the order they were sent;
 *   - callbacks run inside progress() on bytes in shared memory (8-byte
 *     aligned header and payload), which are reused once they return;
 *     progress() called from a callback returns 0;
 *   - get/put are synchronous (done() runs before they return MPI_SUCCESS;
 *     on an error nothing ran and done() is not called); a contiguous get
 *     from btl_sm_get_share_min bytes may have the peer write part of the
 *     data (sm_cma.c): it does so inside its own progress(), so a get never
 *     waits for a peer that is not already copying for it; a get marked
 *     BTL_GET_ALONE does not ask;
 *   - BTL_PAYLOAD_STREAM: a FIFO payload of at least RAIL_COPY_STREAM_SHARED_MIN
 *     contiguous bytes is written with non-temporal stores;
 *   - flags: BTL_FLAG_GET | PUT | IOV are cleared at init when
 *     btl_sm_single_copy=none or CMA fails on ourselves, and in add_procs
 *     when reading any local peer fails (EPERM under ptrace restrictions):
 *     read m->flags after add_procs.  Without them get/put fail with
 *     MPI_ERR_INTERN and the pml must pipeline large messages through
 *     send() (max_send_size pieces: copy in, copy out).  BTL_FLAG_DEVICE_MEM
 *     is never set;
 *   - one module per process, not thread-safe: the caller serializes all
 *     calls (MPI_THREAD_MULTIPLE needs the pml's lock around them).
 */
#ifndef BTL_SM_SM_H
#define BTL_SM_SM_H

#include "base/rail.h"
#include "base/atomic.h"
#include "base/cma.h"
#include "btl/btl.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define BTL_SM_MAGIC 0x31304d5354494152ULL /* "RAILSM01" */
#define BTL_SM_VERSION 1
#define BTL_SM_HDR_MAX 64         /* largest active-message header (btl.h) */
#define BTL_SM_FRAG_HOT_MAX 8192    /* sm_fifo.c: payloads that reuse the newest idle frag */
#define BTL_SM_FRAG_HDR 128       /* frag metadata + header bytes before the payload */
#define BTL_SM_PAGE 4096
#define BTL_SM_MODEX_KEY "btl_sm"

/* A location in some local process's segment: (local index + 1) << 40 | byte
 * offset.  0 is "none".  Pointers cannot be shared: each process maps each
 * segment at its own address. */
typedef uint64_t btl_sm_off_t;
#define BTL_SM_OFF_SHIFT 40
#define BTL_SM_OFF_MASK ((1ULL << BTL_SM_OFF_SHIFT) - 1)
#define BTL_SM_OFF(seg, off) ((((uint64_t)(seg) + 1) << BTL_SM_OFF_SHIFT) | (uint64_t)(off))

/* A FIFO node: the first line of every frag, and the queue's stub. */
typedef struct btl_sm_fifo_node {
    btl_sm_off_t next;             /* written by the producer that pushes after us */
} btl_sm_fifo_node_t;

/* A FIFO buffer (frag), in its sender's segment. */
typedef struct btl_sm_frag {
    btl_sm_fifo_node_t node;
    btl_sm_off_t self;             /* where this frag is */
    uint32_t payload_len;
    uint16_t src;                  /* owner's local index */
    uint16_t dst;                  /* receiver's local index */
    uint8_t tag;
    uint8_t hdr_len;
    uint8_t pad[BTL_SM_FRAG_HDR - BTL_SM_HDR_MAX - 26];
    uint8_t hdr[BTL_SM_HDR_MAX];   /* active-message header */
    /* payload follows (BTL_SM_FRAG_HDR bytes from the start) */
} btl_sm_frag_t;
_Static_assert(sizeof(btl_sm_frag_t) == BTL_SM_FRAG_HDR, "frag header size");

typedef struct btl_sm_seg_hdr {
    /* line 0: written by the owner before the segment is announced */
    uint64_t magic;
    uint32_t version;
    int32_t pid;
    uint64_t cookie;               /* random, also in the modex and in btl_reg_t */
    uint64_t size;
    uint32_t local_index, local_size;
    uint32_t fbox_size, frag_size;
    uint64_t fbox_ctrl_off, fbox_ring_off, frag_off;
    uint32_t frag_count;
    uint32_t wake_mode;            /* 1: senders check `sleeping` after publishing */
    /* line 1 */
    uint32_t attached RAIL_ALIGNED(RAIL_CACHELINE); /* peers that mapped this segment */
    /* line 2: futex word, 1 while the owner sleeps or is about to */
    uint32_t sleeping RAIL_ALIGNED(RAIL_CACHELINE);
    /* line 3: FIFO tail, exchanged by every producer */
    btl_sm_off_t fifo_tail RAIL_ALIGNED(RAIL_CACHELINE);
    /* line 4: the FIFO's stub node */
    btl_sm_fifo_node_t fifo_stub RAIL_ALIGNED(RAIL_CACHELINE);
    /* line 5: the owner's current shared get (sm_cma.c, base/cma.h): claim
     * word (generation << 32 | chunks the sender claimed << 16 | chunks the
     * owner claimed) and what it reads */
    uint64_t share_claim RAIL_ALIGNED(RAIL_CACHELINE);
    rail_cma_share_desc_t share_desc;
    /* line 6: chunks the sender has written, + RAIL_CMA_SHARE_FAILED for
     * each it could not write */
    uint64_t share_done RAIL_ALIGNED(RAIL_CACHELINE);
} btl_sm_seg_hdr_t;
_Static_assert(sizeof(btl_sm_seg_hdr_t) <= BTL_SM_PAGE, "segment header fits its page");

/* The business card in the modex. */
typedef struct btl_sm_card {
    uint32_t version;
    int32_t pid;
    uint64_t cookie;
    uint64_t size;
    uint64_t probe_addr;           /* &cookie in the owner's private memory (CMA probe) */
    char name[200];                /* shm_open name */
} btl_sm_card_t;

/* Contents of btl_reg_t for sm. */
typedef struct btl_sm_reg {
    int32_t pid;
    uint32_t pad;
    uint64_t cookie;
    uint64_t base;
    uint64_t len;
} btl_sm_reg_t;

/* Per-peer state (btl_endpoint_t is opaque to the pml). */
struct btl_endpoint {
    /* sending to the peer through its fast box (a ring in its segment) */
    uint8_t *fbox_out;
    uint64_t out_head;             /* bytes written, ever */
    uint64_t out_limit;            /* out_head may grow to this without re-reading consumed */
    size_t out_mask;               /* ring size - 1 */
    size_t out_max;                /* largest ring entry we put there (0: no fast box) */
    const uint64_t *out_consumed;  /* the receiver's progress, in its segment */
    btl_sm_seg_hdr_t *hdr;         /* the peer's segment header (FIFO, futex) */
    uint32_t fifo_outstanding;     /* our frags the peer has not returned yet */
    uint16_t index;                /* the peer's local index */
    /* receiving from the peer through our ring */
    uint8_t *fbox_in RAIL_ALIGNED(RAIL_CACHELINE);
    uint64_t in_tail;              /* bytes consumed, ever */
    uint64_t in_published;         /* last value stored in *in_consumed */
    size_t in_mask;
    uint64_t *in_consumed;         /* our control line for this sender */
    /* identity */
    int rank;                      /* job rank */
    pid_t pid;
    uint64_t cookie;
    char *base;                    /* the peer's segment, mapped here */
    size_t size;
    bool frags_mapped;             /* its frags populated here (sm_fifo.c) */
    bool no_share;                 /* it could not write into us: no shared gets (sm_cma.c) */
};

typedef struct btl_sm_params {
    int priority;
    size_t eager_limit;
    size_t max_send_size;
    size_t fbox_size;
    size_t fbox_max;
    int frag_count;
    const char *single_copy;
    size_t get_share_min;
    bool prefault;
    int verbose;
} btl_sm_params_t;

typedef struct btl_sm_module {
    btl_module_t super;
    int my_index, n_local;
    char *seg;                     /* own segment */
    size_t seg_size;
    btl_sm_seg_hdr_t *hdr;
    char name[200];
    bool unlinked;
    bool mapped;                   /* peers mapped (first add_procs) */
    bool in_progress;
    bool cma;
    uint32_t share_gen;            /* generation of our last shared get */
    uint64_t cookie;
    size_t fbox_entry_max;         /* largest entry we put in a ring, bytes */
    int n_peers;
    char **bases;                  /* [n_local] segment base of each local process */
    btl_endpoint_t *eps;           /* [n_local]; eps[my_index] unused */
    btl_endpoint_t **peers;        /* the n_local - 1 others, in polling order */
    btl_sm_off_t fifo_head;        /* consumer side of our FIFO */
    btl_sm_off_t fifo_stub;
    /* Our idle frags, a ring: returned ones join the newest end; payloads
     * above BTL_SM_FRAG_HOT_MAX take the oldest: a frag the receiver has
     * just copied out sits in its cache, and writing it again at once costs
     * a cross-core invalidation per line (np 2 ping-pong through the
     * pipeline, 64 KiB: 9.3 us reusing the newest, 3.3 us the oldest);
     * smaller ones the newest (bw 4 KiB, fast boxes full: 0.45 against
     * 0.50 us per message). */
    btl_sm_frag_t **free_frags;
    int free_first, n_free, free_cap;
} btl_sm_module_t;

extern btl_sm_module_t btl_sm_module;
extern btl_sm_params_t btl_sm_params;
extern const btl_component_t btl_sm_component;

/* Bytes of one FIFO buffer (frag): its header and max_send_size. */
static inline size_t btl_sm_frag_size(void)
{
    return RAIL_ALIGN_UP(btl_sm_params.max_send_size + BTL_SM_FRAG_HDR, RAIL_CACHELINE);
}

static inline int btl_sm_verbosity(void)
{
    return RAIL_MAX(btl_sm_params.verbose, btl_verbose);
}

static inline void *btl_sm_ptr(btl_sm_module_t *m, btl_sm_off_t off)
{
    return m->bases[(off >> BTL_SM_OFF_SHIFT) - 1] + (off & BTL_SM_OFF_MASK);
}

/* sm_segment.c */
int btl_sm_segment_create(btl_sm_module_t *m);
int btl_sm_segment_map_peers(btl_sm_module_t *m);
void btl_sm_segment_destroy(btl_sm_module_t *m);
void btl_sm_populate(void *addr, size_t len);

/* sm_module.c */
int btl_sm_add_procs(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps);
int btl_sm_del_procs(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps);
int btl_sm_send(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                size_t hdr_len, const btl_payload_t *payload);
int btl_sm_progress(btl_module_t *m);
void btl_sm_no_callback(uint8_t tag);

/* Run the receive callback of tag on bytes that stay in shared memory. */
static inline void btl_sm_deliver(btl_sm_module_t *m, btl_endpoint_t *ep, uint8_t tag,
                                  const void *hdr, size_t hdr_len, const void *payload,
                                  size_t payload_len)
{
    btl_recv_cb_t cb = tag < BTL_TAG_MAX ? btl_recv_table[tag] : NULL;
    if (RAIL_LIKELY(cb != NULL))
        cb(&m->super, ep, hdr, hdr_len, payload, payload_len);
    else
        btl_sm_no_callback(tag);
}

/* sm_cma.c */
void btl_sm_cma_disable(btl_sm_module_t *m, int rank, int err);
int btl_sm_register_mem(btl_module_t *m, void *base, size_t len, btl_reg_t *reg);
int btl_sm_deregister_mem(btl_module_t *m, btl_reg_t *reg);
int btl_sm_get(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
               const btl_reg_t *reg, const struct iovec *remote, int n_remote, unsigned flags,
               btl_done_cb_t done, void *cbdata);
int btl_sm_put(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
               const btl_reg_t *reg, const struct iovec *remote, int n_remote,
               btl_done_cb_t done, void *cbdata);
/* The active-message tag of a shared get's request for help (btl.h). */
#define BTL_SM_TAG_SHARE (BTL_TAG_MAX - 1)
void btl_sm_share_help(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                       const void *payload, size_t payload_len);
/* MPI_T counters (registered in sm_component.c): gets that asked their
 * sender for help, chunks helpers wrote into our buffers, chunks we wrote
 * for peers' gets. */
extern uint64_t btl_sm_count_share_gets, btl_sm_count_share_chunks_in,
    btl_sm_count_share_chunks_out;
/* MPI_T counter: FIFO payloads written with streaming stores (sm_fifo.c). */
extern uint64_t btl_sm_count_frags_streamed;

/* sm_wait.c */
bool btl_sm_sleep_prepare(btl_module_t *m);
void btl_sm_sleep_block(btl_module_t *m, int timeout_ms);
void btl_sm_sleep_finish(btl_module_t *m);
void btl_sm_sleep_wake(btl_module_t *m);
uint32_t *btl_sm_sleep_word(btl_module_t *m, uint32_t *val);
void btl_sm_wake_slow(btl_sm_seg_hdr_t *h);
bool btl_sm_work_pending(btl_sm_module_t *m);

/* After publishing to a peer: wake it if it sleeps.  No syscall, no fence
 * unless the peer has ever slept (wake_mode). */
static inline void btl_sm_wake(btl_sm_seg_hdr_t *h)
{
    if (RAIL_UNLIKELY(rail_atomic_load_relaxed(&h->wake_mode)))
        btl_sm_wake_slow(h);
}

#endif
