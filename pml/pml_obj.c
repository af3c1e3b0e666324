/*
 * What the pml hands the object layer (obj/comm.h): its state per
 * communicator, set up for every communicator the object layer makes, and
 * the point-to-point messages of the object layer's own exchanges
 * (context-id agreement, split, intercommunicator construction).
 */
#include "pml/pml_internal.h"
#include "obj/err.h"

static int pml_attach(obj_comm_t *c)
{
    int rc = pml_comm_create(c);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "the point-to-point layer cannot set up the new communicator");
    RAIL_VERBOSE(pml_verbose, 2, "pml: communicator %s set up (%d processes, context %u)",
                 c->name[0] ? c->name : "(unnamed)", c->size, (unsigned)c->context_id);
    return MPI_SUCCESS;
}

static void pml_detach(obj_comm_t *c)
{
    pml_comm_destroy(c);
}

static const obj_comm_layer_t pml_layer = {
    .name = "point-to-point", .attach = pml_attach, .detach = pml_detach,
};

static obj_datatype_t *byte_type(void)
{
    return obj_datatype_predef(MPI_BYTE);
}

static int obj_isend(const void *buf, size_t bytes, int dst, int tag, obj_comm_t *comm,
                     unsigned flags, obj_request_t **req)
{
    return pml_isend(buf, (MPI_Count)bytes, byte_type(), dst, tag, PML_SEND_STANDARD, comm, flags,
                     req);
}

static int obj_irecv(void *buf, size_t bytes, int src, int tag, obj_comm_t *comm, unsigned flags,
                     obj_request_t **req)
{
    return pml_irecv(buf, (MPI_Count)bytes, byte_type(), src, tag, comm, flags, req);
}

static const obj_comm_p2p_t pml_p2p = {
    .isend = obj_isend, .irecv = obj_irecv, .wait = pml_wait, .free = pml_request_free,
};

int pml_obj_register(void)
{
    obj_comm_set_p2p(&pml_p2p);
    return obj_comm_layer_add(&pml_layer);
}
