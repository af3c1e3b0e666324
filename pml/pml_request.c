/*
 * pml requests as MPI requests: release, cancel, persistent start, and
 * waiting for internal requests (collectives, the front end's helpers).
 */
#include "pml/pml_internal.h"

static void pml_req_release(obj_request_t *req)
{
    pml_request_t *r = (pml_request_t *)req;
    pml_buf_fini(&r->buf);
    pml_req_comm_unref(r);
    if (!(r->rflags & PML_RF_STATIC))
        pml_req_free(r);
}

static int pml_req_cancel(obj_request_t *req)
{
    pml_request_t *r = (pml_request_t *)req;
    RAIL_CS_ENTER();
    if (r->state == PML_RS_POSTED || r->state == PML_RS_QUEUED) {
        /* Not matched / nothing sent yet: take it back. */
        rail_list_remove(&r->pend.item);
        r->req.status.cancelled = 1;
        r->req.status.count = 0;
        pml_req_complete(r);
    }
    RAIL_CS_EXIT();
    return MPI_SUCCESS;
}

static int pml_req_start(obj_request_t *req)
{
    pml_request_t *r = (pml_request_t *)req;
    int rc;
    RAIL_CS_ENTER();
    uint8_t keep = r->rflags & (PML_RF_COMMREF | PML_RF_STATIC);
    obj_comm_t *comm = req->comm;
    uint8_t flags = req->flags;
    obj_req_kind_t kind = (obj_req_kind_t)req->kind;
    const obj_request_ops_t *ops = req->ops;
    obj_request_init(req, kind, ops, comm);
    req->flags = flags | OBJ_REQ_FLAG_ACTIVE;
    r->state = PML_RS_INACTIVE;
    r->offset = 0;
    r->xfer = 0;
    r->got = 0;
    r->error = MPI_SUCCESS;
    r->hdr_flags = 0;
    r->rflags = keep;
    r->desc_frag = NULL;
    rc = kind == OBJ_REQ_SEND ? pml_send_start(r) : pml_recv_start(r);
    RAIL_CS_EXIT();
    return rc;
}

const obj_request_ops_t pml_send_ops = {
    .release = pml_req_release,
    .cancel = pml_req_cancel,
    .start = pml_req_start,
};

const obj_request_ops_t pml_recv_ops = {
    .release = pml_req_release,
    .cancel = pml_req_cancel,
    .start = pml_req_start,
};

int pml_start(obj_request_t *req)
{
    if (req->flags & OBJ_REQ_FLAG_PERSISTENT)
        return req->ops->start(req);
    pml_request_t *r = (pml_request_t *)req;
    RAIL_CS_ENTER();
    int rc = req->kind == OBJ_REQ_SEND ? pml_send_start(r) : pml_recv_start(r);
    RAIL_CS_EXIT();
    return rc;
}

int pml_wait(obj_request_t *req, obj_req_status_t *st)
{
    obj_request_wait_complete(req);
    if (req->ops->query)
        req->ops->query(req);
    int rc = req->status.error;
    if (st)
        *st = req->status;
    obj_request_retire(req);
    return rc;
}

typedef struct waitall_arg {
    int n;
    obj_request_t **reqs;
} waitall_arg_t;

static bool all_done(void *arg)
{
    waitall_arg_t *w = arg;
    for (int i = 0; i < w->n; i++)
        if (w->reqs[i] && !obj_request_is_complete(w->reqs[i]))
            return false;
    return true;
}

int pml_waitall(int n, obj_request_t **reqs)
{
    waitall_arg_t w = { n, reqs };
    rail_progress_wait(all_done, &w);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!reqs[i])
            continue;
        int e = pml_wait(reqs[i], NULL);
        if (e != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = e;
        reqs[i] = NULL;
    }
    return rc;
}

void pml_request_free(obj_request_t *req)
{
    RAIL_CS_ENTER();
    if (obj_request_is_complete(req))
        req->ops->release(req);
    else
        req->flags |= OBJ_REQ_FLAG_FREED;
    RAIL_CS_EXIT();
}
