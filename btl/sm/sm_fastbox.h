/*
 * Fast boxes: one single-producer/single-consumer ring per ordered pair of
 * local processes, in the receiver's segment.
 *
 * Ring entries are packed on 8-byte boundaries, at least 32 bytes each:
 *     u64 word   payload_len | hdr_len << 32 | tag << 40 | type << 48
 *     hdr        hdr_len bytes, padded to 8
 *     payload    payload_len bytes, padded to 8
 * A word of 0 means "nothing here yet"; type SKIP means "the rest of the
 * ring is unused, continue at offset 0".  An entry never wraps.  (Packing,
 * rather than starting each entry on a cache line, keeps a small entry and
 * its terminator in one line: one line transfer per message instead of two;
 * measured about 10-15% lower latency and a higher message rate.)
 *
 * Publishing (sender): write a 0 word where the *next* entry will start
 * (the terminator), then the hdr and payload, then store the entry's word
 * with release semantics.  The receiver therefore never reads a stale word
 * from an earlier lap: the word it polls is either the terminator or a
 * complete entry.  When the entry must go to offset 0, it is written there
 * first and the SKIP word at the old position is published last.
 *
 * Consuming (receiver): acquire-load the word at its tail; run the callback
 * on the bytes in place; advance the tail (a poll that has delivered one
 * message and reached a new line stops there: see btl_sm_fbox_poll);
 * store the tail (release) in its control line for the sender at least
 * every half ring and at the end of a poll.  The sender re-reads that line
 * only when its cached limit says the ring is full (or an entry would
 * cross BTL_SM_FBOX_HOT), so the steady state has no shared writes besides
 * the entries themselves.  Space check: head + skip + size + 8 (terminator)
 * <= consumed + ring size.
 *
 * On x86 both release and acquire are plain moves: a send is a few stores,
 * a poll of an empty box one load of a line the receiver owns.
 */
#ifndef BTL_SM_SM_FASTBOX_H
#define BTL_SM_SM_FASTBOX_H

#include "btl/sm/sm.h"
#include "base/copy.h"

#include <string.h>

#define BTL_SM_FBOX_MSG 1ULL
#define BTL_SM_FBOX_SKIP 2ULL
#define BTL_SM_FBOX_ALIGN 8
#define BTL_SM_FBOX_SMALL 32
#define BTL_SM_FBOX_MIN 1024

/* Entries of up to BTL_SM_FBOX_SMALL bytes take exactly that many: a
 * stream of them (0-8 byte messages and the pml's credit returns among
 * them) stays on 32-byte boundaries, where none straddles two lines (with
 * 24 and 16 byte entries mixed in, every fourth 8-byte message did, and
 * its receiver waited for the second line: 0-8 B ping-pong 2-3% slower,
 * 8% in the VM's slow mode). */
static inline size_t btl_sm_fbox_entry_size(size_t hdr_len, size_t payload_len)
{
    size_t n = RAIL_ALIGN_UP(8 + RAIL_ALIGN_UP(hdr_len, 8) + payload_len, BTL_SM_FBOX_ALIGN);
    return n < BTL_SM_FBOX_SMALL ? BTL_SM_FBOX_SMALL : n;
}

/* Copy or pack the payload into dst. */
static inline int btl_sm_copy_payload(void *dst, const btl_payload_t *payload)
{
    if (!payload || payload->len == 0)
        return MPI_SUCCESS;
    if (payload->data) {
        rail_copy(dst, payload->data, payload->len);
        return MPI_SUCCESS;
    }
    return payload->pack(payload->ctx, dst, payload->len);
}

/* The ring's first BTL_SM_FBOX_HOT bytes: an entry that would cross that
 * mark when the receiver has taken everything goes to the ring's start
 * instead (SKIP), so that traffic one message at a time stays on lines
 * both caches hold; streams, which find the receiver behind, use the
 * whole ring.  Ping-pong np 2 with a 4 KiB ring against 16 KiB: 256 B
 * 0.16 against 0.17-0.19 us, 1 KiB 0.19 against 0.26; a 4 KiB ring alone
 * cost 2-4 KiB streams 13-25%.  Entries of up to BTL_SM_FBOX_HOT_MIN bytes
 * go on (8 B ping-pong measured 2% slower in the small window). */
#define BTL_SM_FBOX_HOT 4096
#define BTL_SM_FBOX_HOT_MIN 128

/* Put one message in ep's fast box; RAIL_AGAIN when it does not fit now. */
static inline int btl_sm_fbox_send(btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                                   size_t hdr_len, const btl_payload_t *payload, size_t len)
{
    size_t size = btl_sm_fbox_entry_size(hdr_len, len);
    size_t ring = ep->out_mask + 1, pos = ep->out_head & ep->out_mask;
    size_t skip = pos + size > ring ? ring - pos : 0;
    if (RAIL_UNLIKELY(pos <= BTL_SM_FBOX_HOT && pos + size > BTL_SM_FBOX_HOT &&
                      size > BTL_SM_FBOX_HOT_MIN && ring > 2 * BTL_SM_FBOX_HOT &&
                      pos >= size + 8 && !skip)) {
        uint64_t consumed = rail_atomic_load_acquire(ep->out_consumed);
        ep->out_limit = consumed + ring;
        if (consumed == ep->out_head)
            skip = ring - pos;
    }
    uint64_t end = ep->out_head + skip + size;

    if (RAIL_UNLIKELY(end + 8 > ep->out_limit)) {
        ep->out_limit = rail_atomic_load_acquire(ep->out_consumed) + ring;
        if (end + 8 > ep->out_limit)
            return RAIL_AGAIN;
    }
    size_t at = skip ? 0 : pos;
    uint8_t *e = ep->fbox_out + at;
    *(uint64_t *)(ep->fbox_out + ((at + size) & ep->out_mask)) = 0;
    rail_copy(e + 8, hdr, hdr_len);
    int rc = btl_sm_copy_payload(e + 8 + RAIL_ALIGN_UP(hdr_len, 8), payload);
    if (RAIL_UNLIKELY(rc != MPI_SUCCESS))
        return rc;
    uint64_t word = (uint64_t)len | (uint64_t)hdr_len << 32 | (uint64_t)tag << 40 |
                    BTL_SM_FBOX_MSG << 48;
    rail_atomic_store_release((uint64_t *)e, word);
    if (skip)
        rail_atomic_store_release((uint64_t *)(ep->fbox_out + pos), BTL_SM_FBOX_SKIP << 48);
    ep->out_head = end;
    /* Ask for the next line of the ring for writing now, while the peer is
     * busy with this entry: the next send's terminator or entry will not
     * wait for it (measured ~1.5% lower ping-pong latency). */
    __builtin_prefetch(ep->fbox_out + (RAIL_ALIGN_UP(end + 1, RAIL_CACHELINE) & ep->out_mask), 1, 3);
    btl_sm_wake(ep->hdr);
    return MPI_SUCCESS;
}

static inline void btl_sm_fbox_publish(btl_endpoint_t *ep, uint64_t tail)
{
    ep->in_published = tail;
    rail_atomic_store_release(ep->in_consumed, tail);
}

/* Deliver what ep has put in our ring; returns the number of messages.
 * `all`: everything (before a frag of ep's from the FIFO, which must come
 * after); otherwise a poll may leave the rest for the next one (below). */
static inline int btl_sm_fbox_poll(btl_sm_module_t *m, btl_endpoint_t *ep, bool all)
{
    uint8_t *ring = ep->fbox_in;
    uint64_t tail = ep->in_tail;
    size_t half = (ep->in_mask + 1) / 2;
    int n = 0;

    if (!ring)
        return 0;
    for (;;) {
        size_t pos = tail & ep->in_mask;
        uint64_t word = rail_atomic_load_acquire((uint64_t *)(ring + pos));
        if (word == 0)
            break;
        if (RAIL_UNLIKELY((word >> 48) == BTL_SM_FBOX_SKIP)) {
            tail += ep->in_mask + 1 - pos;
            continue;
        }
        size_t len = (uint32_t)word, hdr_len = (word >> 32) & 0xff;
        const uint8_t *h = ring + pos + 8;
        btl_sm_deliver(m, ep, (uint8_t)(word >> 40), h, hdr_len, h + RAIL_ALIGN_UP(hdr_len, 8),
                       len);
        tail += btl_sm_fbox_entry_size(hdr_len, len);
        n++;
        if (tail - ep->in_published >= half)
            btl_sm_fbox_publish(ep, tail);
        /* A lone message so far, and the next word in a line this poll has
         * not read: leave that to the next poll.  Reading it now waits for
         * a line the sender holds (it wrote the terminator there) between
         * this message and whatever the caller does about it, such as the
         * reply of a ping-pong (measured 3-5% of the 8-byte latency); a
         * poll that found several goes on, as a stream would. */
        if (RAIL_UNLIKELY((tail & (RAIL_CACHELINE - 1)) == 0) && n == 1 && !all)
            break;
    }
    ep->in_tail = tail;
    if (n)
        btl_sm_fbox_publish(ep, tail);
    return n;
}

static inline bool btl_sm_fbox_pending(const btl_endpoint_t *ep)
{
    return ep->fbox_in &&
           rail_atomic_load_acquire((uint64_t *)(ep->fbox_in + (ep->in_tail & ep->in_mask))) != 0;
}

/* sm_fastbox.c */
void btl_sm_fbox_setup(btl_sm_module_t *m, btl_endpoint_t *ep);
size_t btl_sm_fbox_slot(int sender, int receiver);

#endif
