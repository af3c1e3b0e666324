/*
 * coll sm: small reductions, broadcasts, gathers, scatters, allgathers,
 * alltoalls and barriers through slots.
 *
 * Each process owns coll_sm_small_slots slots in the segment: a sequence
 * word, a flags word and a length, then the data bytes (coll_sm_small_max
 * of them, the first 48 in the sequence word's cache line).  Small
 * operations are numbered apart from the flag-based ones (m->small_seq,
 * from 1, the same at every process because collectives are called in the
 * same order); operation t uses slot t % slots of every process (slots in
 * use: GROWTH below).
 *
 *   allreduce, reduce: every process copies its input into its slot and
 *     publishes t, then waits until every slot of the set holds t (reduce:
 *     the root only; the non-roots with host buffers leave at once, and
 *     the root publishes t only once it has read every slot).  The result is
 *     x0 op (x1 op (... op x(n-1))) read from the slots, the order of the
 *     flat reduction (sm_reduce.c) and of basic, so every process gets the
 *     same bits.  For two processes and 8 bytes: one cache-line transfer
 *     each way, nothing else.
 *   reduce_scatter: as allreduce, but each process folds and stores only
 *     its own block (elements lo .. lo + cnt of everyone's input).  A
 *     process's slot holds its input rotated to start at the block of the
 *     next process (so at two processes each reader's block starts in the
 *     sequence word's line), without its own block, last, when it reads
 *     that from its buffer (nobody else does): np 2, 64-512 B blocks
 *     0.16-0.17 instead of 0.19-0.34 us.
 *   allgather (all blocks together at most small_max bytes): every
 *     process copies its block into its slot and publishes t, copies its
 *     own block locally, waits until every slot of the set holds t, and
 *     copies the other blocks out.  Nothing reads back its own slot: a
 *     line one core wrote and another read behaves as if moved to the
 *     reader (AMD): reading it back cost a transfer per line (np 2, 128 B: 0.21
 *     against 0.135 us); reductions fold their own input from the user's
 *     buffer where it holds the slot's bytes.
 *   alltoall (the blocks for the others together at most small_max
 *     bytes): every process copies the blocks for the others into its
 *     slot, the one for process me + 1 + i at position i (at two processes
 *     the other's block shares the sequence word's line), publishes t,
 *     copies its own block locally, waits until every slot of the set
 *     holds t and copies its block out of each (np 2, 8 B: 0.12-0.13 us
 *     against 0.20 through the flag rounds and Open MPI's 0.18).
 *   barrier (a communicator of at most coll_sm_tree_degree + 1 processes,
 *     whose barrier through the flags is a flat fan-in and fan-out):
 *     every process publishes t and waits until every slot of the set
 *     holds t, so at two processes the two arrivals cross at once instead
 *     of the fan-out's transfer following the fan-in's (np 2: 0.44 against
 *     0.58-0.66 us, Open MPI 0.49-0.51; np 3 on 2 cores 6 against 11.5).
 *   bcast: the root copies the data into its slot and publishes t without
 *     waiting; a receiver waits for the root's slot to hold t, copies the
 *     data out and publishes t in its own slot (no data: "done reading").
 *   scatter (the blocks for the others together at most small_max bytes):
 *     as bcast, the root's slot holding block j at position j, or j - 1
 *     after the root's; the root copies its own block locally.
 *   gather (a block at most small_max bytes): as reduce without the fold;
 *     the root copies each slot's block out.
 *   scan, exscan: each process waits for the slots of processes 0 ..
 *     me - 1 only and folds the prefix 0 .. me (exscan: .. me - 1) left
 *     to right, as basic's chain does, so the bits are basic's.  Only
 *     where no process has a device component (m->host_only): a verdict
 *     on device flags would make everyone wait for everyone (np 4 on 2
 *     cores, 8 B: 2.3 against 0.2 us), so there the next component's
 *     chain does them.
 *
 * Reuse: before writing its slot t % slots, a process waits until every
 * other process has published operation t - slots + 1 (for reductions
 * normally long true: one load per process of a line already in its
 * cache).  A process publishes operation x only after it finished operation
 * x - 1, reads included, so nobody still reads operation t - slots, the
 * last one that used the slot; a process runs at most slots - 1 small
 * operations ahead of the slowest.  Many slots let a bcast root run far
 * ahead, which matters most when processes outnumber cores (every wait
 * there costs a context switch).
 *
 * GROWTH: a new communicator uses only the first coll_sm_small_slots_start
 * slots of each process (16; slot-major, so they lie together), and twice
 * as many from operation COLL_SM_GROW_OPS times twice as many (256 from
 * the 2048th): with VMs whose hypervisor shadows the page tables, a
 * process's first touch of each slot page traps even after populating
 * (np 8, 256 slots: the first 256 allreduces of 4 B took 150 us each,
 * then 35), and a short-lived communicator now touches few of them.
 * slots_on is the count for operation t (coll_sm_slots_at), slot t %
 * slots_on.  The phases start at multiples of their count, so slot s of a
 * phase's first half was last used by operation t - slots_on / 2 (the
 * phase before), of its second half never: in a phase's first slots_on
 * operations small_begin waits for t - slots_on / 2 + 1 instead.
 *
 * Device buffers: reductions must run on the device, so a process with
 * device buffers sets COLL_SM_SLOT_DEVICE in its slot instead of copying
 * data.  Allreduce, reduce_scatter: every process sees every slot's flags,
 * and if any has the bit they all hand the call to the next module, or,
 * where every slot has it, go on device to device (the caller:
 * coll_sm_device_ipc_reduce_min).  Reduce, gather: the root alone sees
 * them all and publishes a verdict for the device non-roots in its slot
 * flags (ROOTED OPERATIONS below): all hand on, or the root finishes the
 * call with their data sent to it by messages.
 * Allgathers and alltoalls (not in place) with device buffers that coll
 * sm may move device to device say so in their slot flags instead of
 * staging, and if any slot says so all hand the call on to the flag path
 * (small_dev_want below).  Broadcasts, and allgathers and alltoalls
 * otherwise, move device data with accel copies and need no hand-off: a
 * contiguous device result of an allgather or
 * alltoall is assembled in host scratch (own block included, from the
 * slot or the host copy of the send buffer) and copied over at once, and
 * a contiguous device send buffer of an alltoall is copied to the host at
 * once, so each costs two copies, not one per block (an H100 under MPS
 * took ~10 us per copy: np 8 alltoall of 8 bytes 205 us with 15 copies).
 *
 * BULK.  A bcast larger than a slot and of at most coll_sm_small_bulk_max
 * bytes (and the segment's bulk_size) goes through the slots as well: the
 * root puts the data in its next bulk slot, in an area of their own
 * (coll_sm_bulk), and the length and that bulk slot's number in the slot;
 * readers take the data from where the length says.  So does an allgather of at most
 * coll_sm_small_bulk_max bytes in all, each block in its process's slot
 * or, larger than that, its bulk slot (where is decided by the receive
 * block's size, the same everywhere); and an alltoall whose blocks for the
 * others take at most that, all of them in the bulk slot where they do not
 * fit the slot; and a reduction whose input does not fit the slot, where
 * each process folds little enough (small_red_fits).  A process takes
 * its bulk slots in turn and reuses one once everyone published the
 * operation after its last use (small_data_mine);
 * like the slots (GROWTH), it has 16 in use at first, twice as many from
 * its 256th operation through them, ..., populating the new ones then: a
 * communicator that took all at once after thousands of small operations
 * cost np 8 on 2 cores a trapped first touch per page (950 us per
 * alltoall of 256 B for 128 calls, 40 after).  Larger slots would do the
 * same but cost the smallest operations in TLB misses (coll/sm/README.md).
 */
#include "coll/sm/coll_sm.h"
#include "accel/accel.h"
#include "obj/err.h"

#include <string.h>

uint64_t coll_sm_count_small_mixed;
uint64_t coll_sm_count_small_v;
uint64_t coll_sm_count_small_bulk;

/* Every other process published operation t or later. */
static void small_seen_all(coll_sm_module_t *m, uint64_t t)
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
static void small_wait_published(coll_sm_module_t *m, uint64_t need, uint64_t probe)
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
static void small_claim(coll_sm_module_t *m, uint64_t t, uint64_t window)
{
    small_wait_published(m, t - window + 1, t - window / 2);
}

/* Wait until the root's slot `set` holds operation t; the slot. */
static const coll_sm_slot_t *small_wait_root(coll_sm_module_t *m, int root, int set, uint64_t t)
{
    coll_sm_slot_wait(m, root, set, t);
    m->small_seen[root] = RAIL_MAX(m->small_seen[root], t);
    return coll_sm_slot(m, root, set);
}

/* Number the operation, wait until its slot is free; *set is the slot. */
static uint64_t small_begin(coll_sm_module_t *m, int *set)
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
static bool small_ready(coll_sm_module_t *m, obj_comm_t *comm, int *rc)
{
    if (m->state == COLL_SM_UNSET)
        *rc = coll_sm_segment_setup(m, comm);
    return *rc == MPI_SUCCESS && m->state == COLL_SM_READY;
}

/* Process j's block from its slot into count elements of dt at blk (at
 * most what each side holds; MPI_ERR_TRUNCATE / MPI_ERR_COUNT where the
 * lengths differ). */
static int small_take_block(const coll_sm_slot_t *sj, int j, void *blk, MPI_Count count,
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
static uint8_t *small_data(coll_sm_module_t *m, int r, int set, size_t len)
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
static uint8_t *small_data_mine(coll_sm_module_t *m, int set, uint64_t t, size_t len)
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
static size_t small_cap(const coll_sm_module_t *m, size_t len)
{
    return len <= m->slot_size ? m->slot_size : len <= m->bulk_size ? m->bulk_size : 0;
}

/* An operation whose data went in bulk slots, in coll_sm_small_bulk. */
static void small_count_bulk(const coll_sm_module_t *m, size_t len)
{
    if (len > m->slot_size)
        rail_atomic_add_fetch(&coll_sm_count_small_bulk, 1);
}

/* The most bytes in all a bcast or an allgather (an alltoall: its blocks
 * for the others) may have to go through the slots, whatever the segment
 * (before it is set up). */
static size_t small_limit(void)
{
    return coll_sm_params.small_max == 0
               ? 0
               : RAIL_MAX(coll_sm_params.small_max, coll_sm_params.small_bulk_max);
}

/* Whether blocks of b bytes, total in all, go through the slots (the
 * segment set up; the same answer everywhere where b is): up to
 * coll_sm_small_max in all in slots, or up to coll_sm_small_bulk_max in
 * all with each block in a slot or a bulk slot. */
static bool small_fits_total(const coll_sm_module_t *m, size_t b, size_t total)
{
    if (b == 0 || coll_sm_params.small_max == 0)
        return false;
    if (total <= coll_sm_params.small_max && b <= m->slot_size)
        return true;
    return total <= coll_sm_params.small_bulk_max && small_cap(m, b) > 0;
}

/* Whether a reduction's input of `need` bytes (its reduction type's) goes
 * through the slots: in a slot, or in a bulk slot (BULK) while each
 * process folds at most SM_SMALL_FOLD_MAX bytes (every process folds
 * every input there, in one step: beyond, the flag rounds' slices, each
 * process folding 1 / n, read less).  Bulk slots: np 2 allreduce of 2 KiB
 * 1.16-1.22 -> 1.00-1.03 us, reduce of 8 KiB 1.14 -> 0.80; np 4 on 2
 * cores, reduce of 2-8 KiB 1.7-20 -> 1.1-2.5 us (the next component's
 * trees or the flag rounds before), allreduce of 8 KiB 24 -> 13-14 (one
 * step instead of the slices' two, each a process switch); np 8, reduce
 * of 2-4 KiB 4.3-5.8 -> 2.1-2.8 (coll/sm/README.md, BULK). */
#define SM_SMALL_FOLD_MAX ((size_t)64 << 10)
static bool small_red_fits(const coll_sm_module_t *m, size_t need)
{
    if (need <= m->slot_size)
        return true;
    return need <= coll_sm_params.small_bulk_max && small_cap(m, need) > 0 &&
           need * (size_t)m->n <= SM_SMALL_FOLD_MAX;
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
static bool small_sender_verdict(coll_sm_module_t *m, int set, uint64_t t, int root,
                                 bool *all_device)
{
    uint32_t f = small_wait_root(m, root, set, t)->flags;
    if (all_device)
        *all_device = f & COLL_SM_SLOT_ALL_DEVICE;
    return f & COLL_SM_SLOT_HANDOFF;
}

static bool small_gather_sent(coll_sm_module_t *m, int j, int set, uint64_t t, uint64_t seq);

/* The root, every slot of the set read (dev: its own buffers are device
 * memory): SMALL_ALONE where nobody has device buffers (t not published
 * yet: the root does so once it has read), else the verdict, published
 * with t.  late: a gather's senders are not all on the slots (MISMATCHED
 * SIZES; their slots hold earlier operations): only those on them count,
 * and nobody hands the call on (the others run the flag rounds). */
static int small_root_verdict(coll_sm_module_t *m, int set, uint64_t t, bool dev, bool late)
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

/* A reduce's root, SMALL_MIXED: inputs in rank order into temporaries
 * where its own buffers are (device memory: the fold runs on the device),
 * from its buffer, the host slots, and the device non-roots' messages. */
static int small_reduce_mixed(coll_sm_module_t *m, obj_comm_t *comm, int set, const void *mine,
                              void *rbuf, MPI_Count count, obj_datatype_t *dt, obj_op_t *op,
                              int tag, int rc)
{
    coll_red_t r;
    void *amem = NULL, *xmem = NULL;
    char *acc = NULL, *x = NULL;
    /* (the pair was checked before: the slots took it) */
    rc = SM_KEEP(rc, coll_red_init(&r, op, dt, count, mine, rbuf));
    if (rc == MPI_SUCCESS) {
        acc = coll_red_tmp(&r, count, &amem);
        x = coll_red_tmp(&r, count, &xmem);
        if (acc == NULL || x == NULL)
            rc = obj_errf(MPI_ERR_NO_MEM, "coll sm: no memory for a reduce's temporaries");
    }
    MPI_Count N = rc == MPI_SUCCESS ? count * r.factor : 0;
    /* x0 op (x1 op (... op x(n-1))), as everywhere; every device sender's
     * message is received, even after an error */
    for (int p = m->n - 1; p >= 0; p--) {
        const coll_sm_slot_t *s = coll_sm_slot(m, p, set);
        char *to = p == m->n - 1 ? acc : x;
        int r2 = MPI_SUCCESS;
        if (p != m->me && (s->flags & COLL_SM_SLOT_DEVICE))
            r2 = rc == MPI_SUCCESS ? coll_recv(to, N, r.rdt, p, tag, comm)
                                   : coll_recv(NULL, 0, dt, p, tag, comm);
        else if (rc != MPI_SUCCESS)
            continue;
        else if (p == m->me)
            r2 = coll_red_load(&r, to, mine, count);
        else
            r2 = coll_copy(small_data(m, p, set, s->len), N, r.rdt, to, N, r.rdt);
        if (r2 == MPI_SUCCESS && rc == MPI_SUCCESS && p != m->n - 1)
            r2 = coll_red_apply(&r, x, acc, count);
        rc = SM_KEEP(rc, r2);
    }
    if (rc == MPI_SUCCESS)
        rc = coll_red_store(&r, rbuf, acc, count);
    if (acc)
        coll_red_tmp_free(&r, amem);
    if (x)
        coll_red_tmp_free(&r, xmem);
    return rc;
}

/* ((x0 op x1) op x2) ... op x(k-1), the order of basic's scan chain (each
 * step the prefix op the next input), into a and b in turn (a kernel's
 * output may not be its first input); the result, x0 itself for k = 1. */
static const char *small_fold_left(rail_op_t rop, rail_typekind_t kind, int k,
                                   const char *const *x, size_t len, char *a, char *b, int *rc)
{
    const char *acc = x[0];
    for (int i = 1; i < k && *rc == MPI_SUCCESS; i++) {
        char *out = acc == a ? b : a;
        *rc = rail_op_reduce3(rop, kind, acc, x[i], out, len);
        if (*rc != MPI_SUCCESS)
            *rc = obj_errf(*rc, "coll sm: reduction kernel failed");
        acc = out;
    }
    return acc;
}

/* MISMATCHED SIZES of allreduces and reduce_scatters (erroneous: counts
 * that differ between processes).  Processes whose inputs fit the slots
 * take them, the others the flag rounds (sm_reduce.c, sm_rscatter.c),
 * and each side waits for everyone: a process on the slots waits for each
 * other's slot or its first step of the next flag-based operation, and
 * tells from the slot's tag (the flag-based operations its writer had
 * begun, as MISMATCHED SIZES below) which path it took.  Finding any on
 * the flag rounds, it joins their operation and ends it at once (its
 * meta word saying it has begun one more small operation, and how many
 * bytes its input has) and reports the mismatch.  Those on the flag
 * rounds, once everyone's first step is in, find that word and stop
 * (coll_sm_red_first): they publish this small operation without data
 * (flags without the tag: nobody mistakes it for an input) and post
 * their FINAL.  Every process then has begun one more of each kind, so
 * later operations stay in step.  Reduces (whose non-roots on the slots
 * leave at once) and scans (whose larger calls go to the next component)
 * are not covered. */

/* The first other process found on the flag rounds instead of the slots
 * (its slot does not carry this call's tag), or -1; everyone's slot read
 * (reads: as coll_sm_slot_wait_all_data). */
static int small_red_late(coll_sm_module_t *m, int set, uint64_t t, size_t reads)
{
    coll_sm_slot_or_flag_wait_all(m, set, t, reads, COLL_SM_V(m->seq + 1, 1));
    uint32_t tag = COLL_SM_SLOT_ROOTED_AT(m->seq);
    for (int p = 0; p < m->n; p++) {
        const coll_sm_slot_t *sp = coll_sm_slot(m, p, set);
        if (p != m->me && (!COLL_SM_REACHED(rail_atomic_load_acquire(&sp->seq), t) ||
                           (sp->flags & ~COLL_SM_SLOT_DEVICE) != tag))
            return p;
    }
    return -1;
}

/* A process on the slots that found process `late` on the flag rounds:
 * their operation joined and ended; the mismatch reported. */
static int small_red_join(coll_sm_module_t *m, obj_comm_t *comm, int late, uint64_t bytes)
{
    uint64_t s;
    int rc = coll_sm_begin(m, comm, &s);
    if (rc != MPI_SUCCESS)   /* (cannot be: the segment is there) */
        return rc;
    int set = coll_sm_set(m, s);
    uint64_t theirs = coll_sm_red_meta_bytes(coll_sm_ctl(m, late)->meta[set]);
    coll_sm_claim_set(m, s);
    coll_sm_ctl(m, m->me)->meta[set] = coll_sm_red_meta(m, bytes);
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    return coll_check_length(late, (size_t)theirs, (size_t)(bytes & COLL_SM_RED_BYTES_MASK));
}

void coll_sm_small_pass(coll_sm_module_t *m)
{
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = 0;
    my->len = 0;
    coll_sm_slot_post(m, set, t);
}

bool coll_sm_small_reduce(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf, void *rbuf,
                          MPI_Count count, obj_datatype_t *dt, obj_op_t *op, int root,
                          MPI_Count lo, MPI_Count cnt, const coll_sm_blocks_t *blocks,
                          bool *handoff, bool *all_device, int *rc)
{
    *handoff = false;
    if (all_device)
        *all_device = false;
    *rc = MPI_SUCCESS;
    /* the same verdict on every process: count, datatype, op and the
     * parameters are the same */
    if (count <= 0 || (size_t)(count * dt->size) > small_limit())
        return false;
    coll_red_t r;
    rail_typekind_t kind;
    if (coll_sm_red_prepare(m, &r, &kind, op, dt, count, rc) || *rc != MPI_SUCCESS)
        return *rc != MPI_SUCCESS;
    size_t need = (size_t)(count * r.factor * r.rdt->extent);
    if (!small_ready(m, comm, rc))
        return *rc != MPI_SUCCESS;
    if (!small_red_fits(m, need) || need > 2 * m->chunk ||
        (root <= COLL_SM_SMALL_SCAN && (need > m->chunk || !m->host_only)))   /* (two halves) */
        return false;

    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    bool want = root < 0 || m->me == root;
    bool dev = coll_is_device(mine, count, dt) || (want && coll_is_device(rbuf, cnt, dt));
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = (dev ? COLL_SM_SLOT_DEVICE : 0) | COLL_SM_SLOT_ROOTED_AT(m->seq);
    my->len = (uint32_t)need;
    /* reduce_scatter: process p's slot starts with the block of p + 1 (its
     * input rotated), so at two processes each reader's block starts in
     * the sequence word's line */
    MPI_Count *starts = m->small_starts;
    if (blocks) {
        MPI_Count at = 0;
        for (int j = 0; j < m->n; j++) {
            starts[j] = at;
            at += blocks->counts ? blocks->counts[j] : blocks->count;
        }
    }
    /* (no divisions: a 64-bit one costs tens of cycles, more than the
     * whole fold of a few elements) */
#define SM_ROT(p) (blocks ? small_rot(starts, (p) + 1 == m->n ? 0 : (p) + 1, count) : 0)
    /* my input as a slot would hold it, where it is (NULL: not so) */
    char *src = NULL;
    if (!dev && r.rdt->size == r.rdt->extent)
        src = rail_dt_contig_ptr(dt->layout, count, (void *)(uintptr_t)mine);
    if (!dev) {
        /* rotated: position i holds element rot + i (mod count); of a
         * reduce_scatter, my own block (last) is read by nobody else */
        MPI_Count rot = SM_ROT(m->me), nw = blocks && src ? count - cnt : count;
        MPI_Count a = RAIL_MIN(nw, count - rot);
        uint8_t *to = small_data_mine(m, set, t, need);
        *rc = coll_copy_as(coll_elem(mine, dt, rot), a, r.udt, to, a * r.factor, r.rdt, false);
        if (nw > a)
            *rc = SM_KEEP(*rc, coll_copy_as(mine, nw - a, r.udt, coll_red_at(&r, to, a),
                                            (nw - a) * r.factor, r.rdt, false));
    }
    if (root >= 0) {
        /* a reduce: a non-root with host buffers leaves at once; a device
         * component somewhere (!host_only) costs one tag, taken by all */
        int tag = m->host_only ? 0 : coll_tag_next(comm);
        if (!want) {
            coll_sm_slot_post(m, set, t);
            if (!dev)
                small_count_bulk(m, need);
            if (dev && small_sender_verdict(m, set, t, root, all_device))
                *handoff = true;
            else if (dev)
                *rc = coll_send(mine, count, dt, root, tag, comm);
            return true;
        }
        coll_sm_slot_wait_all_data(m, set, t, need);
        small_seen_all(m, t);
        int v = m->host_only ? SMALL_ALONE : small_root_verdict(m, set, t, dev, false);
        if (v == SMALL_HANDOFF) {
            *handoff = true;
            if (all_device)
                *all_device = dev;
            return true;
        }
        if (v == SMALL_MIXED) {
            *rc = small_reduce_mixed(m, comm, set, mine, rbuf, count, dt, op, tag, *rc);
            return true;
        }
    } else if (root <= COLL_SM_SMALL_SCAN) {
        /* a scan (nobody can have device buffers, see above): only the
         * prefix's slots (process 0 waits for nobody) */
        coll_sm_slot_post(m, set, t);
        coll_sm_slot_wait_range(m, 0, m->me, set, t);
        for (int p = 0; p < m->me; p++)
            m->small_seen[p] = RAIL_MAX(m->small_seen[p], t);
    } else {
        coll_sm_slot_post(m, set, t);
        /* what I read from each slot: all of it, or (reduce_scatter) my
         * block, first at two processes */
        size_t reads = !blocks ? need : m->n == 2 ? (size_t)(cnt * r.factor * r.rdt->extent) : 0;
        int late = small_red_late(m, set, t, reads);
        if (RAIL_UNLIKELY(late >= 0)) {
            *rc = small_red_join(m, comm, late, (uint64_t)(count * dt->size));
            return true;
        }
        small_seen_all(m, t);
        for (int i = 0; i < m->n; i++) {
            if (coll_sm_slot(m, i, set)->flags & COLL_SM_SLOT_DEVICE) {
                /* the same verdict everywhere: everyone read the same slots */
                bool all = true;
                for (int j = 0; j < m->n && all; j++)
                    all = coll_sm_slot(m, j, set)->flags & COLL_SM_SLOT_DEVICE;
                if (all_device)
                    *all_device = all;
                *handoff = true;
                return true;
            }
        }
    }
    /* counts that differ between processes (erroneous, and never more
     * than a bulk slot here: larger ones took another path): each slot says how
     * many bytes its process put in; reported, nothing folded (the line
     * holding the length was read with the sequence word) */
    for (int p = 0; want && *rc == MPI_SUCCESS &&
                    p < (root <= COLL_SM_SMALL_SCAN ? m->me : m->n); p++) {
        size_t len = coll_sm_slot(m, p, set)->len;
        if (p != m->me && len != need)
            *rc = coll_check_length(p, len, need);
    }
    want = want && cnt > 0;
    /* its own input from the user's buffer when that holds the same bytes
     * as the slot: reading back its own slot after the others read it
     * costs about a transfer per line (see the allgather above) */
    for (int p = 0; want && *rc == MPI_SUCCESS &&
                    p < (root <= COLL_SM_SMALL_SCAN ? m->me + 1 : m->n); p++) {
        MPI_Count at = lo - SM_ROT(p);
        if (at < 0)
            at += count;
        m->small_x[p] = p == m->me && src ? coll_red_at(&r, src, lo)
                                          : coll_red_at(&r, small_data(m, p, set, need), at);
    }
#undef SM_ROT
    const char *res = m->scratch;
    if (root <= COLL_SM_SMALL_SCAN) {
        /* the prefix of processes 0 .. me (exscan: .. me - 1; process 0
         * has none and leaves its receive buffer alone) */
        int k = m->me + (root == COLL_SM_SMALL_SCAN);
        want = want && k > 0;
        if (want && *rc == MPI_SUCCESS)
            res = small_fold_left(r.rop, kind, k, m->small_x, (size_t)(cnt * r.factor),
                                  m->scratch, (char *)m->scratch + m->chunk, rc);
    } else if (want && *rc == MPI_SUCCESS) {
        *rc = coll_sm_fold_ptrs(r.rop, kind, m->n, m->small_x, (size_t)(cnt * r.factor),
                                m->scratch);
    }
    if (want && *rc == MPI_SUCCESS)   /* (host memory both: dev would have handed off) */
        *rc = coll_copy_as(res, cnt * r.factor, r.rdt, rbuf, cnt, r.udt, false);
    small_count_bulk(m, need);   /* (not before: a locked add waits for the data's stores) */
    /* a reduce's root publishes once it has read: nobody writes a slot of
     * this set again before every process published t + 1 */
    if (root >= 0)
        coll_sm_slot_post(m, set, t);
    return true;
}

bool coll_sm_small_barrier(coll_sm_module_t *m, obj_comm_t *comm, int *rc)
{
    *rc = MPI_SUCCESS;
    if (coll_sm_params.small_max == 0 || m->n > m->degree + 1)
        return false;
    if (!small_ready(m, comm, rc))
        return *rc != MPI_SUCCESS;
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot(m, m->me, set)->flags = 0;
    coll_sm_slot_post(m, set, t);
    coll_sm_slot_wait_all(m, set, t);
    small_seen_all(m, t);
    return true;
}

/* MISMATCHED SIZES.  A bcast or scatter whose type signatures differ
 * between processes is erroneous, but must not hang: a root and a receiver
 * on two sides of the slot size take the slots and the flag rounds.  A
 * root that takes the slots tags its slot with the flag-based operations
 * it had started (COLL_SM_SLOT_ROOTED_AT(m->seq)); every other writer of
 * a slot writes flags without that bit.  A receiver waits for the root's
 * slot or for its flag of the next flag-based operation, whichever comes:
 * the root published first what belongs to this call (what it publishes
 * later cannot be seen before it).  Where both are there, the slot's tag
 * tells: the root's flag count at this call's start is this process's.
 * The side that finds the root on the other path gives back the number it
 * took (small_seq or seq) and follows the root: it gets MPI_ERR_TRUNCATE
 * or MPI_ERR_COUNT there (coll_check_length), and later operations stay
 * in step.
 * A gather goes the other way: each sender decides by its own size, and
 * the root, which waits for everyone anyway, looks for each sender's slot
 * or its flag of the next flag-based operation (the senders tag their
 * slots as a bcast's root does, device bit or not).  Where every sender
 * took the other path, the root gives back its number (and, where a
 * device component is active, the collective tag it took: the senders on
 * the flag rounds took none) and follows them; where some did and some
 * did not (their sizes differ among themselves too), it cannot: it reads
 * the slots' blocks, reports the mismatch and ends the flag operation
 * that the others run (sm_gather.c, gather_end_for_late), so that nobody
 * waits for ever; later operations are out of step.  Where a device
 * component is active, senders with device buffers on the slots wait for
 * the root's verdict in its slot: a root that found others on the flag
 * rounds, or took them itself, says "by message" (never "hand on") and
 * receives their blocks with the tag they took. */

/* Undo small_begin: the operation's number was not this call's. */
static void small_give_back(coll_sm_module_t *m)
{
    coll_sm_slots_phase(m, --m->small_seq);
}

/* A receiver whose size fits the slots: the root's slot of operation t,
 * or NULL when the root took the flag rounds for this call (t is given
 * back; the caller follows them). */
static const coll_sm_slot_t *small_wait_rooted(coll_sm_module_t *m, int root, int set,
                                               uint64_t t)
{
    coll_sm_slot_or_flag_wait(m, root, set, t, COLL_SM_V(m->seq + 1, 1));
    const coll_sm_slot_t *rs = coll_sm_slot(m, root, set);
    if (RAIL_LIKELY(COLL_SM_REACHED(rail_atomic_load_acquire(&rs->seq), t) &&
                    rs->flags == COLL_SM_SLOT_ROOTED_AT(m->seq))) {
        m->small_seen[root] = RAIL_MAX(m->small_seen[root], t);
        return rs;
    }
    small_give_back(m);
    return NULL;
}

/* A receiver on the flag rounds (operation s begun) whose root may have
 * taken the slots: the root's slot of the next small operation, now begun
 * (s given back), or NULL when the root's flag operation s is this call. */
static const coll_sm_slot_t *small_root_took_slots(coll_sm_module_t *m, uint64_t s, int root,
                                                   int *set, uint64_t *t)
{
    uint64_t next = m->small_seq + 1;
    int k = coll_sm_slot_of(m, next);
    coll_sm_slot_or_flag_wait(m, root, k, next, COLL_SM_V(s, 1));
    const coll_sm_slot_t *rs = coll_sm_slot(m, root, k);
    if (!COLL_SM_REACHED(rail_atomic_load_acquire(&rs->seq), next) ||
        rs->flags != COLL_SM_SLOT_ROOTED_AT(s - 1))
        return NULL;
    m->seq--;
    *t = small_begin(m, set);
    m->small_seen[root] = RAIL_MAX(m->small_seen[root], *t);
    return rs;
}

/* A receiver's end of a small rooted operation: its slot says "done
 * reading". */
static void small_rooted_done(coll_sm_module_t *m, int set, uint64_t t)
{
    coll_sm_slot(m, m->me, set)->flags = 0;
    coll_sm_slot_post(m, set, t);
}

/* A bcast's receiver: the data from the root's slot. */
static int small_bcast_take(coll_sm_module_t *m, const coll_sm_slot_t *rs, int root, int set,
                            uint64_t t, const coll_sm_data_t *d)
{
    size_t len = rs->len;
    int rc = coll_check_length(-1, len, d->bytes);
    rc = SM_KEEP(rc, coll_sm_unpack(d, 0, small_data(m, root, set, len),
                                    RAIL_MIN(len, d->bytes)));
    small_rooted_done(m, set, t);
    return rc;
}

/* Whether a bcast of this many bytes goes through the slots (the segment
 * set up): a slot's data, or a bulk slot's (the same answer everywhere:
 * the sizes are the segment's). */
static bool small_bcast_fits(coll_sm_module_t *m, size_t bytes)
{
    return small_fits_total(m, bytes, bytes);
}

bool coll_sm_small_bcast(coll_sm_module_t *m, obj_comm_t *comm, void *buf, MPI_Count count,
                         obj_datatype_t *dt, int root, int *rc)
{
    coll_sm_data_t d;
    *rc = MPI_SUCCESS;
    coll_sm_data_init(&d, buf, count, dt);
    if (d.bytes == 0 || d.bytes > small_limit())
        return false;
    if (!small_ready(m, comm, rc))
        return *rc != MPI_SUCCESS;
    if (!small_bcast_fits(m, d.bytes))
        return false;
    int set;
    uint64_t t = small_begin(m, &set);
    if (m->me == root) {
        coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
        my->flags = COLL_SM_SLOT_ROOTED_AT(m->seq);
        my->len = (uint32_t)d.bytes;
        *rc = coll_sm_pack(&d, 0, small_data_mine(m, set, t, d.bytes), d.bytes);
        coll_sm_slot_post(m, set, t);
        small_count_bulk(m, d.bytes);   /* (after: a locked add waits for the data's stores) */
        return true;
    }
    const coll_sm_slot_t *rs = small_wait_rooted(m, root, set, t);
    if (rs == NULL)
        return false;   /* the root's size did not fit: its flag rounds */
    size_t len = rs->len;
    *rc = small_bcast_take(m, rs, root, set, t, &d);
    small_count_bulk(m, len);
    return true;
}

bool coll_sm_small_bcast_late(coll_sm_module_t *m, uint64_t s, int root,
                              const coll_sm_data_t *d, int *rc)
{
    if (small_bcast_fits(m, d->bytes) || coll_sm_params.small_max == 0)
        return false;   /* (this process's size fits: it knows the root's did not) */
    int set;
    uint64_t t;
    const coll_sm_slot_t *rs = small_root_took_slots(m, s, root, &set, &t);
    if (rs == NULL)
        return false;
    *rc = small_bcast_take(m, rs, root, set, t, d);
    return true;
}

/* Whether a scatter's or gather's blocks of b bytes go through the slots
 * (the same answer on every process: b is; the device hand-off size of
 * coll_sm_device_handoff_min keeps its meaning); small_blocks_fit sets the
 * segment up where the parameters allow. */
static bool small_blocks_fit_params(size_t per_slot, size_t b)
{
    return b > 0 && per_slot <= coll_sm_params.small_max &&
           !(coll_sm_params.device_handoff_min > 0 && b >= coll_sm_params.device_handoff_min);
}

static bool small_blocks_fit(coll_sm_module_t *m, obj_comm_t *comm, size_t per_slot, size_t b,
                             int *rc)
{
    return small_blocks_fit_params(per_slot, b) && small_ready(m, comm, rc) &&
           per_slot <= m->slot_size;
}

/* A scatter's receiver: its block (b bytes here) from the root's slot. */
static int small_scatter_take(coll_sm_module_t *m, const coll_sm_slot_t *rs, int set, uint64_t t,
                              int root, void *rbuf, MPI_Count rcount, obj_datatype_t *rdt)
{
    size_t len = rs->len, b = (size_t)(rcount * rdt->size);
    int rc = coll_check_length(-1, len, b);
    coll_sm_data_t d;
    coll_sm_data_init(&d, rbuf, rcount, rdt);
    /* (a mismatched root's slot holds fewer blocks of len bytes than
     * m->n - 1 of this process's size: position within what it wrote) */
    size_t at = (size_t)(m->me - (m->me > root)) * len;
    if (at + RAIL_MIN(len, b) <= m->slot_size)
        rc = SM_KEEP(rc, coll_sm_unpack(&d, 0, rs->data + at, RAIL_MIN(len, b)));
    small_rooted_done(m, set, t);
    return rc;
}

bool coll_sm_small_scatter(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                           MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                           obj_datatype_t *rdt, int root, int *rc)
{
    *rc = MPI_SUCCESS;
    bool am_root = m->me == root;
    size_t b = am_root ? (size_t)(scount * sdt->size) : (size_t)(rcount * rdt->size);
    if (!small_blocks_fit(m, comm, (size_t)(m->n - 1) * b, b, rc))
        return *rc != MPI_SUCCESS;
    int set;
    uint64_t t = small_begin(m, &set);
    if (am_root) {
        /* block j at position j, or j - 1 after the root's */
        coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
        my->flags = COLL_SM_SLOT_ROOTED_AT(m->seq);
        my->len = (uint32_t)b;
        for (int j = 0, at = 0; j < m->n; j++) {
            if (j == root)
                continue;
            coll_sm_data_t d;
            coll_sm_data_init(&d, coll_elem(sbuf, sdt, j * scount), scount, sdt);
            *rc = SM_KEEP(*rc, coll_sm_pack(&d, 0, my->data + (size_t)at++ * b, b));
        }
        coll_sm_slot_post(m, set, t);
        if (rbuf != MPI_IN_PLACE)
            *rc = SM_KEEP(*rc, coll_copy(coll_elem(sbuf, sdt, root * scount), scount, sdt, rbuf,
                                         rcount, rdt));
        return true;
    }
    const coll_sm_slot_t *rs = small_wait_rooted(m, root, set, t);
    if (rs == NULL)
        return false;   /* the root's blocks did not fit: its flag rounds */
    *rc = small_scatter_take(m, rs, set, t, root, rbuf, rcount, rdt);
    return true;
}

bool coll_sm_small_scatter_late(coll_sm_module_t *m, uint64_t s, int root, void *rbuf,
                                MPI_Count rcount, obj_datatype_t *rdt, int *rc)
{
    size_t b = (size_t)(rcount * rdt->size);
    size_t per_slot = (size_t)(m->n - 1) * b;
    if (coll_sm_params.small_max == 0 ||
        (small_blocks_fit_params(per_slot, b) && per_slot <= m->slot_size))
        return false;
    int set;
    uint64_t t;
    const coll_sm_slot_t *rs = small_root_took_slots(m, s, root, &set, &t);
    if (rs == NULL)
        return false;
    *rc = small_scatter_take(m, rs, set, t, root, rbuf, rcount, rdt);
    return true;
}

/* Whether gather sender j wrote its slot `set` for operation t with seq
 * flag-based operations begun (else it took the flag rounds). */
static bool small_gather_sent(coll_sm_module_t *m, int j, int set, uint64_t t, uint64_t seq)
{
    const coll_sm_slot_t *sj = coll_sm_slot(m, j, set);
    return COLL_SM_REACHED(rail_atomic_load_acquire(&sj->seq), t) &&
           (sj->flags & ~COLL_SM_SLOT_DEVICE) == COLL_SM_SLOT_ROOTED_AT(seq);
}

/* A gather's block from sender j of the slots (MISMATCHED SIZES: sizes may
 * differ): from its slot, or where its buffers are device memory by the
 * message it sends with the call's tag once the root's slot says so. */
static int small_gather_take(coll_sm_module_t *m, obj_comm_t *comm, int set, int j, void *blk,
                             MPI_Count rcount, obj_datatype_t *rdt, int tag)
{
    const coll_sm_slot_t *sj = coll_sm_slot(m, j, set);
    if (sj->flags & COLL_SM_SLOT_DEVICE)
        return coll_recv_all(blk, rcount, rdt, j, tag, comm);
    return small_take_block(sj, j, blk, rcount, rdt);
}

/* A gather whose blocks fit a slot: the senders write theirs and leave;
 * the root waits for every slot, copies the blocks out and publishes t.
 * Device buffers: see ROOTED OPERATIONS above (*handoff: everyone goes on
 * to the flag path, sm_gather.c, which moves device blocks device to
 * device). */
bool coll_sm_small_gather(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                          MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                          obj_datatype_t *rdt, int root, bool *handoff, bool *mixed, int *rc)
{
    *rc = MPI_SUCCESS;
    *handoff = false;
    *mixed = false;
    bool am_root = m->me == root;
    size_t b = am_root ? (size_t)(rcount * rdt->size) : (size_t)(scount * sdt->size);
    if (!small_blocks_fit(m, comm, b, b, rc))
        return *rc != MPI_SUCCESS;
    int set;
    uint64_t t = small_begin(m, &set);
    int tag = m->host_only ? 0 : coll_tag_next(comm);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    if (!am_root) {
        coll_sm_data_t d;
        coll_sm_data_init(&d, sbuf, scount, sdt);
        my->flags = (d.device ? COLL_SM_SLOT_DEVICE : 0) | COLL_SM_SLOT_ROOTED_AT(m->seq);
        my->len = (uint32_t)b;
        if (!d.device)
            *rc = coll_sm_pack(&d, 0, my->data, b);
        coll_sm_slot_post(m, set, t);
        if (d.device && small_sender_verdict(m, set, t, root, NULL))
            *handoff = true;
        else if (d.device)
            *rc = coll_send(sbuf, scount, sdt, root, tag, comm);
        return true;
    }
    my->flags = 0;
    int late = 0;   /* senders on the flag rounds (MISMATCHED SIZES) */
    for (int j = 0; j < m->n; j++) {
        if (j == m->me)
            continue;
        coll_sm_slot_or_flag_wait(m, j, set, t, COLL_SM_V(m->seq + 1, 1));
        late += !small_gather_sent(m, j, set, t, m->seq);
    }
    if (RAIL_UNLIKELY(late > 0 && late == m->n - 1)) {
        small_give_back(m);
        if (!m->host_only)
            comm->coll->seq--;   /* the tag too: the senders took none */
        return false;   /* the senders' blocks did not fit: their flag rounds */
    }
    small_seen_all(m, t);
    int v = m->host_only ? SMALL_ALONE : small_root_verdict(m, set, t, false, late > 0);
    if (v == SMALL_HANDOFF) {
        *handoff = true;
        return true;
    }
    if (sbuf != MPI_IN_PLACE)
        *rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf, rdt, m->me * rcount), rcount, rdt);
    for (int j = 0; j < m->n; j++) {
        if (j == m->me)
            continue;
        int r2;
        if (RAIL_UNLIKELY(late > 0) && !small_gather_sent(m, j, set, t, m->seq)) {
            r2 = obj_errf(MPI_ERR_TRUNCATE, "process %d's block of this gather did not fit "
                          "coll sm's slots, this process's does (type signatures differ; "
                          "later collectives on this communicator are out of step)", j);
            *mixed = true;
        } else {   /* (SMALL_MIXED: a device sender's by a message) */
            r2 = small_gather_take(m, comm, set, j, coll_elem(rbuf, rdt, j * rcount), rcount,
                                   rdt, tag);
        }
        *rc = SM_KEEP(*rc, r2);
    }
    if (v == SMALL_ALONE)
        coll_sm_slot_post(m, set, t);
    return true;
}

bool coll_sm_small_gather_late(coll_sm_module_t *m, obj_comm_t *comm, uint64_t s,
                               const void *sbuf, MPI_Count scount, obj_datatype_t *sdt,
                               void *rbuf, MPI_Count rcount, obj_datatype_t *rdt, bool *mixed,
                               int *rc)
{
    *mixed = false;
    if (coll_sm_params.small_max == 0 || m->slots == 0 || m->n < 2)
        return false;
    /* every sender posts a step of s before it waits for the root, or
     * writes its slot of the next small operation and leaves */
    uint64_t next = m->small_seq + 1;
    int k = coll_sm_slot_of(m, next), sent = 0;
    for (int j = 0; j < m->n; j++) {
        if (j == m->me)
            continue;
        coll_sm_flag_or_slot_wait(m, j, COLL_SM_V(s, 1), k, next);
        /* (the slot, where there, was published first: a sender on the
         * slots may already be in a later flag-based operation) */
        sent += small_gather_sent(m, j, k, next, s - 1);
    }
    if (RAIL_LIKELY(sent == 0))
        return false;
    /* where a device component is active, the senders on the slots took a
     * tag, and those with device buffers wait for my slot's verdict: it
     * says "by message" (they never hand on: I am on the flag rounds) */
    int set, tag = m->host_only ? 0 : coll_tag_next(comm);
    if (sent < m->n - 1) {
        /* some on each path: the slots' blocks (shorter than mine) read,
         * the others' not; operation s stays begun, for the caller to end
         * (the senders on it may wait for my steps) */
        uint64_t t = small_begin(m, &set);
        *rc = obj_errf(MPI_ERR_COUNT, "gather: %d of the %d senders' blocks fit coll sm's "
                       "slots, the others' and this process's did not (type signatures differ; "
                       "the blocks of those others were not received, and later collectives "
                       "on this communicator are out of step)", sent, m->n - 1);
        coll_sm_slot(m, m->me, set)->flags = 0;
        coll_sm_slot_post(m, set, t);
        for (int j = 0; j < m->n; j++)
            if (j != m->me && small_gather_sent(m, j, set, t, s - 1))
                (void)small_gather_take(m, comm, set, j, coll_elem(rbuf, rdt, j * rcount),
                                        rcount, rdt, tag);
        *mixed = true;
        return true;
    }
    m->seq--;
    uint64_t t = small_begin(m, &set);
    small_seen_all(m, t);
    *rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        *rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf, rdt, m->me * rcount), rcount, rdt);
    coll_sm_slot(m, m->me, set)->flags = 0;
    coll_sm_slot_post(m, set, t);
    for (int j = 0; j < m->n; j++) {
        if (j == m->me)
            continue;
        /* (every block taken, after an error too: device senders' messages) */
        int r2 = small_gather_take(m, comm, set, j, coll_elem(rbuf, rdt, j * rcount), rcount,
                                   rdt, tag);
        *rc = SM_KEEP(*rc, r2);
    }
    return true;
}

/* Small allgathers and alltoalls with device buffers (contiguous or not)
 * where coll sm may move them device to device (coll_sm_device_ipc,
 * coll_sm_device_blocks_min): the process says so in its slot instead of
 * staging its data, and if any slot says so everyone hands the call on to
 * the flag-based path (sm_gather.c), which copies device to device in one
 * launch where everyone has device buffers (on an H200 under MPS, np 2
 * 13-16 against 16-19 us for the two staged copies here; np 8 23 against
 * 30-32) and stages where some have host buffers.  A process that set
 * the flag knows the verdict; one that did not looks at each other slot's
 * flags as it copies from it (a line it has loaded anyway: a separate pass
 * over the flags cost np 2 0.025 us of 0.15 with host buffers), writing
 * nothing the flag path would not write again (its buffers are host
 * memory).  Where no process has a device component (m->host_only) no
 * slot's flags are ever set. */
static bool small_dev_want(coll_sm_module_t *m, bool device, size_t total)
{
    return device && coll_sm_dev_blocks_eligible(m, total);
}

/* Every slot of the set but `skip`'s (-1: none) holds exactly `bytes`
 * (matching signatures: an erroneous program's blocks take the careful
 * way, which reports or tolerates them block by block). */
static bool small_lens(coll_sm_module_t *m, int set, int skip, size_t bytes)
{
    for (int j = 0; j < m->n; j++)
        if (j != skip && coll_sm_slot(m, j, set)->len != bytes)
            return false;
    return true;
}

bool coll_sm_small_allgather(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                             MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                             obj_datatype_t *rdt, int *rc)
{
    coll_sm_data_t r0, mine;
    *rc = MPI_SUCCESS;
    coll_sm_data_init(&r0, rbuf, rcount, rdt);
    /* the same verdict everywhere: the receive signature is.  All blocks
     * together at most small_max bytes, or all (or the others', what a
     * process reads) at most small_bulk_max with blocks in bulk slots where
     * they do not fit a slot (BULK; larger slots cost the small operations
     * TLB misses, coll/sm/README.md): np 2, 1 / 2 / 4 KiB blocks 0.67 /
     * 0.88 / 1.23 -> 0.54 / 0.76 / 0.94 us, 8 KiB 1.83-1.90 -> 1.30-1.36 */
    size_t total = r0.bytes * (size_t)m->n, others = total - r0.bytes;
    if (r0.bytes == 0 || others > small_limit())
        return false;
    if (!small_ready(m, comm, rc))
        return *rc != MPI_SUCCESS;
    if (!small_fits_total(m, r0.bytes, total) &&
        !(coll_sm_params.small_bulk_max > 0 && small_fits_total(m, r0.bytes, others)))
        return false;
    size_t cap = small_cap(m, r0.bytes);
    bool bulk = total > coll_sm_params.small_max;
    bool inplace = sbuf == MPI_IN_PLACE;
    if (inplace)
        mine = coll_sm_data_at(&r0, m->me * rcount);
    else
        coll_sm_data_init(&mine, sbuf, scount, sdt);
    /* a contiguous device result: every block (mine from my slot) gathered
     * in host scratch and copied over at once, not one copy per block */
    char *all = NULL;
    if (r0.device && r0.bytes * (size_t)m->n <= 2 * m->chunk)
        all = rail_dt_contig_ptr(rdt->layout, rcount * m->n, rbuf);
    bool dev = small_dev_want(m, mine.device || r0.device, r0.bytes * (size_t)m->n);
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = dev ? COLL_SM_SLOT_DEVICE : 0;   /* (never COLL_SM_SLOT_ROOTED) */
    my->len = (uint32_t)RAIL_MIN(mine.bytes, (size_t)UINT32_MAX);
    if (!dev)
        *rc = coll_sm_pack(&mine, 0, small_data_mine(m, set, t, r0.bytes),
                           RAIL_MIN(mine.bytes, cap));
    coll_sm_slot_post(m, set, t);
    /* its own block while the others' are on their way (a result copied
     * over at once takes it from my slot) */
    if (!inplace && all == NULL && !dev)
        *rc = SM_KEEP(*rc, coll_copy_as(sbuf, scount, sdt, coll_elem(rbuf, rdt, m->me * rcount),
                                        rcount, rdt, mine.device || r0.device));
    coll_sm_slot_wait_all_data(m, set, t, r0.bytes);
    small_seen_all(m, t);
    if (dev) {
        /* everyone sees my flag: the flag path (which meets any error of
         * mine here again) */
        *rc = MPI_SUCCESS;
        return false;
    }
    if (all != NULL && small_lens(m, set, -1, r0.bytes)) {
        for (int j = 0; j < m->n; j++)
            memcpy((char *)m->scratch + (size_t)j * r0.bytes, small_data(m, j, set, r0.bytes),
                   r0.bytes);
        *rc = SM_KEEP(*rc, accel_copy(all, m->scratch, r0.bytes * (size_t)m->n, NULL));
        if (bulk)
            rail_atomic_add_fetch(&coll_sm_count_small_bulk, 1);
        return true;
    }
    if (!inplace && all != NULL)   /* blocks of other lengths: one by one */
        *rc = SM_KEEP(*rc, coll_copy_as(sbuf, scount, sdt, coll_elem(rbuf, rdt, m->me * rcount),
                                        rcount, rdt, mine.device || r0.device));
    for (int j = 0; j < m->n; j++) {
        if (j == m->me)
            continue;
        const coll_sm_slot_t *sj = coll_sm_slot(m, j, set);
        if (RAIL_UNLIKELY(sj->flags & COLL_SM_SLOT_DEVICE)) {
            *rc = MPI_SUCCESS;   /* the flag path, as everyone */
            return false;
        }
        size_t len = sj->len;
        if (len > r0.bytes) {
            if (*rc == MPI_SUCCESS)
                *rc = obj_errf(MPI_ERR_TRUNCATE, "allgather: process %d sent %zu bytes, this "
                               "process's arguments hold %zu (type signatures differ)", j, len,
                               r0.bytes);
            len = r0.bytes;
        }
        coll_sm_data_t dj = coll_sm_data_at(&r0, j * rcount);
        int r2 = coll_sm_unpack(&dj, 0, small_data(m, j, set, r0.bytes), RAIL_MIN(len, cap));
        if (*rc == MPI_SUCCESS)
            *rc = r2;
    }
    if (bulk)
        rail_atomic_add_fetch(&coll_sm_count_small_bulk, 1);
    return true;
}

bool coll_sm_small_alltoall(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                            MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                            obj_datatype_t *rdt, int *rc)
{
    coll_sm_data_t r0, s0;
    *rc = MPI_SUCCESS;
    coll_sm_data_init(&r0, rbuf, rcount, rdt);
    /* the same verdict everywhere: the receive signature is.  The blocks
     * for the others together at most small_max bytes in the slot, or
     * small_bulk_max in the bulk slot (BULK): np 2, 2 / 4 / 8 KiB blocks
     * 1.34 / 1.11 / 1.71 -> 1.05 / 1.04 / 1.24 us (an AMD host; np 4 and 8
     * on 2 cores the same either way) */
    size_t others = r0.bytes * (size_t)(m->n - 1);
    if (r0.bytes == 0 || others > small_limit())
        return false;
    if (!small_ready(m, comm, rc))
        return *rc != MPI_SUCCESS;
    if (!small_fits_total(m, others, others))
        return false;
    size_t cap = small_cap(m, others);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (inplace)
        s0 = r0;
    else
        coll_sm_data_init(&s0, sbuf, scount, sdt);
    size_t sb = s0.bytes, rb = r0.bytes;
    int set, n = m->n;
    /* contiguous device buffers move through host scratch in one copy each
     * way (the received blocks at its start, a copy of the send buffer
     * after them), not one copy per block */
    bool fit = (size_t)n * (rb + sb) <= 2 * m->chunk;
    char *hs = (char *)m->scratch + (size_t)n * rb;
    const char *sall = NULL;
    char *rall = NULL;
    /* in place the flag path would hand a device alltoall on (the blocks
     * the others read are overwritten): it stays here */
    bool dev = !inplace && small_dev_want(m, s0.device || r0.device, r0.bytes * (size_t)n);
    if (fit && r0.device)
        rall = rail_dt_contig_ptr(rdt->layout, rcount * n, rbuf);
    if (fit && s0.device && !dev)
        sall = inplace ? rall : rail_dt_contig_ptr(sdt->layout, scount * n, sbuf);
    if (sall != NULL && accel_copy(hs, sall, (size_t)n * sb, NULL) != MPI_SUCCESS)
        sall = NULL;   /* (reported by the copies below, one by one) */
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = dev ? COLL_SM_SLOT_DEVICE : 0;   /* (never COLL_SM_SLOT_ROOTED) */
    my->len = (uint32_t)RAIL_MIN(sb, (size_t)UINT32_MAX);
    /* position i holds the block for process me + 1 + i: at two processes
     * the other's block starts in the sequence word's line */
    uint8_t *mine = small_data_mine(m, set, t, others);
    for (int i = 0; i < n - 1 && !dev; i++) {
        int j = (m->me + 1 + i) % n;
        size_t at = (size_t)i * sb;
        if (at >= cap)
            break;
        if (sall != NULL) {
            memcpy(mine + at, hs + (size_t)j * sb, RAIL_MIN(sb, cap - at));
            continue;
        }
        coll_sm_data_t dj = coll_sm_data_at(&s0, j * s0.count);
        *rc = SM_KEEP(*rc, coll_sm_pack(&dj, 0, mine + at, RAIL_MIN(sb, cap - at)));
    }
    coll_sm_slot_post(m, set, t);
    /* my own block: from the host copy of my send buffer where the result
     * goes over in one copy, else copied here */
    bool own_host = rall != NULL && sall != NULL && sb == rb;
    if (!inplace && !own_host && !dev)
        *rc = SM_KEEP(*rc, coll_copy_as(coll_elem(sbuf, sdt, m->me * scount), scount, sdt,
                                        coll_elem(rbuf, rdt, m->me * rcount), rcount, rdt,
                                        s0.device || r0.device));
    /* (my block at position 0 at two processes) */
    coll_sm_slot_wait_all_data(m, set, t, n == 2 ? rb : 0);
    small_seen_all(m, t);
    if (dev) {
        /* everyone sees my flag: the flag path (which meets any error of
         * mine here again) */
        *rc = MPI_SUCCESS;
        return false;
    }
    if (rall != NULL && small_lens(m, set, m->me, rb)) {
        char *h = m->scratch;
        for (int p = 0; p < n; p++)
            if (p != m->me)
                memcpy(h + (size_t)p * rb,
                       small_data(m, p, set, others) + (size_t)((m->me - p - 1 + n) % n) * rb, rb);
        if (own_host) {
            memcpy(h + (size_t)m->me * rb, hs + (size_t)m->me * sb, rb);
            *rc = SM_KEEP(*rc, accel_copy(rall, h, (size_t)n * rb, NULL));
        } else {
            /* around my own block, which is in place already */
            size_t lo = (size_t)m->me * rb, hi = lo + rb;
            if (lo > 0)
                *rc = SM_KEEP(*rc, accel_copy(rall, h, lo, NULL));
            if (hi < (size_t)n * rb)
                *rc = SM_KEEP(*rc, accel_copy(rall + hi, h + hi, (size_t)n * rb - hi, NULL));
        }
        small_count_bulk(m, others);
        return true;
    }
    if (!inplace && own_host)
        *rc = SM_KEEP(*rc, coll_copy_as(coll_elem(sbuf, sdt, m->me * scount), scount, sdt,
                                        coll_elem(rbuf, rdt, m->me * rcount), rcount, rdt,
                                        s0.device || r0.device));
    for (int p = 0; p < n; p++) {
        if (p == m->me)
            continue;
        const coll_sm_slot_t *sp = coll_sm_slot(m, p, set);
        if (RAIL_UNLIKELY(sp->flags & COLL_SM_SLOT_DEVICE)) {
            *rc = MPI_SUCCESS;   /* the flag path, as everyone */
            return false;
        }
        size_t len = sp->len, at = (size_t)((m->me - p - 1 + n) % n) * len;
        if (len > r0.bytes) {
            if (*rc == MPI_SUCCESS)
                *rc = obj_errf(MPI_ERR_TRUNCATE, "alltoall: process %d sent %zu bytes, this "
                               "process's arguments hold %zu (type signatures differ)", p, len,
                               r0.bytes);
            len = r0.bytes;
        }
        if (at >= cap)
            continue;
        coll_sm_data_t dp = coll_sm_data_at(&r0, p * rcount);
        *rc = SM_KEEP(*rc, coll_sm_unpack(&dp, 0, small_data(m, p, set, others) + at,
                                          RAIL_MIN(len, cap - at)));
    }
    small_count_bulk(m, others);
    return true;
}

/* ------------------------------------------------------------ v forms */

/* Small MPI_Allgatherv, MPI_Gatherv and MPI_Scatterv through the slots
 * (each went to the next component's messages: np 2 scatterv of 8 bytes
 * 0.20 us against Open MPI's 0.11, np 4 allgatherv 3.9).  Device buffers
 * are staged through the slots by accel copies, as small bcasts are.
 *
 *   allgatherv (all blocks together at most small_max bytes: every process
 *     knows the counts, so the same answer everywhere): as allgather, each
 *     block copied out to its displacement.
 *   scatterv: only the root knows the blocks, so every scatterv takes a
 *     slot operation and the root decides: it writes the others' block
 *     lengths (4 bytes each; none where all are of one length,
 *     COLL_SM_SLOT_UNIFORM) and then their blocks at a stride of the
 *     largest, or, where they do not fit, says COLL_SM_SLOT_HANDOFF and
 *     everyone hands the call on.
 *   gatherv: each sender decides for its own block: one that fits its slot
 *     writes it there and leaves; a larger one (or a device one, whose
 *     staging would cost the sender a copy while the root waits) says
 *     COLL_SM_SLOT_VIA_MESSAGE and sends it to the root by a message with
 *     the call's tag (every process takes one).  The root waits for every
 *     slot and copies out or receives. */

static bool small_v_ok(coll_sm_module_t *m, obj_comm_t *comm, int *rc)
{
    *rc = MPI_SUCCESS;
    return coll_sm_params.small_max > 0 && small_ready(m, comm, rc);
}

bool coll_sm_small_allgatherv(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                              MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                              const MPI_Count rcounts[], const MPI_Aint displs[],
                              obj_datatype_t *rdt, int *rc)
{
    size_t total = 0, most = 0;
    for (int j = 0; j < m->n; j++) {
        size_t b = (size_t)(rcounts[j] * rdt->size);
        total += b;
        most = RAIL_MAX(most, b);
    }
    *rc = MPI_SUCCESS;
    if (total == 0 || total > coll_sm_params.small_max)
        return false;
    if (!small_v_ok(m, comm, rc))
        return *rc != MPI_SUCCESS;
    if (most > m->slot_size)
        return false;
    coll_sm_data_t mine;
    void *own = coll_elem(rbuf, rdt, displs[m->me]);
    if (sbuf == MPI_IN_PLACE)
        coll_sm_data_init(&mine, own, rcounts[m->me], rdt);
    else
        coll_sm_data_init(&mine, sbuf, scount, sdt);
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = 0;
    my->len = (uint32_t)RAIL_MIN(mine.bytes, m->slot_size);
    *rc = coll_sm_pack(&mine, 0, my->data, RAIL_MIN(mine.bytes, m->slot_size));
    coll_sm_slot_post(m, set, t);
    if (sbuf != MPI_IN_PLACE)
        *rc = SM_KEEP(*rc, coll_copy(sbuf, scount, sdt, own, rcounts[m->me], rdt));
    coll_sm_slot_wait_all(m, set, t);
    small_seen_all(m, t);
    for (int j = 0; j < m->n; j++) {
        if (j == m->me)
            continue;
        *rc = SM_KEEP(*rc, small_take_block(coll_sm_slot(m, j, set), j,
                                            coll_elem(rbuf, rdt, displs[j]), rcounts[j], rdt));
    }
    rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
    return true;
}

/* The scatterv root's slot: the lengths of the others' blocks (4 bytes
 * each, in the order of their positions), then the blocks, `stride` bytes
 * apart. */
static size_t small_scatterv_head(int n)
{
    return ((size_t)(n - 1) * sizeof(uint32_t) + 7) & ~(size_t)7;
}

bool coll_sm_small_scatterv(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                            const MPI_Count scounts[], const MPI_Aint displs[],
                            obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                            obj_datatype_t *rdt, int root, bool *handoff, int *rc)
{
    *handoff = false;
    if (!small_v_ok(m, comm, rc))
        return *rc != MPI_SUCCESS;
    const size_t head = small_scatterv_head(m->n);
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    if (m->me == root) {
        size_t stride = 0, least = SIZE_MAX;
        for (int j = 0; j < m->n; j++)
            if (j != root) {
                size_t b = (size_t)(scounts[j] * sdt->size);
                stride = RAIL_MAX(stride, b);
                least = RAIL_MIN(least, b);
            }
        /* blocks of one length (and at two processes the one block): no
         * lengths before them */
        bool uniform = least == stride || m->n < 2;
        size_t hd = uniform ? 0 : head, need = hd + (size_t)(m->n - 1) * stride;
        if (need > m->slot_size) {
            my->flags = COLL_SM_SLOT_HANDOFF;
            coll_sm_slot_post(m, set, t);
            *handoff = true;
            return true;
        }
        my->flags = uniform ? COLL_SM_SLOT_UNIFORM : 0;
        my->len = (uint32_t)stride;
        uint32_t *lens = (uint32_t *)(void *)my->data;
        *rc = MPI_SUCCESS;
        for (int j = 0, at = 0; j < m->n; j++) {
            if (j == root)
                continue;
            coll_sm_data_t d;
            coll_sm_data_init(&d, coll_elem(sbuf, sdt, displs[j]), scounts[j], sdt);
            if (!uniform)
                lens[at] = (uint32_t)d.bytes;
            *rc = SM_KEEP(*rc, coll_sm_pack(&d, 0, my->data + hd + (size_t)at * stride,
                                            d.bytes));
            at++;
        }
        coll_sm_slot_post(m, set, t);
        if (rbuf != MPI_IN_PLACE)
            *rc = SM_KEEP(*rc, coll_copy(coll_elem(sbuf, sdt, displs[root]), scounts[root], sdt,
                                         rbuf, rcount, rdt));
        rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
        return true;
    }
    const coll_sm_slot_t *rs = small_wait_root(m, root, set, t);
    if (rs->flags & COLL_SM_SLOT_HANDOFF) {
        small_rooted_done(m, set, t);
        *handoff = true;
        return true;
    }
    int at = m->me - (m->me > root);
    bool uniform = rs->flags & COLL_SM_SLOT_UNIFORM;
    size_t hd = uniform ? 0 : head, b = (size_t)(rcount * rdt->size);
    size_t len = uniform ? rs->len : ((const uint32_t *)(const void *)rs->data)[at];
    coll_sm_data_t d;
    coll_sm_data_init(&d, rbuf, rcount, rdt);
    *rc = SM_KEEP(coll_check_length(-1, len, b),
                  coll_sm_unpack(&d, 0, rs->data + hd + (size_t)at * rs->len, RAIL_MIN(len, b)));
    small_rooted_done(m, set, t);
    rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
    return true;
}

bool coll_sm_small_gatherv(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                           MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                           const MPI_Count rcounts[], const MPI_Aint displs[],
                           obj_datatype_t *rdt, int root, int *rc)
{
    if (!small_v_ok(m, comm, rc))
        return *rc != MPI_SUCCESS;
    int set;
    uint64_t t = small_begin(m, &set);
    int tag = coll_tag_next(comm);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    if (m->me != root) {
        coll_sm_data_t d;
        coll_sm_data_init(&d, sbuf, scount, sdt);
        bool msg = d.device || d.bytes > coll_sm_params.small_max || d.bytes > m->slot_size;
        my->flags = msg ? COLL_SM_SLOT_VIA_MESSAGE : 0;
        my->len = (uint32_t)(msg ? 0 : d.bytes);
        *rc = msg ? MPI_SUCCESS : coll_sm_pack(&d, 0, my->data, d.bytes);
        coll_sm_slot_post(m, set, t);
        if (msg)
            *rc = coll_send(sbuf, scount, sdt, root, tag, comm);
        rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
        return true;
    }
    my->flags = 0;
    *rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        *rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf, rdt, displs[root]), rcounts[root], rdt);
    coll_sm_slot_wait_all(m, set, t);
    small_seen_all(m, t);
    coll_reqs_t q;
    coll_reqs_init(&q);
    for (int j = 0; j < m->n; j++) {
        if (j == root)
            continue;
        const coll_sm_slot_t *sj = coll_sm_slot(m, j, set);
        void *blk = coll_elem(rbuf, rdt, displs[j]);
        if (sj->flags & COLL_SM_SLOT_VIA_MESSAGE) {
            *rc = SM_KEEP(*rc, coll_reqs_irecv(&q, blk, rcounts[j], rdt, j, tag, comm));
            continue;
        }
        *rc = SM_KEEP(*rc, small_take_block(sj, j, blk, rcounts[j], rdt));
    }
    *rc = coll_reqs_wait(&q, *rc);
    coll_sm_slot_post(m, set, t);
    rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
    return true;
}
