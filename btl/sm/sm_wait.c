/*
 * Sleeping: a futex word (`sleeping`) in each process's segment header.
 *
 *   receiver                               sender (after publishing)
 *   sleep_prepare: sleeping = 1; fence;    if wake_mode:
 *     recheck rings and FIFO;                fence; if sleeping and
 *     work -> sleeping = 0, "don't sleep"      exchange(sleeping, 0) == 1:
 *   sleep_block: FUTEX_WAIT(sleeping, 1,         FUTEX_WAKE(sleeping)
 *     timeout)
 *   sleep_finish: sleeping = 0
 *
 * sleep_wake (another thread of the receiver) does the sender's part
 * without the fence.
 *
 * The two fences make the pair a Dekker handshake: either the receiver's
 * recheck sees the message, or the sender sees sleeping == 1 and wakes it.
 * The exchange lets only one of many senders make the system call, and
 * FUTEX_WAIT returns at once when the word is already 0.  The futex is a
 * shared (not private) one: each process maps the segment at its own address.
 *
 * wake_mode keeps all of this off the fast path of processes that never
 * sleep: it is set in the segment header at creation when the node is
 * oversubscribed, or by the first sleep_prepare, which then declines to
 * sleep once so that a sender that read wake_mode == 0 just before has
 * drained its stores by the time the receiver rechecks its queues.  The
 * timeout bounds the cost of any wakeup lost all the same.
 */
#include "btl/sm/sm.h"
#include "btl/sm/sm_fastbox.h"
#include "btl/sm/sm_fifo.h"
#include "base/futex.h"

#include <limits.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

void btl_sm_wake_slow(btl_sm_seg_hdr_t *h)
{
    rail_atomic_fence();
    if (rail_atomic_load_relaxed(&h->sleeping) && rail_atomic_exchange(&h->sleeping, 0))
        rail_futex(&h->sleeping, FUTEX_WAKE, INT_MAX, NULL);
}

/* Anything to deliver (or a producer half way through a FIFO push)? */
bool btl_sm_work_pending(btl_sm_module_t *m)
{
    for (int i = 0; i < m->n_peers; i++)
        if (btl_sm_fbox_pending(m->peers[i]))
            return true;
    return btl_sm_fifo_pending(m);
}

bool btl_sm_sleep_prepare(btl_module_t *base)
{
    btl_sm_module_t *m = &btl_sm_module;
    btl_sm_seg_hdr_t *h = m->hdr;

    if (!m->mapped)
        return true;
    if (!rail_atomic_load_relaxed(&h->wake_mode)) {
        rail_atomic_store_relaxed(&h->wake_mode, 1);
        rail_atomic_fence();
        return false;
    }
    rail_atomic_exchange(&h->sleeping, 1);
    rail_atomic_fence();
    if (btl_sm_work_pending(m)) {
        rail_atomic_store_relaxed(&h->sleeping, 0);
        return false;
    }
    return true;
}

void btl_sm_sleep_block(btl_module_t *base, int timeout_ms)
{
    btl_sm_seg_hdr_t *h = btl_sm_module.hdr;
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};

    if (h && rail_atomic_load_acquire(&h->sleeping))
        rail_futex(&h->sleeping, FUTEX_WAIT, 1, timeout_ms < 0 ? NULL : &ts);
}

/* Another thread of this process ends our sleep_block() early. */
void btl_sm_sleep_wake(btl_module_t *base)
{
    btl_sm_seg_hdr_t *h = btl_sm_module.hdr;
    if (h && rail_atomic_exchange(&h->sleeping, 0))
        rail_futex(&h->sleeping, FUTEX_WAKE, INT_MAX, NULL);
}

/* The word sleep_block() waits on: 1 while we sleep, 0 once a sender has
 * woken us (or sleep_prepare declined). */
uint32_t *btl_sm_sleep_word(btl_module_t *base, uint32_t *val)
{
    btl_sm_seg_hdr_t *h = btl_sm_module.hdr;
    *val = 1;
    return h ? &h->sleeping : NULL;
}

void btl_sm_sleep_finish(btl_module_t *base)
{
    if (btl_sm_module.hdr)
        rail_atomic_store_relaxed(&btl_sm_module.hdr->sleeping, 0);
}
