/*
 * coll sm: its parameters, one table registered in a loop.
 *
 * Each row says why its default is what it is: a principle, in its help,
 * or RAIL_PARAM_F_MEASURED where the value was chosen by timing on the
 * 2-core VM coll sm was developed on (railinfo says so; bench/run_bench.py
 * with the operation and sizes the help names, in turns with another value
 * set by RAIL_COLL_SM_<NAME>, measures it again on another machine).  Knobs
 * that exist for the tests (a forced path, a fault, a first sequence
 * number) carry RAIL_PARAM_F_TEST: railinfo --all lists them only with
 * --test.  coll/sm/README.md gives the overview.
 */
#include "coll/sm/coll_sm.h"
#include "base/param.h"

#include <stddef.h>

coll_sm_params_t coll_sm_params;

typedef struct sm_param {
    const char *name;
    rail_param_type_t type;
    union {
        int i;
        bool b;
        size_t z;
        const char *s;
    } def;
    const char *choices;           /* strings: "a|b|c", else NULL */
    int level;
    unsigned flags;                /* RAIL_PARAM_F_* */
    size_t off;                    /* of the value in coll_sm_params */
    const char *help;
} sm_param_t;

#define SM_AT(field) offsetof(coll_sm_params_t, field)
#define SM_INT(name, field, d, level, flags, help)                                                 \
    {name, RAIL_PARAM_INT, {.i = (d)}, NULL, level, flags, SM_AT(field), help}
#define SM_BOOL(name, field, d, level, flags, help)                                                \
    {name, RAIL_PARAM_BOOL, {.b = (d)}, NULL, level, flags, SM_AT(field), help}
#define SM_SIZE(name, field, d, level, flags, help)                                                \
    {name, RAIL_PARAM_SIZE, {.z = (d)}, NULL, level, flags, SM_AT(field), help}
#define SM_STR(name, field, d, choices, level, flags, help)                                        \
    {name, RAIL_PARAM_STRING, {.s = (d)}, choices, level, flags, SM_AT(field), help}

#define USER RAIL_PARAM_LEVEL_USER
#define TUNER RAIL_PARAM_LEVEL_TUNER
#define DEV RAIL_PARAM_LEVEL_DEV
#define MEASURED RAIL_PARAM_F_MEASURED
#define TEST RAIL_PARAM_F_TEST
#define DYNAMIC RAIL_PARAM_F_DYNAMIC
#define KIB(x) ((size_t)(x) << 10)
#define MIB(x) ((size_t)(x) << 20)

static const sm_param_t sm_params[] = {
    SM_INT("coll_sm_priority", priority, 50, TUNER, 0,
           "Priority of the sm collective component (shared-memory collectives of communicators "
           "within one node; negative: do not use).  50: above tuned (30) and basic (10), whose "
           "point-to-point messages copy twice where sm copies once, below han (55), which uses "
           "sm inside each node"),
    SM_SIZE("coll_sm_segment_size", segment_size, MIB(64), TUNER, 0,
            "Largest shared-memory segment of one communicator (each process gets "
            "coll_sm_sets * coll_sm_buffers buffers of coll_sm_chunk_size bytes, fewer or smaller "
            "when they would not fit; a segment also takes at most a quarter of what /dev/shm has "
            "free).  A bound on memory: 64 MiB holds the default layout, about 5 MiB per "
            "process, of a dozen processes"),
    SM_SIZE("coll_sm_chunk_size", chunk_size, KIB(64), TUNER, 0,
            "Bytes of one shared-memory buffer: data move in rounds of this size (rounded down to "
            "a page).  64 KiB: a round's flag wait (under a microsecond) stays small next to its "
            "copy, and a writer's and a reader's round fit a core's second-level cache together"),
    SM_INT("coll_sm_sets", sets, 4, TUNER, 0,
           "Buffer sets per process (2 to 8): how many collectives a fast process may run ahead "
           "of a slow one.  4: a late process holds back the others only after several "
           "collectives, for a quarter of the memory that 16 would take"),
    SM_INT("coll_sm_segment_cache", segment_cache, 16, TUNER, 0,
           "Segments of freed communicators each process keeps mapped (0 to 16), so that a new "
           "communicator of the same processes in the same order continues on one instead of "
           "making its own.  Making one costs milliseconds, keeping one only its share of "
           "coll_sm_segment_cache_bytes: 16 covers the communicators of the same processes an "
           "application keeps alive at a time"),
    SM_SIZE("coll_sm_segment_cache_bytes", segment_cache_bytes, MIB(32), TUNER, 0,
            "Most bytes of /dev/shm the segments kept by coll_sm_segment_cache and allocated where "
            "used may hold, as far as each process knows (a communicator of small operations a "
            "few hundred KiB, one whose buffers were used megabytes); of those allocated at once "
            "(a small /dev/shm) 4 at most are kept; the least recently freed go first.  32 MiB: "
            "half of the 64 MiB /dev/shm that containers often get"),
    SM_INT("coll_sm_buffers", buffers, 16, TUNER, 0,
           "Buffers per set (2 to 256): rounds of one collective a writer may run ahead of its "
           "readers; the rounds of successive collectives rotate through all of them, so a "
           "buffer is written again only after sets * buffers * chunk bytes went through the "
           "others.  16: 4 MiB per process, more than a core's private caches hold, so a reader "
           "no longer holds a line when its writer rewrites it"),
    SM_INT("coll_sm_round_lag", round_lag, 2, TUNER, MEASURED,
           "MPI_Allgather and MPI_Alltoall through the segment: rounds a process writes ahead of "
           "the round it reads (at most (coll_sm_buffers - 2) / 2), so that a read rarely waits "
           "for a writer still at the same round (allgather of 1 MiB at np 2)"
            "  Measured on one machine: bench allgather at np 2."),
    SM_INT("coll_sm_oversub_group", oversub_group, 4, TUNER, MEASURED,
           "On an oversubscribed node a communicator's segment has buffers of this many "
           "coll_sm_chunk_size bytes and that many times fewer per set (at least 2): fewer "
           "rounds, as each round's wait for every process costs a process switch there (1: as "
           "elsewhere; allreduce of 1 MiB at np 4 on 2 cores)"
            "  Measured on one machine: bench allreduce at np 4."),
    SM_SIZE("coll_sm_alltoall_max", alltoall_max, MIB(1), TUNER, MEASURED,
            "On an oversubscribed node, MPI_Alltoall with blocks of this many bytes or more goes "
            "to the next component, whose linear exchange by single copy overtakes this "
            "component's there (0: never; alltoall at np 8 on 2 cores)"
            "  Measured on one machine: bench alltoall at np 8."),
    SM_SIZE("coll_sm_oversub_alltoall_cma_min", alltoall_cma_min, KIB(128), TUNER, MEASURED,
            "On an oversubscribed node (where nothing is chosen by time), MPI_Alltoall of at "
            "least this many bytes in all (every block), with contiguous host buffers, not in "
            "place: every process reads its blocks from the others' send buffers directly (CMA) "
            "instead of through the segment (0: never; alltoall at np 4 on 2 cores)"
            "  Measured on one machine: bench alltoall at np 4."),
    SM_STR("coll_sm_oversub_alltoall_path", oversub_alltoall_path, "auto", "auto|cma|segment",
           TUNER, 0,
           "Where coll_sm_oversub_alltoall_cma_min applies: single copy (cma), the segment, or "
           "(auto) single copy from 8 times that minimum and where a probe at the first such "
           "call finds one 64 KiB kernel copy less than 4 times as slow as memcpy: the segment "
           "costs two memcpys and a process switch per round, single copy one kernel copy"),
    SM_SIZE("coll_sm_scatter_single_copy_min", scatter_cma_min, KIB(64), TUNER, MEASURED,
            "MPI_Scatter with blocks of at least this many bytes from a contiguous host send "
            "buffer: every receiver reads its block from the root's buffer directly (CMA), where "
            "the kernel's copy costs less than 4 memcpys (a probe), instead of the root copying "
            "every block into the segment (0: never; coll_sm_single_copy_min forces it; scatter "
            "at np 2 and 8)"
            "  Measured on one machine: bench scatter at np 2,4,8."),
    SM_SIZE("coll_sm_share_min", share_min, KIB(128), TUNER, MEASURED,
            "Single-copy gathers (CMA) of at least this many bytes per block into contiguous "
            "host buffers, where the node is not oversubscribed: the sender, which would only "
            "wait, writes chunks of its block from the end while the root reads from the start, "
            "two processes copying (0: the root reads alone; gather at np 2)"
            "  Measured on one machine: bench gather at np 2."),
    SM_SIZE("coll_sm_share_bcast_min", share_bcast_min, KIB(64), TUNER, MEASURED,
            "Single-copy broadcasts (CMA) of at least this many bytes into contiguous host "
            "buffers, where the node is not oversubscribed: the root, which would only wait, "
            "writes chunks from the end while each receiver reads from the start (0: the "
            "receivers read alone; bcast at np 2)"
            "  Measured on one machine: bench bcast at np 2."),
    SM_SIZE("coll_sm_allreduce_pair_max", allreduce_pair_max, 0, TUNER, 0,
            "MPI_Allreduce of at most this many bytes on a communicator of two processes goes to "
            "the next component (one message each way).  0, never: through the slots each "
            "process reads the other's input with one cache-line transfer per line, which a "
            "message, copied in and out, cannot beat"),
    SM_SIZE("coll_sm_reduce_min", reduce_min, 8192, TUNER, MEASURED,
            "MPI_Reduce of fewer bytes but more than the slots and bulk slots take "
            "(coll_sm_small_max, coll_sm_small_bulk_max) goes to the next component, whose trees "
            "of eager sends let the non-roots return at once (reduce of 1-8 KiB at np 2-8)"
            "  Measured on one machine: bench reduce at np 2,4,8."),
    SM_SIZE("coll_sm_reduce_flat_max", reduce_flat_max, 4096, TUNER, MEASURED,
            "Reductions up to this many bytes: every process combines all inputs (one step); "
            "larger ones: each process reduces a slice, then copies the others' (allreduce at "
            "np 4 and 8)"
            "  Measured on one machine: bench allreduce at np 4,8."),
    SM_BOOL("coll_sm_reduce_pair_flat", reduce_pair_flat, true, TUNER, 0,
            "Reductions of two processes larger than coll_sm_reduce_flat_max also combine in one "
            "step: in an allreduce each process reads the other's whole input, as many bytes "
            "between the cores as with slices, with one wait per round fewer and no result "
            "copied through the segment (false: slices)"),
    SM_SIZE("coll_sm_small_max", small_max, 1024, TUNER, MEASURED,
            "Reductions, broadcasts, gathers (a block), scatters and alltoalls (the blocks for "
            "the others), allgathers (all blocks) of at most this many bytes go through one slot "
            "per process and operation: each process writes its data and a sequence number, the "
            "others read them; no other synchronisation (at most 1 MiB; 0: off; allreduce and "
            "bcast of 8 B-4 KiB at np 2-8)"
            "  Measured on one machine: bench allreduce at np 2,4,8."),
    SM_SIZE("coll_sm_small_bulk_max", small_bulk_max, 8192, TUNER, MEASURED,
            "Broadcasts larger than a slot, allgathers larger in all than coll_sm_small_max, "
            "alltoalls whose blocks for the others exceed a slot and reductions whose input does "
            "(while each process folds at most 64 KiB), of at most this many bytes (an "
            "alltoall's blocks for the others) go through the slots too, data that do not fit a "
            "slot in a bulk slot per slot: a separate area, as larger slots would cost the "
            "smallest operations their TLB entries; less where a communicator's bulk slots would "
            "take more than an eighth of its segment (0: off; bcast and allgather of 1-8 KiB at "
            "np 2)"
            "  Measured on one machine: bench bcast at np 2."),
    SM_INT("coll_sm_small_slots", small_slots, 128, TUNER, 0,
           "Slots per process for small operations (2 to 1024): how many a fast process (a bcast "
           "root) may run ahead of the slowest.  128: a root waits for a late receiver only after "
           "127 operations, at 128 slots of about 1.6 KiB per process"),
    SM_INT("coll_sm_oversub_small_slots", oversub_small_slots, 256, TUNER, MEASURED,
           "Slots per process for small operations on an oversubscribed node (2 to 1024; 0: "
           "coll_sm_small_slots), bulk slots staying at coll_sm_small_slots: a bcast root runs "
           "further ahead, and its receivers take more operations in each turn on their core; "
           "more slots cost every new segment time (bcast of 8 B at np 4 and 8 on 2 cores)"
            "  Measured on one machine: bench bcast at np 4,8."),
    SM_INT("coll_sm_small_slots_start", small_slots_start, 16, TUNER, 0,
           "Slots per process in use on a new communicator (a power of two, at least 2; 0: "
           "all): twice as many from 8 times twice as many small operations on, until all are "
           "(16 slots up to the 256th, ... 128 from the 1024th, 256 from the 2048th).  Each "
           "slot's page costs a process its first touch (a fault, on VMs a trap), so a "
           "short-lived communicator touches few"),
    SM_SIZE("coll_sm_single_copy_min", cma_min, 0, TUNER, TEST,
            "Testing: broadcasts, reductions, gathers, allgathers and alltoalls of at least this "
            "many bytes (gather, allgather, alltoall: all blocks together) in contiguous host "
            "buffers always read each other's buffers directly (CMA, process_vm_readv) instead "
            "of through the segment, oversubscribed or not (0: never forced; see "
            "coll_sm_adapt_min)"),
    SM_SIZE("coll_sm_adapt_min", adapt_min, KIB(16), TUNER, MEASURED,
            "Broadcasts of at least this many bytes in contiguous host buffers choose, call by "
            "call, between the segment and single copy (CMA) by measured time, as which is "
            "faster depends on the machine; on an oversubscribed node the root chooses between "
            "the segment written with streaming stores or plain ones by its own time (0: never "
            "single copy unless coll_sm_single_copy_min says so; bcast of 4-64 KiB at np 2)"
            "  Measured on one machine: bench bcast at np 2."),
    SM_SIZE("coll_sm_adapt_agree_min", adapt_agree_min, KIB(64), TUNER, MEASURED,
            "Reductions (contiguous host buffers) and gathers (all blocks, where no process has "
            "a device component) of at least this many bytes: rank 0 (a gather's root) chooses, "
            "call by call, between the segment and single copy by measured time and tells the "
            "others in a first step, which costs one wait for everyone (0: never; allreduce and "
            "gather of 16-256 KiB at np 2)"
            "  Measured on one machine: bench allreduce at np 2."),
    SM_SIZE("coll_sm_adapt_blocks_min", adapt_blocks_min, KIB(16), TUNER, MEASURED,
            "Allgathers and alltoalls of at least this many bytes in all blocks together: rank 0 "
            "chooses between the segment and single copy by measured time, as for reductions "
            "and gathers (coll_sm_adapt_agree_min; 0: never; allgather and alltoall at np 2-8)"
            "  Measured on one machine: bench allgather at np 2,4,8."),
    SM_SIZE("coll_sm_device_handoff_min", device_handoff_min, 65536, TUNER, MEASURED,
            "Broadcasts and scatters of at least this many bytes (per process) from a root's "
            "device buffer move device to device (see coll_sm_device_ipc) or go to the next "
            "component (every process follows), whose point-to-point messages move device data "
            "by IPC, instead of staging it through this segment in host memory (0: never; bcast "
            "of 4-64 KiB at np 2-8 on a GPU)"
            "  Measured on one machine: bench bcast at np 2,4,8."),
    SM_SIZE("coll_sm_device_blocks_min", device_blocks_min, 1, TUNER, MEASURED,
            "Gathers, allgathers and alltoalls of at least this many bytes in all (and more than "
            "coll_sm_small_max's slots take) with device buffers anywhere do the same; where a "
            "device component is active they cost one more step first, with host buffers too "
            "(0: never; allgather and alltoall of 4-16 KiB blocks at np 8 on a GPU)"
            "  Measured on one machine: bench allgather at np 8."),
    SM_BOOL("coll_sm_device_ipc", device_ipc, true, TUNER, 0,
            "From coll_sm_device_handoff_min bytes, collectives (but barrier) of device buffers "
            "move the data device to device themselves, each process copying or reducing "
            "straight from the others' buffers opened by IPC, so that device data never cross "
            "host memory (false: they go to the next component like the other operations)"),
    SM_SIZE("coll_sm_device_allreduce_whole_max", device_allreduce_whole_max, MIB(16), TUNER,
            MEASURED,
            "Allreduces of device buffers (not in place) moved device to device by coll sm whose "
            "size times the number of processes (the bytes each process then reads) is at most "
            "this: each process reduces the whole result from everyone's input (in rank order) "
            "in one step, instead of its 1/n slice followed by copying the others' slices (0: "
            "always slices; allreduce at np 2 and 8 on a GPU)"
            "  Measured on one machine: bench allreduce at np 2,4,8."),
    SM_SIZE("coll_sm_device_allreduce_one_max", device_allreduce_one_max, KIB(256), TUNER,
            MEASURED,
            "Allreduces of device buffers moved device to device by coll sm up to this many "
            "bytes (in place or not) are reduced by process 0 alone: one kernel reads everyone's "
            "input and writes everyone's result, while the others wait (one device operation in "
            "all, where otherwise every process runs its own; 0: never; allreduce at np 8 on one "
            "GPU)"
            "  Measured on one machine: bench allreduce at np 8."),
    SM_SIZE("coll_sm_device_blocks_one_max", device_blocks_one_max, KIB(256), TUNER, MEASURED,
            "Allgathers and alltoalls of contiguous device buffers moved device to device by "
            "coll sm of up to this many bytes in all (per process) are moved by process 0 alone: "
            "one kernel copies every block into every result while the others wait (0: never; "
            "allgather and alltoall at np 2 and 8 on one GPU)"
            "  Measured on one machine: bench allgather at np 2,4,8."),
    SM_SIZE("coll_sm_device_bcast_one_max", device_bcast_one_max, MIB(1), TUNER, MEASURED,
            "Broadcasts of a root's device buffer moved device to device by coll sm (see "
            "coll_sm_device_handoff_min) of up to this many bytes, to three or more processes "
            "whose buffers are contiguous device memory: the root copies into every receiver's "
            "buffer in one kernel while they wait, instead of each receiver copying (0: never; "
            "bcast at np 4 and 8 on one GPU)"
            "  Measured on one machine: bench bcast at np 4,8."),
    SM_SIZE("coll_sm_device_ipc_reduce_min", device_ipc_reduce_min, 1, TUNER, MEASURED,
            "Allreduces, reduces and reduce_scatters whose buffers are device memory on every "
            "process are reduced device to device (see coll_sm_device_ipc) from this many "
            "bytes, below coll_sm_device_handoff_min too (0: only from "
            "coll_sm_device_handoff_min; reductions of 8 B-16 KiB on a GPU)"
            "  Measured on one machine: bench reduce at np 2,4,8."),
    SM_BOOL("coll_sm_share_refuse", share_refuse, false, DEV, TEST,
            "Testing: the helper of a shared single copy (coll_sm_share_bcast_min, "
            "coll_sm_share_min) claims chunks but reports each as refused without writing it, as "
            "the kernel does where it may not write into the reader, so the reader copies them "
            "itself"),
    SM_BOOL("coll_sm_adapt_alternate", adapt_alternate, false, DEV, TEST,
            "Testing: broadcasts from coll_sm_adapt_min bytes, reductions from "
            "coll_sm_adapt_agree_min bytes, allgathers and alltoalls from "
            "coll_sm_adapt_blocks_min bytes alternate between the segment and single copy "
            "(broadcasts, alltoalls and allgathers of 4 MiB in all, where the CPU has AVX2, also "
            "the segment written with streaming stores), call by call, oversubscribed or not"),
    SM_INT("coll_sm_spin_count", spin_count, 2000, TUNER, MEASURED,
           "Polls a wait spins before it polls with sched_yield() (at most 16 when the node is "
           "oversubscribed, where the process awaited needs this CPU)"
            "  Measured on one machine: bench allreduce at np 2,4,8."),
    SM_INT("coll_sm_yield_count", yield_count, 5000, TUNER, MEASURED,
           "Polls with sched_yield() before a wait sleeps on the segment's futex (-1: never "
           "sleep)"
            "  Measured on one machine: bench allreduce at np 2,4,8."),
    SM_INT("coll_sm_membarrier", membarrier, -1, TUNER, 0,
           "Flags are published without a full fence and a process about to sleep in a wait "
           "fences every process of the node by membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) "
           "instead: -1 when the node is oversubscribed, 0 never, 1 when it is not, 2 always; "
           "never where the kernel refuses membarrier.  -1: that membarrier interrupts every "
           "core running a process of the node, which costs nothing to processes switched out "
           "on an oversubscribed node but stops each busy rank where every rank has its core"),
    SM_INT("coll_sm_tree_degree", tree_degree, 8, TUNER, MEASURED,
           "Children per process in the barrier's fan-in / fan-out tree; communicators of up to "
           "this many + 1 processes meet in the small-operation slots instead (each waits for "
           "everyone's arrival; barrier at np 2-9)"
            "  Measured on one machine: bench barrier at np 2,4,8."),
    SM_SIZE("coll_sm_seq_start", seq_start, 0, DEV, TEST,
            "Testing: sequence number of a communicator before its first sm collective (e.g. "
            "4294967200 to see the 32-bit field wrap)"),
    SM_INT("coll_sm_verbose", verbose, 0, USER, DYNAMIC,
           "Verbosity of coll sm (1: segments set up, 2: their sizes and every call handed to "
           "the next component)"),
};

static int sm_register_one(const sm_param_t *p)
{
    void *v = (char *)&coll_sm_params + p->off;
    int rc = MPI_SUCCESS;
    switch (p->type) {
    case RAIL_PARAM_INT:
        rc = rail_param_register_int(p->name, p->def.i, p->help, p->level, v);
        break;
    case RAIL_PARAM_BOOL:
        rc = rail_param_register_bool(p->name, p->def.b, p->help, p->level, v);
        break;
    case RAIL_PARAM_SIZE:
        rc = rail_param_register_size(p->name, p->def.z, p->help, p->level, v);
        break;
    case RAIL_PARAM_STRING:
        rc = rail_param_register_string(p->name, p->def.s, p->choices, p->help, p->level, v);
        break;
    case RAIL_PARAM_DOUBLE:
        rc = MPI_ERR_INTERN;   /* (none in the table) */
        break;
    }
    if (rc == MPI_SUCCESS && p->flags != 0)
        rc = rail_param_set_flags(p->name, p->flags);
    return rc;
}

int coll_sm_register_params(void)
{
    int rc = MPI_SUCCESS;
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(sm_params) && rc == MPI_SUCCESS; i++)
        rc = sm_register_one(&sm_params[i]);
    return rc == MPI_SUCCESS ? coll_sm_register_pvars() : rc;
}
