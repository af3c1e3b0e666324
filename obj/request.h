/*
 * Requests (shared by every kind of nonblocking operation).
 *
 * A request object starts with obj_request_t; the layer that owns the
 * operation embeds it as its first member (pml_request_t, the generalized
 * request, coll schedules, RMA and I/O requests later) and describes itself
 * with `kind` and an ops table.  The MPI_Request handle is the object's
 * address.
 *
 * Life cycle
 *   - created active (nonpersistent) or inactive (persistent, until Start);
 *   - the owner completes it with obj_request_complete(): status filled in
 *     first, then `complete` is stored with release semantics, which is what
 *     Wait/Test poll (rail_progress_wait sleeps on it when waiting long);
 *   - Wait/Test (or Request_free) release it: ops->release returns its memory
 *     (nonpersistent) or it becomes inactive (persistent);
 *   - Request_free on a pending request sets OBJ_REQ_FLAG_FREED and the
 *     completion releases it.
 * All of this happens inside the progress critical section (RAIL_CS_*), so
 * completion and release never race under MPI_THREAD_MULTIPLE.
 *
 * on_complete: an optional hook run by obj_request_complete in place of
 * publishing the completion, for requests used internally (a Bsend's
 * transfer frees its buffer space, sub-requests of Isendrecv complete their
 * parent).  The hook owns the request from then on.
 */
#ifndef OBJ_REQUEST_H
#define OBJ_REQUEST_H

#include <mpi.h>
#include "base/rail.h"
#include "base/atomic.h"
#include "base/progress.h"
#include "obj/obj.h"

typedef enum obj_req_kind {
    OBJ_REQ_SEND = 1,   /* pml send (any mode) */
    OBJ_REQ_RECV,       /* pml receive, or Imrecv */
    OBJ_REQ_GREQ,       /* generalized request (MPI_Grequest_start) */
    OBJ_REQ_MULTI,      /* made of sub-requests: Isendrecv(_replace), Buffer_iflush */
    OBJ_REQ_COLL,       /* nonblocking or persistent collective (coll/) */
    OBJ_REQ_RMA,        /* request-based RMA */
    OBJ_REQ_IO,         /* nonblocking file I/O */
    OBJ_REQ_PART,       /* partitioned communication */
} obj_req_kind_t;

enum {
    OBJ_REQ_FLAG_PERSISTENT = 1 << 0,
    OBJ_REQ_FLAG_ACTIVE = 1 << 1,     /* persistent: started and not yet reported */
    OBJ_REQ_FLAG_FREED = 1 << 2,      /* Request_free called while pending */
    OBJ_REQ_FLAG_INTERNAL = 1 << 3,   /* never seen by the user (no handle) */
};

/* What a completed request reports: MPI_Status in internal form.  count is
 * in bytes; Get_count/Get_elements convert with the datatype. */
typedef struct obj_req_status {
    int source;
    int tag;
    int error;
    int cancelled;
    MPI_Count count;
    MPI_Count msg_len;   /* whole length of the matched message (truncation reports) */
} obj_req_status_t;

typedef struct obj_request_ops {
    /* Return the request's memory; called once, when the user is done with
     * a complete nonpersistent request, or frees a persistent one. */
    void (*release)(obj_request_t *req);
    /* MPI_Cancel.  Either arrange for the request to complete with
     * status.cancelled = 1, or do nothing (it completes normally).  NULL:
     * never cancellable. */
    int (*cancel)(obj_request_t *req);
    /* MPI_Start of an inactive persistent request. */
    int (*start)(obj_request_t *req);
    /* Called by Wait/Test before a complete request's status is reported
     * (generalized requests call query_fn).  NULL: status is final. */
    int (*query)(obj_request_t *req);
    /* Progress that only this request's owner can make (generalized
     * requests with a poll function).  NULL: rail_progress() does it. */
    int (*poll)(obj_request_t *req);
} obj_request_ops_t;

struct MPI_ABI_Request {
    obj_t obj;
    uint8_t kind;                   /* obj_req_kind_t */
    uint8_t flags;                  /* MPI_REQ_FLAG_* */
    int complete;                   /* 1 when done (acquire/release) */
    obj_req_status_t status;
    struct MPI_ABI_Comm *comm;      /* whose errhandler reports errors (may be NULL) */
    const obj_request_ops_t *ops;
    void (*on_complete)(obj_request_t *req);
    void *cb_arg;                   /* for on_complete */
};

/* Matched-probe messages (MPI_Mprobe/Improbe); the pml owns the contents. */
struct MPI_ABI_Message {
    obj_t obj;
    struct MPI_ABI_Comm *comm;
    struct pml_frag *frag;          /* the dequeued message */
};

static inline void obj_request_init(obj_request_t *req, obj_req_kind_t kind,
                                    const obj_request_ops_t *ops, struct MPI_ABI_Comm *comm)
{
    req->obj.kind = OBJ_REQUEST;
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

static inline bool obj_request_is_complete(const obj_request_t *req)
{
    return rail_atomic_load_acquire(&req->complete) != 0;
}

/* Mark a request done (inside the critical section); req->status must be
 * final.  Nothing may touch req after this returns (a waiting thread may
 * reuse its memory at once). */
static inline void obj_request_complete(obj_request_t *req)
{
    if (req->on_complete) {
        req->on_complete(req);
        return;
    }
    if (RAIL_UNLIKELY(req->flags & OBJ_REQ_FLAG_FREED)) {
        req->ops->release(req);
        return;
    }
    rail_atomic_store_release(&req->complete, 1);
    if (RAIL_UNLIKELY(rail_progress_mt))
        rail_progress_wake();
}

/* A persistent request that is not started (or reported since). */
static inline bool obj_request_inactive(const obj_request_t *req)
{
    return (req->flags & OBJ_REQ_FLAG_PERSISTENT) && !(req->flags & OBJ_REQ_FLAG_ACTIVE);
}

static inline bool obj_request_done_cond(void *arg)
{
    return obj_request_is_complete((const obj_request_t *)arg);
}

/* Progress until req is complete (outside the critical section). */
static inline void obj_request_wait_complete(obj_request_t *req)
{
    if (!obj_request_is_complete(req))
        rail_progress_wait(obj_request_done_cond, req);
}

/* Status of a request that reports nothing (PROC_NULL, inactive). */
static inline void obj_req_status_empty(obj_req_status_t *st)
{
    st->source = MPI_ANY_SOURCE;
    st->tag = MPI_ANY_TAG;
    st->error = MPI_SUCCESS;
    st->cancelled = 0;
    st->count = 0;
    st->msg_len = 0;
}

static inline void obj_req_status_proc_null(obj_req_status_t *st)
{
    st->source = MPI_PROC_NULL;
    st->tag = MPI_ANY_TAG;
    st->error = MPI_SUCCESS;
    st->cancelled = 0;
    st->count = 0;
    st->msg_len = 0;
}

/* ------------------------------------------------------------ obj/request.c */

/* MPI_Status: the count in bytes and the cancelled flag in its hidden
 * fields; an internal status out (MPI_STATUS_IGNORE allowed; MPI_ERROR only
 * with_error, as the multi-request calls write it) and in; the empty one. */
MPI_Count obj_status_get_bytes(const MPI_Status *st);
void obj_status_set_bytes(MPI_Status *st, MPI_Count bytes);
int obj_status_get_cancelled(const MPI_Status *st);
void obj_status_set_cancelled(MPI_Status *st, int flag);
void obj_status_write(MPI_Status *dst, const obj_req_status_t *src, bool with_error);
void obj_status_read(const MPI_Status *src, obj_req_status_t *dst);
void obj_status_write_empty(MPI_Status *st, bool with_error);

/* The error of a complete request, with a detail message (truncation). */
int obj_request_error(const obj_request_t *req);
/* Report a complete request: its status (after the owner's query) into
 * *status, then release it, or make a persistent one inactive; returns
 * its error.  req must not be used after this unless persistent. */
int obj_request_report(obj_request_t *req, MPI_Status *status, bool with_error);
/* After a completed request was reported: a persistent one becomes
 * inactive, any other is released. */
static inline void obj_request_retire(obj_request_t *req)
{
    RAIL_CS_ENTER();
    if (req->flags & OBJ_REQ_FLAG_PERSISTENT)
        req->flags &= (uint8_t)~OBJ_REQ_FLAG_ACTIVE;
    else
        req->ops->release(req);
    RAIL_CS_EXIT();
}
/* *flag = complete (or null or inactive); its status, without releasing. */
void obj_request_peek(obj_request_t *req, int *flag, MPI_Status *status, bool with_error);
/* MPI_Request_free: release now, or when it completes. */
void obj_request_free(obj_request_t *req);
/* MPI_Cancel (MPI_ERR_REQUEST on an inactive persistent request). */
int obj_request_cancel(obj_request_t *req);
/* MPI_Start (MPI_ERR_REQUEST unless persistent and inactive). */
int obj_request_start(obj_request_t *req);
/* A request that is already complete with the given status (PROC_NULL
 * operations, Buffer_iflush with nothing to flush). */
int obj_request_new_complete(const obj_req_status_t *st, bool persistent, obj_request_t **out);

/* Generalized requests (obj/request_greq.c): MPI_Grequest_start and
 * MPI_Grequest_complete (MPI_ERR_REQUEST for another request, or twice). */
int obj_grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       obj_request_t **request);
int obj_grequest_complete(obj_request_t *request);

/* Arrays of requests (NULL entries ignored): wait until all (or one) are
 * complete; test after one progress call; the first complete one (-1). */
void obj_requests_wait(int n, obj_request_t **objs, bool all);
bool obj_requests_test(int n, obj_request_t **objs, bool all);
int obj_requests_first_complete(int n, obj_request_t **objs);

#endif
