/*
 * coll sm: collectives of intracommunicators whose processes all run on
 * this node, through flags and buffers in one shared-memory segment per
 * communicator instead of point-to-point messages.
 *
 * SEGMENT.  /dev/shm/rail-<jobid>-csm-<world rank of comm rank 0>-<n>,
 * made by comm rank 0 at the communicator's first sm collective (not at
 * its creation: Comm_dup stays cheap and communicators that never use a
 * collective cost nothing), its name sent to the others with point-to-
 * point messages; each maps it and answers; rank 0 unlinks it once every
 * answer is in and tells everyone whether all mapped it (otherwise sm
 * hands every call of this communicator to the next module).  Layout
 * (offsets from the base; lines are 64 bytes):
 *
 *   0                 coll_sm_hdr_t: identity (line 0), futex word (line 1),
 *                     sleeper count (line 2)
 *   ctl_off           coll_sm_ctl_t of rank r at ctl_off + r * 256: the flag
 *                     on its own line (adjacent-line prefetch never couples
 *                     two ranks' flags), then per-set words and the pid
 *   slot_off          coll_sm_slot_t k of rank r at slot_off +
 *                     (k * n + r) * slot_stride: small operations (sm_small.c;
 *                     slot-major, so that the slots in use first lie together)
 *   data_off (page)   area (r, set) of rank r for set 0 .. sets-1: nbuf
 *                     buffers of chunk bytes at data_off + (r * sets + set)
 *                     * nbuf * chunk (coll_sm_buffers)
 *
 * FLAGS.  Each rank owns one 64-bit flag, monotonic over the life of the
 * communicator: (seq << 32) | step, where seq numbers the sm collectives
 * on the communicator (the same at every process: collectives are called
 * in the same order) and step the progress of this process within it;
 * COLL_SM_FINAL ends every operation.  Waiting for "peer p reached step t
 * of operation s" is flag[p] >= COLL_SM_V(s, t) (compared modulo 2^64, so
 * the 32-bit seq may wrap): no resets, no barriers between consecutive
 * collectives.  Operation s uses the areas of set s % sets only
 * (coll_sm_sets, default 4), and before it writes into any area or per-set
 * word it waits until every rank has finished operation s - sets, the last
 * that used that set (coll_sm_claim_set); normally long true, so a process
 * may run up to `sets` collectives ahead of the slowest one without
 * waiting for it.  Within an operation, data go in rounds of at most one
 * buffer, rounds take the buffers of the area in turn, and the steps say
 * when a buffer may be read or reused (the algorithm files explain each
 * case for two buffers; with nbuf, "round k - 2" reads "round k - nbuf").
 *
 * ROTATION.  Round k of operation s uses buffer (k + lap * stride) % nbuf
 * of its set, lap = s / sets, stride = nbuf / 2 | 1 (coll_sm_bidx): the
 * same at every process, and any start is safe because claim_set orders
 * whole operations.  So a stream of one-round operations cycles through
 * every buffer of every set, and a long one through every buffer of its
 * set, before a buffer is written again.  Why: rewriting lines that a
 * reader has just copied out (they sit in its cache) costs the writer an
 * invalidation per line; on the 2-core EPYC VMs we measure on, a 1 MiB
 * bcast at np 2 took 110 us through two alternating 64 KiB buffers and
 * 22-27 us when every buffer had gone cold first (docs/performance.md).
 *
 * Per-operation values a reader needs (message size, device buffers, a
 * buffer address) go in ctl.meta[set] / ctl.addr[set] before the first
 * step; the same cross-operation wait protects them.
 *
 * MEMORY ORDERING.  Data in shared buffers are plain stores; a flag is
 * published with a release store (sequentially consistent where the
 * segment is not `nofence`, below) and read with an acquire load before
 * the data it covers are read.
 *
 * WAITING (sm_wait.c).  Poll the flags (with rail_progress() now and then,
 * so point-to-point traffic queued by this process still moves), spin
 * coll_sm_spin_count polls, then poll with sched_yield() for
 * coll_sm_yield_count polls, then sleep on the futex word of the segment
 * header: the sleeper increments `sleepers`, reads the futex word `gen`,
 * re-checks its condition and FUTEX_WAITs on `gen`; a publisher, after its
 * flag store, reads `sleepers` and, if any, increments `gen` and wakes
 * everyone.  The seq-cst store / seq-cst increment pair is a Dekker
 * handshake: either the sleeper sees the flag or the publisher sees the
 * sleeper.  A seq-cst store waits for every earlier store to leave the
 * store buffer, among them the slot or buffer lines that a reader still
 * holds: one cache-line round trip per publish (np 2 bcasts of 8 bytes
 * took 0.085 us with it, 0.04 without).  So where the segment header says
 * `nofence` (coll_sm_membarrier: by default when the node is
 * oversubscribed, where the membarrier finds the others switched out),
 * publishers store with a release and read `sleepers` without a fence,
 * and the sleeper, after its increment, runs membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED): a full
 * barrier in every running process of the node that registered for it,
 * which gives the handshake its publisher-side fence only when somebody
 * sleeps (sm_wait.c).  When the node is oversubscribed the spin budget is
 * tiny and yields come first (the rank we wait for needs our CPU).
 *
 * FALLBACK.  What sm does not do goes to the next module below it
 * (coll_next_module): reductions with a user operation, with a datatype
 * whose basic elements have no host kernel, with elements larger than a
 * buffer, or with device buffers that do not go device to device (below;
 * the reduction must run on the device, not on a host copy: the
 * processes agree through a bit in their first step, as one may pass
 * device memory where another passes host memory);
 * everything when the segment could not be set up.  Data-movement
 * operations take device buffers themselves (staged through the segment
 * with accel copies) below coll_sm_device_handoff_min bytes (bcast,
 * scatter; gathers, allgathers and alltoalls: coll_sm_device_blocks_min,
 * every size above the slots by default); from there every operation but
 * barrier moves them device to device itself
 * (sm_device.c) where every process concerned can open the others'
 * buffers by IPC, and hands the call on otherwise.
 */
#ifndef COLL_SM_COLL_SM_H
#define COLL_SM_COLL_SM_H

#include "coll/coll.h"
#include "coll/coll_util.h"
#include "base/atomic.h"
#include "base/dt.h"
#include "base/adapt.h"
#include "base/cma.h"
#include "base/copy.h"

#include <stdbool.h>
#include <stdint.h>

#define COLL_SM_MAGIC 0x314d53434c494152ULL /* "RAILCSM1" */
#define COLL_SM_CTL_STRIDE 256
#define COLL_SM_MAX_SETS 8
#define COLL_SM_MAX_BUFFERS 256
#define COLL_SM_PAGE 4096
#define COLL_SM_FINAL 0xffffffffu
#define COLL_SM_V(seq, step) (((uint64_t)(seq) << 32) | (uint32_t)(step))
/* flag >= v in serial-number arithmetic: true across the wrap of the
 * 32-bit seq field (compared values are never 2^63 apart) */
#define COLL_SM_REACHED(flag, v) ((int64_t)((flag) - (v)) >= 0)

typedef struct coll_sm_hdr {
    /* line 0: written by rank 0 before it sends the name */
    uint64_t magic;
    uint64_t size;
    uint32_t n;
    uint32_t chunk;
    uint32_t sets;
    uint32_t nbuf;                 /* buffers per area */
    uint64_t ctl_off, data_off;
    uint64_t probe;                /* address of a word in rank 0's memory (CMA probe) */
    uint64_t id;                   /* creator's world rank << 32 | its serial + 1 (reuse) */
    uint64_t slot_off;             /* small-operation slots (sm_small.c) */
    uint32_t slot_size;            /* data bytes of one slot */
    uint32_t slots;                /* slots per process */
    uint32_t nofence;              /* flags published without a full fence (WAITING) */
    uint32_t bulk_size;            /* data bytes of one bulk slot (0: none; sm_small.c) */
    uint64_t bulk_off;             /* bulk slots: bulk_slots per process of bulk_size bytes */
    uint32_t bulk_slots;           /* bulk slots per process (divides slots; BULK) */
    uint32_t lazy;                 /* buffers allocated at their first use (ROOM, sm_segment.c) */
    uint32_t slots_start;          /* slots in use at first (GROWTH, sm_small.c) */
    /* line 1: futex word, bumped by publishers when someone sleeps */
    uint32_t gen RAIL_ALIGNED(RAIL_CACHELINE);
    /* line 2: processes sleeping or about to */
    uint32_t sleepers RAIL_ALIGNED(RAIL_CACHELINE);
} coll_sm_hdr_t;

typedef struct coll_sm_ctl {
    uint64_t flag;                 /* COLL_SM_V(seq, step), written by its owner */
    uint64_t meta[COLL_SM_MAX_SETS];   /* per-operation value, by set */
    uint64_t addr[COLL_SM_MAX_SETS];   /* single copy: address of the owner's data, by set */
    uint64_t raddr[COLL_SM_MAX_SETS];  /* ... and of its result buffer (reductions) */
    int32_t pid;                   /* owner's pid (single copy), set at setup */
    int32_t accel;                 /* 1: a device component is active there, set at setup */
    /* shared single copy (sm_share.c, base/cma.h): the owner reads from
     * another process, which may write chunks of it */
    uint64_t share_claim;          /* generation << 32 | its chunks << 16 | the owner's */
    uint64_t share_done;           /* chunks the other finished (+ RAIL_CMA_SHARE_FAILED each) */
    rail_cma_share_desc_t share_desc;   /* what the owner reads */
} coll_sm_ctl_t;
_Static_assert(sizeof(coll_sm_ctl_t) <= COLL_SM_CTL_STRIDE, "coll_sm_ctl_t outgrew its stride");

/* meta of a bcast root: bytes, and this bit when the receivers read the
 * root's buffer directly (single copy), or the other when everyone hands
 * the call to the next component (a device buffer: coll_sm_device_handoff_min) */
#define COLL_SM_META_CMA (1ULL << 63)
#define COLL_SM_META_HANDOFF (1ULL << 62)
/* ... with HANDOFF: the root published its device buffer (sm_device.c) */
#define COLL_SM_META_DEVICE_IPC (1ULL << 61)
/* ... the bytes, below those bits */
#define COLL_SM_META_BYTES ((1ULL << 61) - 1)

enum { COLL_SM_UNSET = 0, COLL_SM_READY = 1, COLL_SM_OFF = -1 };

/* ADAPTIVE SINGLE COPY (base/adapt.h).  From coll_sm_adapt_min bytes in
 * contiguous host buffers (and below coll_sm_single_copy_min, which forces
 * single copy), the process that decides a call times it and picks, call
 * by call, the path that has been faster for that kind of operation and
 * size class: the segment (copy in, copy out) or single copy (CMA).
 * Which one wins depends on the machine, and on this kind of VM even on
 * the minute.  A bcast root decides alone (COLL_SM_META_CMA tells the
 * receivers); for reductions and gathers (from coll_sm_adapt_agree_min),
 * allgathers and alltoalls (from coll_sm_adapt_blocks_min) rank 0 (a
 * gather's root) does and tells the others in a first
 * step (sm_reduce.c, sm_gather.c, sm_allgather.c, sm_rscatter.c).  Not when the node is oversubscribed (the
 * segment). */
enum { COLL_SM_PATH_SEGMENT = 0, COLL_SM_PATH_CMA = 1,
       /* bcast and alltoall, where the CPU can: the segment, its writers
        * using non-temporal stores (base/copy.h rail_copy_stream) */
       COLL_SM_PATH_STREAM = 2 };
enum {
    COLL_SM_ADAPT_BCAST,
    COLL_SM_ADAPT_REDUCE,
    COLL_SM_ADAPT_ALLREDUCE,
    COLL_SM_ADAPT_ALLGATHER,
    COLL_SM_ADAPT_REDUCE_SCATTER,
    COLL_SM_ADAPT_ALLTOALL,
    COLL_SM_ADAPT_GATHER,
    COLL_SM_ADAPT_BCAST_OVERSUB,   /* oversubscribed: segment (0) or streamed (1), root-timed */
    COLL_SM_ADAPT_KINDS
};

typedef struct coll_sm_module {
    coll_module_t super;
    int state;                     /* COLL_SM_* */
    int n, me;
    uint64_t seq;                  /* sm operations started on this communicator */
    uint64_t seq0;                 /* its value at setup (coll_sm_seq_start) */
    char *seg;
    size_t seg_size;
    coll_sm_hdr_t *hdr;
    size_t chunk;                  /* bytes of one buffer */
    int sets;                      /* buffer sets: operations in flight */
    int nbuf;                      /* buffers per area (set) */
    int degree;                    /* barrier tree */
    bool oversub;
    bool nofence;                  /* publish with a release store (WAITING) */
    bool cma;                      /* every process can read every other's memory */
    void *scratch;                 /* private, 2 * chunk bytes */
    uint64_t small_seq;            /* small operations started (sm_small.c) */
    int small_set;                 /* small_seq's slot (% slots_on), kept without dividing */
    bool host_only;                /* no process has a device component active */
    uint64_t *small_seen;          /* [n] latest small operation seen published by each */
    MPI_Count *small_starts;       /* [n] reduce_scatter: where each block starts */
    /* the last predefined operation and datatype coll_sm_red_prepare
     * accepted (both live forever), and the datatype's kind */
    obj_op_t *prep_op;
    obj_datatype_t *prep_dt;
    rail_typekind_t prep_kind;
    const char **small_x;          /* [n] inputs of a small fold */
    uint64_t small_min;            /* the least of them (others than me) */
    size_t slot_size, slot_stride;
    int slots;                     /* per process in the layout */
    int slots_start;               /* in use at first (GROWTH, sm_small.c): a power of two ... */
    int slots_on;                  /* ... in use for small_seq's phase, until small_seq reaches */
    uint64_t slots_until;          /* ... this (UINT64_MAX: all in use) */
    size_t bulk_size, bulk_stride; /* blocks above the slots' size (sm_small.c, BULK) */
    int bulk_slots;                /* bulk slots per process (BULK in sm_small.c) */
    int bulk_on;                   /* ... of mine in use (their growth, BULK) */
    int bulk_ready;                /* ... of mine allocated and mapped (coll_sm_bulk_populate) */
    uint32_t bulk_next;            /* ... the one I use next */
    uint64_t bulk_count;           /* operations whose data I put in a bulk slot */
    uint64_t bulk_until;           /* ... the count at which bulk_on doubles next */
    uint64_t *bulk_t;              /* [bulk_slots] the operation that last used each (0: none) */
    rail_adapt_t adapt[COLL_SM_ADAPT_KINDS][RAIL_ADAPT_CLASSES];
    uint32_t bcast_turn;           /* coll_sm_adapt_alternate: bcasts so far */
    bool share_off;                /* a shared copy's write into a reader failed: help no more */
    char *cma_buf;                 /* single-copy reductions: 3 pieces, made at the first */
    char **dev_ptr;                /* [2n] peers' device buffers opened by IPC (sm_device.c) */
    void **dev_held;               /* [2n] accel IPC cache entries held for them */
    const void **dev_in;           /* [n] a reduction's inputs, or a step's copy sources */
    void **dev_cdst;               /* [n] ... their destinations (accel_copy_many) */
    void *dev_one;                 /* [n * n] copies of an operation done by one */
    size_t dev_one_cap;
    size_t *dev_clen;              /* [n] ... and lengths */
    int dev_nheld;
    struct accel_stream *dev_stream;   /* ... and the stream of the copies and reductions */
    uint8_t verdict;               /* of the setup exchange (SM_OK_* in sm_segment.c) */
    bool populated;                /* my buffers faulted in (coll_sm_begin) */
} coll_sm_module_t;

/* Bytes a single-copy reduction reads per process_vm_readv (fewer calls,
 * each pinning more pages: 256 KiB was 15% faster than 64 KiB at 1 MiB) */
#define COLL_SM_CMA_PIECE ((size_t)256 << 10)

typedef struct coll_sm_params {
    int priority;
    size_t segment_size;           /* upper bound of a segment */
    size_t chunk_size;             /* bytes of one buffer (one round) */
    size_t reduce_min;             /* MPI_Reduce below this many bytes: next module */
    size_t allreduce_pair_max;     /* 2 processes: MPI_Allreduce up to this size: next */
    size_t alltoall_max;           /* oversubscribed: MPI_Alltoall blocks from this size: next */
    size_t alltoall_cma_min;       /* oversubscribed: ... in all from this size: single copy */
    const char *oversub_alltoall_path;   /* ... where: auto (a probe) | cma | segment */
    size_t share_min;              /* single-copy gathers from here: the sender writes part */
    size_t scatter_cma_min;        /* scatter blocks from here: receivers read the root's */
    size_t share_bcast_min;        /* single-copy bcasts from here: the root writes part */
    size_t reduce_flat_max;        /* reductions up to this many bytes: one step */
    bool reduce_pair_flat;         /* ... and those of 2 processes at any size */
    size_t small_max;              /* slot data bytes: small operations (sm_small.c) */
    size_t small_bulk_max;         /* bcasts, allgathers up to this through the slots (BULK) */
    int small_slots;               /* slots per process */
    int oversub_small_slots;       /* ... on an oversubscribed node (0: small_slots) */
    int small_slots_start;         /* ... in use at first (GROWTH; 0: all) */
    size_t cma_min;                /* bcast/reduce single copy from this size (0: never) */
    size_t adapt_min;              /* ... chosen by measured time from this size (0: never) */
    size_t adapt_agree_min;        /* ... for reductions, gathers (rank 0 / the root chooses) */
    size_t adapt_blocks_min;       /* ... for allgathers, alltoalls (all blocks) */
    size_t device_handoff_min;     /* device buffers: the next module from here */
    size_t device_blocks_min;      /* ... of a gather, allgather, alltoall (in all) */
    bool device_ipc;               /* ... or device to device by the processes (sm_device.c) */
    size_t device_ipc_reduce_min;  /* reductions device to device from here (every size: 1) */
    size_t device_allreduce_whole_max;   /* ... each process folds the whole result */
    size_t device_allreduce_one_max;     /* ... rank 0 folds it for everyone */
    size_t device_blocks_one_max;  /* allgathers, alltoalls: rank 0 moves all blocks */
    size_t device_bcast_one_max;   /* bcasts: the root copies to everyone */
    bool adapt_alternate;          /* testing: ... alternating instead */
    bool share_refuse;             /* testing: a shared copy's helper fails every chunk */
    int spin_count, yield_count;
    int membarrier;                /* -1 oversubscribed, 0 never, 1 not, 2 always (WAITING) */
    int tree_degree;
    int verbose;
    size_t seq_start;              /* testing: first sequence number */
    int sets;
    int buffers;                   /* buffers per area */
    int round_lag;                 /* allgather/alltoall: rounds written ahead of reads */
    int oversub_group;             /* oversubscribed: buffers this many chunks large */
    int segment_cache;             /* freed communicators' segments kept for reuse */
    size_t segment_cache_bytes;    /* ... holding at most this much of /dev/shm */
} coll_sm_params_t;

extern coll_sm_params_t coll_sm_params;
extern const coll_component_t coll_sm_component;
/* Register the parameters (sm_params.c) and the MPI_T counters. */
int coll_sm_register_params(void);

static inline int coll_sm_verbosity(void)
{
    return RAIL_MAX(coll_sm_params.verbose, coll_verbose);
}

/* ------------------------------------------------------------ segment */

static inline coll_sm_ctl_t *coll_sm_ctl(coll_sm_module_t *m, int r)
{
    return (coll_sm_ctl_t *)(m->seg + m->hdr->ctl_off + (size_t)r * COLL_SM_CTL_STRIDE);
}

/* Buffer b (0 .. nbuf - 1) of rank r's area in set `set`. */
static inline char *coll_sm_buf(coll_sm_module_t *m, int r, int set, int b)
{
    return m->seg + m->hdr->data_off +
           (((size_t)r * (size_t)m->sets + (size_t)set) * (size_t)m->nbuf + (size_t)b) * m->chunk;
}

/* Bytes between the same buffer of consecutive ranks' areas. */
static inline size_t coll_sm_rank_stride(const coll_sm_module_t *m)
{
    return (size_t)m->sets * (size_t)m->nbuf * m->chunk;
}

/* The buffer of round k of operation seq (see ROTATION above). */
static inline int coll_sm_bidx(const coll_sm_module_t *m, uint64_t seq, size_t k)
{
    uint64_t lap = seq / (uint64_t)m->sets, stride = (uint64_t)(m->nbuf / 2) | 1;
    return (int)((k + lap * stride) % (uint64_t)m->nbuf);
}

/* Where round k of operation seq goes in rank r's area of `set` when the
 * writer moves `total` bytes in all.  Data of more than one buffer: buffer
 * coll_sm_bidx(k).  At most one buffer (one round): anywhere in the set's
 * area, as claim_set frees the whole area for each operation, at a
 * position that advances with the laps, in steps of the data's size
 * (rounded up to a power of two, at least 4 KiB), so a stream of small
 * operations passes over the whole area (sets * nbuf * chunk bytes, 4 MiB
 * by default) before it writes a line again: np 2, back-to-back bcasts of
 * 2-16 KiB took 3-4x longer while the rotation over whole buffers brought
 * the writer back to lines the reader still held (64 operations, 512 KiB
 * for 8 KiB ones: 1.0-1.2 us against 0.27).  Not on an oversubscribed
 * node: processes sharing a core find recently written lines in their own
 * caches there, and the whole-buffer rotation was faster (np 8 on 2 cores,
 * alltoall of 256 B blocks 11.8-18.3 against 21.7-25.4 us, allgather of 4
 * KiB 15 against 16-32 us). */
#define COLL_SM_MULTI_ROUND ((size_t)-1)   /* a `total` of more than one buffer */
static inline char *coll_sm_round_buf(coll_sm_module_t *m, int r, int set, uint64_t seq, size_t k,
                                      size_t total)
{
    if (total > m->chunk || m->oversub)
        return coll_sm_buf(m, r, set, coll_sm_bidx(m, seq, k));
    size_t q = 4096;
    while (q < total && q < m->chunk)
        q <<= 1;
    uint64_t positions = (uint64_t)m->nbuf * m->chunk / q;
    return coll_sm_buf(m, r, set, 0) + (size_t)((seq / (uint64_t)m->sets) % positions) * q;
}

/* The buffer set of operation seq. */
static inline int coll_sm_set(const coll_sm_module_t *m, uint64_t seq)
{
    return (int)(seq % (uint64_t)m->sets);
}

/* Set up the segment at the first sm collective of comm (collective):
 * MPI_SUCCESS (state READY or OFF), or an error of the exchange. */
int coll_sm_segment_setup(coll_sm_module_t *m, obj_comm_t *comm);
void coll_sm_segment_release(coll_sm_module_t *m);
/* The communicator goes away: keep its segment for the next communicator
 * of the same members (sm_segment.c, REUSE), or release it. */
void coll_sm_segment_keep(coll_sm_module_t *m, obj_comm_t *comm);
/* Register the counters below as MPI_T performance variables
 * (coll_sm_*, sm_pvar.c). */
int coll_sm_register_pvars(void);
/* Segments this process set up fresh / continued from a freed
 * communicator (MPI_T counters). */
extern uint64_t coll_sm_count_created, coll_sm_count_reused, coll_sm_count_populated,
    coll_sm_count_bulk_populated;
/* Segments this process made with every buffer allocated up front (ROOM). */
extern uint64_t coll_sm_count_reserved;
/* Times this process put twice the slots in use (GROWTH, MPI_T). */
extern uint64_t coll_sm_count_slot_doublings;
/* alltoalls this process completed by single copy (MPI_T) */
extern uint64_t coll_sm_count_alltoall_cma;
/* alltoalls this process wrote into the segment with streaming stores
 * (rank 0 chose that path; MPI_T) */
extern uint64_t coll_sm_count_alltoall_streamed;
extern uint64_t coll_sm_count_allgather_streamed;   /* the same for allgathers */
extern uint64_t coll_sm_count_gather_cma;   /* gathers whose root read by single copy */
extern uint64_t coll_sm_count_scatter_cma;  /* scatter blocks this process read from its root */
/* chunks of single-copy bcasts that the root wrote into this receiver's
 * buffer, and of gathers that senders wrote into this root's (MPI_T) */
extern uint64_t coll_sm_count_bcast_chunks_in, coll_sm_count_gather_chunks_in;

/* SHARED SINGLE COPY (sm_share.c; whether a read is shared:
 * coll_sm_share_on, sm_decide.h). */
/* Reader, operation s: len bytes at `remote` in process `helper` into dst
 * (contiguous host memory), the helper writing what chunks it claims
 * (counted in *chunks_in). */
int coll_sm_share_read(coll_sm_module_t *m, uint64_t s, int helper, uint64_t remote, char *dst,
                       size_t len, uint64_t *chunks_in);
/* Helper, operation s: write chunks, from the back, of the data that
 * process `reader` (-1: any other) reads from this process by
 * coll_sm_share_read, while it may still take them (a bounded wait for
 * readers that have not published yet). */
void coll_sm_share_help(coll_sm_module_t *m, uint64_t s, int reader);

/* Copy len bytes at address `remote` in process pid into local memory
 * (base/cma.h); MPI_SUCCESS or MPI_ERR_OTHER with a message. */
int coll_sm_cma_read(int32_t pid, uint64_t remote, void *local, size_t len);
/* The other way. */
int coll_sm_cma_write(int32_t pid, uint64_t remote, const void *local, size_t len);
/* A status of base/cma.h's (its quiet calls): MPI_ERR_OTHER with its message. */
int coll_sm_cma_status(int rc);

/* Start an operation: MPI_SUCCESS with *seq its number, or COLL_SM_HANDOFF
 * (not set up: hand the call to the next module), or an error. */
#define COLL_SM_HANDOFF 1
int coll_sm_begin(coll_sm_module_t *m, obj_comm_t *comm, uint64_t *seq);

/* ------------------------------------------------------------ adaptive single copy */

/* The estimates of `kind` (COLL_SM_ADAPT_*) for calls of `bytes`; paths are
 * COLL_SM_PATH_*, a timed call is timed whole (until every process is
 * done). */
static inline rail_adapt_t *coll_sm_adapt_of(coll_sm_module_t *m, int kind, size_t bytes)
{
    return &m->adapt[kind][rail_adapt_class(bytes)];
}

/* ------------------------------------------------------------ flags */

static inline uint64_t coll_sm_flag(coll_sm_module_t *m, int r)
{
    return rail_atomic_load_acquire(&coll_sm_ctl(m, r)->flag);
}

/* Whether this process registered for membarrier's global expedited
 * barriers (asked once; sm_wait.c). */
bool coll_sm_membarrier_registered(void);
/* Publish this process's flag and wake sleepers. */
void coll_sm_post(coll_sm_module_t *m, uint64_t v);
/* Wait until flag[r] >= v. */
void coll_sm_wait(coll_sm_module_t *m, int r, uint64_t v);
/* Wait until every other rank's flag >= v; the same for ranks [lo, hi). */
void coll_sm_wait_all(coll_sm_module_t *m, uint64_t v);
void coll_sm_wait_range(coll_sm_module_t *m, int lo, int hi, uint64_t v);
/* Whether every process marked operation `set`'s meta word as using
 * device buffers (bit 0; those alone published a device record,
 * sm_device.c; whether any did: coll_sm_red_first) */
static inline bool coll_sm_all_device(coll_sm_module_t *m, int set)
{
    for (int i = 0; i < m->n; i++)
        if (!(coll_sm_ctl(m, i)->meta[set] & 1))
            return false;
    return true;
}

/* A reduction's meta word (allreduce, reduce, reduce_scatter through the
 * flag rounds): bit 0 device buffers, bit 1 rank 0's path (sm_reduce.c,
 * sm_red_announce), bits 8-47 the bytes of the process's input, bits
 * 48-63 the small operations it had begun (m->small_seq), which tell a
 * process that took the slots for this call (MISMATCHED SIZES, sm_small.c:
 * it has begun one more).  Every process reads every word once everyone's
 * first step is in (coll_sm_red_first). */
#define COLL_SM_RED_BYTES_SHIFT 8
#define COLL_SM_RED_BYTES_MASK ((UINT64_C(1) << 40) - 1)
#define COLL_SM_RED_SMALL_SHIFT 48
static inline uint64_t coll_sm_red_meta(const coll_sm_module_t *m, uint64_t bytes)
{
    return (bytes & COLL_SM_RED_BYTES_MASK) << COLL_SM_RED_BYTES_SHIFT |
           m->small_seq << COLL_SM_RED_SMALL_SHIFT;
}
static inline uint64_t coll_sm_red_meta_bytes(uint64_t w)
{
    return w >> COLL_SM_RED_BYTES_SHIFT & COLL_SM_RED_BYTES_MASK;
}
/* What a reduction does after everyone's first step (coll_sm_red_first). */
enum { COLL_SM_RED_GO, COLL_SM_RED_STOP, COLL_SM_RED_STOP_SLOTS };
/* Everyone's first step of a reduction in (set: its set; bytes: this
 * process's input): *stop COLL_SM_RED_GO, *handoff where some process has
 * device buffers; otherwise inputs differ between processes (erroneous),
 * and every process, reading the same words, stops (*handoff set too, to
 * end the rounds) and returns the error (MPI_ERR_TRUNCATE /
 * MPI_ERR_COUNT) after coll_sm_red_stop.  sm_reduce.c. */
int coll_sm_red_first(coll_sm_module_t *m, int set, uint64_t bytes, bool *handoff, int *stop);
/* A stopped reduction's end (operation s): the small operation that some
 * took the slots for published where stop is COLL_SM_RED_STOP_SLOTS
 * (coll_sm_small_pass), then FINAL. */
void coll_sm_red_stop(coll_sm_module_t *m, uint64_t s, int stop);
/* The small operation that the processes of a reduction that took the
 * slots numbered, published by one that took the flag rounds (MISMATCHED
 * SIZES): without data, its flags telling them so.  sm_small.c. */
void coll_sm_small_pass(coll_sm_module_t *m);

/* Before writing into the areas of its set: every rank finished the last
 * operation that used it. */
static inline void coll_sm_claim_set(coll_sm_module_t *m, uint64_t seq)
{
    if (seq - m->seq0 > (uint64_t)m->sets)
        coll_sm_wait_all(m, COLL_SM_V(seq - (uint64_t)m->sets, COLL_SM_FINAL));
}

/* out = x0 op (x1 op (... op x(n-1))) over len basic elements of `kind`
 * (n >= 2), where x_r is at x + r * stride (every rank's buffer or slot),
 * except x_own at xown (a process's own data, read where it is; own -1:
 * none); the order of basic, so every process gets the same bits
 * (sm_reduce.c).  out must not overlap any x. */
int coll_sm_fold_own(rail_op_t rop, rail_typekind_t kind, int n, const char *x, size_t stride,
                     size_t len, void *out, int own, const void *xown);
/* The same with x_r at x[r]. */
int coll_sm_fold_ptrs(rail_op_t rop, rail_typekind_t kind, int n, const char *const *x,
                      size_t len, void *out);
/* Single-copy reductions: elements [a, a + len) (esz bytes each) of every
 * process's input (at ctl addr[set]; mine at `own`), out = x0 op (x1 op
 * (... op x(n-1))), the others read into t1 and t2 (COLL_SM_CMA_PIECE
 * bytes each); out must not overlap my input. */
int coll_sm_cma_fold(coll_sm_module_t *m, rail_op_t rop, rail_typekind_t kind, int set,
                     const char *own, size_t a, size_t len, size_t esz, char *out, char *t1,
                     char *t2);
/* The module's 3 pieces for them (made at the first call), or NULL. */
char *coll_sm_cma_bufs(coll_sm_module_t *m);
/* Whether sm can reduce count elements of dt with op on the host: NULL
 * with r and *kind set (or *rc an argument error), else why the call must
 * go to the next module (the same answer on every process). */
const char *coll_sm_red_prepare(coll_sm_module_t *m, coll_red_t *r, rail_typekind_t *kind,
                                obj_op_t *op, obj_datatype_t *dt, MPI_Count count, int *rc);

/* The first error of a sequence of steps: rc once it is one, else r. */
#define SM_KEEP(rc, r) ((rc) != MPI_SUCCESS ? (rc) : (r))

/* A piece of an operation's function, called once: always inlined, so the
 * operation's fast path compiles as one function, as before it was split
 * into pieces for reading. */
#define SM_HOT static inline __attribute__((always_inline))

/* ------------------------------------------------------------ user data */

/* Packed bytes of count elements of dt at buf, moved in pieces at any byte
 * offset; host or device memory (accel copies). */
typedef struct coll_sm_data {
    char *contig;                  /* contiguous data (host or device memory), else NULL */
    const obj_datatype_t *dt;
    const void *buf;
    MPI_Count count;
    size_t bytes;
    bool device;
    bool stream;                   /* packed into the segment by streaming stores */
} coll_sm_data_t;

void coll_sm_data_init(coll_sm_data_t *d, const void *buf, MPI_Count count,
                       const obj_datatype_t *dt);
/* More counters (MPI_T, sm_pvar.c). */
extern uint64_t coll_sm_count_device_ipc;
extern uint64_t coll_sm_count_sleeps;         /* futex waits (sm_wait.c) */
extern uint64_t coll_sm_count_sleep_fences;   /* ... that first fenced everyone by membarrier */
extern uint64_t coll_sm_count_sleep_timeouts; /* ... that ended by their timeout */
extern uint64_t coll_sm_count_sleep_p2p_wakes; /* ... that p2p traffic ended */
extern uint64_t coll_sm_count_small_mixed;    /* small reduces and gathers, mixed (sm_small.c) */
extern uint64_t coll_sm_count_small_v;        /* v forms through the slots (sm_small.c) */
extern uint64_t coll_sm_count_small_bulk;     /* bcasts, allgathers by BULK (sm_small.c) */

/* The same buffer `elems` elements further (block i of an all-to-all). */
static inline coll_sm_data_t coll_sm_data_at(const coll_sm_data_t *d, MPI_Count elems)
{
    coll_sm_data_t b = *d;
    MPI_Count off = elems * d->dt->extent;
    b.buf = (const char *)d->buf + off;
    if (b.contig)
        b.contig += off;
    return b;
}
/* Read min(total, d's bytes) bytes at `addr` in process `owner` into d
 * (single copy; through the scratch buffer when d is not contiguous host
 * memory). */
int coll_sm_cma_read_data(coll_sm_module_t *m, int owner, uint64_t addr, size_t total,
                          const coll_sm_data_t *d);
/* bytes [off, off + len) of the packed data <-> shared memory */
int coll_sm_pack(const coll_sm_data_t *d, size_t off, void *dst, size_t len);
int coll_sm_unpack(const coll_sm_data_t *d, size_t off, const void *src, size_t len);

/* ------------------------------------------------------------ operations */

int coll_sm_barrier(obj_comm_t *comm, coll_module_t *module);
int coll_sm_bcast(void *buf, MPI_Count count, obj_datatype_t *dt, int root, obj_comm_t *comm,
                  coll_module_t *module);
int coll_sm_reduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                   obj_op_t *op, int root, obj_comm_t *comm, coll_module_t *module);
int coll_sm_scan(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt, obj_op_t *op,
                 obj_comm_t *comm, coll_module_t *module);
int coll_sm_exscan(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                   obj_op_t *op, obj_comm_t *comm, coll_module_t *module);
int coll_sm_allreduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                      obj_op_t *op, obj_comm_t *comm, coll_module_t *module);
int coll_sm_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count rcounts[],
                           obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm,
                           coll_module_t *module);
int coll_sm_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount,
                                 obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm,
                                 coll_module_t *module);
int coll_sm_gather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                   MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm,
                   coll_module_t *module);
int coll_sm_scatter(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                    MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm,
                    coll_module_t *module);
int coll_sm_allgather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                      MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                      coll_module_t *module);
int coll_sm_allgatherv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                       const MPI_Count rcounts[], const MPI_Aint displs[], obj_datatype_t *rdt,
                       obj_comm_t *comm, coll_module_t *module);
int coll_sm_gatherv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                    const MPI_Count rcounts[], const MPI_Aint displs[], obj_datatype_t *rdt,
                    int root, obj_comm_t *comm, coll_module_t *module);
int coll_sm_scatterv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                     obj_datatype_t *sdt, void *rbuf, MPI_Count rcount, obj_datatype_t *rdt,
                     int root, obj_comm_t *comm, coll_module_t *module);
int coll_sm_alltoall(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                     MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                     coll_module_t *module);

/* The module below sm for op, or an MPI_ERR_UNSUPPORTED_OPERATION message
 * (NULL) when there is none. */
coll_module_t *coll_sm_next(obj_comm_t *comm, int op, coll_module_t *module, const char *why);

#endif
