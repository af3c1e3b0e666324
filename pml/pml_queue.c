/*
 * The pml's pending work: per-peer queues of sends and control messages that
 * a btl could not take at once (RAIL_AGAIN), pipelined streams and gets to
 * resume, and the progress callback that pushes them.
 */
#include "pml/pml_internal.h"

#include <stdlib.h>
#include <string.h>

static rail_list_t active_peers = RAIL_LIST_INIT(active_peers);
int pml_n_active_peers;          /* lazy progress indicator */

typedef struct pml_ctl {
    pml_pend_t pend;
    uint8_t tag;
    uint8_t len;
    uint64_t hdr[4];
    struct pml_ctl *next_free;
} pml_ctl_t;
static pml_ctl_t *ctl_free;

/* ------------------------------------------------------------ pending queues */

void pml_peer_enqueue(pml_peer_t *peer, pml_pend_t *p)
{
    rail_list_append(&peer->pending, &p->item);
    if (!peer->active) {
        peer->active = true;
        rail_list_append(&active_peers, &peer->active_item);
        pml_n_active_peers++;
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
            pml_n_active_peers--;
            rail_progress_hold_poll(-1);
        }
    }
    return n;
}

static bool quiet(void *arg)
{
    return rail_list_empty(&active_peers) && btl_base_pending() == 0;
}

void pml_quiesce(void)
{
    rail_progress_wait(quiet, NULL);
}

void pml_queue_fini(void)
{
    for (int i = 0; i < 100000 && !rail_list_empty(&active_peers); i++)
        rail_progress();
    while (ctl_free) {
        pml_ctl_t *c = ctl_free;
        ctl_free = c->next_free;
        free(c);
    }
    rail_list_init(&active_peers);
    pml_n_active_peers = 0;
}
