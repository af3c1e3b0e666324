/*
 * osc am: one-sided operations as active messages over the btls.
 *
 * The origin computes the target-side layout itself (the target datatype's
 * pieces, relative to the target's base + disp * disp_unit) and sends one
 * message per piece, at most osc_am_chunk bytes, with the data packed in
 * target order; the target's handler (inside its progress) copies or
 * reduces it.  Gets and fetching operations are answered by a reply
 * carrying the old data, placed at the origin by packed offset.
 *
 * COMPLETION.  Puts and accumulates are counted: sent[t] at the origin,
 * recv[o] at the target (cumulative).  A flush or unlock carries sent[t]
 * and is acknowledged once recv[o] reaches it; a fence all-reduces the
 * sent counts so every target knows how many to await.  Replies are
 * counted by `replies`.  The btls deliver one peer's messages in order and
 * the send queue (for a full btl) is FIFO, so accumulates from one origin
 * are applied in order (accumulate_ordering rar,raw,war,waw).
 *
 * ATOMICITY.  Accumulates at a target are applied under the window's
 * acc_lock, so each element is updated atomically with respect to every
 * other accumulate, fetch-and-op and compare-and-swap.
 */
#ifndef OSC_AM_OSC_AM_H
#define OSC_AM_OSC_AM_H

#include <pthread.h>
#include "btl/btl.h"
#include "osc/osc.h"

/* btl tags: 16..30 are for layers above the pml (btl/btl.h); coll uses none. */
#define OSC_AM_TAG 16

enum {
    OSC_AM_PUT = 1,
    OSC_AM_ACC,
    OSC_AM_GET,
    OSC_AM_GACC,
    OSC_AM_CAS,
    OSC_AM_REPLY,     /* data for a get / fetching operation */
    OSC_AM_LOCK,
    OSC_AM_UNLOCK,
    OSC_AM_FLUSH,
    OSC_AM_ACK,       /* lock granted / flush or unlock done: cookie is an int counter */
    OSC_AM_POST,
    OSC_AM_COMPLETE,
};

typedef struct osc_am_hdr {
    uint32_t win_id;      /* context id of the window's communicator */
    int32_t src;          /* sender's rank in the window */
    uint8_t type;         /* OSC_AM_* */
    uint8_t lock_type;    /* LOCK: MPI_LOCK_* - 300; ACK: error flag */
    uint16_t pad;
    uint32_t op;          /* MPI_Op handle (predefined) */
    uint32_t dt;          /* basic MPI_Datatype handle (predefined) */
    uint32_t pad2;
    uint64_t off;         /* byte offset in the target window (dynamic: address) */
    uint64_t len;         /* bytes at the target */
    uint64_t cookie;      /* origin-side completion object */
    uint64_t aux;         /* packed offset at the origin; count for FLUSH/UNLOCK/COMPLETE */
} osc_am_hdr_t;

typedef struct osc_am_waiter {
    int origin;
    int type;
    uint64_t cookie;
} osc_am_waiter_t;

typedef struct osc_am {
    osc_win_t *w;
    uint64_t *sent, *acked, *recv;
    uint64_t recv_total;
    uint64_t expect_total;      /* fence: recv_total to reach */
    int64_t replies;
    /* target side: lock */
    int lock_excl;              /* holder's rank, -1: none */
    int lock_shared;            /* shared holders */
    osc_am_waiter_t *waiters;   /* queued lock requests (FIFO) */
    int n_waiters, cap_waiters;
    /* target side: flush / unlock waiting for data still on its way */
    int64_t *want_flush, *want_unlock;
    uint64_t *flush_cookie, *unlock_cookie;
    uint8_t *bad;               /* per origin: an operation fell outside attached memory */
    /* PSCW */
    uint32_t *post_recv, *post_used;
    uint32_t *compl_recv, *compl_used;
    uint64_t *compl_need;
    int *post_group, n_post_group;
    int *start_group, n_start_group;
    pthread_mutex_t acc_lock;
} osc_am_t;

/* A get / fetching operation waiting for its replies. */
typedef struct osc_am_req {
    osc_am_t *am;
    char *buf;                  /* origin (result) buffer */
    obj_datatype_t *dt;         /* its datatype (retained) */
    MPI_Count count;
    size_t left;                /* bytes still to come */
    obj_request_t *user;        /* MPI_Rget ... (NULL: none) */
    void *stage;                /* packed origin data to free at completion */
} osc_am_req_t;

extern size_t osc_am_chunk;

static inline osc_am_t *osc_am_of(osc_win_t *w) { return (osc_am_t *)w->mod; }

/* am_proto.c */
int osc_am_send(osc_am_t *am, int target, osc_am_hdr_t *hdr, const void *data, size_t len);
void osc_am_hdr_init(osc_am_t *am, osc_am_hdr_t *h, int type);
void osc_am_wait_counter(int *counter);
void osc_am_wait_replies(osc_am_t *am);
void osc_am_throttle(osc_am_t *am);
void osc_am_recv(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                 const void *payload, size_t payload_len);
int osc_am_proto_init(void);
void osc_am_proto_fini(void);
size_t osc_am_max_payload(osc_am_t *am, int target);
/* am_target.c */
void osc_am_target_data(osc_am_t *am, const osc_am_hdr_t *h, const void *p, size_t n);
void osc_am_target_sync(osc_am_t *am, const osc_am_hdr_t *h, const void *p, size_t n);
void osc_am_check_pending(osc_am_t *am, int origin);
/* am_ops.c */
extern const osc_ops_t osc_am_ops;
int osc_am_req_new(osc_am_t *am, void *buf, MPI_Count count, obj_datatype_t *dt,
                   obj_request_t **user, osc_am_req_t **out);
void osc_am_reply_arrived(osc_am_req_t *r, uint64_t aux, const void *data, size_t len);
/* am_sync.c */
int osc_am_fence(osc_win_t *w, int assert);
int osc_am_post(osc_win_t *w, const int *ranks, int n, int assert);
int osc_am_start(osc_win_t *w, const int *ranks, int n, int assert);
int osc_am_complete(osc_win_t *w);
int osc_am_wait(osc_win_t *w, bool block, int *flag);
int osc_am_lock(osc_win_t *w, int type, int target, int assert);
int osc_am_unlock(osc_win_t *w, int target);
int osc_am_lock_all(osc_win_t *w, int assert);
int osc_am_unlock_all(osc_win_t *w);
int osc_am_flush(osc_win_t *w, int target);
int osc_am_flush_local(osc_win_t *w, int target);
int osc_am_sync(osc_win_t *w);

#endif
