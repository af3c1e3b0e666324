/*
 * btl: byte transfer layers.  A btl moves bytes between processes; it never
 * matches messages (that is the pml's job).  It offers
 *   - active messages: send(ep, tag, header, payload) runs, on the receiver,
 *     the callback registered for `tag` with the header and payload bytes;
 *   - one-sided transfers: put/get of contiguous or iovec-described memory
 *     whose remote side was described by register_mem (for sm: CMA, i.e.
 *     process_vm_readv/writev of the peer's addresses);
 *   - progress() and the hooks the progress engine uses to sleep.
 *
 * Components are compiled in (btl_base.c has the static table).  Each
 * component's init() creates at most a few modules and publishes its
 * business card with rte_modex_put(); after the job-wide fence, add_procs()
 * says which peers each module reaches.  The pml picks, per peer, the
 * module with the highest priority that reaches it (RAIL_BTL selects and
 * orders components: "sm,tcp", "^tcp").
 */
#ifndef BTL_BTL_H
#define BTL_BTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "base/rail.h"

/* Returned by send/put/get when resources are momentarily exhausted (a
 * full queue): nothing was sent, try again after progress(). */
#define RAIL_AGAIN (-1)

typedef struct btl_module btl_module_t;
typedef struct btl_endpoint btl_endpoint_t;   /* a module's per-peer state, opaque */

/* One peer process as the btls see it. */
typedef struct btl_proc {
    int rank;              /* rank in the job (world) */
    uint32_t node_id;
    bool local;            /* same node as this process */
} btl_proc_t;

/* Active-message tags.  The pml owns 0..15; collectives using btls directly
 * (coll sm does not; it uses its own segment) may take 16..30; 31 is btl
 * sm's own (a shared get's request for help, sm_cma.c). */
#define BTL_TAG_MAX 32

/* get flags.  BTL_GET_ALONE: the peer is busy with transfers of its own to
 * us; copy without asking it to help (btl sm's shared get). */
#define BTL_GET_ALONE 1u

/* Receive callback: runs inside progress(), on the receiving process.  The
 * header and payload bytes are 8-byte aligned and valid only until it
 * returns; a progress() called from inside a callback returns 0. */
typedef void (*btl_recv_cb_t)(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr,
                              size_t hdr_len, const void *payload, size_t payload_len);

/* Payload of a send: either contiguous bytes, or produced by a pack
 * function straight into the btl's buffer (no intermediate copy). */
typedef struct btl_payload {
    const void *data;     /* contiguous bytes, or NULL when pack is set */
    size_t len;           /* bytes to send */
    /* Fill dst with exactly len bytes (the next len bytes of the message). */
    int (*pack)(void *ctx, void *dst, size_t len);
    void *ctx;
    unsigned flags;       /* BTL_PAYLOAD_*: hints a btl may ignore */
} btl_payload_t;

/* The receiver reads the bytes from another core next: a btl that copies
 * them into shared memory may use non-temporal stores (btl sm, from
 * RAIL_COPY_STREAM_SHARED_MIN bytes; base/copy.h). */
#define BTL_PAYLOAD_STREAM 1u

/* Describes memory that a peer may read or write with get/put. */
#define BTL_REG_MAX 64
typedef struct btl_reg {
    uint8_t bytes[BTL_REG_MAX];   /* module-defined: pid, key, ipc handle ... */
    size_t len;
} btl_reg_t;

typedef void (*btl_done_cb_t)(void *cbdata, int status);

enum {
    BTL_FLAG_SEND = 1 << 0,
    BTL_FLAG_PUT = 1 << 1,
    BTL_FLAG_GET = 1 << 2,
    BTL_FLAG_DEVICE_MEM = 1 << 3,  /* put/get/send can touch device memory directly */
    BTL_FLAG_IOV = 1 << 4,         /* get/put accept iovecs on both sides */
};

struct btl_module {
    const char *name;          /* component name: "self", "sm", "tcp" */
    int priority;              /* higher wins when several reach a peer */
    /* BTL_FLAG_*; final only after add_procs: sm clears GET/PUT/IOV there
     * when single copy (CMA) turns out to be refused.  The refusal can be
     * one-sided, so the receiver of a rendezvous decides get vs pipelined
     * with its own module's GET flag. */
    uint32_t flags;
    size_t eager_limit;        /* largest message the pml sends eagerly */
    size_t max_send_size;      /* largest header+payload of one send */
    size_t get_limit;          /* largest single get (0: unlimited) */

    /* Which of procs this module reaches; fills eps[i] (NULL if not). */
    int (*add_procs)(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps);
    int (*del_procs)(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps);

    /* Send hdr (<= 64 bytes) + payload as one active message.  The data
     * are copied or sent before it returns (the caller may reuse them),
     * or nothing happened and it returns RAIL_AGAIN. */
    int (*send)(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                size_t hdr_len, const btl_payload_t *payload);

    /* Make [base, base+len) reachable by peers' get/put; reg is sent to
     * them in a protocol header.  May be NULL when not needed. */
    int (*register_mem)(btl_module_t *m, void *base, size_t len, btl_reg_t *reg);
    int (*deregister_mem)(btl_module_t *m, btl_reg_t *reg);

    /* Read remote memory described by reg into local memory; local and
     * remote iovecs cover the same number of bytes.  done(cbdata, status)
     * runs when the data have arrived (possibly before get returns); when
     * get/put return an error, done is not called.  flags: BTL_GET_*. */
    int (*get)(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
               const btl_reg_t *reg, const struct iovec *remote, int n_remote, unsigned flags,
               btl_done_cb_t done, void *cbdata);
    int (*put)(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
               const btl_reg_t *reg, const struct iovec *remote, int n_remote,
               btl_done_cb_t done, void *cbdata);

    /* Deliver what arrived; returns the number of events handled. */
    int (*progress)(btl_module_t *m);

    /* Sleeping (see base/progress.h): a file descriptor that becomes
     * readable when work arrives (-1 if none), and/or a way to block on
     * a module-specific wakeup (futex).  prepare returns false when work
     * is already pending (so the caller must not sleep). */
    int wait_fd;
    bool (*sleep_prepare)(btl_module_t *m);
    void (*sleep_block)(btl_module_t *m, int timeout_ms);
    void (*sleep_finish)(btl_module_t *m);

    int (*finalize)(btl_module_t *m);

    /* --- additions (pml engineer) --- */
    /* Optional (NULL: none): make a sleep_block() of another thread of this
     * process return early (MPI_THREAD_MULTIPLE: a request completed by one
     * thread for another). */
    void (*sleep_wake)(btl_module_t *m);
    /* Optional (NULL: none): the shared futex word sleep_block() waits on
     * and the value it waits while the word holds, for a sleep that waits
     * on another word as well (rail_progress_sleep_on). */
    uint32_t *(*sleep_word)(btl_module_t *m, uint32_t *val);

    /* --- additions (tcp engineer) --- */
    /* Optional (NULL: send never leaves data behind): bytes send() accepted
     * that are still in the module's own queues, i.e. that reach the peer
     * only while this process progresses.  Before a fence that does not
     * progress (MPI_Finalize), progress until every module reports 0. */
    size_t (*pending)(btl_module_t *m);
};

typedef struct btl_component {
    const char *name;
    int priority;
    /* Register parameters (called by railinfo too, without init). */
    int (*register_params)(void);
    /* Create modules (at most *n, fill mods) and rte_modex_put the
     * business card.  *n = 0 when the component cannot run here, after
     * saying why at verbose level. */
    int (*init)(btl_module_t **mods, int *n);
    /* --- additions (ofi engineer) --- */
    /* Optional: what the component would use on this machine, or why it
     * cannot run here, into buf (railinfo; no MPI_Init, no peers). */
    void (*describe)(char *buf, size_t len);
} btl_component_t;

/* ---------------------------------------------------------------- base */

/* Receive callbacks by tag, shared by all modules. */
extern btl_recv_cb_t btl_recv_table[BTL_TAG_MAX];
static inline void btl_register_recv(uint8_t tag, btl_recv_cb_t cb) { btl_recv_table[tag] = cb; }

/* Component table and selection (RAIL_BTL). */
extern const btl_component_t *const btl_components[];
int btl_base_register_params(void);
/* Init selected components, before the modex fence. */
int btl_base_init(void);
/* After the fence: endpoints for all job ranks; btl_for_peer[rank] is the
 * module (and endpoint) the pml uses for that peer. */
int btl_base_add_procs(int nprocs);
int btl_base_progress(void);
/* Is the component called name in the selection (parameter "btl")?  For a
 * component whose rank depends on another's presence (btl ofi on a
 * software provider defers to btl tcp).  Valid from btl_base_init on. */
bool btl_base_selected(const char *name);

/* --- additions (pml engineer) --- */
/* The module and endpoint the pml uses for each job rank (after
 * btl_base_add_procs); btl NULL for a rank no module reaches. */
typedef struct btl_peer {
    btl_module_t *btl;
    btl_endpoint_t *ep;
} btl_peer_t;
extern btl_peer_t *btl_for_peer;
extern int btl_n_peers;
/* Selected modules (after btl_base_init). */
extern btl_module_t **btl_modules;
extern int btl_n_modules;
int btl_base_finalize(void);
/* Bytes the selected modules still hold for peers (btl_module_t.pending). */
size_t btl_base_pending(void);

extern int btl_verbose;

#endif
