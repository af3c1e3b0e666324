/*
 * Matching: arrivals in sequence order per (context, source); posted
 * receives per source plus one list for MPI_ANY_SOURCE (the earlier posted
 * of the two candidates wins, by post number); unexpected messages per
 * source plus one arrival-ordered list for wildcard receives and probes.
 */
#include "pml/pml_internal.h"

#include <stdlib.h>
#include <string.h>

static inline bool tag_matches(int want, int have)
{
    return want == have || (want == MPI_ANY_TAG && have >= 0);
}

/* First receive in l (linked by pend.item) that accepts tag. */
static pml_request_t *posted_first(rail_list_t *l, int tag)
{
    for (rail_list_item_t *it = rail_list_first(l); it; it = rail_list_next(l, it)) {
        pml_request_t *r = rail_container_of(it, pml_request_t, pend.item);
        if (tag_matches(r->tag, tag))
            return r;
    }
    return NULL;
}

static inline pml_request_t *match_posted(pml_ctx_t *ctx, pml_src_t *s, int tag)
{
    pml_request_t *r = rail_list_empty(&s->posted) ? NULL : posted_first(&s->posted, tag);
    if (RAIL_LIKELY(rail_list_empty(&ctx->posted_any)))
        return r;
    pml_request_t *a = posted_first(&ctx->posted_any, tag);
    if (!r)
        return a;
    if (a && (int32_t)(a->post_seq - r->post_seq) < 0)
        return a;
    return r;
}

static void unexp_add(pml_ctx_t *ctx, pml_src_t *s, pml_frag_t *f)
{
    rail_list_append(&s->unexp, &f->src_item);
    rail_list_append(&ctx->unexp_all, &f->all_item);
}

/* pml_match_incoming, inlined into the arrival callback (every eager
 * message of a blocking receive runs it: a call less per message). */
static inline __attribute__((always_inline)) void match_incoming(pml_ctx_t *ctx, pml_src_t *s,
                                                                 const pml_inmsg_t *m)
{
    s->recv_seq++;
    pml_request_t *r = match_posted(ctx, s, m->hdr->tag);
    if (r) {
        rail_list_remove(&r->pend.item);
        pml_recv_matched(r, m);
    } else {
        pml_frag_t *f = m->frag ? m->frag : pml_frag_from_inmsg(m);
        if (f)
            unexp_add(ctx, s, f);
    }
    /* Messages that arrived ahead of this one may now be next. */
    rail_list_item_t *it;
    while ((it = rail_list_first(&s->ooo)) != NULL) {
        pml_frag_t *f = rail_container_of(it, pml_frag_t, src_item);
        if (f->hdr.seq != s->recv_seq)
            break;
        rail_list_remove(it);
        pml_inmsg_t n = { .hdr = &f->hdr, .sreq = f->sreq, .msg_len = f->msg_len,
                          .data = f->data, .data_len = f->data_len, .peer = f->peer, .frag = f };
        s->recv_seq++;
        r = match_posted(ctx, s, f->hdr.tag);
        if (r) {
            rail_list_remove(&r->pend.item);
            pml_recv_matched(r, &n);
        } else {
            unexp_add(ctx, s, f);
        }
    }
}

void pml_match_incoming(pml_ctx_t *ctx, pml_src_t *s, const pml_inmsg_t *m)
{
    match_incoming(ctx, s, m);
}

static void ooo_add(pml_src_t *s, const pml_inmsg_t *m)
{
    pml_frag_t *f = pml_frag_from_inmsg(m);
    if (!f)
        return;
    rail_list_item_t *pos;
    for (pos = s->ooo.head.prev; pos != &s->ooo.head; pos = pos->prev) {
        pml_frag_t *o = rail_container_of(pos, pml_frag_t, src_item);
        if ((int16_t)(o->hdr.seq - f->hdr.seq) < 0)
            break;
    }
    rail_list_insert_after(pos, &f->src_item);
}

void pml_cb_match(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                  const void *payload, size_t payload_len)
{
    const pml_match_hdr_t *h = hdr;
    pml_inmsg_t m = { .hdr = h, .data = payload, .data_len = payload_len,
                      .msg_len = payload_len };
    if (h->type == PML_HDR_RNDV) {
        const pml_rts_hdr_t *rts = hdr;
        m.sreq = rts->sreq;
        m.msg_len = (size_t)rts->len;
    } else if (h->flags & PML_HF_SYNC) {
        m.sreq = ((const pml_sync_hdr_t *)hdr)->sreq;
    }
    pml_ctx_t *ctx = pml_ctx_lookup(h->ctx);
    if (RAIL_UNLIKELY(!ctx)) {
        pml_early_add(&m);
        return;
    }
    if (RAIL_UNLIKELY(h->src < 0 || h->src >= ctx->size)) {
        rail_warn("pml: message from invalid rank %d for context 0x%x dropped", h->src, h->ctx);
        return;
    }
    pml_src_t *s = &ctx->src[h->src];
    m.peer = s->peer;
    if (RAIL_UNLIKELY(h->flags & PML_HF_NOCREDIT))
        pml_credit_flush(s->peer);   /* it fell back to rendezvous for lack of credits */
    if (RAIL_UNLIKELY(h->seq != s->recv_seq)) {
        ooo_add(s, &m);
        return;
    }
    match_incoming(ctx, s, &m);
}

/* ------------------------------------------------------------ unexpected */

pml_frag_t *pml_unexp_find(pml_ctx_t *ctx, int src, int tag, bool remove)
{
    pml_frag_t *f = NULL;
    if (src == MPI_ANY_SOURCE) {
        for (rail_list_item_t *it = rail_list_first(&ctx->unexp_all); it;
             it = rail_list_next(&ctx->unexp_all, it)) {
            pml_frag_t *c = rail_container_of(it, pml_frag_t, all_item);
            if (tag_matches(tag, c->hdr.tag)) {
                f = c;
                break;
            }
        }
    } else {
        rail_list_t *l = &ctx->src[src].unexp;
        for (rail_list_item_t *it = rail_list_first(l); it; it = rail_list_next(l, it)) {
            pml_frag_t *c = rail_container_of(it, pml_frag_t, src_item);
            if (tag_matches(tag, c->hdr.tag)) {
                f = c;
                break;
            }
        }
    }
    if (f && remove) {
        rail_list_remove(&f->src_item);
        rail_list_remove(&f->all_item);
    }
    return f;
}

/* ------------------------------------------------------------ probes */

static void status_of_frag(const pml_frag_t *f, obj_req_status_t *st)
{
    st->source = f->hdr.src;
    st->tag = f->hdr.tag;
    st->error = MPI_SUCCESS;
    st->cancelled = 0;
    st->count = (MPI_Count)f->msg_len;
    st->msg_len = (MPI_Count)f->msg_len;
}

int pml_iprobe(int src, int tag, obj_comm_t *comm, unsigned flags, int *flag,
               obj_req_status_t *st)
{
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        if (st)
            obj_req_status_proc_null(st);
        return MPI_SUCCESS;
    }
    RAIL_CS_ENTER();
    pml_frag_t *f = pml_unexp_find(pml_ctx_of(comm, flags), src, tag, false);
    if (!f) {
        RAIL_CS_EXIT();
        rail_progress();
        RAIL_CS_ENTER();
        f = pml_unexp_find(pml_ctx_of(comm, flags), src, tag, false);
    }
    *flag = f != NULL;
    if (f && st)
        status_of_frag(f, st);
    RAIL_CS_EXIT();
    return MPI_SUCCESS;
}

typedef struct probe_wait {
    int src, tag;
    obj_comm_t *comm;
    unsigned flags;
    bool remove;
    pml_frag_t *found;
    obj_req_status_t st;
} probe_wait_t;

static bool probe_cond(void *arg)
{
    probe_wait_t *w = arg;
    RAIL_CS_ENTER();
    w->found = pml_unexp_find(pml_ctx_of(w->comm, w->flags), w->src, w->tag, w->remove);
    if (w->found) {
        status_of_frag(w->found, &w->st);
    }
    RAIL_CS_EXIT();
    return w->found != NULL;
}

int pml_probe(int src, int tag, obj_comm_t *comm, unsigned flags, obj_req_status_t *st)
{
    if (src == MPI_PROC_NULL) {
        if (st)
            obj_req_status_proc_null(st);
        return MPI_SUCCESS;
    }
    probe_wait_t w = { src, tag, comm, flags, false, NULL, { 0 } };
    rail_progress_wait(probe_cond, &w);
    if (st)
        *st = w.st;
    return MPI_SUCCESS;
}

static obj_message_t *message_of(pml_frag_t *f, obj_comm_t *comm)
{
    obj_message_t *msg = malloc(sizeof(*msg));
    if (!msg)
        return NULL;
    msg->obj.kind = OBJ_MESSAGE;
    msg->obj.refcount = 1;
    msg->obj.handle = msg;
    msg->comm = comm;
    msg->frag = f;
    return msg;
}

int pml_improbe(int src, int tag, obj_comm_t *comm, unsigned flags, int *flag,
                obj_message_t **msg, obj_req_status_t *st)
{
    *msg = NULL;
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        if (st)
            obj_req_status_proc_null(st);
        return MPI_SUCCESS;
    }
    probe_wait_t w = { src, tag, comm, flags, true, NULL, { 0 } };
    if (!probe_cond(&w)) {
        rail_progress();
        probe_cond(&w);
    }
    *flag = w.found != NULL;
    if (!w.found)
        return MPI_SUCCESS;
    if (st)
        *st = w.st;
    *msg = message_of(w.found, comm);
    return *msg ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int pml_mprobe(int src, int tag, obj_comm_t *comm, unsigned flags, obj_message_t **msg,
               obj_req_status_t *st)
{
    *msg = NULL;
    if (src == MPI_PROC_NULL) {
        if (st)
            obj_req_status_proc_null(st);
        return MPI_SUCCESS;
    }
    probe_wait_t w = { src, tag, comm, flags, true, NULL, { 0 } };
    rail_progress_wait(probe_cond, &w);
    if (st)
        *st = w.st;
    *msg = message_of(w.found, comm);
    return *msg ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}
