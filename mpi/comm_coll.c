/*
 * The collective framework's per-communicator hooks, called for every
 * communicator this layer makes (after pml_comm_create) and takes down
 * (before pml_comm_destroy).
 *
 * coll_comm_select may run inside the progress engine (completion of
 * MPI_Comm_idup), so it must not communicate or wait; it is also called for
 * the hidden local_comm of every intercommunicator.
 */
#include "obj/comm_int.h"
#include "coll/coll.h"
#include "base/atomic.h"

int comm_coll_attach(obj_comm_t *c)
{
    /* for components that build communicators; set by the first
     * communicator's attach (threads may make communicators at once: one
     * store, and han reads it after this attach's load or store) */
    if (rail_atomic_load_acquire(&coll_comm_split) == NULL)
        rail_atomic_store_release(&coll_comm_split, comm_split_internal);
    return coll_comm_select(c);
}

void comm_coll_detach(obj_comm_t *c)
{
    coll_comm_release(c);
}
