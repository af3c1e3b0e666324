/* MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter(_block), MPI_Scan,
 * MPI_Exscan: blocking, nonblocking and persistent (see coll_api.h). */
#include "mpi/coll_api.h"

/* The checks every reduction makes: op on datatype, no aliased buffers. */
static int check_red(const void *sbuf, const void *rbuf, MPI_Count count, mpi_datatype_t *dt,
                     mpi_op_t *op)
{
    int rc = mpi_coll_check_op(op, dt);
    return rc == MPI_SUCCESS ? mpi_coll_check_alias(sbuf, rbuf, count, dt) : rc;
}

/* ------------------------------------------------------------ reduce */

static int reduce_any(const void *sendbuf, void *recvbuf, MPI_Count count,
                      mpi_datatype_t *datatype, mpi_op_t *op, int root, mpi_comm_t *comm,
                      unsigned flags, mpi_info_t *info, MPI_Request *request)
{
    if (!(comm->is_inter && root == MPI_PROC_NULL)) {
        bool is_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
        int rc = mpi_coll_check_op(op, datatype);
        if (rc == MPI_SUCCESS && is_root && !comm->is_inter)
            rc = mpi_coll_check_alias(sendbuf, recvbuf, count, datatype);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (MPI_COLL_NOTHING(comm, request, count, datatype))
        return MPI_SUCCESS;
    MPI_COLL_RUN(reduce, (sendbuf, recvbuf, count, datatype, op, root, comm), flags, info,
                 request);
}

int mpii_reduce(const void *sendbuf, void *recvbuf, MPI_Count count, mpi_datatype_t *datatype,
                mpi_op_t *op, int root, mpi_comm_t *comm)
{
    return reduce_any(sendbuf, recvbuf, count, datatype, op, root, comm, 0, NULL, NULL);
}

int mpii_ireduce(const void *sendbuf, void *recvbuf, MPI_Count count, mpi_datatype_t *datatype,
                 mpi_op_t *op, int root, mpi_comm_t *comm, MPI_Request *request)
{
    return reduce_any(sendbuf, recvbuf, count, datatype, op, root, comm, 0, NULL, request);
}

int mpii_reduce_init(const void *sendbuf, void *recvbuf, MPI_Count count,
                     mpi_datatype_t *datatype, mpi_op_t *op, int root, mpi_comm_t *comm,
                     mpi_info_t *info, MPI_Request *request)
{
    return reduce_any(sendbuf, recvbuf, count, datatype, op, root, comm, COLL_F_PERSISTENT, info,
                      request);
}

/* ------------------------------------------------------------ allreduce */

static int allreduce_any(const void *sendbuf, void *recvbuf, MPI_Count count,
                         mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm, unsigned flags,
                         mpi_info_t *info, MPI_Request *request)
{
    int rc = check_red(sendbuf, recvbuf, count, datatype, op);
    if (rc != MPI_SUCCESS || MPI_COLL_NOTHING(comm, request, count, datatype))
        return rc;
    MPI_COLL_RUN(allreduce, (sendbuf, recvbuf, count, datatype, op, comm), flags, info, request);
}

int mpii_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, mpi_datatype_t *datatype,
                   mpi_op_t *op, mpi_comm_t *comm)
{
    return allreduce_any(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, NULL);
}

int mpii_iallreduce(const void *sendbuf, void *recvbuf, MPI_Count count,
                    mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm,
                    MPI_Request *request)
{
    return allreduce_any(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, request);
}

int mpii_allreduce_init(const void *sendbuf, void *recvbuf, MPI_Count count,
                        mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm,
                        mpi_info_t *info, MPI_Request *request)
{
    return allreduce_any(sendbuf, recvbuf, count, datatype, op, comm, COLL_F_PERSISTENT, info,
                         request);
}

/* ------------------------------------------------------------ reduce_scatter */

static int reduce_scatter_any(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                              mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm,
                              unsigned flags, mpi_info_t *info, MPI_Request *request)
{
    MPI_Count total = 0;
    for (int i = 0; i < comm->size; i++)
        total += recvcounts[i];
    int rc = check_red(sendbuf, recvbuf, total, datatype, op);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(reduce_scatter, (sendbuf, recvbuf, recvcounts, datatype, op, comm), flags, info,
                 request);
}

int mpii_reduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                        mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm)
{
    return reduce_scatter_any(sendbuf, recvbuf, recvcounts, datatype, op, comm, 0, NULL, NULL);
}

int mpii_ireduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                         mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm,
                         MPI_Request *request)
{
    return reduce_scatter_any(sendbuf, recvbuf, recvcounts, datatype, op, comm, 0, NULL, request);
}

int mpii_reduce_scatter_init(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                             mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm,
                             mpi_info_t *info, MPI_Request *request)
{
    return reduce_scatter_any(sendbuf, recvbuf, recvcounts, datatype, op, comm, COLL_F_PERSISTENT,
                              info, request);
}

/* ------------------------------------------------------------ reduce_scatter_block */

static int reduce_scatter_block_any(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                    mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm,
                                    unsigned flags, mpi_info_t *info, MPI_Request *request)
{
    int rc = check_red(sendbuf, recvbuf, recvcount * comm->size, datatype, op);
    if (rc != MPI_SUCCESS || MPI_COLL_NOTHING(comm, request, recvcount, datatype))
        return rc;
    MPI_COLL_RUN(reduce_scatter_block, (sendbuf, recvbuf, recvcount, datatype, op, comm), flags,
                 info, request);
}

int mpii_reduce_scatter_block(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                              mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm)
{
    return reduce_scatter_block_any(sendbuf, recvbuf, recvcount, datatype, op, comm, 0, NULL,
                                    NULL);
}

int mpii_ireduce_scatter_block(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                               mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm,
                               MPI_Request *request)
{
    return reduce_scatter_block_any(sendbuf, recvbuf, recvcount, datatype, op, comm, 0, NULL,
                                    request);
}

int mpii_reduce_scatter_block_init(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                   mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm,
                                   mpi_info_t *info, MPI_Request *request)
{
    return reduce_scatter_block_any(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                    COLL_F_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ scan, exscan */

static int scan_check(const void *sendbuf, const void *recvbuf, MPI_Count count,
                      mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm)
{
    int rc = mpi_coll_check_intra(comm);
    return rc == MPI_SUCCESS ? check_red(sendbuf, recvbuf, count, datatype, op) : rc;
}

static int scan_any(const void *sendbuf, void *recvbuf, MPI_Count count, mpi_datatype_t *datatype,
                    mpi_op_t *op, mpi_comm_t *comm, unsigned flags, mpi_info_t *info,
                    MPI_Request *request)
{
    int rc = scan_check(sendbuf, recvbuf, count, datatype, op, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(scan, (sendbuf, recvbuf, count, datatype, op, comm), flags, info, request);
}

int mpii_scan(const void *sendbuf, void *recvbuf, MPI_Count count, mpi_datatype_t *datatype,
              mpi_op_t *op, mpi_comm_t *comm)
{
    return scan_any(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, NULL);
}

int mpii_iscan(const void *sendbuf, void *recvbuf, MPI_Count count, mpi_datatype_t *datatype,
               mpi_op_t *op, mpi_comm_t *comm, MPI_Request *request)
{
    return scan_any(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, request);
}

int mpii_scan_init(const void *sendbuf, void *recvbuf, MPI_Count count, mpi_datatype_t *datatype,
                   mpi_op_t *op, mpi_comm_t *comm, mpi_info_t *info, MPI_Request *request)
{
    return scan_any(sendbuf, recvbuf, count, datatype, op, comm, COLL_F_PERSISTENT, info, request);
}

static int exscan_any(const void *sendbuf, void *recvbuf, MPI_Count count,
                      mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm, unsigned flags,
                      mpi_info_t *info, MPI_Request *request)
{
    int rc = scan_check(sendbuf, recvbuf, count, datatype, op, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(exscan, (sendbuf, recvbuf, count, datatype, op, comm), flags, info, request);
}

int mpii_exscan(const void *sendbuf, void *recvbuf, MPI_Count count, mpi_datatype_t *datatype,
                mpi_op_t *op, mpi_comm_t *comm)
{
    return exscan_any(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, NULL);
}

int mpii_iexscan(const void *sendbuf, void *recvbuf, MPI_Count count, mpi_datatype_t *datatype,
                 mpi_op_t *op, mpi_comm_t *comm, MPI_Request *request)
{
    return exscan_any(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, request);
}

int mpii_exscan_init(const void *sendbuf, void *recvbuf, MPI_Count count,
                     mpi_datatype_t *datatype, mpi_op_t *op, mpi_comm_t *comm, mpi_info_t *info,
                     MPI_Request *request)
{
    return exscan_any(sendbuf, recvbuf, count, datatype, op, comm, COLL_F_PERSISTENT, info,
                      request);
}
