/*
 * coll sm: SHARED SINGLE COPY (base/cma.h).  Where a single-copy
 * collective's reader takes data from a process that would only wait
 * meanwhile (a bcast's root, a gather's sender), that process writes part
 * of it: two processes copying different chunks move twice as much or
 * more (np 2 bcast of 1 MiB: 21 us against 58).
 *
 * The reader's words are in its control block (share_claim, share_done,
 * share_desc); the helper polls them, with no message: it helps only while
 * the reader has not posted FINAL, and waits a bounded number of polls
 * (SM_SHARE_PATIENCE) for readers that have not published yet.  The
 * generation names the operation and the helper, so a helper never claims
 * from a word published for another operation or another helper (a
 * gather's root reads from each sender in turn through one word).  A
 * helper whose write the kernel refused stops helping on this
 * communicator (the reader copies that chunk itself); coll_sm_share_refuse
 * pretends so, for the tests, and keeps helping.  Not on an oversubscribed
 * node: a helper waiting for a CPU would seldom run while the reader
 * copies.
 */
#include "coll/sm/coll_sm.h"
#include "coll/sm/sm_decide.h"

/* polls of a helper whose readers have not published yet, before it stops */
#define SM_SHARE_PATIENCE 4096

static uint32_t share_gen(uint64_t s, int helper)
{
    return ((uint32_t)s << 10 ^ (uint32_t)helper) | 0x80000000u;   /* never an unused 0 */
}

static rail_cma_share_ctl_t share_ctl(coll_sm_ctl_t *c)
{
    return (rail_cma_share_ctl_t){&c->share_claim, &c->share_done, &c->share_desc};
}

int coll_sm_share_read(coll_sm_module_t *m, uint64_t s, int helper, uint64_t remote, char *dst,
                       size_t len, uint64_t *chunks_in)
{
    rail_cma_share_ctl_t ctl = share_ctl(coll_sm_ctl(m, m->me));
    rail_cma_share_t t;
    rail_cma_share_publish(&t, &ctl, share_gen(s, helper), coll_sm_ctl(m, helper)->pid, dst,
                           remote, len, RAIL_CMA_QUIET);
    int rc = rail_cma_share_read(&t);
    if (t.helped)
        rail_atomic_add_fetch(chunks_in, t.helped);
    return coll_sm_cma_status(rc);
}

void coll_sm_share_help(coll_sm_module_t *m, uint64_t s, int reader)
{
    uint32_t gen = share_gen(s, m->me);
    unsigned flags = coll_sm_params.share_refuse ? RAIL_CMA_SHARE_REFUSE : 0;
    for (unsigned idle = 0; idle < SM_SHARE_PATIENCE && !m->share_off;) {
        bool pending = false, did = false;
        for (int j = reader < 0 ? 0 : reader; j < (reader < 0 ? m->n : reader + 1); j++) {
            if (j == m->me || coll_sm_flag(m, j) >= COLL_SM_V(s, COLL_SM_FINAL))
                continue;
            /* one chunk per reader and pass: a bcast's readers all get some */
            coll_sm_ctl_t *cj = coll_sm_ctl(m, j);
            rail_cma_share_ctl_t ctl = share_ctl(cj);
            bool failed = false;
            int n = rail_cma_share_help(&ctl, gen, cj->pid, 1, flags, &failed);
            pending |= n != 0;   /* -1: not published yet (or reading alone: its FINAL comes) */
            did |= n > 0;
            m->share_off |= failed && !coll_sm_params.share_refuse;
        }
        if (!pending)
            return;
        if (did) {
            idle = 0;
        } else {
            idle++;
            rail_cpu_relax();
        }
    }
}
