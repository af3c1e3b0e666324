/*
 * coll sm: the decisions that are not on the small operations' path
 * (sm_decide.h describes them all; those on that path are static inline
 * there): a bcast's path, the step 1 of allgather and alltoall, single
 * copy on an oversubscribed node, shared single copy, device to device.
 */
#include "coll/sm/sm_decide.h"
#include "base/log.h"

#include <string.h>

/* bcasts below this many bytes are timed once in 64 calls, not 8 */
#define COLL_SM_TIMED_RARE_MAX ((size_t)256 << 10)

/* BCAST (sm_bcast.c).  The root's path for d: forced single copy, or chosen by measured time
 * between the segment, single copy and (AVX2) the segment written with
 * streaming stores (*a set when this call is to be timed and recorded
 * there), or the segment. */
int coll_sm_bcast_path(coll_sm_module_t *m, const coll_sm_data_t *d, rail_adapt_t **a)
{
    *a = NULL;
    if (!m->cma || !d->contig || d->device)
        return COLL_SM_PATH_SEGMENT;
    if (coll_sm_params.cma_min > 0 && d->bytes >= coll_sm_params.cma_min)
        return COLL_SM_PATH_CMA;
    const int paths = rail_copy_stream_offered() ? 3 : 2;
    if (coll_sm_params.adapt_alternate && coll_sm_params.adapt_min > 0 &&
        d->bytes >= coll_sm_params.adapt_min)
        return (int)(m->bcast_turn++ % (uint32_t)paths);   /* testing: every path in turn */
    /* oversubscribed: the segment, whose root fills buffers ahead while the
     * receivers wait for a CPU, was as fast or faster at every size (np 4
     * and 8 on 2 cores), and timing whole calls there costs more than it
     * tells.  Written with streaming stores or not, by the root's own time
     * (from coll_sm_adapt_min; coll_sm_bcast times it): on one VM np 4, 1 MiB,
     * streamed 79-94 us against 66-72 in its fast mode, but the plain
     * segment took 400 us in its slow one; on another, plain 25-30% faster
     * at np 3 and 4 (docs/performance.md, thirty-first run). */
    if (m->oversub) {
        if (paths < 3 || coll_sm_params.adapt_min == 0 || d->bytes < coll_sm_params.adapt_min)
            return paths == 3 ? COLL_SM_PATH_STREAM : COLL_SM_PATH_SEGMENT;
        rail_adapt_t *c = coll_sm_adapt_of(m, COLL_SM_ADAPT_BCAST_OVERSUB, d->bytes);
        bool measure;
        int streamed = rail_adapt_pick_every(c, 2, 8, &measure);
        *a = measure ? c : NULL;
        return streamed ? COLL_SM_PATH_STREAM : COLL_SM_PATH_SEGMENT;
    }
    if (coll_sm_params.adapt_min == 0 || d->bytes < coll_sm_params.adapt_min)
        return COLL_SM_PATH_SEGMENT;
    rail_adapt_t *c = coll_sm_adapt_of(m, COLL_SM_ADAPT_BCAST, d->bytes);
    bool measure;
    /* A timed call waits for everyone before and after it, and a call of
     * a few us loses its overlap with its neighbours: timed every 8th,
     * single-size launches of 64 KiB bcasts settled on single copy at 3-6
     * us against the segment's 1.7-2.0 (timed segment calls measured 9
     * us); every 64th, 1.86-1.99 (16 KiB 0.78 against 0.80-1.10).  A path
     * turning slow still shows within a few hundred calls. */
    unsigned period = d->bytes < COLL_SM_TIMED_RARE_MAX ? 64 : 8;
    int path = rail_adapt_pick_every(c, paths, period, &measure);
    *a = measure ? c : NULL;
    return path;
}

/* ALLGATHER AND ALLTOALL (sm_allgather.c).  Whether an allgather or
 * alltoall of `total` bytes takes step 1 (direct_announce): single copy
 * forced (or oversubscribed, for an alltoall:
 * coll_sm_oversub_alltoall_cma, rank 0 asking for the path of
 * coll_sm_oversub_alltoall_path), rank 0 timing the paths, or a device
 * component somewhere (the step tells who has device buffers); *want: the
 * path rank 0 asks for there (*a: this call is timed); *check_only: the
 * step would only tell who has device buffers (a process with host
 * buffers then carries that in round 0 instead: rounds_claim). */
bool coll_sm_step1_want(coll_sm_module_t *m, uint64_t s, int kind, size_t total, int *want,
                        rail_adapt_t **a, bool *check_only)
{
    bool over = kind == COLL_SM_ADAPT_ALLTOALL && coll_sm_oversub_alltoall_cma(m, total);
    bool forced = coll_sm_forced_cma(m, total) || over;
    bool agreed = coll_sm_agreed_blocks(m, total);
    *a = NULL;
    *check_only = false;
    if (!forced && !agreed && !coll_sm_device_check_blocks(m, total))
        return false;
    *check_only = !forced && !agreed;   /* the device check alone: it may ride on round 0 */
    /* (only rank 0's want counts: announced_want) */
    bool cma = coll_sm_forced_cma(m, total) ||
               (over && m->me == 0 && coll_sm_oversub_alltoall_wants_cma(total));
    *want = cma      ? COLL_SM_PATH_CMA
            : agreed ? coll_sm_agreed_want(m, s, kind, total, a)
                     : COLL_SM_PATH_SEGMENT;
    return true;
}

/* The probe (rail_cma_kernel_ratio): one process's 64 KiB copied by
 * memcpy and by the kernel.  The segment costs two memcpys (the writer's
 * and the reader's) and, oversubscribed, a process switch at each of its
 * rounds' waits; single copy one kernel copy and two waits.  So single
 * copy is taken while the kernel's copy is less than
 * RAIL_CMA_KERNEL_RATIO_MAX (4) times as slow as memcpy, not twice: where
 * it took 2.2 times (1.23 against 2.68 us), single copy won from 64 KiB
 * blocks at np 3, 4 and 8 (np 4: 27-30 against 45-47 us; np 8, 32 KiB
 * blocks 96 against 153-156), where it took 7.6 times (0.70 against 5.31)
 * the segment won (np 4, 32 KiB blocks 25-28 against 52-76).  Where the
 * kernel's is slower, the segment up to 8 times
 * coll_sm_oversub_alltoall_cma_min (1 MiB) in all: beyond, single copy won
 * anyway (np 8, 128 KiB blocks 497-537 us against 681-733). */
static int sm_oversub_cma = -1;

bool coll_sm_oversub_alltoall_wants_cma(size_t total)
{
    const char *path = coll_sm_params.oversub_alltoall_path;
    if (path != NULL && strcmp(path, "auto") != 0)
        return strcmp(path, "cma") == 0;
    if (total / 8 >= coll_sm_params.alltoall_cma_min)
        return true;
    if (sm_oversub_cma >= 0)
        return sm_oversub_cma == 1;
    double ratio = rail_cma_kernel_ratio();
    sm_oversub_cma = ratio < RAIL_CMA_KERNEL_RATIO_MAX;
    RAIL_VERBOSE(coll_sm_verbosity(), 1,
                 "coll sm: oversubscribed alltoalls: the kernel's 64 KiB copy takes %.1f times "
                 "memcpy's: %s", ratio, sm_oversub_cma ? "single copy" : "the segment");
    return sm_oversub_cma == 1;
}

bool coll_sm_share_on(const coll_sm_module_t *m, size_t bytes, size_t min)
{
    return min > 0 && bytes >= min && !m->oversub && m->cma && bytes >= RAIL_CMA_SHARE_MIN;
}

/* ------------------------------------------------------------ device buffers */

bool coll_sm_dev_eligible(const coll_sm_module_t *m, size_t bytes)
{
    return coll_sm_params.device_ipc && coll_sm_device_check(m, bytes);
}

bool coll_sm_dev_blocks_eligible(const coll_sm_module_t *m, size_t total)
{
    return coll_sm_params.device_ipc && coll_sm_device_check_blocks(m, total);
}

bool coll_sm_dev_red_eligible(const coll_sm_module_t *m, size_t bytes)
{
    size_t lo = coll_sm_params.device_ipc_reduce_min;
    return coll_sm_params.device_ipc &&
           ((!m->host_only && lo > 0 && bytes >= lo) || coll_sm_device_check(m, bytes));
}

bool coll_sm_dev_bcast_by_one(const coll_sm_module_t *m, size_t bytes)
{
    return m->n > 2 && bytes <= coll_sm_params.device_bcast_one_max;
}

bool coll_sm_dev_blocks_by_one(const coll_sm_module_t *m, size_t total)
{
    return m->n > 1 && total <= coll_sm_params.device_blocks_one_max;
}

bool coll_sm_dev_allreduce_by_one(const coll_sm_module_t *m, size_t bytes)
{
    return m->n > 1 && bytes <= coll_sm_params.device_allreduce_one_max;
}
