/* coll sm: the component (parameters, which communicators, the module),
 * the hand-off to the next module, and moving packed bytes of user data. */
#include "coll/sm/coll_sm.h"
#include "accel/accel.h"
#include "accel/accel_dt.h"
#include "base/copy.h"
#include "base/log.h"
#include "base/param.h"
#include "obj/err.h"
#include "runtime/rte.h"

#include <stdlib.h>
#include <string.h>

coll_sm_params_t coll_sm_params;

static int sm_register_params(void)
{
    coll_sm_params_t *p = &coll_sm_params;
    rail_param_register_int("coll_sm_priority", 50,
                            "Priority of the sm collective component (shared-memory collectives "
                            "of communicators within one node; negative: do not use)",
                            RAIL_PARAM_LEVEL_TUNER, &p->priority);
    rail_param_register_size("coll_sm_segment_size", 64u << 20,
                             "Largest shared-memory segment of one communicator (each process "
                             "gets coll_sm_sets * coll_sm_buffers buffers of coll_sm_chunk_size "
                             "bytes, fewer bytes when they would not fit)",
                             RAIL_PARAM_LEVEL_TUNER, &p->segment_size);
    rail_param_register_size("coll_sm_chunk_size", 64u << 10,
                             "Bytes of one shared-memory buffer: data move in rounds of this "
                             "size (rounded down to a page)",
                             RAIL_PARAM_LEVEL_TUNER, &p->chunk_size);
    rail_param_register_int("coll_sm_sets", 4,
                            "Buffer sets per process (2 to 8): how many collectives a fast "
                            "process may run ahead of a slow one",
                            RAIL_PARAM_LEVEL_TUNER, &p->sets);
    rail_param_register_int("coll_sm_segment_cache", 16,
                            "Segments of freed communicators each process keeps mapped (0 to "
                            "16), so that a new communicator of the same processes in the same "
                            "order continues on one instead of making its own (np 4 on 2 "
                            "cores, 16 communicators alive at a time: 650 -> 170 us each with "
                            "one allreduce, Open MPI 180-200, from 4 kept)",
                            RAIL_PARAM_LEVEL_TUNER, &p->segment_cache);
    rail_param_register_size("coll_sm_segment_cache_bytes", 32u << 20,
                             "Most bytes of /dev/shm the segments kept by "
                             "coll_sm_segment_cache and allocated where used may hold, as far "
                             "as each process knows (a communicator of small operations a few "
                             "hundred KiB, one whose buffers were used megabytes); of those "
                             "allocated at once (a small /dev/shm) 4 at most are kept; the "
                             "least recently freed go first",
                             RAIL_PARAM_LEVEL_TUNER, &p->segment_cache_bytes);
    rail_param_register_int("coll_sm_buffers", 16,
                            "Buffers per set (2 to 256): rounds of one collective a writer may "
                            "run ahead of its readers; the rounds of successive collectives "
                            "rotate through all of them, so a buffer is written again only "
                            "after sets * buffers * chunk bytes went through the others (the "
                            "readers no longer hold its lines: rewriting lines another core "
                            "has just read cost up to 4x on the machines we measured)",
                            RAIL_PARAM_LEVEL_TUNER, &p->buffers);
    rail_param_register_int("coll_sm_round_lag", 2,
                            "MPI_Allgather and MPI_Alltoall through the segment: rounds a "
                            "process writes ahead of the round it reads (at most "
                            "(coll_sm_buffers - 2) / 2), so that a read rarely waits for a "
                            "writer still at the same round",
                            RAIL_PARAM_LEVEL_TUNER, &p->round_lag);
    rail_param_register_int("coll_sm_oversub_group", 4,
                            "On an oversubscribed node a communicator's segment has buffers of "
                            "this many coll_sm_chunk_size bytes and that many times fewer per "
                            "set (at least 2): fewer rounds, and each round's wait for every "
                            "process costs a process switch there (1: as elsewhere)",
                            RAIL_PARAM_LEVEL_TUNER, &p->oversub_group);
    rail_param_register_size("coll_sm_alltoall_max", 1u << 20,
                             "On an oversubscribed node, MPI_Alltoall with blocks of this many "
                             "bytes or more goes to the next component (tuned's linear exchange "
                             "by single copy: np 8 on 2 cores, faster than this component's "
                             "from 1 MiB blocks; 0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &p->alltoall_max);
    rail_param_register_size("coll_sm_oversub_alltoall_cma_min", 128u << 10,
                             "On an oversubscribed node (where nothing is chosen by time), "
                             "MPI_Alltoall of at least this many bytes in all (every block), "
                             "with contiguous host buffers, not in place: every process reads "
                             "its blocks from the others' send buffers directly (CMA) instead "
                             "of through the segment (np 4 on 2 cores, 64 KiB blocks: 31 "
                             "against 54 us; 0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &p->alltoall_cma_min);
    rail_param_register_string("coll_sm_oversub_alltoall_path", "auto", "auto|cma|segment",
                               "Where coll_sm_oversub_alltoall_cma_min applies: single copy "
                               "(cma), the segment, or (auto) single copy from 8 times that "
                               "minimum and where a probe at the first such call finds one 64 "
                               "KiB kernel copy less than 4 times as slow as memcpy (np 4, 64 "
                               "KiB blocks: single copy 27-30 against the segment's 45-47 us "
                               "where it took 2.2 times; 32 KiB blocks: 52-76 against 25-28 "
                               "where it took 7.6 times)",
                               RAIL_PARAM_LEVEL_TUNER, &p->oversub_alltoall_path);
    rail_param_register_size("coll_sm_scatter_single_copy_min", 64u << 10,
                             "MPI_Scatter with blocks of at least this many bytes from a "
                             "contiguous host send buffer: every receiver reads its block from "
                             "the root's buffer directly (CMA), where the kernel's copy costs "
                             "less than 4 memcpys (a probe), instead of the root copying every "
                             "block into the segment (np 2, 1 MiB blocks: 140 against 48-61 us "
                             "for one message; 0: never; coll_sm_single_copy_min forces it)",
                             RAIL_PARAM_LEVEL_TUNER, &p->scatter_cma_min);
    rail_param_register_size("coll_sm_share_min", 128u << 10,
                             "Single-copy gathers (CMA) of at least this many bytes per block "
                             "into contiguous host buffers, where the node is not "
                             "oversubscribed: the sender, which would only wait, writes chunks "
                             "of its block from the end while the root reads from the start "
                             "(np 2, 1 MiB: two processes copy by CMA at twice one's rate; "
                             "32-64 KiB blocks were slower so; 0: the root reads alone)",
                             RAIL_PARAM_LEVEL_TUNER, &p->share_min);
    rail_param_register_size("coll_sm_share_bcast_min", 64u << 10,
                             "Single-copy broadcasts (CMA) of at least this many bytes into "
                             "contiguous host buffers, where the node is not oversubscribed: "
                             "the root, which would only wait, writes chunks from the end while "
                             "each receiver reads from the start (np 2, 64 KiB: 2.4-2.6 against "
                             "2.8-3.1 us; 0: the receivers read alone)",
                             RAIL_PARAM_LEVEL_TUNER, &p->share_bcast_min);
    rail_param_register_size("coll_sm_allreduce_pair_max", 0,
                             "MPI_Allreduce of at most this many bytes on a communicator of two "
                             "processes goes to the next component (one message each way "
                             "instead of every process waiting for every other; 0: never, the "
                             "default: since single rounds stopped rewriting lines the other "
                             "process held, 2 KiB took 0.32-0.34 us in sm against 0.50-0.81 "
                             "by tuned's exchange)",
                             RAIL_PARAM_LEVEL_TUNER, &p->allreduce_pair_max);
    rail_param_register_size("coll_sm_reduce_min", 8192,
                             "MPI_Reduce of fewer bytes but more than the slots and bulk "
                             "slots take (coll_sm_small_max, coll_sm_small_bulk_max) goes to "
                             "the next component (tuned's trees of "
                             "eager sends let the non-roots return at once; measured 2-10x "
                             "faster below 8 KiB on 2 cores)",
                             RAIL_PARAM_LEVEL_TUNER, &p->reduce_min);
    rail_param_register_size("coll_sm_reduce_flat_max", 4096,
                             "Reductions up to this many bytes: every process combines all "
                             "inputs (one step); larger ones: each process reduces a slice",
                             RAIL_PARAM_LEVEL_TUNER, &p->reduce_flat_max);
    rail_param_register_bool("coll_sm_reduce_pair_flat", true,
                             "Reductions of two processes larger than coll_sm_reduce_flat_max "
                             "also combine in one step: in an allreduce each process reads the "
                             "other's whole input, as many bytes between the cores as with "
                             "slices, one wait per round fewer and no result copied through the "
                             "segment (np 2 allreduce and reduce of 8 KiB-16 MiB 30-45% faster; "
                             "false: slices)",
                             RAIL_PARAM_LEVEL_TUNER, &p->reduce_pair_flat);
    rail_param_register_size("coll_sm_small_max", 1024,
                             "Reductions, broadcasts, gathers (a block), scatters and "
                             "alltoalls (the blocks for the others), allgathers (all blocks) of "
                             "at most this many bytes go through one "
                             "slot per process and operation: each process writes its data and a "
                             "sequence number, the others read them; one cache-line transfer per "
                             "pair for 48 bytes or less, no other synchronisation (at most 1 MiB; "
                             "0: off)",
                             RAIL_PARAM_LEVEL_TUNER, &p->small_max);
    rail_param_register_size("coll_sm_small_bulk_max", 8192,
                             "Broadcasts larger than a slot, allgathers larger in all than "
                             "coll_sm_small_max, alltoalls whose blocks for the others exceed "
                             "a slot and reductions whose input does (while each process folds "
                             "at most 64 KiB), of at most this many bytes (an alltoall's blocks "
                             "for the others) go through the slots too, data that do not fit a "
                             "slot in a bulk slot per slot (a "
                             "separate area: larger slots cost the smallest operations their "
                             "TLB entries; np 2 bcast of 2-8 KiB 0.40-0.74 -> 0.20-0.44 us, "
                             "allgather of 1-4 KiB blocks 0.67-1.22 -> 0.59-0.94); less where a "
                             "communicator's bulk slots would take more than an eighth of its "
                             "segment (0: off)",
                             RAIL_PARAM_LEVEL_TUNER, &p->small_bulk_max);
    rail_param_register_int("coll_sm_small_slots", 128,
                            "Slots per process for small operations (2 to 1024): how many a "
                            "fast process (a bcast root) may run ahead of the slowest",
                            RAIL_PARAM_LEVEL_TUNER, &p->small_slots);
    rail_param_register_int("coll_sm_oversub_small_slots", 256,
                            "Slots per process for small operations on an oversubscribed node "
                            "(2 to 1024; 0: coll_sm_small_slots), bulk slots staying at "
                            "coll_sm_small_slots: a bcast root runs further ahead, and its "
                            "receivers take more operations in each turn on their core (np 4 "
                            "and 8 on 2 cores, bcast of 8 B: 0.22-0.31 -> 0.16-0.27 us and "
                            "0.72-0.87 -> 0.55-0.70 from 128 slots; more slots cost every new "
                            "communicator's segment time: 512 made making one 7 ms slower at np "
                            "8)",
                            RAIL_PARAM_LEVEL_TUNER, &p->oversub_small_slots);
    rail_param_register_int("coll_sm_small_slots_start", 16,
                            "Slots per process in use on a new communicator (a power of two, at "
                            "least 2; 0: all): twice as many from 8 times twice as many small "
                            "operations on, until all are (16 slots up to the 256th, ... 128 from "
                            "the 1024th, 256 from the 2048th): each slot's page costs a process "
                            "its first touch (a fault on VMs with shadow page tables), so a "
                            "short-lived communicator touches fewer",
                            RAIL_PARAM_LEVEL_TUNER, &p->small_slots_start);
    rail_param_register_size("coll_sm_single_copy_min", 0,
                             "Broadcasts, reductions, gathers, allgathers and alltoalls of at "
                             "least this many bytes (gather, allgather, alltoall: all blocks "
                             "together) in "
                             "contiguous host buffers: processes always read each other's "
                             "buffers directly (CMA, process_vm_readv) instead of through the "
                             "segment, oversubscribed or not (0: never forced; see "
                             "coll_sm_adapt_min)",
                             RAIL_PARAM_LEVEL_TUNER, &p->cma_min);
    rail_param_register_size("coll_sm_adapt_min", 16384,
                             "Broadcasts of at least this many bytes in contiguous host "
                             "buffers choose, call by call, between the segment and single "
                             "copy (CMA) by measured time: which is faster depends on the "
                             "machine and, on some VMs, on the minute (docs/performance.md; on "
                             "an oversubscribed node the root chooses between the segment "
                             "written with streaming stores or plain ones by its own time; "
                             "0: never single copy unless coll_sm_single_copy_min says so)",
                             RAIL_PARAM_LEVEL_TUNER, &p->adapt_min);
    rail_param_register_size("coll_sm_adapt_agree_min", 65536,
                             "Reductions (contiguous host buffers) and gathers (all blocks, "
                             "where no process has a device component) of at least this many "
                             "bytes: rank 0 (a gather's root) chooses, call by call, between "
                             "the segment and single copy by measured time and tells the "
                             "others in a first step (which costs one wait for everyone: worth "
                             "it from larger sizes than for bcast; 0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &p->adapt_agree_min);
    rail_param_register_size("coll_sm_adapt_blocks_min", 16384,
                             "Allgathers and alltoalls of at least this many bytes in all "
                             "blocks together: rank 0 chooses between the segment and single "
                             "copy by measured time, as for reductions and gathers "
                             "(coll_sm_adapt_agree_min; 0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &p->adapt_blocks_min);
    rail_param_register_size("coll_sm_device_handoff_min", 65536,
                             "Broadcasts and scatters of at least this many bytes (per "
                             "process) from a root's device buffer move device to device (see "
                             "coll_sm_device_ipc) or go to the next component (every "
                             "process follows), whose point-to-point messages move device data "
                             "device to device by IPC inside the node instead of staging it "
                             "through this segment in host memory (0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &p->device_handoff_min);
    rail_param_register_size("coll_sm_device_blocks_min", 1,
                             "Gathers, allgathers and alltoalls of at least this many bytes in "
                             "all (and more than coll_sm_small_max's slots take) with device "
                             "buffers anywhere do the same; where a device component is active "
                             "they cost one more step first, with host buffers too (on a GPU "
                             "device to device beat staging through the segment at every such "
                             "size measured: docs/performance.md; 0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &p->device_blocks_min);
    rail_param_register_bool("coll_sm_device_ipc", true,
                             "From coll_sm_device_handoff_min bytes, collectives (but "
                             "barrier) of device buffers move the data device to device "
                             "themselves, each process copying or reducing straight from the "
                             "others' buffers opened by IPC (false: they go to the next "
                             "component like the other operations)",
                             RAIL_PARAM_LEVEL_TUNER, &p->device_ipc);
    rail_param_register_size("coll_sm_device_allreduce_whole_max", (size_t)16 << 20,
                             "Allreduces of device buffers (not in place) moved device to "
                             "device by coll sm whose size times the number of processes (the "
                             "bytes each process then reads) is at most this: each process "
                             "reduces the whole result from everyone's input (in rank order) "
                             "in one step, instead of its 1/n slice followed by copying the "
                             "others' slices (0: always slices)",
                             RAIL_PARAM_LEVEL_TUNER, &p->device_allreduce_whole_max);
    rail_param_register_size("coll_sm_device_allreduce_one_max", (size_t)256 << 10,
                             "Allreduces of device buffers moved device to device by coll sm "
                             "up to this many bytes (in place or not) are reduced by process 0 "
                             "alone: one kernel reads everyone's input and writes everyone's "
                             "result, while the others wait (one device operation in all, "
                             "where otherwise every process runs its own, and in place two "
                             "with a step between; 0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &p->device_allreduce_one_max);
    rail_param_register_size("coll_sm_device_blocks_one_max", (size_t)256 << 10,
                             "Allgathers and alltoalls of contiguous device buffers moved "
                             "device to device by coll sm of up to this many bytes in all (per "
                             "process) are moved by process 0 alone: one kernel copies every "
                             "block into every result while the others wait (one device "
                             "operation in all, where otherwise every process runs its own; "
                             "0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &p->device_blocks_one_max);
    rail_param_register_size("coll_sm_device_bcast_one_max", (size_t)1 << 20,
                             "Broadcasts of a root's device buffer moved device to device by "
                             "coll sm (see coll_sm_device_handoff_min) of up to this many bytes, "
                             "to three or more processes whose buffers are contiguous device "
                             "memory: the root copies into every receiver's buffer in one "
                             "kernel while they wait, instead of each receiver copying (0: "
                             "never)",
                             RAIL_PARAM_LEVEL_TUNER, &p->device_bcast_one_max);
    rail_param_register_size("coll_sm_device_ipc_reduce_min", 1,
                             "Allreduces, reduces and reduce_scatters whose buffers are device "
                             "memory on every process are reduced device to device (see "
                             "coll_sm_device_ipc) from this many bytes, below "
                             "coll_sm_device_handoff_min too: on a GPU this beats the next "
                             "component's staged messages at every size measured "
                             "(docs/performance.md; 0: only from coll_sm_device_handoff_min)",
                             RAIL_PARAM_LEVEL_TUNER, &p->device_ipc_reduce_min);
    rail_param_register_bool("coll_sm_share_refuse", false,
                             "Testing: the helper of a shared single copy "
                             "(coll_sm_share_bcast_min, coll_sm_share_min) "
                             "claims chunks but reports each as refused without writing it, "
                             "as the kernel does where it may not write into the reader, so "
                             "the reader copies them itself",
                             RAIL_PARAM_LEVEL_DEV, &p->share_refuse);
    rail_param_register_bool("coll_sm_adapt_alternate", false,
                             "Testing: broadcasts from coll_sm_adapt_min bytes, reductions "
                             "from coll_sm_adapt_agree_min bytes, allgathers and alltoalls "
                             "from coll_sm_adapt_blocks_min bytes "
                             "alternate between the segment and single copy (broadcasts, "
                             "alltoalls and allgathers of 4 MiB in all, where the CPU has AVX2, "
                             "also the segment written with streaming stores), call by call, "
                             "oversubscribed or not",
                             RAIL_PARAM_LEVEL_DEV, &p->adapt_alternate);
    rail_param_register_int("coll_sm_spin_count", 2000,
                            "Polls a wait spins before it polls with sched_yield() (at most 16 "
                            "when the node is oversubscribed)",
                            RAIL_PARAM_LEVEL_TUNER, &p->spin_count);
    rail_param_register_int("coll_sm_yield_count", 5000,
                            "Polls with sched_yield() before a wait sleeps on the segment's "
                            "futex (-1: never sleep)",
                            RAIL_PARAM_LEVEL_TUNER, &p->yield_count);
    rail_param_register_int("coll_sm_membarrier", 2,
                            "Flags are published without a full fence and a process about to "
                            "sleep in a wait fences every process of the node by "
                            "membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) instead: 0 never, 1 "
                            "when the node is not oversubscribed, 2 always (a wait sleeps only "
                            "after coll_sm_yield_count polls; np 4 and 8 on 2 cores, bcast of "
                            "8 B: 0.18-0.40 -> 0.16-0.27 us and 0.50-1.01 -> 0.55-0.70); never "
                            "where the kernel refuses membarrier",
                            RAIL_PARAM_LEVEL_TUNER, &p->membarrier);
    rail_param_register_int("coll_sm_tree_degree", 8,
                            "Children per process in the barrier's fan-in / fan-out tree; "
                            "communicators of up to this many + 1 processes meet in the "
                            "small-operation slots instead (each waits for everyone's arrival)",
                            RAIL_PARAM_LEVEL_TUNER, &p->tree_degree);
    rail_param_register_size("coll_sm_seq_start", 0,
                             "Testing: sequence number of a communicator before its first sm "
                             "collective (e.g. 4294967200 to see the 32-bit field wrap)",
                             RAIL_PARAM_LEVEL_DEV, &p->seq_start);
    int rc = rail_param_register_int("coll_sm_verbose", 0,
                                     "Verbosity of coll sm (1: segments set up, 2: their sizes "
                                     "and every call handed to the next component)",
                                     RAIL_PARAM_LEVEL_USER, &p->verbose);
    return rc == MPI_SUCCESS ? coll_sm_register_pvars() : rc;
}

/* ------------------------------------------------------------ module */

static void sm_release(coll_module_t *module, obj_comm_t *comm)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    coll_sm_segment_keep(m, comm);
    free(m->scratch);
    free(m->cma_buf);
    free(m->dev_ptr);
    free(m->dev_held);
    free(m->dev_in);
    free(m->dev_cdst);
    free(m->dev_one);
    free(m->dev_clen);
    if (m->dev_stream != NULL)
        accel_stream_destroy(m->dev_stream);
    free(m->small_seen);
    free(m->small_starts);
    free(m->small_x);
    free(m->bulk_t);
    free(m);
}

static int peer_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Whether every member of comm runs on this node. */
static bool sm_all_local(const obj_comm_t *comm)
{
    for (int i = 0; i < comm->size; i++) {
        int w = obj_group_world_rank(comm->group, i);
        if (!bsearch(&w, rte_info.local_peers, (size_t)rte_info.local_size, sizeof(int),
                     peer_cmp))
            return false;
    }
    return true;
}

static coll_module_t *sm_comm_query(obj_comm_t *comm, int *priority)
{
    if (comm->is_inter || comm->size < 2 || !rte_info.local_peers || !sm_all_local(comm)) {
        RAIL_VERBOSE(coll_sm_verbosity(), 3, "coll sm: not for communicator %s (%s)",
                     comm->name[0] ? comm->name : "(unnamed)",
                     comm->is_inter ? "intercommunicator"
                     : comm->size < 2 ? "a single process" : "processes on other nodes");
        return NULL;
    }
    coll_sm_module_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->super = (coll_module_t){
        .component = &coll_sm_component,
        .fns = {
            .barrier = coll_sm_barrier,
            .bcast = coll_sm_bcast,
            .reduce = coll_sm_reduce,
            .allreduce = coll_sm_allreduce,
            .reduce_scatter = coll_sm_reduce_scatter,
            .reduce_scatter_block = coll_sm_reduce_scatter_block,
            .scan = coll_sm_scan,
            .exscan = coll_sm_exscan,
            .gather = coll_sm_gather,
            .scatter = coll_sm_scatter,
            .allgather = coll_sm_allgather,
            .allgatherv = coll_sm_allgatherv,
            .gatherv = coll_sm_gatherv,
            .scatterv = coll_sm_scatterv,
            .alltoall = coll_sm_alltoall,
        },
        .release = sm_release,
    };
    m->n = comm->size;
    m->me = comm->rank;
    m->degree = RAIL_MAX(coll_sm_params.tree_degree, 1);
    m->oversub = rte_info.oversubscribed;
    *priority = coll_sm_params.priority;
    return &m->super;
}

const coll_component_t coll_sm_component = {
    .name = "sm",
    .register_params = sm_register_params,
    .comm_query = sm_comm_query,
};

/* ------------------------------------------------------------ hand-off */

coll_module_t *coll_sm_next(obj_comm_t *comm, int op, coll_module_t *module, const char *why)
{
    coll_module_t *next = coll_next_module(comm, op, module);
    if (!next) {
        obj_errf(MPI_ERR_UNSUPPORTED_OPERATION,
                 "coll sm cannot serve this %s (%s) and no component below it offers it",
                 coll_op_name(op), why);
        return NULL;
    }
    RAIL_VERBOSE(coll_sm_verbosity(), 2, "coll sm: %s on %s handed to %s: %s", coll_op_name(op),
                 comm->name[0] ? comm->name : "(unnamed)", next->component->name, why);
    return next;
}

/* ------------------------------------------------------------ user data */

static int sm_copy_cb(void *dst, const void *src, size_t len, void *ctx)
{
    (void)ctx;
    return accel_copy(dst, src, len, NULL);
}

void coll_sm_data_init(coll_sm_data_t *d, const void *buf, MPI_Count count,
                       const obj_datatype_t *dt)
{
    d->dt = dt;
    d->buf = buf;
    d->count = count;
    d->bytes = (size_t)(count * dt->size);
    d->device = coll_is_device(buf, count, dt);
    d->contig = rail_dt_contig_ptr(dt->layout, count, buf);
    d->stream = false;
}

static int sm_move(const coll_sm_data_t *d, size_t off, void *shm, size_t len, bool pack)
{
    if (len == 0)
        return MPI_SUCCESS;
    if (d->contig) {
        char *u = d->contig + off;
        if (d->device)
            return accel_copy(pack ? shm : u, pack ? u : shm, len, NULL);
        if (pack)
            rail_copy_shared(shm, u, len, d->stream);
        else
            rail_copy(u, shm, len);
        return MPI_SUCCESS;
    }
    struct rail_dt_cursor cur;
    int rc = rail_dt_cursor_init(&cur, d->dt->layout, d->count, d->buf);
    if (rc != MPI_SUCCESS)
        return rc;
    rail_dt_cursor_seek(&cur, off);
    size_t done;
    if (d->device) {
        /* pieces gathered / scattered on the device, one copy to the segment */
        const void *like = (const char *)d->buf + d->dt->true_lb;
        rail_dt_cursor_set_copy(&cur, sm_copy_cb, NULL);
        done = pack ? accel_dt_pack(&cur, shm, len, like) : accel_dt_unpack(&cur, shm, len, like);
    } else {
        done = pack ? rail_dt_pack(&cur, shm, len) : rail_dt_unpack(&cur, shm, len);
    }
    if (done != len)
        return rail_dt_cursor_status(&cur) != MPI_SUCCESS ? rail_dt_cursor_status(&cur)
                                                         : MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

int coll_sm_pack(const coll_sm_data_t *d, size_t off, void *dst, size_t len)
{
    int rc = sm_move(d, off, dst, len, true);
    return rc == MPI_SUCCESS ? rc : obj_errf(rc, "coll sm: copying %zu bytes of a buffer failed",
                                             len);
}

int coll_sm_unpack(const coll_sm_data_t *d, size_t off, const void *src, size_t len)
{
    int rc = sm_move(d, off, (void *)src, len, false);
    return rc == MPI_SUCCESS ? rc : obj_errf(rc, "coll sm: copying %zu bytes to a buffer failed",
                                             len);
}
