/*
 * Requests (front-end view, shared by every kind of nonblocking operation).
 *
 * A request object starts with mpi_request_t; the layer that owns the
 * operation embeds it as its first member (pml_request_t, the generalized
 * request, coll schedules, RMA and I/O requests later) and describes itself
 * with `kind` and an ops table.  The MPI_Request handle is the object's
 * address.
 *
 * Life cycle
 *   - created active (nonpersistent) or inactive (persistent, until Start);
 *   - the owner completes it with mpi_request_complete(): status filled in
 *     first, then `complete` is stored with release semantics, which is what
 *     Wait/Test poll (rail_progress_wait sleeps on it when waiting long);
 *   - Wait/Test (or Request_free) release it: ops->release returns its memory
 *     (nonpersistent) or it becomes inactive (persistent);
 *   - Request_free on a pending request sets MPI_REQ_FLAG_FREED and the
 *     completion releases it.
 * All of this happens inside the progress critical section (RAIL_CS_*), so
 * completion and release never race under MPI_THREAD_MULTIPLE.
 *
 * on_complete: an optional hook run by mpi_request_complete in place of
 * publishing the completion, for requests used internally (a Bsend's
 * transfer frees its buffer space, sub-requests of Isendrecv complete their
 * parent).  The hook owns the request from then on.
 */
#ifndef MPI_MPI_REQUEST_H
#define MPI_MPI_REQUEST_H

#include <mpi.h>
#include "base/rail.h"
#include "base/atomic.h"
#include "base/progress.h"
#include "mpi/mpi_obj.h"

typedef enum mpi_req_kind {
    MPI_REQ_SEND = 1,   /* pml send (any mode) */
    MPI_REQ_RECV,       /* pml receive, or Imrecv */
    MPI_REQ_GREQ,       /* generalized request (MPI_Grequest_start) */
    MPI_REQ_MULTI,      /* made of sub-requests: Isendrecv(_replace), Buffer_iflush */
    MPI_REQ_COLL,       /* nonblocking or persistent collective (coll/) */
    MPI_REQ_RMA,        /* request-based RMA */
    MPI_REQ_IO,         /* nonblocking file I/O */
    MPI_REQ_PART,       /* partitioned communication */
} mpi_req_kind_t;

enum {
    MPI_REQ_FLAG_PERSISTENT = 1 << 0,
    MPI_REQ_FLAG_ACTIVE = 1 << 1,     /* persistent: started and not yet reported */
    MPI_REQ_FLAG_FREED = 1 << 2,      /* Request_free called while pending */
    MPI_REQ_FLAG_INTERNAL = 1 << 3,   /* never seen by the user (no handle) */
};

/* What a completed request reports: MPI_Status in internal form.  count is
 * in bytes; Get_count/Get_elements convert with the datatype. */
typedef struct mpi_req_status {
    int source;
    int tag;
    int error;
    int cancelled;
    MPI_Count count;
    MPI_Count msg_len;   /* whole length of the matched message (truncation reports) */
} mpi_req_status_t;

typedef struct mpi_request_ops {
    /* Return the request's memory; called once, when the user is done with
     * a complete nonpersistent request, or frees a persistent one. */
    void (*release)(mpi_request_t *req);
    /* MPI_Cancel.  Either arrange for the request to complete with
     * status.cancelled = 1, or do nothing (it completes normally).  NULL:
     * never cancellable. */
    int (*cancel)(mpi_request_t *req);
    /* MPI_Start of an inactive persistent request. */
    int (*start)(mpi_request_t *req);
    /* Called by Wait/Test before a complete request's status is reported
     * (generalized requests call query_fn).  NULL: status is final. */
    int (*query)(mpi_request_t *req);
    /* Progress that only this request's owner can make (generalized
     * requests with a poll function).  NULL: rail_progress() does it. */
    int (*poll)(mpi_request_t *req);
} mpi_request_ops_t;

struct MPI_ABI_Request {
    mpi_obj_t obj;
    uint8_t kind;                   /* mpi_req_kind_t */
    uint8_t flags;                  /* MPI_REQ_FLAG_* */
    int complete;                   /* 1 when done (acquire/release) */
    mpi_req_status_t status;
    struct MPI_ABI_Comm *comm;      /* whose errhandler reports errors (may be NULL) */
    const mpi_request_ops_t *ops;
    void (*on_complete)(mpi_request_t *req);
    void *cb_arg;                   /* for on_complete */
};

/* Matched-probe messages (MPI_Mprobe/Improbe); the pml owns the contents. */
struct MPI_ABI_Message {
    mpi_obj_t obj;
    struct MPI_ABI_Comm *comm;
    struct pml_frag *frag;          /* the dequeued message */
};

static inline void mpi_request_init(mpi_request_t *req, mpi_req_kind_t kind,
                                    const mpi_request_ops_t *ops, struct MPI_ABI_Comm *comm)
{
    req->obj.kind = MPI_OBJ_REQUEST;
    req->obj.refcount = 1;
    req->obj.handle = req;
    req->kind = (uint8_t)kind;
    req->flags = 0;
    req->complete = 0;
    req->status.source = MPI_ANY_SOURCE;
    req->status.tag = MPI_ANY_TAG;
    req->status.error = MPI_SUCCESS;
    req->status.cancelled = 0;
    req->status.count = 0;
    req->status.msg_len = 0;
    req->comm = comm;
    req->ops = ops;
    req->on_complete = NULL;
    req->cb_arg = NULL;
}

static inline bool mpi_request_is_complete(const mpi_request_t *req)
{
    return rail_atomic_load_acquire(&req->complete) != 0;
}

/* Mark a request done (inside the critical section); req->status must be
 * final.  Nothing may touch req after this returns (a waiting thread may
 * reuse its memory at once). */
static inline void mpi_request_complete(mpi_request_t *req)
{
    if (req->on_complete) {
        req->on_complete(req);
        return;
    }
    if (RAIL_UNLIKELY(req->flags & MPI_REQ_FLAG_FREED)) {
        req->ops->release(req);
        return;
    }
    rail_atomic_store_release(&req->complete, 1);
    if (RAIL_UNLIKELY(rail_progress_mt))
        rail_progress_wake();
}

static inline bool mpi_request_done_cond(void *arg)
{
    return mpi_request_is_complete((const mpi_request_t *)arg);
}

/* Progress until req is complete (outside the critical section). */
static inline void mpi_request_wait_complete(mpi_request_t *req)
{
    if (!mpi_request_is_complete(req))
        rail_progress_wait(mpi_request_done_cond, req);
}

/* Status of a request that reports nothing (PROC_NULL, inactive). */
static inline void mpi_req_status_empty(mpi_req_status_t *st)
{
    st->source = MPI_ANY_SOURCE;
    st->tag = MPI_ANY_TAG;
    st->error = MPI_SUCCESS;
    st->cancelled = 0;
    st->count = 0;
    st->msg_len = 0;
}

static inline void mpi_req_status_proc_null(mpi_req_status_t *st)
{
    st->source = MPI_PROC_NULL;
    st->tag = MPI_ANY_TAG;
    st->error = MPI_SUCCESS;
    st->cancelled = 0;
    st->count = 0;
    st->msg_len = 0;
}

/* ---------------------------------------------------------- mpi/request*.c */

/* Copy an internal status out to the user's (MPI_STATUS_IGNORE allowed);
 * MPI_ERROR is written only when with_error (the multi-request calls). */
void mpi_status_write(MPI_Status *dst, const mpi_req_status_t *src, bool with_error);
void mpi_status_read(const MPI_Status *src, mpi_req_status_t *dst);
/* Hidden fields of MPI_Status (count in bytes, cancelled flag). */
MPI_Count mpi_status_get_bytes(const MPI_Status *st);
void mpi_status_set_bytes(MPI_Status *st, MPI_Count bytes);
int mpi_status_get_cancelled_flag(const MPI_Status *st);
void mpi_status_set_cancelled_flag(MPI_Status *st, int flag);

/* Wait for one request, report it and release it (or make a persistent one
 * inactive); *handle becomes MPI_REQUEST_NULL unless persistent. */
int mpi_request_wait_one(MPI_Request *handle, MPI_Status *status);
/* The request's error with a detail message for the errhandler. */
int mpi_request_error(mpi_request_t *req);

/* A request that is already complete with the given status (PROC_NULL
 * operations, Buffer_iflush with nothing to flush). */
int mpi_request_new_complete(const mpi_req_status_t *st, bool persistent, MPI_Request *handle);

#endif
