/*
 * coll sm: publishing flags and waiting for them (see coll_sm.h, WAITING).
 *
 *   waiter (after spinning and yielding)     publisher
 *   sleepers += 1; fence                     flag = v            (seq_cst)
 *   g = gen                                  if sleepers:        (seq_cst)
 *   if condition still false:                  gen += 1
 *     FUTEX_WAIT(gen, g, timeout)              FUTEX_WAKE(gen, all)
 *   sleepers -= 1
 *
 * Either the publisher sees the sleeper (and changes gen, so a FUTEX_WAIT
 * that has not started yet returns at once), or the sleeper's re-check
 * sees the flag.  A publisher pays one load of a line that only changes
 * when someone goes to sleep.  The sleep waits on btl sm's futex word as
 * well (rail_progress_sleep_on, futex_waitv): point-to-point traffic for
 * this process wakes it as it would a point-to-point wait (the sender of a
 * buffered or nonblocking send that then waits here in a barrier must
 * answer the receiver's rendezvous; with the gen word alone it did so
 * once per timeout: an MPICH test of 4096 Bsends took 10-14 s against
 * 0.4-0.7 s in Open MPI and MPICH).  The timeout bounds the cost of a
 * wakeup lost all the same, and where the kernel lacks futex_waitv, how
 * long point-to-point work waits.
 *
 * A `nofence` segment (coll_sm.h, WAITING) moves the publisher's fence to
 * the sleeper:
 *
 *   sleepers += 1; membarrier(GLOBAL_EXPEDITED)   flag = v     (release)
 *   ... as above                                  if sleepers: (no fence)
 *
 * membarrier returns after every running thread of every registered
 * process has run a full barrier (a descheduled one passed through the
 * scheduler's).  Where that barrier falls in the publisher's program order
 * decides: after its flag store, the store is visible before the sleeper
 * re-checks; before it, the sleeper's increment is visible before the
 * publisher reads `sleepers`.  Every process that publishes without the
 * fence has registered (a process that could not publishes with it), and
 * the segment's creator decided `nofence` for all, so each sleeper knows
 * whether to fence.
 */
#include "coll/sm/coll_sm.h"
#include "coll/sm/sm_slots.h"
#include "base/futex.h"
#include "base/progress.h"

#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SM_SLEEP_TIMEOUT_NS (5 * 1000 * 1000)
#define SM_OVERSUB_SPIN 16

uint64_t coll_sm_count_sleeps, coll_sm_count_sleep_fences, coll_sm_count_sleep_timeouts,
    coll_sm_count_sleep_p2p_wakes;

static long sm_membarrier(int cmd)
{
    return syscall(SYS_membarrier, cmd, 0, 0);
}

bool coll_sm_membarrier_registered(void)
{
    static int state;   /* 0 not asked yet, 1 registered, -1 refused */
    int s = rail_atomic_load_relaxed(&state);
    if (s == 0) {
        s = sm_membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0 ? 1 : -1;
        rail_atomic_store_relaxed(&state, s);
    }
    return s > 0;
}

static void sm_publish(coll_sm_module_t *m, uint64_t *word, uint64_t v)
{
    coll_sm_hdr_t *h = m->hdr;
    uint32_t sleeping;
    if (RAIL_LIKELY(m->nofence)) {
        rail_atomic_store_release(word, v);
        /* the compiler keeps the load after the store; the sleeper's
         * membarrier orders them for the CPU */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        sleeping = rail_atomic_load_relaxed(&h->sleepers);
    } else {
        __atomic_store_n(word, v, __ATOMIC_SEQ_CST);
        sleeping = __atomic_load_n(&h->sleepers, __ATOMIC_SEQ_CST);
    }
    if (RAIL_UNLIKELY(sleeping != 0)) {
        __atomic_add_fetch(&h->gen, 1, __ATOMIC_SEQ_CST);
        rail_futex(&h->gen, FUTEX_WAKE, INT_MAX, NULL);
    }
}

void coll_sm_post(coll_sm_module_t *m, uint64_t v)
{
    sm_publish(m, &coll_sm_ctl(m, m->me)->flag, v);
}

void coll_sm_slot_post(coll_sm_module_t *m, int set, uint64_t t)
{
    sm_publish(m, &coll_sm_slot(m, m->me, set)->seq, t);
}

/* The condition: flag[r] >= v (set < 0) or slot[r][set].seq >= v, for r in
 * [lo, hi) but me; *lo advances past the ranks already seen there.  Or
 * (alt >= 0) flag[alt] >= alt_v, or with alt_slot slot[alt][alt_set].seq
 * >= alt_v. */
typedef struct sm_cond {
    int lo, hi;
    int set;
    uint64_t v;
    int alt;
    uint64_t alt_v;
    bool alt_slot;
    int alt_set;
    uint32_t pf;        /* offset in the awaited slot of a line to prefetch
                         * while spinning (SPILL LINE); 0: none */
} sm_cond_t;

static inline uint64_t sm_word(coll_sm_module_t *m, const sm_cond_t *c, int r)
{
    if (c->set < 0)
        return coll_sm_flag(m, r);
    return rail_atomic_load_acquire(&coll_sm_slot(m, r, c->set)->seq);
}

/* alt: the rank awaited (its flag, a slot wait's alternative) */
#define SM_ALT_SAME (-2)

static inline bool sm_done(coll_sm_module_t *m, sm_cond_t *c)
{
    for (; c->lo < c->hi; c->lo++)
        if (c->lo != m->me && !COLL_SM_REACHED(sm_word(m, c, c->lo), c->v)) {
            if (c->alt == -1)
                return false;
            int a = c->alt == SM_ALT_SAME ? c->lo : c->alt;
            return COLL_SM_REACHED(c->alt_slot ? rail_atomic_load_acquire(
                                                     &coll_sm_slot(m, a, c->alt_set)->seq)
                                               : coll_sm_flag(m, a),
                                   c->alt_v);
        }
    return true;
}

static void sm_sleep(coll_sm_module_t *m, sm_cond_t *c)
{
    coll_sm_hdr_t *h = m->hdr;
    __atomic_add_fetch(&h->sleepers, 1, __ATOMIC_SEQ_CST);
    rail_atomic_fence();
    if (rail_atomic_load_relaxed(&h->nofence)) {
        if (sm_membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0) {
            /* refused to this process alone: it yields instead of sleeping */
            __atomic_sub_fetch(&h->sleepers, 1, __ATOMIC_SEQ_CST);
            sched_yield();
            return;
        }
        coll_sm_count_sleep_fences++;
    }
    coll_sm_count_sleeps++;
    uint32_t g = __atomic_load_n(&h->gen, __ATOMIC_SEQ_CST);
    if (!sm_done(m, c)) {
        int how = rail_progress_sleep_on(&h->gen, g, SM_SLEEP_TIMEOUT_NS);
        coll_sm_count_sleep_timeouts += how == RAIL_SLEEP_TIMEOUT;
        coll_sm_count_sleep_p2p_wakes += how == RAIL_SLEEP_P2P;
    }
    __atomic_sub_fetch(&h->sleepers, 1, __ATOMIC_SEQ_CST);
}

static void sm_wait_cond(coll_sm_module_t *m, sm_cond_t *c)
{
    if (RAIL_LIKELY(sm_done(m, c)))
        return;
    const unsigned spin = (unsigned)RAIL_MAX(coll_sm_params.spin_count, 0);
    const unsigned yield = coll_sm_params.yield_count < 0 ? UINT_MAX / 2
                                                           : (unsigned)coll_sm_params.yield_count;
    const unsigned s = m->oversub ? RAIL_MIN(spin, SM_OVERSUB_SPIN) : spin;
    for (unsigned i = 0;; i++) {
        if (sm_done(m, c))
            return;
        if (i < s) {
            if (c->pf != 0 && c->lo < c->hi)
                __builtin_prefetch((const char *)coll_sm_slot(m, c->lo, c->set) + c->pf);
            rail_cpu_relax();
            if ((i & 255) == 255)
                rail_progress();
        } else if (i < s + yield) {
            if (rail_progress() == 0)
                sched_yield();
        } else {
            sm_sleep(m, c);
            rail_progress();
            i = s + yield;   /* keep sleeping; no wrap */
        }
    }
}

void coll_sm_wait(coll_sm_module_t *m, int r, uint64_t v)
{
    sm_cond_t c = {r, r + 1, -1, v, -1, 0};
    sm_wait_cond(m, &c);
}

void coll_sm_wait_all(coll_sm_module_t *m, uint64_t v)
{
    sm_cond_t c = {0, m->n, -1, v, -1, 0};
    sm_wait_cond(m, &c);
}

void coll_sm_wait_range(coll_sm_module_t *m, int lo, int hi, uint64_t v)
{
    sm_cond_t c = {lo, RAIL_MIN(hi, m->n), -1, v, -1, 0};
    sm_wait_cond(m, &c);
}

void coll_sm_slot_wait(coll_sm_module_t *m, int r, int set, uint64_t t)
{
    sm_cond_t c = {r, r + 1, set, t, -1, 0};
    sm_wait_cond(m, &c);
}

/* SPILL LINE.  A reader that finds a slot published fetches its data
 * lines then; the first pair of lines comes with the sequence word it
 * polled (the adjacent-line prefetcher), so data that spill into the next
 * pair cost one more cross-core transfer after the wait (np 2 allreduce of
 * 112 B 0.27-0.28 us, of 128 B 0.34-0.39).  Where exactly one line lies
 * past the first pair, the waiter prefetches it with every spinning poll
 * of the slot it waits for: fetched in parallel with the poll that finds
 * the slot published, it is mostly there by then (128 B: 6-11% less
 * time, coll/sm/README.md).
 * Not more lines: prefetching lines the writer is still writing takes
 * them back from it line by line (np 2 allreduce of 512 B 0.53 -> 0.70 us
 * prefetching all). */
void coll_sm_slot_wait_all_data(coll_sm_module_t *m, int set, uint64_t t, size_t bytes)
{
    size_t end = COLL_SM_SLOT_HDR + bytes;
    sm_cond_t c = {0, m->n, set, t, -1, 0};
    if (end > 128 && end <= 192)
        c.pf = 128;
    sm_wait_cond(m, &c);
}

void coll_sm_slot_or_flag_wait_all(coll_sm_module_t *m, int set, uint64_t t, size_t bytes,
                                   uint64_t v)
{
    size_t end = COLL_SM_SLOT_HDR + bytes;
    sm_cond_t c = {0, m->n, set, t, SM_ALT_SAME, v, false, 0};
    if (end > 128 && end <= 192)
        c.pf = 128;
    /* (a rank found at its flag instead is passed over: the next) */
    for (sm_wait_cond(m, &c); c.lo < c.hi; sm_wait_cond(m, &c))
        c.lo++;
}

void coll_sm_slot_wait_range(coll_sm_module_t *m, int lo, int hi, int set, uint64_t t)
{
    sm_cond_t c = {lo, RAIL_MIN(hi, m->n), set, t, -1, 0};
    sm_wait_cond(m, &c);
}

void coll_sm_slot_wait_all(coll_sm_module_t *m, int set, uint64_t t)
{
    sm_cond_t c = {0, m->n, set, t, -1, 0};
    sm_wait_cond(m, &c);
}

void coll_sm_slot_or_flag_wait(coll_sm_module_t *m, int r, int set, uint64_t t, uint64_t v)
{
    sm_cond_t c = {r, r + 1, set, t, r, v, false, 0};
    sm_wait_cond(m, &c);
}

void coll_sm_flag_or_slot_wait(coll_sm_module_t *m, int r, uint64_t v, int set, uint64_t t)
{
    sm_cond_t c = {r, r + 1, -1, v, r, t, true, set};
    sm_wait_cond(m, &c);
}
