/*
 * The FIFO: one lock-free multi-producer/single-consumer queue per process
 * (in its segment), carrying frags, i.e. buffers that live in the *sender's*
 * segment.  It takes what does not go through a fast box: messages larger
 * than a ring entry, messages sent while a ring is full, and the frags that
 * receivers hand back to their owners.
 *
 * The queue is an intrusive linked list of segment offsets with a stub node
 * (Vyukov's MPSC design):
 *   push(n):  n.next = 0; prev = exchange(tail, n); prev.next = n (release)
 *   pop:      the consumer follows next pointers from its private head; it
 *             hands out a node only once that node's next is set (or, for
 *             the last node, after re-pushing the stub behind it), so no
 *             producer touches a node after it was popped.
 * A producer stopped between its exchange and its link hides what follows
 * it until it runs again; pop then returns nothing (it never spins), and
 * btl_sm_fifo_pending() says "work" so the caller does not go to sleep.
 *
 * Frags: each process owns frag_count frags in its segment and keeps its
 * idle ones on a private LIFO (recently used, hence cache- and TLB-warm,
 * frags first).  Sending takes one (none left: RAIL_AGAIN), fills it and
 * pushes it on the receiver's FIFO.  The receiver runs the callback on the
 * bytes in place, then pushes the frag on its owner's FIFO; the owner's
 * progress puts it back on its LIFO.
 *
 * Ordering per pair: while any frag to a peer is outstanding, every message
 * to that peer goes through the FIFO; and before a frag from a peer is
 * delivered, that peer's fast box is drained.  Everything in the fast box was
 * published before the frag was pushed, so messages arrive in send order.
 */
#ifndef BTL_SM_SM_FIFO_H
#define BTL_SM_SM_FIFO_H

#include "btl/sm/sm.h"

void btl_sm_fifo_init(btl_sm_module_t *m);
void btl_sm_fifo_push(btl_sm_module_t *m, btl_sm_seg_hdr_t *q, btl_sm_fifo_node_t *node,
                      btl_sm_off_t off);
btl_sm_frag_t *btl_sm_fifo_pop(btl_sm_module_t *m);
bool btl_sm_fifo_pending(btl_sm_module_t *m);
int btl_sm_fifo_send(btl_sm_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                     size_t hdr_len, const btl_payload_t *payload, size_t len);
int btl_sm_fifo_drain(btl_sm_module_t *m);

/* False when our FIFO is certainly empty: the head is the stub and nothing
 * is linked behind it (one load of a line of our own; a poll's fast path). */
static inline bool btl_sm_fifo_maybe(const btl_sm_module_t *m)
{
    return m->fifo_head != m->fifo_stub ||
           rail_atomic_load_acquire(&m->hdr->fifo_stub.next) != 0;
}

#endif
