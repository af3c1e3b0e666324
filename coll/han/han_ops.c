/*
 * coll han: the operations, as phases on the node (low) and among the
 * leaders (up).
 *
 *   barrier    low barrier; leaders: up barrier; low barrier
 *   bcast      root's node: low bcast from the root; leaders: up bcast from
 *              the root's node; other nodes: low bcast from the leader
 *   reduce     low reduce to each leader; leaders: up reduce to the root's
 *              node; its leader sends the result to the root when the root
 *              is not the leader (point-to-point on the communicator, with
 *              the tag every process takes for the call)
 *   allreduce  low reduce to each leader; leaders: up allreduce in place;
 *              low bcast from the leader
 *   allgather  low gather of packed blocks at each leader, into its node's
 *              place of a buffer of all blocks grouped by node; leaders: up
 *              allgatherv of those places; each leader unpacks the blocks in
 *              rank order into the receive buffer; low bcast of it
 * Reductions with a non-commutative operation go to the next module.
 */
#include "coll/han/coll_han.h"
#include "obj/err.h"

#include <stdlib.h>

#define HAN_KEEP(rc, r) ((rc) != MPI_SUCCESS ? (rc) : (r))

static coll_han_module_t *han_ready(obj_comm_t *comm, coll_module_t *module, int *rc)
{
    coll_han_module_t *m = (coll_han_module_t *)module;
    *rc = coll_han_setup(m, comm);
    return m;
}

static coll_module_t *han_next(obj_comm_t *comm, int op, coll_module_t *module)
{
    coll_module_t *next = coll_next_module(comm, op, module);
    if (!next)
        obj_errf(MPI_ERR_UNSUPPORTED_OPERATION, "coll han cannot serve this %s (non-commutative "
                 "operation) and no component below it offers it", coll_op_name(op));
    return next;
}

/* ------------------------------------------------------------ barrier */

int coll_han_barrier(obj_comm_t *comm, coll_module_t *module)
{
    int rc;
    coll_han_module_t *m = han_ready(comm, module, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = coll_barrier(m->low);
    if (m->is_leader)
        rc = HAN_KEEP(rc, coll_barrier(m->up));
    return HAN_KEEP(rc, coll_barrier(m->low));
}

/* ------------------------------------------------------------ bcast */

int coll_han_bcast(void *buf, MPI_Count count, obj_datatype_t *dt, int root, obj_comm_t *comm,
                   coll_module_t *module)
{
    int rc;
    if (count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    coll_han_module_t *m = han_ready(comm, module, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    int rn = m->node_of[root];
    if (m->my_node == rn)
        rc = coll_bcast(buf, count, dt, m->lrank_of[root], m->low);
    if (m->is_leader)
        rc = HAN_KEEP(rc, coll_bcast(buf, count, dt, rn, m->up));
    if (m->my_node != rn)
        rc = HAN_KEEP(rc, coll_bcast(buf, count, dt, 0, m->low));
    return rc;
}

/* ------------------------------------------------------------ reduce */

/* Leader's temporary for count elements of dt (device memory when the
 * user's buffer is). */
static void *han_tmp(const void *like, MPI_Count count, obj_datatype_t *dt, bool *dev, void **mem)
{
    *dev = coll_is_device(like, count, dt);
    return coll_tmp_alloc(dt, count, *dev, *dev ? (const char *)like + dt->true_lb : NULL, mem);
}

int coll_han_reduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                    obj_op_t *op, int root, obj_comm_t *comm, coll_module_t *module)
{
    int rc, tag = coll_tag_next(comm);
    if (!op->commute) {
        coll_module_t *next = han_next(comm, COLL_OP_reduce, module);
        return next ? next->fns.reduce(sbuf, rbuf, count, dt, op, root, comm, next)
                    : MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    coll_han_module_t *m = han_ready(comm, module, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    bool am_root = comm->rank == root, inplace = sbuf == MPI_IN_PLACE, dev = false;
    int rn = m->node_of[root];
    void *mem = NULL, *acc = NULL;
    if (!m->is_leader) {   /* my operand to my leader; the root gets the result from it */
        rc = coll_reduce(am_root && inplace ? rbuf : sbuf, NULL, count, dt, op, 0, m->low);
        if (am_root)
            rc = HAN_KEEP(rc, coll_recv(rbuf, count, dt, m->leader[rn], tag, comm));
        return rc;
    }
    acc = am_root ? rbuf : han_tmp(sbuf, count, dt, &dev, &mem);
    if (!acc)
        return obj_errf(MPI_ERR_NO_MEM, "coll han: out of memory for a reduction temporary");
    rc = coll_reduce(am_root && inplace ? MPI_IN_PLACE : sbuf, acc, count, dt, op, 0, m->low);
    if (m->my_node == rn)
        rc = HAN_KEEP(rc, coll_reduce(MPI_IN_PLACE, acc, count, dt, op, rn, m->up));
    else
        rc = HAN_KEEP(rc, coll_reduce(acc, NULL, count, dt, op, rn, m->up));
    if (m->my_node == rn && !am_root)   /* the root is elsewhere on my node */
        rc = HAN_KEEP(rc, coll_send(acc, count, dt, root, tag, comm));
    coll_tmp_free(mem, dev);
    return rc;
}

/* ------------------------------------------------------------ allreduce */

int coll_han_allreduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                       obj_op_t *op, obj_comm_t *comm, coll_module_t *module)
{
    int rc;
    if (!op->commute) {
        coll_module_t *next = han_next(comm, COLL_OP_allreduce, module);
        return next ? next->fns.allreduce(sbuf, rbuf, count, dt, op, comm, next)
                    : MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    coll_han_module_t *m = han_ready(comm, module, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    bool inplace = sbuf == MPI_IN_PLACE;
    if (m->is_leader) {
        rc = coll_reduce(inplace ? MPI_IN_PLACE : sbuf, rbuf, count, dt, op, 0, m->low);
        rc = HAN_KEEP(rc, coll_allreduce(MPI_IN_PLACE, rbuf, count, dt, op, m->up));
    } else {
        rc = coll_reduce(inplace ? rbuf : sbuf, NULL, count, dt, op, 0, m->low);
    }
    return HAN_KEEP(rc, coll_bcast(rbuf, count, dt, 0, m->low));
}
