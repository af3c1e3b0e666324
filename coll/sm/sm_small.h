/*
 * coll sm: what the small operations' files share (sm_small.c: the
 * protocol, bcast, scatter, gather, barrier; sm_small_reduce.c;
 * sm_small_blocks.c: allgather, alltoall and the v forms).  Only those
 * files include it: the helpers are static inline, as they were static in
 * one file before, so every caller still inlines them.
 */
#ifndef COLL_SM_SMALL_H
#define COLL_SM_SMALL_H

#include "coll/sm/coll_sm.h"
#include "coll/sm/sm_slots.h"
#include "coll/sm/sm_decide.h"

#include <string.h>

/* Every other process published operation t or later. */
static inline void small_seen_all(coll_sm_module_t *m, uint64_t t)
{
    for (int p = 0; p < m->n; p++)
        m->small_seen[p] = RAIL_MAX(m->small_seen[p], t);
    m->small_min = RAIL_MAX(m->small_min, t);
}

/* Wait until every other process published operation `need` (so is done
 * with every operation before it).  What we learn is kept (small_seen),
 * and a process not known to be there is first asked about a later
 * operation, `probe` (>= need): when it is there, the operations up to
 * probe need not ask it again. */
static inline void small_wait_published(coll_sm_module_t *m, uint64_t need, uint64_t probe)
{
    uint64_t least = UINT64_MAX;
    for (int p = 0; p < m->n; p++) {
        if (p == m->me)
            continue;
        if (m->small_seen[p] < need) {
            const coll_sm_slot_t *ps = coll_sm_slot(m, p, coll_sm_slot_of(m, probe));
            uint64_t v = rail_atomic_load_acquire(&ps->seq);
            if (v >= probe) {
                m->small_seen[p] = v;
            } else {
                coll_sm_slot_wait(m, p, coll_sm_slot_of(m, need), need);
                m->small_seen[p] = need;
            }
        }
        least = RAIL_MIN(least, m->small_seen[p]);
    }
    m->small_min = least;
}

/* ... operation need = t - window + 1 (window: the slots operation t
 * reuses), asking first about the operation half the window back from t:
 * so a bcast root, which reads nobody's slot otherwise, pays one cache
 * miss per process every window / 2 operations instead of one per
 * operation. */
static inline void small_claim(coll_sm_module_t *m, uint64_t t, uint64_t window)
{
    small_wait_published(m, t - window + 1, t - window / 2);
}

/* Wait until the root's slot `set` holds operation t; the slot. */
static inline const coll_sm_slot_t *small_wait_root(coll_sm_module_t *m, int root, int set,
                                                    uint64_t t)
{
    coll_sm_slot_wait(m, root, set, t);
    m->small_seen[root] = RAIL_MAX(m->small_seen[root], t);
    return coll_sm_slot(m, root, set);
}

/* Number the operation, wait until its slot is free; *set is the slot. */
static inline uint64_t small_begin(coll_sm_module_t *m, int *set)
{
    uint64_t t = ++m->small_seq, w = (uint64_t)m->slots_on;
    if (RAIL_UNLIKELY(t >= m->slots_until)) {
        coll_sm_slots_grow(m, t);   /* twice the slots from here (GROWTH) */
        w = (uint64_t)m->slots_on;
    } else {
        /* t % slots_on without a division (tens of cycles, on every operation) */
        m->small_set = m->small_set + 1 == m->slots_on ? 0 : m->small_set + 1;
    }
    /* the slot's last operation: t - w, or in a phase's first w operations
     * t - w / 2 (of the phase before: its slots are the first half) */
    if (RAIL_UNLIKELY(m->slots_on != m->slots_start) && t < COLL_SM_GROW_OPS * w + w)
        w /= 2;
    *set = m->small_set;
    if (t >= w && t - w + 1 > m->small_min)
        small_claim(m, t, w);
    return t;
}

/* The segment, set up at the first collective; false when there is none. */
static inline bool small_ready(coll_sm_module_t *m, obj_comm_t *comm, int *rc)
{
    if (m->state == COLL_SM_UNSET)
        *rc = coll_sm_segment_setup(m, comm);
    return *rc == MPI_SUCCESS && m->state == COLL_SM_READY;
}

/* Process j's block from its slot into count elements of dt at blk (at
 * most what each side holds; MPI_ERR_TRUNCATE / MPI_ERR_COUNT where the
 * lengths differ). */
static inline int small_take_block(const coll_sm_slot_t *sj, int j, void *blk, MPI_Count count,
                                   obj_datatype_t *dt)
{
    size_t b = (size_t)(count * dt->size);
    coll_sm_data_t d;
    coll_sm_data_init(&d, blk, count, dt);
    return SM_KEEP(coll_check_length(j, sj->len, b),
                   coll_sm_unpack(&d, 0, sj->data, RAIL_MIN((size_t)sj->len, b)));
}

/* Where the slot of the process before process j starts: block j, or 0
 * when block j starts at the end (empty blocks). */
static inline MPI_Count small_rot(const MPI_Count *starts, int j, MPI_Count count)
{
    return starts[j] == count ? 0 : starts[j];
}

/* Where rank r put blocks of len bytes (its slot `set` published): the
 * slot, or where they do not fit, the bulk slot whose number it wrote at
 * the start of the slot's data (BULK). */
static inline uint8_t *small_data(coll_sm_module_t *m, int r, int set, size_t len)
{
    coll_sm_slot_t *s = coll_sm_slot(m, r, set);
    if (len <= m->slot_size)
        return s->data;
    uint32_t k;
    memcpy(&k, s->data, sizeof(k));
    return coll_sm_bulk(m, r, (int)k);
}
/* ... where this process puts them for operation t in its slot `set`: the
 * slot, or its next bulk slot in turn (BULK), free once every other
 * process published the operation after the one that last used it. */
static inline uint8_t *small_data_mine(coll_sm_module_t *m, int set, uint64_t t, size_t len)
{
    coll_sm_slot_t *s = coll_sm_slot(m, m->me, set);
    if (len <= m->slot_size)
        return s->data;
    if (RAIL_UNLIKELY(m->bulk_count >= m->bulk_until))
        m->bulk_on = coll_sm_grown((uint64_t)m->bulk_on, (uint64_t)m->bulk_slots, m->bulk_count,
                                   &m->bulk_until);
    if (RAIL_UNLIKELY(m->bulk_ready < m->bulk_on))
        coll_sm_bulk_populate(m, m->bulk_on);
    /* in turn: never the one of this process's operation before (bulk_on >= 2) */
    uint32_t k = m->bulk_next;
    m->bulk_next = k + 1 >= (uint32_t)m->bulk_on ? 0 : k + 1;
    m->bulk_count++;
    uint64_t last = m->bulk_t[k];
    if (last != 0 && last + 1 > m->small_min)
        small_wait_published(m, last + 1, last + 1 + (t - last - 1) / 2);
    m->bulk_t[k] = t;
    memcpy(s->data, &k, sizeof(k));
    return coll_sm_bulk(m, m->me, (int)k);
}

/* An operation whose data went in bulk slots, in coll_sm_small_bulk. */
static inline void small_count_bulk(const coll_sm_module_t *m, size_t len)
{
    if (len > m->slot_size)
        rail_atomic_add_fetch(&coll_sm_count_small_bulk, 1);
}

/* A receiver's end of a small rooted operation: its slot says "done
 * reading". */
static inline void small_rooted_done(coll_sm_module_t *m, int set, uint64_t t)
{
    coll_sm_slot(m, m->me, set)->flags = 0;
    coll_sm_slot_post(m, set, t);
}

/* Whether gather sender j wrote its slot `set` for operation t with seq
 * flag-based operations begun (else it took the flag rounds). */
static inline bool small_gather_sent(coll_sm_module_t *m, int j, int set, uint64_t t, uint64_t seq)
{
    const coll_sm_slot_t *sj = coll_sm_slot(m, j, set);
    return COLL_SM_REACHED(rail_atomic_load_acquire(&sj->seq), t) &&
           (sj->flags & ~COLL_SM_SLOT_DEVICE) == COLL_SM_SLOT_ROOTED_AT(seq);
}

/* ROOTED OPERATIONS WITH DEVICE BUFFERS (reduce, gather) where some
 * process of the communicator has a device component (!host_only): a
 * non-root with host buffers writes its slot and leaves; one with device
 * buffers sets COLL_SM_SLOT_DEVICE instead of writing data, publishes t and
 * waits for the root's verdict in the root's slot flags
 * (small_sender_verdict).  The root, every slot read, gives it
 * (small_root_verdict): where every non-root has device buffers (so nobody
 * has left) all hand the call on; otherwise the root finishes the call
 * alone, the device non-roots' data coming by one message each with the
 * call's tag (every process takes one where a device component is
 * active). */
enum { SMALL_ALONE, SMALL_HANDOFF, SMALL_MIXED };

/* A device non-root, its slot published: true where everyone hands the
 * call on (*all_device: the root's buffers are device memory too), false
 * where it sends its data to the root. */
static inline bool small_sender_verdict(coll_sm_module_t *m, int set, uint64_t t, int root,
                                        bool *all_device)
{
    uint32_t f = small_wait_root(m, root, set, t)->flags;
    if (all_device)
        *all_device = f & COLL_SM_SLOT_ALL_DEVICE;
    return f & COLL_SM_SLOT_HANDOFF;
}

/* The root, every slot of the set read (dev: its own buffers are device
 * memory): SMALL_ALONE where nobody has device buffers (t not published
 * yet: the root does so once it has read), else the verdict, published
 * with t.  late: a gather's senders are not all on the slots (MISMATCHED
 * SIZES; their slots hold earlier operations): only those on them count,
 * and nobody hands the call on (the others run the flag rounds). */
static inline int small_root_verdict(coll_sm_module_t *m, int set, uint64_t t, bool dev, bool late)
{
    bool any = dev, all_others = !late;
    for (int p = 0; p < m->n; p++) {
        if (p == m->me || (late && !small_gather_sent(m, p, set, t, m->seq)))
            continue;
        bool d = coll_sm_slot(m, p, set)->flags & COLL_SM_SLOT_DEVICE;
        any = any || d;
        all_others = all_others && d;
    }
    if (!any)
        return SMALL_ALONE;
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    if (all_others)
        my->flags |= COLL_SM_SLOT_HANDOFF | (dev ? COLL_SM_SLOT_ALL_DEVICE : 0);
    coll_sm_slot_post(m, set, t);
    if (all_others)
        return SMALL_HANDOFF;
    rail_atomic_add_fetch(&coll_sm_count_small_mixed, 1);
    return SMALL_MIXED;
}


#endif
