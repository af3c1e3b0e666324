/*
 * coll sm: the slots of the small operations (sm_small.c describes the
 * protocol) and the small operations' entry points, tried first by the
 * operations' files.  Split from coll_sm.h, which holds the component,
 * the module, the parameters and the flag rounds.
 */
#ifndef COLL_SM_SLOTS_H
#define COLL_SM_SLOTS_H

#include "coll/sm/coll_sm.h"

/* One of a process's slots: the number of the small operation whose data
 * it holds (published last), then the data.  See sm_small.c. */
typedef struct coll_sm_slot {
    uint64_t seq;
    uint32_t flags;                /* COLL_SM_SLOT_* */
    uint32_t len;                  /* data bytes */
    uint8_t data[];                /* slot_size bytes, 16 of them in the first line */
} coll_sm_slot_t;
#define COLL_SM_SLOT_HDR 16
#define COLL_SM_SLOT_DEVICE 1u
/* a reduce's or gather's root's verdict for its device non-roots
 * (sm_small.c, ROOTED OPERATIONS): everyone hands the call on, and every
 * process has device buffers */
#define COLL_SM_SLOT_HANDOFF 2u
#define COLL_SM_SLOT_ALL_DEVICE 4u
/* a bcast's or scatter's root, or a gather's sender (with
 * COLL_SM_SLOT_DEVICE where its buffers are device memory), wrote the slot; above the
 * low byte, the flag-based operations it had started (m->seq, low 24
 * bits).  A receiver (a gather's root) whose size puts it on the other
 * side of the slot size (mismatched type signatures, erroneous) tells
 * from it whether the root (the senders) took the slots or the flag
 * rounds for this call (sm_small.c, MISMATCHED SIZES).  A small
 * reduction's writer tags its slot the same way (the others, which all
 * wait for everyone, tell from it who took the flag rounds).  Every other
 * writer of a slot writes flags without this bit. */
#define COLL_SM_SLOT_ROOTED 8u
/* a gatherv sender's block comes by a message (sm_small.c) */
#define COLL_SM_SLOT_VIA_MESSAGE 16u
/* a scatterv root's blocks are all of the slot's len bytes: no lengths
 * before them (sm_small.c) */
#define COLL_SM_SLOT_UNIFORM 32u
#define COLL_SM_SLOT_ROOTED_AT(seq) (COLL_SM_SLOT_ROOTED | (uint32_t)(seq) << 8)

/* GROWTH (sm_small.c): the slots in use for small operation t, a power of
 * two that doubles from slots_start at operation COLL_SM_GROW_OPS times
 * its double, until all are; *until: where it doubles next.  (The bulk
 * slots grow the same way by their own count, BULK.) */
#define COLL_SM_GROW_OPS 8
static inline int coll_sm_grown(uint64_t start, uint64_t all, uint64_t t, uint64_t *until)
{
    uint64_t a = start;
    while (a < all && t >= COLL_SM_GROW_OPS * 2 * a)
        a = RAIL_MIN(2 * a, all);
    if (until)
        *until = a < all ? COLL_SM_GROW_OPS * 2 * a : UINT64_MAX;
    return (int)a;
}
static inline int coll_sm_slots_at(const coll_sm_module_t *m, uint64_t t, uint64_t *until)
{
    return coll_sm_grown((uint64_t)m->slots_start, (uint64_t)m->slots, t, until);
}
/* The slot of small operation t. */
static inline int coll_sm_slot_of(const coll_sm_module_t *m, uint64_t t)
{
    return (int)(t % (uint64_t)coll_sm_slots_at(m, t, NULL));
}
/* The phase of small operation t (slots_on, slots_until) made the module's,
 * small_set its slot: where small_seq == t. */
static inline void coll_sm_slots_phase(coll_sm_module_t *m, uint64_t t)
{
    m->slots_on = coll_sm_slots_at(m, t, &m->slots_until);
    m->small_set = (int)(t % (uint64_t)m->slots_on);
}
/* ... entering a phase with more slots than before: those newly in use
 * populated (sm_segment.c). */
void coll_sm_slots_grow(coll_sm_module_t *m, uint64_t t);
/* Before this process first writes its bulk slots below `upto`: those
 * allocated and mapped in one call (ROOM in sm_segment.c). */
void coll_sm_bulk_populate(coll_sm_module_t *m, int upto);

static inline coll_sm_slot_t *coll_sm_slot(coll_sm_module_t *m, int r, int k)
{
    return (coll_sm_slot_t *)(m->seg + m->hdr->slot_off +
                              ((size_t)k * (size_t)m->n + (size_t)r) * m->slot_stride);
}
/* Rank r's bulk slot k: a bcast's data or an allgather's block larger than
 * a slot (sm_small.c, BULK). */
static inline uint8_t *coll_sm_bulk(coll_sm_module_t *m, int r, int k)
{
    return (uint8_t *)m->seg + m->hdr->bulk_off +
           ((size_t)r * (size_t)m->bulk_slots + (size_t)k % (size_t)m->bulk_slots) *
               m->bulk_stride;
}
/* Publish slot `set` (k) of this process as holding small operation t. */
void coll_sm_slot_post(coll_sm_module_t *m, int set, uint64_t t);
/* Wait until every other rank's slot `set` (k) holds operation t or later. */
void coll_sm_slot_wait_all(coll_sm_module_t *m, int set, uint64_t t);
/* ... and then reads `bytes` from the start of each slot's data
 * (sm_wait.c, SPILL LINE) */
void coll_sm_slot_wait_all_data(coll_sm_module_t *m, int set, uint64_t t, size_t bytes);
void coll_sm_slot_wait(coll_sm_module_t *m, int r, int set, uint64_t t);
/* ... of rank r, or until r's flag reaches v */
void coll_sm_slot_or_flag_wait(coll_sm_module_t *m, int r, int set, uint64_t t, uint64_t v);
/* Every other rank's slot `set` holding operation t, or its flag reaching
 * v (a rank that took the flag rounds: MISMATCHED SIZES); `bytes` as
 * coll_sm_slot_wait_all_data. */
void coll_sm_slot_or_flag_wait_all(coll_sm_module_t *m, int set, uint64_t t, size_t bytes,
                                   uint64_t v);
/* Until r's flag reaches v, or its slot `set` holds operation t. */
void coll_sm_flag_or_slot_wait(coll_sm_module_t *m, int r, uint64_t v, int set, uint64_t t);
/* ... of ranks lo .. hi - 1 */
void coll_sm_slot_wait_range(coll_sm_module_t *m, int lo, int hi, int set, uint64_t t);

/* The blocks of a reduce_scatter: block j holds counts[j] elements, or
 * count when counts is NULL. */
typedef struct coll_sm_blocks {
    const MPI_Count *counts;
    MPI_Count count;
} coll_sm_blocks_t;

/* Small operations (sm_small.c), tried first by the entry points: false
 * when the call is not one (the same verdict on every process); true when
 * it ran, with *rc its result, or *handoff set when every process must hand
 * the call to the next module (some process has device buffers; a
 * reduction's *all_device, where not NULL: every process has).  A
 * reduction of count elements (root < 0: every process) leaves elements
 * [lo, lo + cnt) of the result in rbuf: 0, count for reduce and allreduce,
 * the process's own block for reduce_scatter, which passes its blocks
 * (the others' inputs are then read from where the reader's block starts
 * in their slots; NULL otherwise).  root COLL_SM_SMALL_SCAN /
 * COLL_SM_SMALL_EXSCAN: the prefix of processes 0 .. me (.. me - 1), as
 * basic's scan chain combines it. */
#define COLL_SM_SMALL_SCAN (-2)
#define COLL_SM_SMALL_EXSCAN (-3)
bool coll_sm_small_reduce(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf, void *rbuf,
                          MPI_Count count, obj_datatype_t *dt, obj_op_t *op, int root,
                          MPI_Count lo, MPI_Count cnt, const coll_sm_blocks_t *blocks,
                          bool *handoff, bool *all_device, int *rc);
bool coll_sm_small_barrier(coll_sm_module_t *m, obj_comm_t *comm, int *rc);
bool coll_sm_small_bcast(coll_sm_module_t *m, obj_comm_t *comm, void *buf, MPI_Count count,
                         obj_datatype_t *dt, int root, int *rc);
struct coll_sm_data;
/* A bcast's or scatter's receiver about to follow the root's flag rounds
 * of operation s: true when the root took the slots for this call instead
 * (mismatched type signatures: sm_small.c, MISMATCHED SIZES); s is then
 * given back and the call finished with *rc. */
bool coll_sm_small_bcast_late(coll_sm_module_t *m, uint64_t s, int root,
                              const struct coll_sm_data *d, int *rc);
bool coll_sm_small_scatter_late(coll_sm_module_t *m, uint64_t s, int root, void *rbuf,
                                MPI_Count rcount, obj_datatype_t *rdt, int *rc);
/* scatter, gather of blocks that fit the slots (scatter: the n - 1 blocks
 * for the others together); gather: *handoff where every sender has
 * device buffers (everyone goes on to the flag path) */
bool coll_sm_small_scatter(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                           MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                           obj_datatype_t *rdt, int root, int *rc);
/* gather: *mixed where the root found senders on both paths (MISMATCHED
 * SIZES, sm_small.c): the call is finished with an error, and the caller
 * ends the flag operation that the others run (coll_sm_gather). */
bool coll_sm_small_gather(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                          MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                          obj_datatype_t *rdt, int root, bool *handoff, bool *mixed, int *rc);
/* A gather's root about to run the flag rounds of operation s: true when
 * every sender took the slots for this call instead (MISMATCHED SIZES); s
 * is then given back and the call finished with *rc.  Also true, with
 * *mixed, where some senders took the slots and some did not: their
 * blocks read, an error in *rc, s kept (the caller ends it). */
bool coll_sm_small_gather_late(coll_sm_module_t *m, obj_comm_t *comm, uint64_t s,
                               const void *sbuf, MPI_Count scount, obj_datatype_t *sdt,
                               void *rbuf, MPI_Count rcount, obj_datatype_t *rdt, bool *mixed,
                               int *rc);
/* the v forms (sm_small.c): scatterv's *handoff where the root's blocks
 * do not fit (everyone hands the call on) */
bool coll_sm_small_allgatherv(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                              MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                              const MPI_Count rcounts[], const MPI_Aint displs[],
                              obj_datatype_t *rdt, int *rc);
bool coll_sm_small_scatterv(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                            const MPI_Count scounts[], const MPI_Aint displs[],
                            obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                            obj_datatype_t *rdt, int root, bool *handoff, int *rc);
bool coll_sm_small_gatherv(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                           MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                           const MPI_Count rcounts[], const MPI_Aint displs[],
                           obj_datatype_t *rdt, int root, int *rc);
bool coll_sm_small_allgather(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                             MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                             obj_datatype_t *rdt, int *rc);
bool coll_sm_small_alltoall(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                            MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                            obj_datatype_t *rdt, int *rc);

#endif
