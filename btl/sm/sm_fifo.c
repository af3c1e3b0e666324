/* The MPSC FIFO and the frags it carries (protocol in sm_fifo.h). */
#include "btl/sm/sm_fifo.h"
#include "btl/sm/sm_fastbox.h"

#include <string.h>

/* Frags handled by one drain; the rest wait for the next progress(), so the
 * fast boxes are polled regularly under a flood. */
#define BTL_SM_DRAIN_BUDGET 64

/* Empty queue (tail = stub) and all our frags idle. */
void btl_sm_fifo_init(btl_sm_module_t *m)
{
    btl_sm_seg_hdr_t *h = m->hdr;
    m->fifo_stub = BTL_SM_OFF(m->my_index, offsetof(btl_sm_seg_hdr_t, fifo_stub));
    m->fifo_head = m->fifo_stub;
    h->fifo_stub.next = 0;
    h->fifo_tail = m->fifo_stub;
    m->n_free = 0;
    m->free_first = 0;
    m->free_cap = (int)h->frag_count;
    for (int i = 0; i < (int)h->frag_count; i++) {
        size_t off = h->frag_off + (size_t)i * h->frag_size;
        btl_sm_frag_t *f = (btl_sm_frag_t *)(m->seg + off);
        f->self = BTL_SM_OFF(m->my_index, off);
        f->src = (uint16_t)m->my_index;
        m->free_frags[m->n_free++] = f;
    }
}

void btl_sm_fifo_push(btl_sm_module_t *m, btl_sm_seg_hdr_t *q, btl_sm_fifo_node_t *node,
                      btl_sm_off_t off)
{
    rail_atomic_store_relaxed(&node->next, 0);
    btl_sm_off_t prev = rail_atomic_exchange(&q->fifo_tail, off);
    btl_sm_fifo_node_t *p = btl_sm_ptr(m, prev);
    rail_atomic_store_release(&p->next, off);
}

btl_sm_frag_t *btl_sm_fifo_pop(btl_sm_module_t *m)
{
    btl_sm_off_t head = m->fifo_head;
    btl_sm_fifo_node_t *h = btl_sm_ptr(m, head);
    btl_sm_off_t next = rail_atomic_load_acquire(&h->next);

    if (head == m->fifo_stub) {
        if (!next)
            return NULL;
        m->fifo_head = head = next;
        h = btl_sm_ptr(m, head);
        next = rail_atomic_load_acquire(&h->next);
    }
    if (next) {
        m->fifo_head = next;
        return (btl_sm_frag_t *)h;
    }
    /* h looks last: unless a producer is half way, queue the stub behind it. */
    if (rail_atomic_load_acquire(&m->hdr->fifo_tail) != head)
        return NULL;
    btl_sm_fifo_push(m, m->hdr, &m->hdr->fifo_stub, m->fifo_stub);
    next = rail_atomic_load_acquire(&h->next);
    if (!next)
        return NULL;
    m->fifo_head = next;
    return (btl_sm_frag_t *)h;
}

/* Something queued, or a producer half way through a push. */
bool btl_sm_fifo_pending(btl_sm_module_t *m)
{
    btl_sm_seg_hdr_t *h = m->hdr;
    return m->fifo_head != m->fifo_stub || rail_atomic_load_acquire(&h->fifo_stub.next) != 0 ||
           rail_atomic_load_acquire(&h->fifo_tail) != m->fifo_stub;
}

uint64_t btl_sm_count_frags_streamed;

int btl_sm_fifo_send(btl_sm_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                     size_t hdr_len, const btl_payload_t *payload, size_t len)
{
    if (RAIL_UNLIKELY(m->n_free == 0))
        return RAIL_AGAIN;
    /* Small payloads take the newest idle frag (its first lines are likely
     * still ours), large ones the oldest (sm.h). */
    const bool oldest = len > BTL_SM_FRAG_HOT_MAX;
    int at = oldest ? m->free_first : m->free_first + m->n_free - 1;
    if (at >= m->free_cap)
        at -= m->free_cap;
    btl_sm_frag_t *f = m->free_frags[at];
    int rc = MPI_SUCCESS;
    if (payload && payload->data)
        btl_sm_count_frags_streamed += (uint64_t)rail_copy_shared(
            (uint8_t *)f + BTL_SM_FRAG_HDR, payload->data, len,
            payload->flags & BTL_PAYLOAD_STREAM);
    else
        rc = btl_sm_copy_payload((uint8_t *)f + BTL_SM_FRAG_HDR, payload);
    if (RAIL_UNLIKELY(rc != MPI_SUCCESS))
        return rc;
    if (oldest && ++m->free_first == m->free_cap)
        m->free_first = 0;
    m->n_free--;
    f->payload_len = (uint32_t)len;
    f->dst = ep->index;
    f->tag = tag;
    f->hdr_len = (uint8_t)hdr_len;
    if (hdr_len)
        memcpy(f->hdr, hdr, hdr_len);
    ep->fifo_outstanding++;
    btl_sm_fifo_push(m, ep->hdr, &f->node, f->self);
    btl_sm_wake(ep->hdr);
    return MPI_SUCCESS;
}

/* One of our frags came back. */
static void btl_sm_frag_returned(btl_sm_module_t *m, btl_sm_frag_t *f)
{
    m->eps[f->dst].fifo_outstanding--;
    int at = m->free_first + m->n_free;
    m->free_frags[at < m->free_cap ? at : at - m->free_cap] = f;
    m->n_free++;
}

/* A peer's frag: deliver (after its earlier fast-box messages), hand it back. */
static void btl_sm_frag_received(btl_sm_module_t *m, btl_sm_frag_t *f)
{
    btl_endpoint_t *ep = &m->eps[f->src];
    if (RAIL_UNLIKELY(!ep->frags_mapped)) {
        /* The sender's frags, all at once (btl_sm_prefault): a fault per
         * page on each frag's first use cost 16 us for 64 KiB here and
         * made the pml's time-based choice see the pipeline three times
         * slower than it is; doing it at init cost 3 ms per peer in
         * MPI_Init at np 8, paid even by peers that never send large. */
        ep->frags_mapped = true;
        if (btl_sm_params.prefault)
            btl_sm_populate(ep->base + ep->hdr->frag_off, ep->size - ep->hdr->frag_off);
    }
    btl_sm_fbox_poll(m, ep, true);
    btl_sm_deliver(m, ep, f->tag, f->hdr, f->hdr_len, (uint8_t *)f + BTL_SM_FRAG_HDR,
                   f->payload_len);
    btl_sm_fifo_push(m, ep->hdr, &f->node, f->self);
    btl_sm_wake(ep->hdr);
}

int btl_sm_fifo_drain(btl_sm_module_t *m)
{
    int n = 0;
    btl_sm_frag_t *f;

    while (n < BTL_SM_DRAIN_BUDGET && (f = btl_sm_fifo_pop(m)) != NULL) {
        if (f->src == m->my_index)
            btl_sm_frag_returned(m, f);
        else
            btl_sm_frag_received(m, f);
        n++;
    }
    return n;
}
