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
#include "coll/sm/sm_small.h"
#include "accel/accel.h"
#include "obj/err.h"

#include <string.h>

uint64_t coll_sm_count_small_mixed;
uint64_t coll_sm_count_small_v;
uint64_t coll_sm_count_small_bulk;


void coll_sm_small_pass(coll_sm_module_t *m)
{
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = 0;
    my->len = 0;
    coll_sm_slot_post(m, set, t);
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

bool coll_sm_small_bcast(coll_sm_module_t *m, obj_comm_t *comm, void *buf, MPI_Count count,
                         obj_datatype_t *dt, int root, int *rc)
{
    coll_sm_data_t d;
    *rc = MPI_SUCCESS;
    coll_sm_data_init(&d, buf, count, dt);
    if (d.bytes == 0 || d.bytes > coll_sm_small_limit())
        return false;
    if (!small_ready(m, comm, rc))
        return *rc != MPI_SUCCESS;
    if (!coll_sm_small_bcast_fits(m, d.bytes))
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
    if (coll_sm_small_bcast_fits(m, d->bytes) || coll_sm_params.small_max == 0)
        return false;   /* (this process's size fits: it knows the root's did not) */
    int set;
    uint64_t t;
    const coll_sm_slot_t *rs = small_root_took_slots(m, s, root, &set, &t);
    if (rs == NULL)
        return false;
    *rc = small_bcast_take(m, rs, root, set, t, d);
    return true;
}

static bool small_blocks_fit(coll_sm_module_t *m, obj_comm_t *comm, size_t per_slot, size_t b,
                             int *rc)
{
    return coll_sm_small_blocks_fit(per_slot, b) && small_ready(m, comm, rc) &&
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
        (coll_sm_small_blocks_fit(per_slot, b) && per_slot <= m->slot_size))
        return false;
    int set;
    uint64_t t;
    const coll_sm_slot_t *rs = small_root_took_slots(m, s, root, &set, &t);
    if (rs == NULL)
        return false;
    *rc = small_scatter_take(m, rs, set, t, root, rbuf, rcount, rdt);
    return true;
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
