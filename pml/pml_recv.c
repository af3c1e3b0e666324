/*
 * Receives: request set-up, posting (or matching an unexpected message at
 * once), eager delivery into the user buffer, matched-probe receives.
 */
#include "pml/pml_internal.h"

#include <stdlib.h>
#include <string.h>

int pml_req_init_recv(pml_request_t *r, void *buf, MPI_Count count, obj_datatype_t *dt, int src,
                      int tag, obj_comm_t *comm, unsigned flags)
{
    obj_request_init(&r->req, OBJ_REQ_RECV, &pml_recv_ops, comm);
    r->ctx = comm ? pml_ctx_of(comm, flags) : NULL;
    r->peer = NULL;
    r->rank = src;
    r->tag = tag;
    r->mode = 0;
    r->state = PML_RS_INACTIVE;
    r->rflags = 0;
    r->hdr_flags = 0;
    r->offset = 0;
    r->xfer = 0;
    r->got = 0;
    r->gets_pending = 0;
    r->error = MPI_SUCCESS;
    r->desc_frag = NULL;
    return pml_buf_init(&r->buf, buf, count, dt);
}

int pml_recv_start(pml_request_t *r)
{
    if (RAIL_UNLIKELY(r->rank == MPI_PROC_NULL)) {
        obj_req_status_proc_null(&r->req.status);
        pml_req_complete(r);
        return MPI_SUCCESS;
    }
    pml_ctx_t *ctx = r->ctx;
    if (!rail_list_empty(&ctx->unexp_all)) {
        pml_frag_t *f = pml_unexp_find(ctx, r->rank, r->tag, true);
        if (f) {
            pml_inmsg_t m = { .hdr = &f->hdr, .sreq = f->sreq, .msg_len = f->msg_len,
                              .data = f->data, .data_len = f->data_len, .peer = f->peer,
                              .frag = f };
            pml_recv_matched(r, &m);
            return MPI_SUCCESS;
        }
    }
    r->state = PML_RS_POSTED;
    r->post_seq = ctx->post_seq++;
    if (r->rank == MPI_ANY_SOURCE)
        rail_list_append(&ctx->posted_any, &r->pend.item);
    else
        rail_list_append(&ctx->src[r->rank].posted, &r->pend.item);
    return MPI_SUCCESS;
}

int pml_recv_create(void *buf, MPI_Count count, obj_datatype_t *dt, int src, int tag,
                    obj_comm_t *comm, unsigned flags, obj_request_t **req)
{
    RAIL_CS_ENTER();
    pml_request_t *r = pml_req_alloc();
    RAIL_CS_EXIT();
    if (!r)
        return MPI_ERR_NO_MEM;
    pml_req_init_recv(r, buf, count, dt, src, tag, comm, flags);
    pml_req_comm_ref(r);
    if (flags & PML_PERSISTENT) {
        r->req.flags |= OBJ_REQ_FLAG_PERSISTENT;
        r->req.complete = 1;   /* inactive */
    }
    *req = &r->req;
    return MPI_SUCCESS;
}

int pml_irecv(void *buf, MPI_Count count, obj_datatype_t *dt, int src, int tag, obj_comm_t *comm,
              unsigned flags, obj_request_t **req)
{
    RAIL_CS_ENTER();
    pml_request_t *r = pml_req_alloc();
    if (RAIL_UNLIKELY(!r)) {
        RAIL_CS_EXIT();
        return MPI_ERR_NO_MEM;
    }
    pml_req_init_recv(r, buf, count, dt, src, tag, comm, flags);
    pml_req_comm_ref(r);
    *req = &r->req;
    int rc = pml_recv_start(r);
    RAIL_CS_EXIT();
    return rc;
}

int pml_recv(void *buf, MPI_Count count, obj_datatype_t *dt, int src, int tag, obj_comm_t *comm,
             unsigned flags, obj_req_status_t *st)
{
    pml_request_t r;
    pml_req_init_recv(&r, buf, count, dt, src, tag, comm, flags);
    r.rflags |= PML_RF_STATIC;
    r.req.flags |= OBJ_REQ_FLAG_INTERNAL;
    RAIL_CS_ENTER();
    pml_recv_start(&r);
    RAIL_CS_EXIT();
    obj_request_wait_complete(&r.req);
    if (st)
        *st = r.req.status;
    pml_buf_fini(&r.buf);
    return r.req.status.error;
}

int pml_imrecv(void *buf, MPI_Count count, obj_datatype_t *dt, obj_message_t *msg,
               obj_request_t **req)
{
    RAIL_CS_ENTER();
    pml_request_t *r = pml_req_alloc();
    if (RAIL_UNLIKELY(!r)) {
        RAIL_CS_EXIT();
        return MPI_ERR_NO_MEM;
    }
    if (!msg) {
        /* MPI_MESSAGE_NO_PROC */
        pml_req_init_recv(r, buf, count, dt, MPI_PROC_NULL, MPI_ANY_TAG, NULL, 0);
        *req = &r->req;
        obj_req_status_proc_null(&r->req.status);
        pml_req_complete(r);
        RAIL_CS_EXIT();
        return MPI_SUCCESS;
    }
    pml_frag_t *f = msg->frag;
    pml_req_init_recv(r, buf, count, dt, f->hdr.src, f->hdr.tag, msg->comm,
                      (f->hdr.ctx & PML_CONTEXT_COLL_BIT) ? PML_COLL : 0);
    pml_req_comm_ref(r);
    *req = &r->req;
    msg->obj.kind = OBJ_FREED;
    free(msg);
    pml_inmsg_t m = { .hdr = &f->hdr, .sreq = f->sreq, .msg_len = f->msg_len, .data = f->data,
                      .data_len = f->data_len, .peer = f->peer, .frag = f };
    pml_recv_matched(r, &m);
    RAIL_CS_EXIT();
    return MPI_SUCCESS;
}
