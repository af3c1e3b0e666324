/*
 * Sends: request set-up, the eager protocol (one btl send of header and
 * data), synchronous-send acknowledgements, eager credits.
 */
#include "pml/pml_internal.h"
#include "accel/accel.h"

#include <string.h>

void pml_req_init_send(pml_request_t *r, const void *buf, MPI_Count count, obj_datatype_t *dt,
                       int dst, int tag, pml_send_mode_t mode, obj_comm_t *comm, unsigned flags)
{
    obj_request_init(&r->req, OBJ_REQ_SEND, &pml_send_ops, comm);
    r->ctx = pml_ctx_of(comm, flags);
    r->peer = NULL;
    r->rank = dst;
    r->tag = tag;
    r->mode = (uint8_t)mode;
    r->state = PML_RS_INACTIVE;
    r->rflags = (uint8_t)((flags & PML_SINGLE_COPY ? PML_RF_SINGLE_COPY : 0) |
                          (flags & PML_EAGER_DEVICE ? PML_RF_EAGER_DEVICE : 0));
    r->hdr_flags = 0;
    r->offset = 0;
    r->xfer = 0;
    r->gets_pending = 0;
    r->error = MPI_SUCCESS;
    r->desc_frag = NULL;
    pml_buf_init(&r->buf, buf, count, dt);
}

/* ------------------------------------------------------------ eager */

static int send_eager(pml_request_t *r, pml_src_t *s, pml_peer_t *peer)
{
    const bool sync = r->mode == PML_SEND_SYNC;
    pml_sync_hdr_t h;
    h.m.type = PML_HDR_EAGER;
    h.m.flags = sync ? PML_HF_SYNC : 0;
    h.m.seq = s->send_seq;
    h.m.src = r->ctx->my_rank;
    h.m.tag = r->tag;
    h.m.ctx = r->ctx->cid;
    h.sreq = (uint64_t)(uintptr_t)r;
    size_t bytes = r->buf.bytes;
    btl_payload_t pl = { "", bytes, NULL, NULL };
    if (bytes) {
        if (r->buf.contig && (!r->buf.device || (peer->btl_flags & BTL_FLAG_DEVICE_MEM))) {
            pl.data = r->buf.contig;
        } else {
            pl.data = NULL;
            pl.pack = pml_buf_pack_cb;
            pl.ctx = r;
            r->offset = 0;
        }
    }
    int rc = peer->btl->send(peer->btl, peer->ep, PML_TAG_MATCH, &h,
                             sync ? sizeof(pml_sync_hdr_t) : sizeof(pml_match_hdr_t), &pl);
    if (rc == RAIL_AGAIN) {
        r->offset = 0;
        return RAIL_AGAIN;
    }
    if (RAIL_UNLIKELY(rc != MPI_SUCCESS)) {
        r->req.status.error = rc;
        pml_req_complete(r);
        return MPI_SUCCESS;
    }
    s->send_seq++;
    peer->credits--;
    if (sync) {
        r->state = PML_RS_WAIT_ACK;
        return MPI_SUCCESS;
    }
    pml_req_complete(r);
    return MPI_SUCCESS;
}

int pml_send_try(pml_request_t *r)
{
    pml_peer_t *peer = r->peer;
    pml_src_t *s = &r->ctx->src[r->rank];
    if (r->buf.bytes <= peer->eager_limit && peer->credits > 0) {
        if (!r->buf.device || r->buf.bytes <= pml_device_eager_max || peer->ipc_small_off ||
            (r->rflags & PML_RF_EAGER_DEVICE))
            return send_eager(r, s, peer);
        /* a small device message: one copy by the receiver where it can
         * open my buffer by IPC, else the two staged copies of eager */
        int rc = pml_rndv_send_rts(r, s, peer, true);
        return rc == PML_RTS_NO_IPC ? send_eager(r, s, peer) : rc;
    }
    return pml_rndv_send_rts(r, s, peer, false);
}

int pml_send_start(pml_request_t *r)
{
    if (RAIL_UNLIKELY(r->rank == MPI_PROC_NULL)) {
        obj_req_status_proc_null(&r->req.status);
        pml_req_complete(r);
        return MPI_SUCCESS;
    }
    pml_peer_t *peer = r->ctx->src[r->rank].peer;
    r->peer = peer;
    if (rail_list_empty(&peer->pending) && pml_send_try(r) != RAIL_AGAIN)
        return MPI_SUCCESS;
    r->state = PML_RS_QUEUED;
    r->pend.kind = PML_PEND_SEND;
    pml_peer_enqueue(peer, &r->pend);
    return MPI_SUCCESS;
}

void pml_cb_ack(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                const void *payload, size_t payload_len)
{
    const pml_ctl_hdr_t *h = hdr;
    pml_request_t *r = (pml_request_t *)(uintptr_t)h->sreq;
    pml_req_complete(r);
}

/* ------------------------------------------------------------ credits */

void pml_credit_flush(pml_peer_t *peer)
{
    if (peer->consumed == 0)
        return;
    pml_credit_hdr_t h = { (uint32_t)peer->consumed, pml_my_world };
    peer->consumed = 0;
    pml_ctl_send(peer, PML_TAG_CREDIT, &h, sizeof(h));
}


void pml_cb_credit(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                   const void *payload, size_t payload_len)
{
    const pml_credit_hdr_t *h = hdr;
    if (h->world >= 0 && h->world < pml_n_peers)
        pml_peers[h->world].credits += (int)h->n;
}

/* ------------------------------------------------------------ entry points */

int pml_send_create(const void *buf, MPI_Count count, obj_datatype_t *dt, int dst, int tag,
                    pml_send_mode_t mode, obj_comm_t *comm, unsigned flags, obj_request_t **req)
{
    RAIL_CS_ENTER();
    pml_request_t *r = pml_req_alloc();
    RAIL_CS_EXIT();
    if (!r)
        return MPI_ERR_NO_MEM;
    pml_req_init_send(r, buf, count, dt, dst, tag, mode, comm, flags);
    pml_req_comm_ref(r);
    if (flags & PML_PERSISTENT) {
        r->req.flags |= OBJ_REQ_FLAG_PERSISTENT;
        r->req.complete = 1;   /* inactive */
    }
    *req = &r->req;
    return MPI_SUCCESS;
}

int pml_isend(const void *buf, MPI_Count count, obj_datatype_t *dt, int dst, int tag,
              pml_send_mode_t mode, obj_comm_t *comm, unsigned flags, obj_request_t **req)
{
    RAIL_CS_ENTER();
    pml_request_t *r = pml_req_alloc();
    if (RAIL_UNLIKELY(!r)) {
        RAIL_CS_EXIT();
        return MPI_ERR_NO_MEM;
    }
    pml_req_init_send(r, buf, count, dt, dst, tag, mode, comm, flags);
    pml_req_comm_ref(r);
    *req = &r->req;
    int rc = pml_send_start(r);
    RAIL_CS_EXIT();
    return rc;
}

/* Blocking send: small contiguous host messages go straight to the btl
 * without a request. */
int pml_send(const void *buf, MPI_Count count, obj_datatype_t *dt, int dst, int tag,
             pml_send_mode_t mode, obj_comm_t *comm, unsigned flags)
{
    if (RAIL_UNLIKELY(dst == MPI_PROC_NULL))
        return MPI_SUCCESS;
    pml_ctx_t *ctx = pml_ctx_of(comm, flags);
    size_t bytes = (size_t)(dt->size * count);
    RAIL_CS_ENTER();
    pml_src_t *s = &ctx->src[dst];
    pml_peer_t *peer = s->peer;
    if (mode != PML_SEND_SYNC && bytes <= peer->eager_limit && peer->credits > 0 &&
        rail_list_empty(&peer->pending) && !accel_any_device_active) {
        const void *p = bytes ? rail_dt_contig_ptr(dt->layout, count, buf) : "";
        if (p) {
            pml_match_hdr_t h = { PML_HDR_EAGER, 0, s->send_seq, ctx->my_rank, tag, ctx->cid };
            btl_payload_t pl = { p, bytes, NULL, NULL };
            int rc = peer->btl->send(peer->btl, peer->ep, PML_TAG_MATCH, &h, sizeof(h), &pl);
            if (RAIL_LIKELY(rc == MPI_SUCCESS)) {
                s->send_seq++;
                peer->credits--;
                RAIL_CS_EXIT();
                return MPI_SUCCESS;
            }
            if (rc != RAIL_AGAIN) {
                RAIL_CS_EXIT();
                return rc;
            }
        }
    }
    RAIL_CS_EXIT();
    pml_request_t r;
    pml_req_init_send(&r, buf, count, dt, dst, tag, mode, comm, flags);
    r.rflags |= PML_RF_STATIC;
    r.req.flags |= OBJ_REQ_FLAG_INTERNAL;
    RAIL_CS_ENTER();
    int rc = pml_send_start(&r);
    RAIL_CS_EXIT();
    if (rc == MPI_SUCCESS) {
        obj_request_wait_complete(&r.req);
        rc = r.req.status.error;
    }
    pml_buf_fini(&r.buf);
    return rc;
}
