/*
 * Requests at the API: Wait/Test and their any/some/all forms,
 * Request_get_status (+ MPI-4.1 any/some/all), Request_free, Cancel,
 * Start/Startall: handles and arrays of them turned into the request
 * objects of obj/request.c and back.
 */
#include "base/rail.h"
#include "base/progress.h"
#include "mpi/mpi_err.h"
#include "mpi/mpi_status.h"
#include "obj/errcode.h"
#include "obj/request.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ one request */

/* Report a complete request and release it (or make it inactive); an
 * error goes to its communicator's errhandler. */
static int request_report(MPI_Request *handle, obj_request_t *req, MPI_Status *status,
                          bool with_error)
{
    obj_comm_t *comm = req->comm;
    bool persistent = req->flags & OBJ_REQ_FLAG_PERSISTENT;
    int err = obj_request_report(req, status, with_error);
    if (err != MPI_SUCCESS)
        mpi_err_use_comm(comm);
    if (!persistent)
        *handle = MPI_REQUEST_NULL;
    return err;
}

int mpi_request_wait_one(MPI_Request *handle, MPI_Status *status)
{
    obj_request_t *req = (obj_request_t *)obj_of_handle(*handle);
    if (obj_request_inactive(req)) {
        obj_status_write_empty(status, false);
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
        obj_status_write_empty(status, false);
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
    if (!req || obj_request_inactive(req)) {
        *flag = 1;
        obj_status_write_empty(status, false);
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

/* Objects of the array; *active: how many are non-null and active. */
static int reqs_objs(int n, const MPI_Request reqs[], obj_request_t **objs, int *active)
{
    *active = 0;
    for (int i = 0; i < n; i++) {
        int rc = lookup_at(reqs, i, &objs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
        if (objs[i] && obj_request_inactive(objs[i]))
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
            obj_status_write_empty(status_at(statuses, i), true);
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
        obj_requests_wait(count, objs, true);
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
        *flag = obj_requests_test(count, objs, true);
        if (*flag)
            rc = report_all(count, array_of_requests, objs, array_of_statuses);
    }
    objs_free(objs, stack);
    return rc;
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
        obj_status_write_empty(status, false);
        goto out;
    }
    if (wait)
        obj_requests_wait(count, objs, false);
    else
        obj_requests_test(count, objs, false);
    int i = obj_requests_first_complete(count, objs);
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
    if (wait)
        obj_requests_wait(incount, objs, false);
    else
        obj_requests_test(incount, objs, false);
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

int mpii_request_get_status(obj_request_t *request, int *flag, MPI_Status *status)
{
    if (request && !obj_request_inactive(request) && !obj_request_is_complete(request))
        rail_progress();
    obj_request_peek(request, flag, status, false);
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
            obj_status_write_empty(status, false);
        } else {
            if (obj_requests_first_complete(count, objs) < 0)
                rail_progress();
            int i = obj_requests_first_complete(count, objs);
            *flag = i >= 0;
            *index = i >= 0 ? i : MPI_UNDEFINED;
            if (i >= 0)
                obj_request_peek(objs[i], flag, status, false);
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
        *flag = obj_requests_test(count, objs, true);
        int failed = 0, first = -1, first_err = MPI_SUCCESS;
        for (int i = 0; *flag && i < count; i++) {
            int f;
            obj_request_peek(objs[i], &f, status_at(array_of_statuses, i), true);
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
            if (obj_requests_first_complete(incount, objs) < 0)
                rail_progress();
            int n = 0, failed = 0, first = -1, first_err = MPI_SUCCESS;
            for (int i = 0; i < incount; i++) {
                if (!objs[i] || !obj_request_is_complete(objs[i]))
                    continue;
                int f;
                array_of_indices[n] = i;
                obj_request_peek(objs[i], &f, status_at(array_of_statuses, n), true);
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
    obj_request_free(req);
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int mpii_cancel(MPI_Request *request)
{
    obj_request_t *req = NULL;
    int rc = obj_request_lookup(*request, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    return obj_request_cancel(req);
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
    return obj_request_start(req);
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

int mpi_request_new_complete(const obj_req_status_t *st, bool persistent, MPI_Request *handle)
{
    obj_request_t *req;
    int rc = obj_request_new_complete(st, persistent, &req);
    if (rc == MPI_SUCCESS)
        *handle = obj_request_handle(req);
    return rc;
}

/* ------------------------------------------------------------ generalized requests */

int mpii_grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    obj_request_t *req;
    int rc = obj_grequest_start(query_fn, free_fn, cancel_fn, extra_state, &req);
    if (rc == MPI_SUCCESS)
        *request = obj_request_handle(req);
    return rc;
}

int mpii_grequest_complete(obj_request_t *request)
{
    return obj_grequest_complete(request);
}
