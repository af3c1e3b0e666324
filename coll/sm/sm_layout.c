/*
 * coll sm: the layout of a communicator's segment (coll_sm.h, SEGMENT),
 * decided by its creator from the parameters, the node's oversubscription
 * and the room in /dev/shm: buffers per set and their size, slots and
 * their size, bulk slots and their size (sm_small.c), and where each part
 * starts.  sm_segment.c makes the segment and writes the layout into its
 * header; every process takes it from there.
 */
#include "coll/sm/sm_layout.h"
#include "coll/sm/sm_slots.h"
#include "runtime/rte.h"

/* Bytes from one slot to the next: whole pairs of lines, so that the
 * adjacent-line prefetcher never couples two slots, and SM_SLOT_GUARD
 * bytes between them: a reader going through a slot's lines sets the
 * stream prefetcher going, and with slots back to back it fetched the next
 * slot's first lines, which the next operation's writers then had to take
 * back (np 2, 1 KiB alltoall through the slots: 0.34-0.43 us back to back,
 * 0.26-0.29 with 512 bytes between, 0.23-0.26 with 3 KiB; a page per slot
 * cost the smallest operations 5-12% in TLB misses, 128 slots per
 * process). */
#define SM_SLOT_GUARD 512
size_t coll_sm_slot_stride(size_t slot_size)
{
    return RAIL_ALIGN_UP(COLL_SM_SLOT_HDR + slot_size, (size_t)128) + SM_SLOT_GUARD;
}

/* Data bytes of a slot, and slots per process, in a segment we create. */
static size_t sm_slot_size(void)
{
    return RAIL_MIN(coll_sm_params.small_max, (size_t)1 << 20);
}
static int sm_slots_of(int asked)
{
    return RAIL_MIN(RAIL_MAX(asked, 2), 1024);
}
/* On an oversubscribed node, coll_sm_oversub_small_slots: a bcast root
 * that runs further ahead of its receivers leaves them more operations
 * to take in one turn on their core, and rewrites lines that they read
 * longer before (np 4 on 2 cores, 8 B: 0.41-0.45 us with 128 slots,
 * 0.37-0.38 with 1024; np 8 1.23-1.34 against 0.93-0.99). */
static int sm_slots(void)
{
    int over = coll_sm_params.oversub_small_slots;
    return sm_slots_of(rte_info.oversubscribed && over > 0 ? over : coll_sm_params.small_slots);
}

/* Where the first `slots` slots of each of n processes end (slot-major:
 * they lie together after slot_off). */
size_t coll_sm_slots_end(size_t slot_off, int n, int slots, size_t slot_size)
{
    return slot_off + (size_t)slots * (size_t)n * coll_sm_slot_stride(slot_size);
}

/* Slots in use at first (GROWTH in sm_small.c): coll_sm_small_slots_start,
 * where it and the slots are powers of two and it is fewer; else all.  At
 * least 2: with one, a writer would wait for everyone to have published
 * the very operation it is about to write. */
static int sm_slots_start(int slots)
{
    int s = RAIL_MAX(coll_sm_params.small_slots_start, 2);
    bool pow2 = (s & (s - 1)) == 0 && (slots & (slots - 1)) == 0;
    return coll_sm_params.small_slots_start > 0 && s < slots && pow2 ? s : slots;
}

/* Whether flags go without a fence and sleepers fence everyone by
 * membarrier (coll_sm_membarrier: -1 where the node is oversubscribed,
 * 0 never, 1 where it is not, 2 always). */
static bool sm_nofence(int mode, bool oversubscribed)
{
    return mode >= 2 || (mode == 1 && !oversubscribed) || (mode < 0 && oversubscribed);
}

/* Bytes a segment may take: coll_sm_segment_size, and at most a quarter of
 * what /dev/shm has free (containers often give it 64 MiB, which the btl
 * sm segments share; cached segments count as used). */
static size_t sm_budget(void)
{
    return RAIL_MIN(coll_sm_params.segment_size, rte_shm_free() / 4);
}

/* Slots (*slots of *slot_size data bytes per process) taking at most a
 * quarter of the budget: fewer of them (down to 16), then smaller ones
 * (down to 1 KiB), then fewer again (down to 2). */
static void sm_slot_plan(int n, size_t budget, int *slots, size_t *slot_size)
{
    *slots = sm_slots();
    *slot_size = sm_slot_size();
#define SM_SLOT_AREA ((size_t)n * (size_t)*slots * coll_sm_slot_stride(*slot_size))
    while (*slots > 16 && SM_SLOT_AREA > budget / 4)
        *slots /= 2;
    while (*slot_size > 1024 && SM_SLOT_AREA > budget / 4)
        *slot_size /= 2;
    while (*slots > 2 && SM_SLOT_AREA > budget / 4)
        *slots /= 2;
#undef SM_SLOT_AREA
}

/* Bulk slots per process (sm_small.c, BULK): as many as slots, halved
 * down to coll_sm_small_slots where an oversubscribed node has more slots
 * (the bulk slot k % bulk_slots serves slot k, so they divide slots): 1024
 * bulk slots of 8 KiB would take 8 MiB per process. */
static int sm_bulk_slots(int slots)
{
    int b = slots, base = sm_slots_of(coll_sm_params.small_slots);
    while (b > base && b % 2 == 0)
        b /= 2;
    return b;
}

/* Data bytes of a bulk slot (sm_small.c, BULK) for n processes of
 * `bulk_slots` bulk slots each: coll_sm_small_bulk_max, halved while the
 * bulk slots would take more than an eighth of the budget; 0 (none) where
 * that leaves no more than a slot holds. */
size_t coll_sm_bulk_stride(size_t bulk_size)
{
    return RAIL_ALIGN_UP(bulk_size, (size_t)128) + SM_SLOT_GUARD;
}
static size_t sm_bulk_plan(int n, size_t budget, int bulk_slots, size_t slot_size)
{
    size_t b = RAIL_MIN(coll_sm_params.small_bulk_max, (size_t)1 << 20);
    while (b > slot_size && (size_t)n * (size_t)bulk_slots * coll_sm_bulk_stride(b) > budget / 8)
        b /= 2;
    return b > slot_size ? b : 0;
}

/* Slots (sm_slot_plan), bulk slots (sm_bulk_plan), chunk (bytes of one
 * buffer, l->chunk asked) and total size for n processes: fewer buffers
 * per set (l->nbuf, down to 2), then smaller ones, when the full layout
 * would exceed the budget.  The bulk slots lie between the slots and the
 * data (l->bulk_off), populated by each process as it takes more of its
 * own in use (coll_sm_bulk_populate). */
static void sm_layout_sizes(int n, coll_sm_layout_t *l)
{
    size_t budget = sm_budget();
    sm_slot_plan(n, budget, &l->slots, &l->slot_size);
    l->bulk_slots = sm_bulk_slots(l->slots);
    l->bulk_size = sm_bulk_plan(n, budget, l->bulk_slots, l->slot_size);
    l->ctl_off = COLL_SM_PAGE;
    l->slot_off = RAIL_ALIGN_UP(l->ctl_off + (size_t)n * COLL_SM_CTL_STRIDE, (size_t)COLL_SM_PAGE);
    l->bulk_off = RAIL_ALIGN_UP(l->slot_off + (size_t)n * (size_t)l->slots *
                                                  coll_sm_slot_stride(l->slot_size),
                                (size_t)COLL_SM_PAGE);
    l->data_off = RAIL_ALIGN_UP(l->bulk_off + (l->bulk_size ? (size_t)n * (size_t)l->bulk_slots *
                                                                  coll_sm_bulk_stride(l->bulk_size)
                                                            : 0),
                                (size_t)COLL_SM_PAGE);
    size_t c = l->chunk, sets = (size_t)l->sets;
    while (l->nbuf > 2 && l->data_off + (size_t)n * sets * (size_t)l->nbuf * c > budget)
        l->nbuf /= 2;
    size_t per = (size_t)n * sets * (size_t)l->nbuf;   /* buffers */
    size_t room = budget > l->data_off ? (budget - l->data_off) / per : 0;
    c = RAIL_MIN(c, room);
    c = c / COLL_SM_PAGE * COLL_SM_PAGE;
    l->chunk = RAIL_MAX(c, (size_t)COLL_SM_PAGE);
    l->size = l->data_off + per * l->chunk;
}

void coll_sm_layout_plan(int n, coll_sm_layout_t *l)
{
    l->sets = RAIL_MIN(RAIL_MAX(coll_sm_params.sets, 2), COLL_SM_MAX_SETS);
    l->nbuf = RAIL_MIN(RAIL_MAX(coll_sm_params.buffers, 2), COLL_SM_MAX_BUFFERS);
    l->chunk = coll_sm_params.chunk_size;
    /* Oversubscribed: the same memory as fewer, larger buffers.  Every
     * round of an operation waits for every process, and there a wait
     * costs a process switch: np 4 on 2 cores, allreduce of 1 MiB
     * 387-412 -> 259-276 us with 256 KiB rounds (np 8 512 KiB 525 -> 350
     * us); bcast, allgather and alltoall unchanged. */
    int group = rte_info.oversubscribed ? RAIL_MIN(RAIL_MAX(coll_sm_params.oversub_group, 1),
                                                   l->nbuf / 2)
                                        : 1;
    l->nbuf /= group;
    l->chunk *= (size_t)group;
    sm_layout_sizes(n, l);
    l->slots_start = sm_slots_start(l->slots);
    l->nofence = sm_nofence(coll_sm_params.membarrier, rte_info.oversubscribed);
}
