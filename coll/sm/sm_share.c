/*
 * coll sm: SHARED SINGLE COPY.  One process copies by CMA at a fraction of
 * memcpy's rate (the kernel's work per page: 12-13 GB/s on the 2-core VMs),
 * and where a single-copy collective's reader takes data from a process
 * that would only wait meanwhile (a bcast's root, a gather's sender), that
 * process can write part of it: two processes copying different chunks
 * move twice as much or more (np 2 bcast of 1 MiB: 21 us against 58).
 *
 * The reader publishes in its control words what it reads (src: the
 * address in the helper; len), where it goes (dst) and a claim word,
 * generation << 32 | chunks the helper claimed << 16 | chunks the reader
 * claimed.  It claims chunks from the front (one atomic add each) and
 * reads them; the helper claims chunks from the back (compare and swap)
 * and writes them with process_vm_writev, counting each one finished in
 * the reader's done word (SM_SHARE_FAILED added too where the kernel refused
 * the write: the reader copies that chunk itself, and this helper stops
 * helping on this communicator).  Before it returns the reader waits for
 * the chunks the helper claimed: each is being written.  The generation
 * names the operation and the helper, so a helper never claims from a
 * word published for another operation or another helper; a helper that
 * comes late claims nothing and the reader copies it all.  Not on an
 * oversubscribed node: a helper waiting for a CPU would seldom run while
 * the reader copies.
 */
#include "coll/sm/coll_sm.h"

#include <sched.h>

#define SM_SHARE_CHUNK_MIN ((size_t)32 << 10)
/* a chunk the helper failed to write: the done word counts these in its
 * upper half (a bit of its own would carry away when two fail) */
#define SM_SHARE_FAILED ((uint64_t)1 << 32)
#define SM_SHARE_MINE(w) ((uint32_t)((w) & 0xffff))
#define SM_SHARE_HELPERS(w) ((uint32_t)(((w) >> 16) & 0xffff))
/* polls of a helper whose readers have not published yet, before it stops */
#define SM_SHARE_PATIENCE 4096

static uint32_t share_gen(uint64_t s, int helper)
{
    return ((uint32_t)s << 10 ^ (uint32_t)helper) | 0x80000000u;   /* never an unused 0 */
}

/* Four chunks, or two below 256 KiB: each is one system call, which costs
 * about a microsecond besides the copy (np 2 bcast of 64 KiB in two 32 KiB
 * chunks: 2.4-2.6 against 2.8-3.1 us read alone; four 16 KiB chunks were
 * slower than reading alone). */
static size_t share_chunk(size_t len)
{
    size_t parts = len >= ((size_t)256 << 10) ? 4 : 2;
    return RAIL_ALIGN_UP(RAIL_MAX(len / parts, SM_SHARE_CHUNK_MIN), (size_t)4096);
}

bool coll_sm_share_on(const coll_sm_module_t *m, size_t bytes, size_t min)
{
    return min > 0 && bytes >= min && !m->oversub && m->cma && bytes >= 2 * SM_SHARE_CHUNK_MIN;
}

int coll_sm_share_read(coll_sm_module_t *m, uint64_t s, int helper, uint64_t remote, char *dst,
                       size_t len, uint64_t *chunks_in)
{
    coll_sm_ctl_t *me = coll_sm_ctl(m, m->me);
    int32_t pid = coll_sm_ctl(m, helper)->pid;
    size_t chunk = share_chunk(len);
    uint32_t nch = (uint32_t)((len + chunk - 1) / chunk), mine = 0;
    uint64_t my_chunks = 0;
    rail_atomic_store_relaxed(&me->share_done, 0);
    me->share_dst = (uint64_t)(uintptr_t)dst;
    me->share_src = remote;
    me->share_len = len;
    rail_atomic_store_release(&me->share_claim, (uint64_t)share_gen(s, helper) << 32);
    int rc = MPI_SUCCESS;
    for (;;) {
        uint64_t w = rail_atomic_fetch_add(&me->share_claim, 1);
        if (SM_SHARE_MINE(w) + SM_SHARE_HELPERS(w) >= nch)
            break;
        uint32_t i = SM_SHARE_MINE(w);
        size_t off = (size_t)i * chunk;
        if (rc == MPI_SUCCESS)
            rc = coll_sm_cma_read(pid, remote + off, dst + off, RAIL_MIN(chunk, len - off));
        my_chunks |= (uint64_t)1 << i;
        mine++;
    }
    /* the helper's chunks: each one it claimed is being written now */
    uint64_t done;
    for (unsigned spins = 0;
         (uint32_t)(done = rail_atomic_load_acquire(&me->share_done)) < nch - mine; spins++) {
        if (spins < 1024)
            rail_cpu_relax();
        else
            sched_yield();
    }
    /* nobody claims from this word any more (the next share republishes) */
    rail_atomic_store_relaxed(&me->share_claim, 0);
    if (nch > mine)
        rail_atomic_add_fetch(chunks_in, nch - mine);
    for (uint32_t i = 0; done >= SM_SHARE_FAILED && i < nch && rc == MPI_SUCCESS; i++)
        if (!(my_chunks & ((uint64_t)1 << i))) {
            size_t off = (size_t)i * chunk;
            rc = coll_sm_cma_read(pid, remote + off, dst + off, RAIL_MIN(chunk, len - off));
        }
    return rc;
}

/* One chunk for reader j, if its word offers one: whether one was written. */
static bool share_one(coll_sm_module_t *m, coll_sm_ctl_t *cj, uint32_t gen, bool *pending)
{
    uint64_t w = rail_atomic_load_acquire(&cj->share_claim);
    if ((uint32_t)(w >> 32) != gen) {
        *pending = true;   /* not published yet (or reading alone: its FINAL comes) */
        return false;
    }
    size_t len = cj->share_len, chunk = share_chunk(len);
    uint32_t nch = (uint32_t)((len + chunk - 1) / chunk);
    if (SM_SHARE_MINE(w) + SM_SHARE_HELPERS(w) >= nch)
        return false;
    *pending = true;
    if (!rail_atomic_cas(&cj->share_claim, &w, w + ((uint64_t)1 << 16)))
        return false;
    size_t off = (size_t)(nch - 1 - SM_SHARE_HELPERS(w)) * chunk;
    /* (refused: the reader copies the chunk itself; coll_sm_share_refuse
     * pretends so, for the tests, and keeps helping) */
    bool ok = !coll_sm_params.share_refuse &&
              coll_sm_cma_write(cj->pid, cj->share_dst + off,
                                (const char *)(uintptr_t)cj->share_src + off,
                                RAIL_MIN(chunk, len - off)) == MPI_SUCCESS;
    rail_atomic_fetch_add(&cj->share_done, ok ? 1 : 1 + SM_SHARE_FAILED);
    if (!ok && !coll_sm_params.share_refuse)
        m->share_off = true;
    return true;
}

void coll_sm_share_help(coll_sm_module_t *m, uint64_t s, int reader)
{
    uint32_t gen = share_gen(s, m->me);
    for (unsigned idle = 0; idle < SM_SHARE_PATIENCE && !m->share_off;) {
        bool pending = false, did = false;
        for (int j = reader < 0 ? 0 : reader; j < (reader < 0 ? m->n : reader + 1); j++) {
            if (j == m->me || coll_sm_flag(m, j) >= COLL_SM_V(s, COLL_SM_FINAL))
                continue;
            did |= share_one(m, coll_sm_ctl(m, j), gen, &pending);
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
