/* MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter(_block), MPI_Scan,
 * MPI_Exscan: blocking, nonblocking and persistent (see coll_api.h). */
#include "mpi/coll_api.h"

/* The checks every reduction makes: op on datatype, no aliased buffers. */
static int check_red(const void *sbuf, const void *rbuf, MPI_Count count, obj_datatype_t *dt,
                     obj_op_t *op)
{
    int rc = mpi_coll_check_op(op, dt);
    return rc == MPI_SUCCESS ? mpi_coll_check_alias(sbuf, rbuf, count, dt) : rc;
}

/* The check's signatures of a reduction: every process contributes count
 * x dt to every other (so all must be equal). */
static void red_sigs(mpi_coll_chk_t *c, MPI_Count count, const obj_datatype_t *dt)
{
    mpi_coll_chk_fill(c->to, c->n, count, dt);
    mpi_coll_chk_fill(c->from, c->n, count, dt);
}

/* ------------------------------------------------------------ reduce */

MPI_COLL_FRONT int reduce_any(const void *sendbuf, void *recvbuf, MPI_Count count,
                              obj_datatype_t *datatype, obj_op_t *op, int root, obj_comm_t *comm,
                              unsigned flags, obj_info_t *info, MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    if (!(comm->is_inter && root == MPI_PROC_NULL)) {
        bool is_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
        rc = mpi_coll_check_op(op, datatype);
        if (rc == MPI_SUCCESS && is_root && !comm->is_inter)
            rc = mpi_coll_check_alias(sendbuf, recvbuf, count, datatype);
    }
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_reduce, root, op, {
        if (!comm->is_inter) {
            red_sigs(chk, count, datatype);
        } else {
            /* the remote group's inputs go to the root */
            mpi_coll_chk_rooted(chk, comm, root, true, count, datatype, count, datatype);
        }
    });
    if (rc != MPI_SUCCESS || MPI_COLL_NOTHING(comm, request, count, datatype))
        return rc;
    MPI_COLL_RUN(reduce, (sendbuf, recvbuf, count, datatype, op, root, comm), flags, info,
                 request);
}

MPI_COLL_BLOCKING(mpii_reduce, reduce_any,
                  (const void *sendbuf, void *recvbuf, MPI_Count count, obj_datatype_t *datatype,
                   obj_op_t *op, int root, obj_comm_t *comm),
                  (sendbuf, recvbuf, count, datatype, op, root, comm))

int mpii_ireduce(const void *sendbuf, void *recvbuf, MPI_Count count, obj_datatype_t *datatype,
                 obj_op_t *op, int root, obj_comm_t *comm, MPI_Request *request)
{
    return reduce_any(sendbuf, recvbuf, count, datatype, op, root, comm, 0, NULL, request);
}

int mpii_reduce_init(const void *sendbuf, void *recvbuf, MPI_Count count,
                     obj_datatype_t *datatype, obj_op_t *op, int root, obj_comm_t *comm,
                     obj_info_t *info, MPI_Request *request)
{
    return reduce_any(sendbuf, recvbuf, count, datatype, op, root, comm, MPI_COLL_PERSISTENT, info,
                      request);
}

/* ------------------------------------------------------------ allreduce */

MPI_COLL_FRONT int allreduce_any(const void *sendbuf, void *recvbuf, MPI_Count count,
                                 obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm,
                                 unsigned flags, obj_info_t *info, MPI_Request *request)
{
    int rc = check_red(sendbuf, recvbuf, count, datatype, op);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_allreduce, MPI_COLL_NO_ROOT, op,
                   red_sigs(chk, count, datatype));
    if (rc != MPI_SUCCESS || MPI_COLL_NOTHING(comm, request, count, datatype))
        return rc;
    MPI_COLL_RUN(allreduce, (sendbuf, recvbuf, count, datatype, op, comm), flags, info, request);
}

MPI_COLL_BLOCKING(mpii_allreduce, allreduce_any,
                  (const void *sendbuf, void *recvbuf, MPI_Count count, obj_datatype_t *datatype,
                   obj_op_t *op, obj_comm_t *comm),
                  (sendbuf, recvbuf, count, datatype, op, comm))

int mpii_iallreduce(const void *sendbuf, void *recvbuf, MPI_Count count,
                    obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm,
                    MPI_Request *request)
{
    return allreduce_any(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, request);
}

int mpii_allreduce_init(const void *sendbuf, void *recvbuf, MPI_Count count,
                        obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm,
                        obj_info_t *info, MPI_Request *request)
{
    return allreduce_any(sendbuf, recvbuf, count, datatype, op, comm, MPI_COLL_PERSISTENT, info,
                         request);
}

/* ------------------------------------------------------------ reduce_scatter */

MPI_COLL_FRONT int reduce_scatter_any(const void *sendbuf, void *recvbuf,
                                      const MPI_Count recvcounts[], obj_datatype_t *datatype,
                                      obj_op_t *op, obj_comm_t *comm, unsigned flags,
                                      obj_info_t *info, MPI_Request *request)
{
    MPI_Count total = 0;
    for (int i = 0; i < comm->size; i++)
        total += recvcounts[i];
    int rc = check_red(sendbuf, recvbuf, total, datatype, op);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_reduce_scatter, MPI_COLL_NO_ROOT, op, {
        for (int q = 0; !comm->is_inter && q < chk->n; q++) {
            chk->to[q] = mpi_coll_sig(recvcounts[q], datatype);
            chk->from[q] = mpi_coll_sig(recvcounts[comm->rank], datatype);
        }
    });
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(reduce_scatter, (sendbuf, recvbuf, recvcounts, datatype, op, comm), flags, info,
                 request);
}

MPI_COLL_BLOCKING(mpii_reduce_scatter, reduce_scatter_any,
                  (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                   obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm),
                  (sendbuf, recvbuf, recvcounts, datatype, op, comm))

int mpii_ireduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                         obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm,
                         MPI_Request *request)
{
    return reduce_scatter_any(sendbuf, recvbuf, recvcounts, datatype, op, comm, 0, NULL, request);
}

int mpii_reduce_scatter_init(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                             obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm,
                             obj_info_t *info, MPI_Request *request)
{
    return reduce_scatter_any(sendbuf, recvbuf, recvcounts, datatype, op, comm, MPI_COLL_PERSISTENT,
                              info, request);
}

/* ------------------------------------------------------------ reduce_scatter_block */

MPI_COLL_FRONT int reduce_scatter_block_any(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                            obj_datatype_t *datatype, obj_op_t *op,
                                            obj_comm_t *comm, unsigned flags, obj_info_t *info,
                                            MPI_Request *request)
{
    int rc = check_red(sendbuf, recvbuf, recvcount * comm->size, datatype, op);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_reduce_scatter_block, MPI_COLL_NO_ROOT, op, {
        if (!comm->is_inter)
            red_sigs(chk, recvcount, datatype);
    });
    if (rc != MPI_SUCCESS || MPI_COLL_NOTHING(comm, request, recvcount, datatype))
        return rc;
    MPI_COLL_RUN(reduce_scatter_block, (sendbuf, recvbuf, recvcount, datatype, op, comm), flags,
                 info, request);
}

MPI_COLL_BLOCKING(mpii_reduce_scatter_block, reduce_scatter_block_any,
                  (const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                   obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm),
                  (sendbuf, recvbuf, recvcount, datatype, op, comm))

int mpii_ireduce_scatter_block(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                               obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm,
                               MPI_Request *request)
{
    return reduce_scatter_block_any(sendbuf, recvbuf, recvcount, datatype, op, comm, 0, NULL,
                                    request);
}

int mpii_reduce_scatter_block_init(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                   obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm,
                                   obj_info_t *info, MPI_Request *request)
{
    return reduce_scatter_block_any(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                    MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ scan, exscan */

static int scan_check(const void *sendbuf, const void *recvbuf, MPI_Count count,
                      obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm)
{
    int rc = mpi_coll_check_intra(comm);
    return rc == MPI_SUCCESS ? check_red(sendbuf, recvbuf, count, datatype, op) : rc;
}

MPI_COLL_FRONT int scan_any(const void *sendbuf, void *recvbuf, MPI_Count count,
                            obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm,
                            unsigned flags, obj_info_t *info, MPI_Request *request)
{
    int rc = scan_check(sendbuf, recvbuf, count, datatype, op, comm);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_scan, MPI_COLL_NO_ROOT, op,
                   red_sigs(chk, count, datatype));
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(scan, (sendbuf, recvbuf, count, datatype, op, comm), flags, info, request);
}

MPI_COLL_BLOCKING(mpii_scan, scan_any,
                  (const void *sendbuf, void *recvbuf, MPI_Count count, obj_datatype_t *datatype,
                   obj_op_t *op, obj_comm_t *comm),
                  (sendbuf, recvbuf, count, datatype, op, comm))

int mpii_iscan(const void *sendbuf, void *recvbuf, MPI_Count count, obj_datatype_t *datatype,
               obj_op_t *op, obj_comm_t *comm, MPI_Request *request)
{
    return scan_any(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, request);
}

int mpii_scan_init(const void *sendbuf, void *recvbuf, MPI_Count count, obj_datatype_t *datatype,
                   obj_op_t *op, obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    return scan_any(sendbuf, recvbuf, count, datatype, op, comm, MPI_COLL_PERSISTENT, info,
                    request);
}

MPI_COLL_FRONT int exscan_any(const void *sendbuf, void *recvbuf, MPI_Count count,
                              obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm,
                              unsigned flags, obj_info_t *info, MPI_Request *request)
{
    int rc = scan_check(sendbuf, recvbuf, count, datatype, op, comm);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_exscan, MPI_COLL_NO_ROOT, op,
                   red_sigs(chk, count, datatype));
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(exscan, (sendbuf, recvbuf, count, datatype, op, comm), flags, info, request);
}

MPI_COLL_BLOCKING(mpii_exscan, exscan_any,
                  (const void *sendbuf, void *recvbuf, MPI_Count count, obj_datatype_t *datatype,
                   obj_op_t *op, obj_comm_t *comm),
                  (sendbuf, recvbuf, count, datatype, op, comm))

int mpii_iexscan(const void *sendbuf, void *recvbuf, MPI_Count count, obj_datatype_t *datatype,
                 obj_op_t *op, obj_comm_t *comm, MPI_Request *request)
{
    return exscan_any(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, request);
}

int mpii_exscan_init(const void *sendbuf, void *recvbuf, MPI_Count count,
                     obj_datatype_t *datatype, obj_op_t *op, obj_comm_t *comm, obj_info_t *info,
                     MPI_Request *request)
{
    return exscan_any(sendbuf, recvbuf, count, datatype, op, comm, MPI_COLL_PERSISTENT, info,
                      request);
}
