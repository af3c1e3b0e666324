/*
 * Requests: MPI_Status in and out, reporting a complete request (its
 * status, then its release, or a persistent one made inactive), waiting
 * for arrays of them, free, cancel, start, and requests complete from the
 * start.  The front end's MPI_Wait/Test families (mpi/request.c) turn
 * handles into these objects and back.
 *
 * MPI_Status hidden fields (mpi.h: int internal[5]):
 *   internal[0], internal[1]  count in bytes, low and high 32 bits
 *   internal[2]               cancelled flag
 */
#include "obj/request.h"
#include "obj/err.h"
#include "base/progress.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ status */

MPI_Count obj_status_get_bytes(const MPI_Status *st)
{
    uint64_t lo = (uint32_t)st->internal[0], hi = (uint32_t)st->internal[1];
    return (MPI_Count)(lo | hi << 32);
}

void obj_status_set_bytes(MPI_Status *st, MPI_Count bytes)
{
    uint64_t v = (uint64_t)bytes;
    st->internal[0] = (int)(uint32_t)v;
    st->internal[1] = (int)(uint32_t)(v >> 32);
}

int obj_status_get_cancelled(const MPI_Status *st)
{
    return st->internal[2] != 0;
}

void obj_status_set_cancelled(MPI_Status *st, int flag)
{
    st->internal[2] = flag != 0;
}

void obj_status_write(MPI_Status *dst, const obj_req_status_t *src, bool with_error)
{
    if (dst == MPI_STATUS_IGNORE)
        return;
    dst->MPI_SOURCE = src->source;
    dst->MPI_TAG = src->tag;
    if (with_error)
        dst->MPI_ERROR = src->error;
    obj_status_set_bytes(dst, src->count);
    dst->internal[2] = src->cancelled;
    dst->internal[3] = 0;
    dst->internal[4] = 0;
}

void obj_status_read(const MPI_Status *src, obj_req_status_t *dst)
{
    dst->source = src->MPI_SOURCE;
    dst->tag = src->MPI_TAG;
    dst->error = src->MPI_ERROR;
    dst->cancelled = obj_status_get_cancelled(src);
    dst->count = obj_status_get_bytes(src);
    dst->msg_len = dst->count;
}

void obj_status_write_empty(MPI_Status *st, bool with_error)
{
    obj_req_status_t e;
    obj_req_status_empty(&e);
    obj_status_write(st, &e, with_error);
}

/* ------------------------------------------------------------ one request */

int obj_request_error(const obj_request_t *req)
{
    const obj_req_status_t *st = &req->status;
    switch (st->error) {
    case MPI_SUCCESS:
        return MPI_SUCCESS;
    case MPI_ERR_TRUNCATE:
        return obj_errf(MPI_ERR_TRUNCATE,
                        "message of %lld bytes from rank %d (tag %d) truncated to %lld-byte "
                        "receive buffer",
                        (long long)st->msg_len, st->source, st->tag, (long long)st->count);
    default:
        return st->error;
    }
}

int obj_request_report(obj_request_t *req, MPI_Status *status, bool with_error)
{
    if (req->ops->query)
        req->ops->query(req);
    obj_status_write(status, &req->status, with_error);
    int err = req->status.error;
    if (err != MPI_SUCCESS)
        err = obj_request_error(req);
    obj_request_retire(req);
    return err;
}

void obj_request_peek(obj_request_t *req, int *flag, MPI_Status *status, bool with_error)
{
    if (!req || obj_request_inactive(req)) {
        *flag = 1;
        obj_status_write_empty(status, with_error);
        return;
    }
    *flag = obj_request_is_complete(req);
    if (*flag) {
        if (req->ops->query)
            req->ops->query(req);
        obj_status_write(status, &req->status, with_error);
    }
}

void obj_request_free(obj_request_t *req)
{
    RAIL_CS_ENTER();
    if (obj_request_inactive(req) || obj_request_is_complete(req))
        req->ops->release(req);
    else
        req->flags |= OBJ_REQ_FLAG_FREED;
    RAIL_CS_EXIT();
}

int obj_request_cancel(obj_request_t *req)
{
    if (obj_request_inactive(req))
        return obj_errf(MPI_ERR_REQUEST, "cannot cancel an inactive persistent request");
    /* A generalized request's cancel_fn runs also after MPI_Grequest_complete,
     * with complete true (MPI-4.1 13.2): only the user knows what to undo. */
    if (req->ops->cancel && (!obj_request_is_complete(req) || req->kind == OBJ_REQ_GREQ))
        return req->ops->cancel(req);
    return MPI_SUCCESS;
}

int obj_request_start(obj_request_t *req)
{
    if (!(req->flags & OBJ_REQ_FLAG_PERSISTENT) || !req->ops->start)
        return obj_errf(MPI_ERR_REQUEST, "MPI_Start needs a persistent request");
    if (req->flags & OBJ_REQ_FLAG_ACTIVE)
        return obj_errf(MPI_ERR_REQUEST, "the persistent request is already active");
    return req->ops->start(req);
}

/* ------------------------------------------------------------ arrays */

typedef struct reqs_arg {
    int n;
    obj_request_t **objs;   /* NULL: null or inactive (ignored) */
    bool all;               /* wait for all (else: any) */
    int first;              /* all: the requests before this one are complete */
} reqs_arg_t;

/* A request stays complete until it is reported, so a wait for all
 * resumes at the first one it found incomplete: a Waitall on requests
 * that complete in order (a window of receives) reads each once, not the
 * whole completed prefix at every poll (np 2 bw, 64 receives of 8-32 B
 * in flight: 11% of the receiver's time went to this scan). */
static bool reqs_done(void *arg)
{
    reqs_arg_t *a = arg;
    for (int i = a->all ? a->first : 0; i < a->n; i++) {
        if (!a->objs[i])
            continue;
        bool c = obj_request_is_complete(a->objs[i]);
        if (a->all && !c) {
            a->first = i;
            return false;
        }
        if (!a->all && c)
            return true;
    }
    if (a->all)
        a->first = a->n;
    return a->all;
}

void obj_requests_wait(int n, obj_request_t **objs, bool all)
{
    reqs_arg_t a = {n, objs, all, 0};
    rail_progress_wait(reqs_done, &a);
}

bool obj_requests_test(int n, obj_request_t **objs, bool all)
{
    reqs_arg_t a = {n, objs, all, 0};
    if (!reqs_done(&a))
        rail_progress();
    return reqs_done(&a);
}

int obj_requests_first_complete(int n, obj_request_t **objs)
{
    for (int i = 0; i < n; i++)
        if (objs[i] && obj_request_is_complete(objs[i]))
            return i;
    return -1;
}

/* ------------------------------------------------------------ complete requests */

static void done_release(obj_request_t *req)
{
    req->obj.kind = OBJ_FREED;
    free(req);
}

static int done_start(obj_request_t *req)
{
    req->flags |= OBJ_REQ_FLAG_ACTIVE;
    return MPI_SUCCESS;
}

static const obj_request_ops_t done_ops = { .release = done_release, .start = done_start };

int obj_request_new_complete(const obj_req_status_t *st, bool persistent, obj_request_t **out)
{
    obj_request_t *req = malloc(sizeof(*req));
    if (!req)
        return MPI_ERR_NO_MEM;
    obj_request_init(req, OBJ_REQ_SEND, &done_ops, NULL);
    req->status = *st;
    req->complete = 1;
    if (persistent)
        req->flags |= OBJ_REQ_FLAG_PERSISTENT;
    *out = req;
    return MPI_SUCCESS;
}
