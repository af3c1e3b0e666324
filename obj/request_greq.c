/*
 * Generalized requests (MPI_Grequest_start / MPI_Grequest_complete).
 *
 * The user's query_fn fills the status when Wait/Test (or
 * Request_get_status) report the request; free_fn runs when the request is
 * released (after the report, or at completion when Request_free came
 * first); cancel_fn runs on MPI_Cancel with complete = whether
 * Grequest_complete was already called.
 */
#include "obj/request.h"
#include "obj/err.h"
#include "base/progress.h"

#include <stdlib.h>

typedef struct obj_greq {
    obj_request_t req;
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
} obj_greq_t;

static void greq_release(obj_request_t *req)
{
    obj_greq_t *g = (obj_greq_t *)req;
    if (g->free_fn)
        g->free_fn(g->extra_state);
    req->obj.kind = OBJ_FREED;
    free(g);
}

static int greq_cancel(obj_request_t *req)
{
    obj_greq_t *g = (obj_greq_t *)req;
    if (!g->cancel_fn)
        return MPI_SUCCESS;
    return g->cancel_fn(g->extra_state, obj_request_is_complete(req));
}

static int greq_query(obj_request_t *req)
{
    obj_greq_t *g = (obj_greq_t *)req;
    if (!g->query_fn)
        return MPI_SUCCESS;
    MPI_Status st;
    st.MPI_SOURCE = MPI_UNDEFINED;
    st.MPI_TAG = MPI_UNDEFINED;
    st.MPI_ERROR = MPI_SUCCESS;
    obj_status_set_bytes(&st, 0);
    obj_status_set_cancelled(&st, 0);
    int rc = g->query_fn(g->extra_state, &st);
    obj_status_read(&st, &req->status);
    req->status.error = rc != MPI_SUCCESS ? rc : MPI_SUCCESS;
    return rc;
}

static const obj_request_ops_t greq_ops = {
    .release = greq_release,
    .cancel = greq_cancel,
    .query = greq_query,
};

int obj_grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       obj_request_t **request)
{
    obj_greq_t *g = malloc(sizeof(*g));
    if (!g)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for a generalized request");
    obj_request_init(&g->req, OBJ_REQ_GREQ, &greq_ops, NULL);
    g->query_fn = query_fn;
    g->free_fn = free_fn;
    g->cancel_fn = cancel_fn;
    g->extra_state = extra_state;
    *request = &g->req;
    return MPI_SUCCESS;
}

int obj_grequest_complete(obj_request_t *request)
{
    if (request->kind != OBJ_REQ_GREQ)
        return obj_errf(MPI_ERR_REQUEST, "MPI_Grequest_complete needs a generalized request");
    if (obj_request_is_complete(request))
        return obj_errf(MPI_ERR_REQUEST, "generalized request completed twice");
    RAIL_CS_ENTER();
    obj_request_complete(request);
    RAIL_CS_EXIT();
    rail_progress_wake();
    return MPI_SUCCESS;
}
