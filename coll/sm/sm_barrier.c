/*
 * coll sm: barrier, a fan-in / fan-out tree of flags (coll_sm_tree_degree
 * children per process) for more than degree + 1 processes; up to that,
 * where the flat tree would be, every process publishes its arrival in its
 * small-operation slot and waits for everyone's (sm_small.c).
 *
 *   fan-in:  wait until my children reached step 1, then post step 1
 *   fan-out: wait until my parent posted FINAL, then post FINAL
 *
 * Rank 0 posts FINAL as soon as its children arrived.  No buffers: the
 * barrier never claims a set.
 */
#include "coll/sm/coll_sm.h"
#include "coll/sm/sm_slots.h"

int coll_sm_barrier(obj_comm_t *comm, coll_module_t *module)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    uint64_t s;
    int rc;
    if (coll_sm_small_barrier(m, comm, &rc))
        return rc;
    rc = coll_sm_begin(m, comm, &s);
    if (rc == COLL_SM_HANDOFF) {
        coll_module_t *next = coll_sm_next(comm, COLL_OP_barrier, module, "no segment");
        return next ? next->fns.barrier(comm, next) : MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    int me = m->me, d = m->degree;
    long first = (long)me * d + 1;
    if (first < m->n)
        coll_sm_wait_range(m, (int)first, (int)RAIL_MIN(first + d, (long)m->n),
                           COLL_SM_V(s, 1));
    if (me != 0) {
        coll_sm_post(m, COLL_SM_V(s, 1));
        coll_sm_wait(m, (me - 1) / d, COLL_SM_V(s, COLL_SM_FINAL));
    }
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    return MPI_SUCCESS;
}
