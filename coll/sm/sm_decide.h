/*
 * coll sm: the decisions, apart from the data movement (as coll tuned's
 * tuned_decide.c): for a call, whether it goes through the slots and what
 * a slot holds, which path it takes (the segment, single copy, by measured
 * time), whether it goes device to device or to the next component.  Each
 * answer depends only on the call's sizes, the parameters and what the
 * module learnt at setup, so it is the same on every process where the
 * sizes are.  Those on the small operations' path are static inline here
 * (they compile into the operation as before); the others are in
 * sm_decide.c.  Decisions that need the other processes' answers (a step
 * of the operation, such as the verdicts on device buffers) stay with
 * their operation; the segment's layout is decided in sm_layout.c.
 */
#ifndef COLL_SM_SM_DECIDE_H
#define COLL_SM_SM_DECIDE_H

#include "coll/sm/coll_sm.h"

/* ------------------------------------------------------------ slots */

/* The bytes a slot of a call holds where `len` bytes go through the
 * slots: a slot's, a bulk slot's (BULK), or 0 where they fit neither. */
static inline size_t coll_sm_small_cap(const coll_sm_module_t *m, size_t len)
{
    return len <= m->slot_size ? m->slot_size : len <= m->bulk_size ? m->bulk_size : 0;
}

/* The most bytes in all a bcast or an allgather (an alltoall: its blocks
 * for the others) may have to go through the slots, whatever the segment
 * (before it is set up). */
static inline size_t coll_sm_small_limit(void)
{
    return coll_sm_params.small_max == 0
               ? 0
               : RAIL_MAX(coll_sm_params.small_max, coll_sm_params.small_bulk_max);
}

/* Whether blocks of b bytes, total in all, go through the slots (the
 * segment set up; the same answer everywhere where b is): up to
 * coll_sm_small_max in all in slots, or up to coll_sm_small_bulk_max in
 * all with each block in a slot or a bulk slot. */
static inline bool coll_sm_small_fits(const coll_sm_module_t *m, size_t b, size_t total)
{
    if (b == 0 || coll_sm_params.small_max == 0)
        return false;
    if (total <= coll_sm_params.small_max && b <= m->slot_size)
        return true;
    return total <= coll_sm_params.small_bulk_max && coll_sm_small_cap(m, b) > 0;
}

/* Whether a bcast of this many bytes goes through the slots (the segment
 * set up): a slot's data, or a bulk slot's (the same answer everywhere:
 * the sizes are the segment's). */
static inline bool coll_sm_small_bcast_fits(const coll_sm_module_t *m, size_t bytes)
{
    return coll_sm_small_fits(m, bytes, bytes);
}

/* Whether a scatter's or gather's blocks of b bytes go through the slots
 * (the same answer on every process: b is; the device hand-off size of
 * coll_sm_device_handoff_min keeps its meaning): what the parameters
 * allow (sm_small.c's small_blocks_fit sets the segment up and asks the
 * slots). */
static inline bool coll_sm_small_blocks_fit(size_t per_slot, size_t b)
{
    return b > 0 && per_slot <= coll_sm_params.small_max &&
           !(coll_sm_params.device_handoff_min > 0 && b >= coll_sm_params.device_handoff_min);
}

/* Whether a reduction's input of `need` bytes (its reduction type's) goes
 * through the slots: in a slot, or in a bulk slot (BULK) while each
 * process folds at most COLL_SM_SMALL_FOLD_MAX bytes (every process folds
 * every input there, in one step: beyond, the flag rounds' slices, each
 * process folding 1 / n, read less).  Bulk slots: np 2 allreduce of 2 KiB
 * 1.16-1.22 -> 1.00-1.03 us, reduce of 8 KiB 1.14 -> 0.80; np 4 on 2
 * cores, reduce of 2-8 KiB 1.7-20 -> 1.1-2.5 us (the next component's
 * trees or the flag rounds before), allreduce of 8 KiB 24 -> 13-14 (one
 * step instead of the slices' two, each a process switch); np 8, reduce
 * of 2-4 KiB 4.3-5.8 -> 2.1-2.8 (coll/sm/README.md, BULK). */
#define COLL_SM_SMALL_FOLD_MAX ((size_t)64 << 10)
static inline bool coll_sm_small_red_fits(const coll_sm_module_t *m, size_t need)
{
    if (need <= m->slot_size)
        return true;
    return need <= coll_sm_params.small_bulk_max && coll_sm_small_cap(m, need) > 0 &&
           need * (size_t)m->n <= COLL_SM_SMALL_FOLD_MAX;
}

/* ------------------------------------------------------------ reductions */

/* After the slots declined a reduction of `bytes` (root: a reduce's, -1:
 * an allreduce; all_dev: everyone's buffers are device memory): why it
 * goes to the next component by its size, or NULL (the same verdict on
 * every process).  coll_sm_reduce_min applies above the small reduces,
 * whose non-roots with host buffers do not wait. */
static inline const char *coll_sm_red_handoff(const coll_sm_module_t *m, size_t bytes, int root,
                                              bool all_dev)
{
    if (root >= 0 && bytes < coll_sm_params.reduce_min && !all_dev)
        return "small reduce (coll_sm_reduce_min)";
    if (root < 0 && m->n == 2 && !all_dev && bytes <= coll_sm_params.allreduce_pair_max)
        return "small allreduce of two processes (coll_sm_allreduce_pair_max)";
    return NULL;
}

/* ------------------------------------------------------------ paths */

/* Whether a reduction or gather of `bytes` (coll_sm_adapt_agree_min), or an
 * allgather or alltoall of `bytes` in all (coll_sm_adapt_blocks_min), has
 * its path chosen by time, rank 0 (a gather's root) announcing it in step
 * 1 (the same verdict on every process). */
static inline bool coll_sm_agreed_from(const coll_sm_module_t *m, size_t bytes, size_t min)
{
    return m->cma && min > 0 && bytes >= min && (!m->oversub || coll_sm_params.adapt_alternate);
}

static inline bool coll_sm_agreed(const coll_sm_module_t *m, size_t bytes)
{
    return coll_sm_agreed_from(m, bytes, coll_sm_params.adapt_agree_min);
}

static inline bool coll_sm_agreed_blocks(const coll_sm_module_t *m, size_t total)
{
    return coll_sm_agreed_from(m, total, coll_sm_params.adapt_blocks_min);
}

/* Whether an allgather or alltoall of `bytes` in all takes single copy
 * without timing (coll_sm_single_copy_min; oversubscribed too; still only
 * where every block can be read directly, agreed in step 1). */
static inline bool coll_sm_forced_cma(const coll_sm_module_t *m, size_t bytes)
{
    return m->cma && coll_sm_params.cma_min > 0 && bytes >= coll_sm_params.cma_min;
}

/* Whether an alltoall of `bytes` in all (blocks below coll_sm_alltoall_max)
 * on an oversubscribed node, where nothing is timed, takes its path from
 * coll_sm_oversub_alltoall_path instead of the segment
 * (coll_sm_oversub_alltoall_cma_min; not while testing alternates). */
static inline bool coll_sm_oversub_alltoall_cma(const coll_sm_module_t *m, size_t bytes)
{
    return m->cma && m->oversub && !coll_sm_params.adapt_alternate &&
           coll_sm_params.alltoall_cma_min > 0 && bytes >= coll_sm_params.alltoall_cma_min;
}

/* For a call whose path is chosen by time (coll_sm_agreed,
 * coll_sm_agreed_blocks), operation s: the path this process proposes
 * (rank 0's counts); on rank 0, when this call is to be timed, *a is set
 * (NULL elsewhere): the caller times from the end of its announcement
 * step (everyone has arrived: a rank 0 that came first would count the
 * others' lateness against the path; np 2 allgather of 1 MiB chose single
 * copy by two first segment samples of 370-430 us) until everyone's
 * FINAL. */
#define COLL_SM_ALLGATHER_STREAM_MIN ((size_t)4 << 20)
static inline int coll_sm_agreed_want(coll_sm_module_t *m, uint64_t s, int kind, size_t bytes,
                                      rail_adapt_t **a)
{
    bool measure;
    /* an alltoall, or an allgather of COLL_SM_ALLGATHER_STREAM_MIN bytes
     * in all, may also write the segment with streaming stores (smaller
     * allgathers lost more to trying a third path than it won: np 2, 64
     * KiB-1 MiB blocks) */
    const int paths = (kind == COLL_SM_ADAPT_ALLTOALL ||
                       (kind == COLL_SM_ADAPT_ALLGATHER && bytes >= COLL_SM_ALLGATHER_STREAM_MIN)) &&
                              rail_copy_stream_offered()
                          ? 3
                          : 2;
    *a = NULL;
    if (coll_sm_params.adapt_alternate)
        return (int)(s % (uint64_t)paths);   /* testing: every path, one after the other */
    if (m->me != 0)
        return COLL_SM_PATH_SEGMENT;
    rail_adapt_t *c = coll_sm_adapt_of(m, kind, bytes);
    int path = rail_adapt_pick_n(c, paths, &measure);
    if (measure)
        *a = c;
    return path;
}

/* Whether single copy is the path of an oversubscribed alltoall of
 * `total` bytes in all (coll_sm_oversub_alltoall_path; auto: by a probe
 * made once per process, and from 8 times coll_sm_oversub_alltoall_cma_min). */
bool coll_sm_oversub_alltoall_wants_cma(size_t total);

/* Whether an allgather or alltoall (kind: COLL_SM_ADAPT_ALLGATHER or
 * _ALLTOALL) of `total` bytes in all, operation s, takes step 1, the
 * announcement (sm_allgather.c): *want, the path rank 0 asks for there
 * (*a: this call is timed); *check_only: the step would only tell who has
 * device buffers. */
bool coll_sm_step1_want(coll_sm_module_t *m, uint64_t s, int kind, size_t total, int *want,
                        rail_adapt_t **a, bool *check_only);

/* Whether a gather of `total` bytes in all takes step 1 (GATHER BY SINGLE
 * COPY, sm_gather.c): host buffers everywhere, single copy forced or the
 * path chosen by time. */
static inline bool coll_sm_gather_timed(const coll_sm_module_t *m, size_t total)
{
    return m->host_only && (coll_sm_forced_cma(m, total) || coll_sm_agreed(m, total));
}

/* A bcast root's path for d (COLL_SM_PATH_*; *a set where this call is to
 * be timed and recorded there). */
int coll_sm_bcast_path(coll_sm_module_t *m, const coll_sm_data_t *d, rail_adapt_t **a);

/* SHARED SINGLE COPY (sm_share.c).  Whether a single-copy read of `bytes`
 * may be shared with its source process (from `min` bytes, the caller's
 * parameter: coll_sm_share_bcast_min or coll_sm_share_min; not
 * oversubscribed). */
bool coll_sm_share_on(const coll_sm_module_t *m, size_t bytes, size_t min);

/* ------------------------------------------------------------ device buffers */

/* Whether a gather, allgather or alltoall of `bytes` in all must first find out
 * whether some process has device buffers (then all hand it on:
 * coll_sm_device_handoff_min): only where a device component is active
 * somewhere in the communicator. */
static inline bool coll_sm_device_check(const coll_sm_module_t *m, size_t bytes)
{
    return !m->host_only && coll_sm_params.device_handoff_min > 0 &&
           bytes >= coll_sm_params.device_handoff_min;
}

/* The same for a gather, allgather or alltoall of `total` bytes in all
 * (coll_sm_device_blocks_min): step 1 first tells everyone who has device
 * buffers; with any, all go device to device or hand the call on. */
static inline bool coll_sm_device_check_blocks(const coll_sm_module_t *m, size_t total)
{
    return !m->host_only && coll_sm_params.device_blocks_min > 0 &&
           total >= coll_sm_params.device_blocks_min;
}

/* Whether a call's device buffers may go device to device (sm_device.c):
 * a bcast's or scatter's of `bytes` (coll_sm_device_handoff_min, where
 * coll_sm_device_ipc allows) */
bool coll_sm_dev_eligible(const coll_sm_module_t *m, size_t bytes);
/* ... of a gather, allgather or alltoall of `total` bytes (coll_sm_device_blocks_min) */
bool coll_sm_dev_blocks_eligible(const coll_sm_module_t *m, size_t total);
/* ... of an allreduce, reduce or reduce_scatter (coll_sm_device_ipc_reduce_min) */
bool coll_sm_dev_red_eligible(const coll_sm_module_t *m, size_t bytes);
/* an allreduce of `bytes` done by one process for everyone (the same
 * answer on every process) */
bool coll_sm_dev_allreduce_by_one(const coll_sm_module_t *m, size_t bytes);
/* a bcast of `bytes` from a root's device buffer done by the root alone
 * (the same answer on every process) */
bool coll_sm_dev_bcast_by_one(const coll_sm_module_t *m, size_t bytes);
/* an allgather or alltoall of `total` bytes done by process 0 for
 * everyone (the same answer on every process) */
bool coll_sm_dev_blocks_by_one(const coll_sm_module_t *m, size_t total);

#endif
