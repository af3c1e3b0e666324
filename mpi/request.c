/*
 * Requests at the API: Wait/Test and their any/some/all forms,
 * Request_get_status (+ MPI-4.1 any/some/all), Request_free, Cancel,
 * Start/Startall, and the MPI_Status conversions.
 *
 * MPI_Status hidden fields (mpi.h: int internal[5]):
 *   internal[0], internal[1]  count in bytes, low and high 32 bits
 *   internal[2]               cancelled flag
 */
#include "base/rail.h"
#include "base/progress.h"
#include "mpi/mpi_err.h"
#include "mpi/mpi_status.h"
#include "obj/errcode.h"
#include "obj/request.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ status */

MPI_Count mpi_status_get_bytes(const MPI_Status *st)
{
    uint64_t lo = (uint32_t)st->internal[0], hi = (uint32_t)st->internal[1];
    return (MPI_Count)(lo | hi << 32);
}

void mpi_status_set_bytes(MPI_Status *st, MPI_Count bytes)
{
    uint64_t v = (uint64_t)bytes;
    st->internal[0] = (int)(uint32_t)v;
    st->internal[1] = (int)(uint32_t)(v >> 32);
}

int mpi_status_get_cancelled_flag(const MPI_Status *st)
{
    return st->internal[2] != 0;
}

void mpi_status_set_cancelled_flag(MPI_Status *st, int flag)
{
    st->internal[2] = flag != 0;
}

void mpi_status_write(MPI_Status *dst, const obj_req_status_t *src, bool with_error)
{
    if (dst == MPI_STATUS_IGNORE)
        return;
    dst->MPI_SOURCE = src->source;
    dst->MPI_TAG = src->tag;
    if (with_error)
        dst->MPI_ERROR = src->error;
    mpi_status_set_bytes(dst, src->count);
    dst->internal[2] = src->cancelled;
    dst->internal[3] = 0;
    dst->internal[4] = 0;
}

void mpi_status_read(const MPI_Status *src, obj_req_status_t *dst)
{
    dst->source = src->MPI_SOURCE;
    dst->tag = src->MPI_TAG;
    dst->error = src->MPI_ERROR;
    dst->cancelled = mpi_status_get_cancelled_flag(src);
    dst->count = mpi_status_get_bytes(src);
    dst->msg_len = dst->count;
}

static void status_empty_out(MPI_Status *st, bool with_error)
{
    obj_req_status_t e;
    obj_req_status_empty(&e);
    mpi_status_write(st, &e, with_error);
}

/* ------------------------------------------------------------ errors */

int mpi_request_error(obj_request_t *req)
{
    const obj_req_status_t *st = &req->status;
    if (st->error != MPI_SUCCESS)
        mpi_err_use_comm(req->comm);
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

/* ------------------------------------------------------------ one request */

static inline bool req_inactive(const obj_request_t *req)
{
    return (req->flags & OBJ_REQ_FLAG_PERSISTENT) && !(req->flags & OBJ_REQ_FLAG_ACTIVE);
}

/* Report a complete request and release it (or make it inactive). */
static int request_report(MPI_Request *handle, obj_request_t *req, MPI_Status *status,
                          bool with_error)
{
    if (req->ops->query)
        req->ops->query(req);
    mpi_status_write(status, &req->status, with_error);
    int err = req->status.error;
    if (err != MPI_SUCCESS)
        err = mpi_request_error(req);
    RAIL_CS_ENTER();
    if (req->flags & OBJ_REQ_FLAG_PERSISTENT) {
        req->flags &= (uint8_t)~OBJ_REQ_FLAG_ACTIVE;
    } else {
        req->ops->release(req);
        *handle = MPI_REQUEST_NULL;
    }
    RAIL_CS_EXIT();
    return err;
}

int mpi_request_wait_one(MPI_Request *handle, MPI_Status *status)
{
    obj_request_t *req = (obj_request_t *)obj_of_handle(*handle);
    if (req_inactive(req)) {
        status_empty_out(status, false);
        return MPI_SUCCESS;
    }
    obj_request_wait_complete(req);
    return request_report(handle, req, status, false);
}

/* Look up a handle of an array: NULL for MPI_REQUEST_NULL. */
static int lookup_at(const MPI_Request *reqs, int i, obj_request_t **out)
{
    int rc = obj_request_lookup_null(reqs[i], out);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "invalid request in array_of_requests[%d]", i);
    return MPI_SUCCESS;
}

int mpii_wait(MPI_Request *request, MPI_Status *status)
{
    obj_request_t *req = NULL;
    int rc = obj_request_lookup_null(*request, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!req) {
        status_empty_out(status, false);
        return MPI_SUCCESS;
    }
    return mpi_request_wait_one(request, status);
}

int mpii_test(MPI_Request *request, int *flag, MPI_Status *status)
{
    obj_request_t *req = NULL;
    int rc = obj_request_lookup_null(*request, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!req || req_inactive(req)) {
        *flag = 1;
        status_empty_out(status, false);
        return MPI_SUCCESS;
    }
    if (!obj_request_is_complete(req))
        rail_progress();
    if (!obj_request_is_complete(req)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    return request_report(request, req, status, false);
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

/* Objects of the array; *active: how many are non-null and active. */
static int reqs_objs(int n, const MPI_Request reqs[], obj_request_t **objs, int *active)
{
    *active = 0;
    for (int i = 0; i < n; i++) {
        int rc = lookup_at(reqs, i, &objs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
        if (objs[i] && req_inactive(objs[i]))
            objs[i] = NULL;
        if (objs[i])
            (*active)++;
    }
    return MPI_SUCCESS;
}

#define REQS_STACK 32

static obj_request_t **objs_alloc(int n, obj_request_t **stack)
{
    if (n <= REQS_STACK)
        return stack;
    return malloc((size_t)n * sizeof(obj_request_t *));
}

static void objs_free(obj_request_t **objs, obj_request_t **stack)
{
    if (objs != stack)
        free(objs);
}

static MPI_Status *status_at(MPI_Status *arr, int i)
{
    return arr == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &arr[i];
}

/* MPI_ERR_IN_STATUS with a message naming the first failed request. */
static int in_status_error(int failed, int total, int first, int first_err)
{
    return obj_errf(MPI_ERR_IN_STATUS,
                    "%d of %d requests failed (the first, array_of_requests[%d], with %s); see "
                    "the MPI_ERROR field of the statuses",
                    failed, total, first, obj_errcode_class_name(obj_errcode_class(first_err)));
}

/* Report every request of objs (all complete). */
static int report_all(int n, MPI_Request reqs[], obj_request_t **objs, MPI_Status statuses[])
{
    int failed = 0, first = -1, first_err = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!objs[i]) {
            status_empty_out(status_at(statuses, i), true);
            continue;
        }
        int e = request_report(&reqs[i], objs[i], status_at(statuses, i), true);
        if (e != MPI_SUCCESS && failed++ == 0) {
            first = i;
            first_err = e;
        }
    }
    return failed ? in_status_error(failed, n, first, first_err) : MPI_SUCCESS;
}

int mpii_waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    obj_request_t *stack[REQS_STACK];
    obj_request_t **objs = objs_alloc(count, stack);
    int active, rc;
    if (!objs)
        return MPI_ERR_NO_MEM;
    rc = reqs_objs(count, array_of_requests, objs, &active);
    if (rc == MPI_SUCCESS) {
        reqs_arg_t a = { count, objs, true };
        rail_progress_wait(reqs_done, &a);
        rc = report_all(count, array_of_requests, objs, array_of_statuses);
    }
    objs_free(objs, stack);
    return rc;
}

int mpii_testall(int count, MPI_Request array_of_requests[], int *flag,
                 MPI_Status array_of_statuses[])
{
    obj_request_t *stack[REQS_STACK];
    obj_request_t **objs = objs_alloc(count, stack);
    int active, rc;
    if (!objs)
        return MPI_ERR_NO_MEM;
    rc = reqs_objs(count, array_of_requests, objs, &active);
    if (rc == MPI_SUCCESS) {
        reqs_arg_t a = { count, objs, true };
        if (!reqs_done(&a))
            rail_progress();
        *flag = reqs_done(&a);
        if (*flag)
            rc = report_all(count, array_of_requests, objs, array_of_statuses);
    }
    objs_free(objs, stack);
    return rc;
}

static int first_complete(int n, obj_request_t **objs)
{
    for (int i = 0; i < n; i++)
        if (objs[i] && obj_request_is_complete(objs[i]))
            return i;
    return -1;
}

static int any_common(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status,
                      bool wait)
{
    obj_request_t *stack[REQS_STACK];
    obj_request_t **objs = objs_alloc(count, stack);
    int active, rc;
    if (!objs)
        return MPI_ERR_NO_MEM;
    rc = reqs_objs(count, reqs, objs, &active);
    if (rc != MPI_SUCCESS)
        goto out;
    if (active == 0) {
        *index = MPI_UNDEFINED;
        if (flag)
            *flag = 1;
        status_empty_out(status, false);
        goto out;
    }
    reqs_arg_t a = { count, objs, false };
    if (wait)
        rail_progress_wait(reqs_done, &a);
    else if (!reqs_done(&a))
        rail_progress();
    int i = first_complete(count, objs);
    if (flag)
        *flag = i >= 0;
    if (i < 0) {
        *index = MPI_UNDEFINED;
        goto out;
    }
    *index = i;
    rc = request_report(&reqs[i], objs[i], status, false);
out:
    objs_free(objs, stack);
    return rc;
}

int mpii_waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    return any_common(count, array_of_requests, index, NULL, status, true);
}

int mpii_testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                 MPI_Status *status)
{
    return any_common(count, array_of_requests, index, flag, status, false);
}

static int some_common(int incount, MPI_Request reqs[], int *outcount, int indices[],
                       MPI_Status statuses[], bool wait)
{
    obj_request_t *stack[REQS_STACK];
    obj_request_t **objs = objs_alloc(incount, stack);
    int active, rc;
    if (!objs)
        return MPI_ERR_NO_MEM;
    rc = reqs_objs(incount, reqs, objs, &active);
    if (rc != MPI_SUCCESS)
        goto out;
    if (active == 0) {
        *outcount = MPI_UNDEFINED;
        goto out;
    }
    reqs_arg_t a = { incount, objs, false };
    if (wait)
        rail_progress_wait(reqs_done, &a);
    else if (!reqs_done(&a))
        rail_progress();
    int n = 0, failed = 0, first = -1, first_err = MPI_SUCCESS;
    for (int i = 0; i < incount; i++) {
        if (!objs[i] || !obj_request_is_complete(objs[i]))
            continue;
        indices[n] = i;
        int e = request_report(&reqs[i], objs[i], status_at(statuses, n), true);
        if (e != MPI_SUCCESS && failed++ == 0) {
            first = i;
            first_err = e;
        }
        n++;
    }
    *outcount = n;
    if (failed)
        rc = in_status_error(failed, n, first, first_err);
out:
    objs_free(objs, stack);
    return rc;
}

int mpii_waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[])
{
    return some_common(incount, array_of_requests, outcount, array_of_indices,
                       array_of_statuses, true);
}

int mpii_testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[])
{
    return some_common(incount, array_of_requests, outcount, array_of_indices,
                       array_of_statuses, false);
}

/* ------------------------------------------------------------ get_status */

/* Status of a request without releasing it; *flag: complete. */
static void peek_status(obj_request_t *req, int *flag, MPI_Status *status, bool with_error)
{
    if (!req || req_inactive(req)) {
        *flag = 1;
        status_empty_out(status, with_error);
        return;
    }
    *flag = obj_request_is_complete(req);
    if (*flag) {
        if (req->ops->query)
            req->ops->query(req);
        mpi_status_write(status, &req->status, with_error);
    }
}

int mpii_request_get_status(obj_request_t *request, int *flag, MPI_Status *status)
{
    if (request && !req_inactive(request) && !obj_request_is_complete(request))
        rail_progress();
    peek_status(request, flag, status, false);
    return MPI_SUCCESS;
}

int mpii_request_get_status_any(int count, const MPI_Request array_of_requests[], int *index,
                                int *flag, MPI_Status *status)
{
    obj_request_t *stack[REQS_STACK];
    obj_request_t **objs = objs_alloc(count, stack);
    int active, rc;
    if (!objs)
        return MPI_ERR_NO_MEM;
    rc = reqs_objs(count, array_of_requests, objs, &active);
    if (rc == MPI_SUCCESS) {
        if (active == 0) {
            *index = MPI_UNDEFINED;
            *flag = 1;
            status_empty_out(status, false);
        } else {
            if (first_complete(count, objs) < 0)
                rail_progress();
            int i = first_complete(count, objs);
            *flag = i >= 0;
            *index = i >= 0 ? i : MPI_UNDEFINED;
            if (i >= 0)
                peek_status(objs[i], flag, status, false);
        }
    }
    objs_free(objs, stack);
    return rc;
}

int mpii_request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                MPI_Status array_of_statuses[])
{
    obj_request_t *stack[REQS_STACK];
    obj_request_t **objs = objs_alloc(count, stack);
    int active, rc;
    if (!objs)
        return MPI_ERR_NO_MEM;
    rc = reqs_objs(count, array_of_requests, objs, &active);
    if (rc == MPI_SUCCESS) {
        reqs_arg_t a = { count, objs, true };
        if (!reqs_done(&a))
            rail_progress();
        *flag = reqs_done(&a);
        int failed = 0, first = -1, first_err = MPI_SUCCESS;
        for (int i = 0; *flag && i < count; i++) {
            int f;
            peek_status(objs[i], &f, status_at(array_of_statuses, i), true);
            if (objs[i] && objs[i]->status.error != MPI_SUCCESS && failed++ == 0) {
                first = i;
                first_err = objs[i]->status.error;
            }
        }
        if (failed)
            rc = in_status_error(failed, count, first, first_err);
    }
    objs_free(objs, stack);
    return rc;
}

int mpii_request_get_status_some(int incount, const MPI_Request array_of_requests[],
                                 int *outcount, int array_of_indices[],
                                 MPI_Status array_of_statuses[])
{
    obj_request_t *stack[REQS_STACK];
    obj_request_t **objs = objs_alloc(incount, stack);
    int active, rc;
    if (!objs)
        return MPI_ERR_NO_MEM;
    rc = reqs_objs(incount, array_of_requests, objs, &active);
    if (rc == MPI_SUCCESS) {
        if (active == 0) {
            *outcount = MPI_UNDEFINED;
        } else {
            if (first_complete(incount, objs) < 0)
                rail_progress();
            int n = 0, failed = 0, first = -1, first_err = MPI_SUCCESS;
            for (int i = 0; i < incount; i++) {
                if (!objs[i] || !obj_request_is_complete(objs[i]))
                    continue;
                int f;
                array_of_indices[n] = i;
                peek_status(objs[i], &f, status_at(array_of_statuses, n), true);
                if (objs[i]->status.error != MPI_SUCCESS && failed++ == 0) {
                    first = i;
                    first_err = objs[i]->status.error;
                }
                n++;
            }
            *outcount = n;
            if (failed)
                rc = in_status_error(failed, n, first, first_err);
        }
    }
    objs_free(objs, stack);
    return rc;
}

/* ------------------------------------------------------------ free, cancel, start */

int mpii_request_free(MPI_Request *request)
{
    obj_request_t *req = NULL;
    int rc = obj_request_lookup(*request, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    RAIL_CS_ENTER();
    if (req_inactive(req) || obj_request_is_complete(req))
        req->ops->release(req);
    else
        req->flags |= OBJ_REQ_FLAG_FREED;
    RAIL_CS_EXIT();
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int mpii_cancel(MPI_Request *request)
{
    obj_request_t *req = NULL;
    int rc = obj_request_lookup(*request, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    if (req_inactive(req))
        return obj_errf(MPI_ERR_REQUEST, "cannot cancel an inactive persistent request");
    if (req->ops->cancel && !obj_request_is_complete(req))
        return req->ops->cancel(req);
    return MPI_SUCCESS;
}

static int start_one(MPI_Request *handle, int index)
{
    obj_request_t *req = NULL;
    int rc = obj_request_lookup(*handle, &req);
    if (rc != MPI_SUCCESS) {
        if (index >= 0)
            return obj_errf(rc, "invalid request in array_of_requests[%d]", index);
        return rc;
    }
    if (!(req->flags & OBJ_REQ_FLAG_PERSISTENT) || !req->ops->start)
        return obj_errf(MPI_ERR_REQUEST, "MPI_Start needs a persistent request");
    if (req->flags & OBJ_REQ_FLAG_ACTIVE)
        return obj_errf(MPI_ERR_REQUEST, "the persistent request is already active");
    return req->ops->start(req);
}

int mpii_start(MPI_Request *request)
{
    return start_one(request, -1);
}

int mpii_startall(int count, MPI_Request array_of_requests[])
{
    for (int i = 0; i < count; i++) {
        int rc = start_one(&array_of_requests[i], i);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
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

int mpi_request_new_complete(const obj_req_status_t *st, bool persistent, MPI_Request *handle)
{
    obj_request_t *req = malloc(sizeof(*req));
    if (!req)
        return MPI_ERR_NO_MEM;
    obj_request_init(req, OBJ_REQ_SEND, &done_ops, NULL);
    req->status = *st;
    req->complete = 1;
    if (persistent)
        req->flags |= OBJ_REQ_FLAG_PERSISTENT;
    *handle = (MPI_Request)req;
    return MPI_SUCCESS;
}
