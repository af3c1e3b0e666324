/*
 * pml base: parameters, start-up and shut-down, peers, communicator
 * contexts, free lists, the pending-send queues and the pml's progress.
 */
#include "pml/pml_internal.h"
#include "base/param.h"
#include "accel/accel.h"
#include "runtime/rte.h"

#include <stdlib.h>
#include <string.h>

const btl_payload_t pml_no_payload = { "", 0, NULL, NULL };
int pml_my_world;
int pml_eager_credits = 128;
int pml_credit_batch;
int pml_verbose;
bool pml_rndv_get = true;
size_t pml_frag_inline;
pml_peer_t *pml_peers;
int pml_n_peers;

static int pml_up;
static rail_list_t active_peers = RAIL_LIST_INIT(active_peers);
static pml_ctx_t **ctx_table;
static size_t ctx_table_len;
static rail_list_t early = RAIL_LIST_INIT(early);   /* pml_frag_t of unknown contexts */

/* Free lists (used inside the critical section only). */
static pml_request_t *req_free;
static pml_frag_t *frag_pool;

typedef struct pml_ctl {
    pml_pend_t pend;
    uint8_t tag;
    uint8_t len;
    uint64_t hdr[4];
    struct pml_ctl *next_free;
} pml_ctl_t;
static pml_ctl_t *ctl_free;

/* ------------------------------------------------------------ params */

int pml_register_params(void)
{
    rail_param_register_int("pml_eager_credits", 128,
                            "Eager messages a sender may have in flight to one receiver before it "
                            "must wait for credits (it then uses the rendezvous protocol); bounds "
                            "the memory a flood of unexpected messages takes",
                            RAIL_PARAM_LEVEL_TUNER, &pml_eager_credits);
    rail_param_register_bool("pml_rndv_get", true,
                             "Use the single-copy get protocol for large messages where the btl "
                             "supports it (false: always pipeline through btl sends)",
                             RAIL_PARAM_LEVEL_TUNER, &pml_rndv_get);
    rail_param_register_int("pml_verbose", 0, "Verbosity of the pml (0: quiet)",
                            RAIL_PARAM_LEVEL_USER, &pml_verbose);
    rail_progress_register_params();
    btl_base_register_params();
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ free lists */

pml_request_t *pml_req_alloc(void)
{
    pml_request_t *r = req_free;
    if (RAIL_LIKELY(r != NULL)) {
        req_free = r->next_free;
        return r;
    }
    return malloc(sizeof(pml_request_t));
}

void pml_req_free(pml_request_t *r)
{
    r->req.obj.kind = MPI_OBJ_FREED;
    r->next_free = req_free;
    req_free = r;
}

pml_frag_t *pml_frag_alloc(size_t data_len)
{
    pml_frag_t *f;
    if (data_len <= pml_frag_inline && frag_pool) {
        f = frag_pool;
        frag_pool = *(pml_frag_t **)f->inline_data;
    } else if (data_len <= pml_frag_inline) {
        f = malloc(sizeof(*f) + pml_frag_inline);
        if (!f)
            return NULL;
        f->cap = pml_frag_inline;
    } else {
        f = malloc(sizeof(*f) + data_len);
        if (!f)
            return NULL;
        f->cap = data_len;
    }
    f->data = f->inline_data;
    f->data_len = data_len;
    return f;
}

void pml_frag_free(pml_frag_t *f)
{
    if (f->cap == pml_frag_inline) {
        *(pml_frag_t **)f->inline_data = frag_pool;
        frag_pool = f;
    } else {
        free(f);
    }
}

pml_frag_t *pml_frag_from_inmsg(const pml_inmsg_t *m)
{
    pml_frag_t *f = pml_frag_alloc(m->data_len);
    if (!f) {
        rail_error("pml: out of memory keeping an unexpected message");
        return NULL;
    }
    f->hdr = *m->hdr;
    f->sreq = m->sreq;
    f->msg_len = m->msg_len;
    f->peer = m->peer;
    if (m->data_len)
        memcpy(f->data, m->data, m->data_len);
    return f;
}

/* ------------------------------------------------------------ pending queues */

void pml_peer_enqueue(pml_peer_t *peer, pml_pend_t *p)
{
    rail_list_append(&peer->pending, &p->item);
    if (!peer->active) {
        peer->active = true;
        rail_list_append(&active_peers, &peer->active_item);
        rail_progress_hold_poll(1);
    }
}

void pml_ctl_send(pml_peer_t *peer, uint8_t tag, const void *hdr, size_t len)
{
    if (rail_list_empty(&peer->pending)) {
        int rc = peer->btl->send(peer->btl, peer->ep, tag, hdr, len, &pml_no_payload);
        if (RAIL_LIKELY(rc == MPI_SUCCESS))
            return;
        if (rc != RAIL_AGAIN) {
            rail_error("pml: control message to rank %d failed (error %d)", peer->world, rc);
            return;
        }
    }
    pml_ctl_t *c = ctl_free;
    if (c)
        ctl_free = c->next_free;
    else
        c = malloc(sizeof(*c));
    if (!c) {
        rail_error("pml: out of memory queueing a control message");
        return;
    }
    c->pend.kind = PML_PEND_CTL;
    c->tag = tag;
    c->len = (uint8_t)len;
    memcpy(c->hdr, hdr, len);
    pml_peer_enqueue(peer, &c->pend);
}

/* Push one pending item; RAIL_AGAIN when the btl is full. */
static int pend_push(pml_peer_t *peer, pml_pend_t *p)
{
    if (p->kind == PML_PEND_CTL) {
        pml_ctl_t *c = rail_container_of(p, pml_ctl_t, pend);
        int rc = peer->btl->send(peer->btl, peer->ep, c->tag, c->hdr, c->len, &pml_no_payload);
        if (rc == RAIL_AGAIN)
            return rc;
        if (rc != MPI_SUCCESS)
            rail_error("pml: control message to rank %d failed (error %d)", peer->world, rc);
        rail_list_remove(&p->item);
        c->next_free = ctl_free;
        ctl_free = c;
        return MPI_SUCCESS;
    }
    pml_request_t *r = rail_container_of(p, pml_request_t, pend);
    int rc;
    /* Off the queue first: the push may complete (and free) the request. */
    rail_list_remove(&p->item);
    switch (p->kind) {
    case PML_PEND_SEND:
        rc = pml_send_try(r);
        break;
    case PML_PEND_STREAM:
        rc = pml_stream_push(r);
        break;
    case PML_PEND_GET:
        rc = pml_get_push(r);
        break;
    default:
        rc = MPI_SUCCESS;
        break;
    }
    if (rc == RAIL_AGAIN)
        rail_list_prepend(&peer->pending, &p->item);
    return rc == RAIL_AGAIN ? RAIL_AGAIN : MPI_SUCCESS;
}

int pml_progress(void *arg)
{
    if (RAIL_LIKELY(rail_list_empty(&active_peers)))
        return 0;
    int n = 0;
    rail_list_item_t *it, *tmp;
    RAIL_LIST_FOREACH_SAFE(&active_peers, it, tmp)
    {
        pml_peer_t *peer = rail_container_of(it, pml_peer_t, active_item);
        rail_list_item_t *first;
        while ((first = rail_list_first(&peer->pending)) != NULL) {
            pml_pend_t *p = rail_container_of(first, pml_pend_t, item);
            if (pend_push(peer, p) == RAIL_AGAIN)
                break;
            n++;
        }
        if (rail_list_empty(&peer->pending)) {
            rail_list_remove(&peer->active_item);
            peer->active = false;
            rail_progress_hold_poll(-1);
        }
    }
    return n;
}

/* ------------------------------------------------------------ contexts */

static size_t ctx_index(uint32_t cid)
{
    return (size_t)(cid & ~PML_CONTEXT_COLL_BIT) * 2 + ((cid & PML_CONTEXT_COLL_BIT) ? 1 : 0);
}

pml_ctx_t *pml_ctx_lookup(uint32_t cid)
{
    size_t i = ctx_index(cid);
    return RAIL_LIKELY(i < ctx_table_len) ? ctx_table[i] : NULL;
}

static int ctx_table_set(uint32_t cid, pml_ctx_t *ctx)
{
    size_t i = ctx_index(cid);
    if (i >= ctx_table_len) {
        size_t len = RAIL_MAX(ctx_table_len * 2, (size_t)64);
        while (len <= i)
            len *= 2;
        pml_ctx_t **t = realloc(ctx_table, len * sizeof(*t));
        if (!t)
            return MPI_ERR_NO_MEM;
        memset(t + ctx_table_len, 0, (len - ctx_table_len) * sizeof(*t));
        ctx_table = t;
        ctx_table_len = len;
    }
    ctx_table[i] = ctx;
    return MPI_SUCCESS;
}

static int ctx_init(pml_ctx_t *ctx, mpi_comm_t *comm, uint32_t cid)
{
    mpi_group_t *peers = comm->is_inter ? comm->remote_group : comm->group;
    ctx->cid = cid;
    ctx->comm = comm;
    ctx->size = comm->is_inter ? comm->remote_size : comm->size;
    ctx->my_rank = comm->rank;
    ctx->post_seq = 0;
    rail_list_init(&ctx->posted_any);
    rail_list_init(&ctx->unexp_all);
    ctx->src = calloc((size_t)RAIL_MAX(ctx->size, 1), sizeof(pml_src_t));
    if (!ctx->src)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < ctx->size; i++) {
        pml_src_t *s = &ctx->src[i];
        rail_list_init(&s->posted);
        rail_list_init(&s->unexp);
        rail_list_init(&s->ooo);
        int w = peers ? mpi_group_world_rank(peers, i) : i;
        s->peer = (w >= 0 && w < pml_n_peers) ? &pml_peers[w] : NULL;
    }
    return ctx_table_set(cid, ctx);
}

static void free_frag_list(rail_list_t *l, bool all_item)
{
    rail_list_item_t *it;
    while ((it = rail_list_pop_front(l)) != NULL) {
        pml_frag_t *f = rail_container_of(it, pml_frag_t, src_item);
        if (all_item)
            rail_list_remove(&f->all_item);
        pml_frag_free(f);
    }
}

static void ctx_fini(pml_ctx_t *ctx)
{
    if (pml_ctx_lookup(ctx->cid) == ctx)
        ctx_table_set(ctx->cid, NULL);
    if (!ctx->src)
        return;
    for (int i = 0; i < ctx->size; i++) {
        free_frag_list(&ctx->src[i].unexp, true);
        free_frag_list(&ctx->src[i].ooo, false);
    }
    free(ctx->src);
    ctx->src = NULL;
}

int pml_comm_create(mpi_comm_t *comm)
{
    int rc = MPI_SUCCESS;
    if (comm->context_id & PML_CONTEXT_COLL_BIT) {
        rail_error("pml: context id 0x%x too large", comm->context_id);
        return MPI_ERR_INTERN;
    }
    struct pml_comm *pc = calloc(1, sizeof(*pc));
    if (!pc)
        return MPI_ERR_NO_MEM;
    RAIL_CS_ENTER();
    rc = ctx_init(&pc->ctx[0], comm, comm->context_id);
    if (rc == MPI_SUCCESS)
        rc = ctx_init(&pc->ctx[1], comm, PML_COLL_CONTEXT(comm->context_id));
    if (rc != MPI_SUCCESS) {
        ctx_fini(&pc->ctx[0]);
        ctx_fini(&pc->ctx[1]);
        free(pc);
    } else {
        comm->pml = pc;
        pml_early_replay(&pc->ctx[0]);
        pml_early_replay(&pc->ctx[1]);
    }
    RAIL_CS_EXIT();
    return rc;
}

int pml_comm_destroy(mpi_comm_t *comm)
{
    struct pml_comm *pc = comm->pml;
    if (!pc)
        return MPI_SUCCESS;
    RAIL_CS_ENTER();
    ctx_fini(&pc->ctx[0]);
    ctx_fini(&pc->ctx[1]);
    comm->pml = NULL;
    RAIL_CS_EXIT();
    free(pc);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ early messages */

void pml_early_add(const pml_inmsg_t *m)
{
    pml_frag_t *f = pml_frag_from_inmsg(m);
    if (f)
        rail_list_append(&early, &f->src_item);
}

void pml_early_replay(pml_ctx_t *ctx)
{
    rail_list_item_t *it, *tmp;
    RAIL_LIST_FOREACH_SAFE(&early, it, tmp)
    {
        pml_frag_t *f = rail_container_of(it, pml_frag_t, src_item);
        if (f->hdr.ctx != ctx->cid)
            continue;
        rail_list_remove(it);
        if (f->hdr.src < 0 || f->hdr.src >= ctx->size) {
            pml_frag_free(f);
            continue;
        }
        pml_src_t *s = &ctx->src[f->hdr.src];
        f->peer = s->peer;
        pml_inmsg_t m = { .hdr = &f->hdr, .sreq = f->sreq, .msg_len = f->msg_len,
                          .data = f->data, .data_len = f->data_len, .peer = f->peer, .frag = f };
        if (f->hdr.seq != s->recv_seq) {
            /* Keep it in sequence order among the early arrivals. */
            rail_list_item_t *pos;
            for (pos = s->ooo.head.prev; pos != &s->ooo.head; pos = pos->prev) {
                pml_frag_t *o = rail_container_of(pos, pml_frag_t, src_item);
                if ((int16_t)(o->hdr.seq - f->hdr.seq) < 0)
                    break;
            }
            rail_list_insert_after(pos, &f->src_item);
            continue;
        }
        pml_match_incoming(ctx, s, &m);
    }
}

/* ------------------------------------------------------------ init */

static void peers_init(void)
{
    for (int w = 0; w < pml_n_peers; w++) {
        pml_peer_t *p = &pml_peers[w];
        btl_module_t *b = btl_for_peer[w].btl;
        p->world = w;
        p->btl = b;
        p->ep = btl_for_peer[w].ep;
        p->btl_flags = b->flags;
        size_t max_payload = b->max_send_size > 64 ? b->max_send_size - sizeof(pml_rts_hdr_t) : 64;
        p->eager_limit = RAIL_MIN(b->eager_limit, b->max_send_size - sizeof(pml_sync_hdr_t));
        p->frag_size = b->max_send_size - sizeof(pml_frag_hdr_t);
        if (b->max_send_size <= sizeof(pml_frag_hdr_t) + 64)
            p->frag_size = 64;
        int iovs = 0;
        if (pml_rndv_get && (b->flags & BTL_FLAG_GET) && b->get &&
            max_payload > sizeof(pml_get_desc_t) + sizeof(pml_iov64_t))
            iovs = (int)RAIL_MIN((size_t)PML_RTS_MAX_IOV,
                                 (max_payload - sizeof(pml_get_desc_t)) / sizeof(pml_iov64_t));
        p->rts_max_iov = iovs;
        p->credits = pml_eager_credits;
        p->consumed = 0;
        p->active = false;
        rail_list_init(&p->pending);
        if (p->eager_limit > pml_frag_inline)
            pml_frag_inline = p->eager_limit;
    }
}

int pml_init(int thread_level)
{
    int rc = MPI_SUCCESS;
    if (pml_up++ > 0)
        return MPI_SUCCESS;
    pml_register_params();
    if (pml_eager_credits < 2)
        pml_eager_credits = 2;
    pml_credit_batch = RAIL_MAX(1, pml_eager_credits / 2);
    RAIL_CHECK(rail_progress_init(rte_info.oversubscribed, thread_level == MPI_THREAD_MULTIPLE));
    RAIL_CHECK(btl_base_init());
    RAIL_CHECK(rte_modex_commit());
    RAIL_CHECK(rte_fence(true));
    RAIL_CHECK(btl_base_add_procs(rte_info.size));
    pml_n_peers = rte_info.size;
    pml_my_world = rte_info.rank;
    pml_peers = calloc((size_t)pml_n_peers, sizeof(pml_peer_t));
    RAIL_CHECK_ALLOC(pml_peers);
    pml_frag_inline = 256;
    peers_init();
    if (pml_frag_inline > 65536)
        pml_frag_inline = 65536;
    btl_register_recv(PML_TAG_MATCH, pml_cb_match);
    btl_register_recv(PML_TAG_ACK, pml_cb_ack);
    btl_register_recv(PML_TAG_CTS, pml_cb_cts);
    btl_register_recv(PML_TAG_FRAG, pml_cb_frag);
    btl_register_recv(PML_TAG_FIN, pml_cb_fin);
    btl_register_recv(PML_TAG_CREDIT, pml_cb_credit);
    RAIL_CHECK(rail_progress_register(pml_progress, NULL, 0));
    RAIL_VERBOSE(pml_verbose, 1, "pml: up, %d peers, eager credits %d, thread level %d",
                 pml_n_peers, pml_eager_credits, thread_level);
    return MPI_SUCCESS;
fail:
    pml_up--;
    return rc;
}

int pml_finalize(void)
{
    if (pml_up == 0 || --pml_up > 0)
        return MPI_SUCCESS;
    /* Push out what is still queued (control messages the peers wait for). */
    for (int i = 0; i < 100000 && !rail_list_empty(&active_peers); i++)
        rail_progress();
    rail_progress_unregister(pml_progress, NULL);
    btl_base_finalize();
    free_frag_list(&early, false);
    free(pml_peers);
    pml_peers = NULL;
    pml_n_peers = 0;
    free(ctx_table);
    ctx_table = NULL;
    ctx_table_len = 0;
    while (req_free) {
        pml_request_t *r = req_free;
        req_free = r->next_free;
        free(r);
    }
    while (frag_pool) {
        pml_frag_t *f = frag_pool;
        frag_pool = *(pml_frag_t **)f->inline_data;
        free(f);
    }
    while (ctl_free) {
        pml_ctl_t *c = ctl_free;
        ctl_free = c->next_free;
        free(c);
    }
    rail_list_init(&active_peers);
    rail_progress_finalize();
    return MPI_SUCCESS;
}
