/*
 * Matching contexts: two per communicator (point-to-point and collective),
 * found from a message's context id through a table; messages for a
 * context that does not exist here yet are kept until pml_comm_create.
 */
#include "pml/pml_internal.h"

#include <stdlib.h>
#include <string.h>

pml_ctx_t **pml_ctx_table;
size_t pml_ctx_table_len;
static rail_list_t early = RAIL_LIST_INIT(early);   /* pml_frag_t of unknown contexts */

/* ------------------------------------------------------------ contexts */


static int ctx_table_set(uint32_t cid, pml_ctx_t *ctx)
{
    size_t i = pml_ctx_index(cid);
    if (i >= pml_ctx_table_len) {
        size_t len = RAIL_MAX(pml_ctx_table_len * 2, (size_t)64);
        while (len <= i)
            len *= 2;
        pml_ctx_t **t = realloc(pml_ctx_table, len * sizeof(*t));
        if (!t)
            return MPI_ERR_NO_MEM;
        memset(t + pml_ctx_table_len, 0, (len - pml_ctx_table_len) * sizeof(*t));
        pml_ctx_table = t;
        pml_ctx_table_len = len;
    }
    pml_ctx_table[i] = ctx;
    return MPI_SUCCESS;
}

static int ctx_init(pml_ctx_t *ctx, obj_comm_t *comm, uint32_t cid)
{
    obj_group_t *peers = comm->is_inter ? comm->remote_group : comm->group;
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
        int w = peers ? obj_group_world_rank(peers, i) : i;
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

int pml_comm_create(obj_comm_t *comm)
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

int pml_comm_destroy(obj_comm_t *comm)
{
    struct pml_comm *pc = comm->pml;
    if (!pc)
        return MPI_SUCCESS;
    RAIL_CS_ENTER();
    ctx_fini(&pc->ctx[0]);
    ctx_fini(&pc->ctx[1]);
    comm->pml = NULL;
    RAIL_CS_EXIT();
    pml_part_seq_free(pc);
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

void pml_ctx_fini_all(void)
{
    free_frag_list(&early, false);
    free(pml_ctx_table);
    pml_ctx_table = NULL;
    pml_ctx_table_len = 0;
}
