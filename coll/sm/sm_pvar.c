/* coll sm's MPI_T performance variables: event counters of this process,
 * counted where the events happen (sm_segment.c, sm_gather.c,
 * sm_allgather.c, sm_bcast.c, sm_small.c, sm_wait.c, sm_device.c) and registered here, once per
 * coll_sm_register_params (sm_params.c). */
#include "coll/sm/coll_sm.h"
#include "base/pvar.h"

static const rail_pvar_counter_t sm_pvars[] = {
    {"coll_sm_segments_created",
     "Shared-memory segments of node-local communicators this process set up fresh (at a "
     "communicator's first collective)",
     &coll_sm_count_created},
    {"coll_sm_buffers_populated",
     "Fresh shared-memory segments in which this process faulted its buffers in, at the "
     "communicator's first collective that did not fit the slots",
     &coll_sm_count_populated},
    {"coll_sm_bulk_populated",
     "Times this process mapped more of its bulk slots of a shared-memory segment in one "
     "call (and allocated them, where each process allocates its part at first use: "
     "coll_sm_segments_reserved): before it first wrote one, and as the number in use "
     "doubled",
     &coll_sm_count_bulk_populated},
    {"coll_sm_segments_reserved",
     "Fresh shared-memory segments this process made with every buffer allocated at once, "
     "/dev/shm having less than 16 times their size free (else each process allocates its "
     "buffers at their first use)",
     &coll_sm_count_reserved},
    {"coll_sm_slot_doublings",
     "Times this process put twice as many slots per process in use for a communicator's "
     "small collectives (from coll_sm_small_slots_start, at the 256th, 512th, ... small "
     "operation)",
     &coll_sm_count_slot_doublings},
    {"coll_sm_segments_reused",
     "Shared-memory segments of freed communicators this process continued on for a new "
     "communicator of the same processes (coll_sm_segment_cache)",
     &coll_sm_count_reused},
    {"coll_sm_alltoall_single_copy",
     "MPI_Alltoall calls (coll sm) in which this process read its blocks from the others' "
     "send buffers directly (CMA) instead of through the shared segment",
     &coll_sm_count_alltoall_cma},
    {"coll_sm_alltoall_streamed",
     "MPI_Alltoall calls (coll sm) in which this process wrote its blocks into the shared "
     "segment with streaming (non-temporal) stores, the path rank 0 chose by time",
     &coll_sm_count_alltoall_streamed},
    {"coll_sm_bcast_chunks_in",
     "Chunks of single-copy MPI_Bcast and MPI_Scatter calls (coll sm, from "
     "coll_sm_share_bcast_min bytes) that the root wrote into this process's buffer while "
     "this process read the rest",
     &coll_sm_count_bcast_chunks_in},
    {"coll_sm_gather_chunks_in",
     "Chunks of single-copy MPI_Gather calls (coll sm, from coll_sm_share_min bytes per "
     "block) that a sender wrote into this root's buffer while this process read the rest",
     &coll_sm_count_gather_chunks_in},
    {"coll_sm_allgather_streamed",
     "MPI_Allgather calls (coll sm) in which this process wrote its block into the shared "
     "segment with streaming (non-temporal) stores, the path rank 0 chose by time",
     &coll_sm_count_allgather_streamed},
    {"coll_sm_gather_single_copy",
     "MPI_Gather calls (coll sm) at whose root this process read the others' blocks from "
     "their send buffers directly (CMA) instead of through the shared segment",
     &coll_sm_count_gather_cma},
    {"coll_sm_scatter_single_copy",
     "MPI_Scatter calls (coll sm) in which this process read its block from the root's "
     "send buffer directly (CMA) instead of through the shared segment",
     &coll_sm_count_scatter_cma},
    {"coll_sm_device_ipc",
     "Collectives (coll sm) in which this process moved device data device to device "
     "itself, from or to the others' buffers opened by IPC",
     &coll_sm_count_device_ipc},
    {"coll_sm_sleeps",
     "Waits of coll sm collectives in which this process slept on the segment's futex "
     "(after coll_sm_spin_count and coll_sm_yield_count polls)",
     &coll_sm_count_sleeps},
    {"coll_sm_sleep_fences",
     "Sleeps of coll sm waits that first ran a full barrier in every process of the node "
     "by membarrier, as segments whose flags are published without a fence need "
     "(coll_sm_membarrier)",
     &coll_sm_count_sleep_fences},
    {"coll_sm_sleep_timeouts",
     "Sleeps of coll sm waits that ended by their timeout (5 ms), not by a wakeup: neither "
     "the flag awaited nor point-to-point traffic for this process came meanwhile",
     &coll_sm_count_sleep_timeouts},
    {"coll_sm_sleep_p2p_wakes",
     "Sleeps of coll sm waits that point-to-point traffic for this process ended or cut "
     "short (the sleep waits on btl sm's futex as well, with futex_waitv)",
     &coll_sm_count_sleep_p2p_wakes},
    {"coll_sm_small_mixed",
     "Small MPI_Reduce and MPI_Gather calls (coll sm) at whose root some processes had "
     "device buffers and some non-roots host buffers: the root took the device data by "
     "messages, the host data from the slots",
     &coll_sm_count_small_mixed},
    {"coll_sm_small_v",
     "MPI_Allgatherv, MPI_Gatherv and MPI_Scatterv calls (coll sm) this process did through "
     "the slots of small operations (a gatherv's blocks that did not fit came to the root by "
     "messages)",
     &coll_sm_count_small_v},
    {"coll_sm_small_bulk",
     "MPI_Bcast and MPI_Allgather calls (coll sm) this process did through the slots of "
     "small operations beyond coll_sm_small_max: a bcast's data in a bulk slot, an "
     "allgather's blocks in slots or bulk slots, at most coll_sm_small_bulk_max bytes",
     &coll_sm_count_small_bulk},
};

int coll_sm_register_pvars(void)
{
    return rail_pvar_register_counters(sm_pvars, RAIL_ARRAY_SIZE(sm_pvars));
}
