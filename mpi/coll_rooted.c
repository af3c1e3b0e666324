/* MPI_Barrier, MPI_Bcast, MPI_Gather(v), MPI_Scatter(v): blocking,
 * nonblocking and persistent (see coll_api.h). */
#include "mpi/coll_api.h"

/* Whether this process is the root of an intracommunicator collective
 * (the local checks below concern the root's own block). */
static bool intra_root(const obj_comm_t *comm, int root)
{
    return !comm->is_inter && comm->rank == root;
}

/* ------------------------------------------------------------ barrier */

MPI_COLL_FRONT int barrier_any(obj_comm_t *comm, unsigned flags, obj_info_t *info,
                               MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_barrier, MPI_COLL_NO_ROOT, NULL, (void)0);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(barrier, (comm), flags, info, request);
}

MPI_COLL_BLOCKING(mpii_barrier, barrier_any,
                  (obj_comm_t *comm),
                  (comm))

int mpii_ibarrier(obj_comm_t *comm, MPI_Request *request)
{
    return barrier_any(comm, 0, NULL, request);
}

int mpii_barrier_init(obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    return barrier_any(comm, MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ bcast */

MPI_COLL_FRONT int bcast_any(void *buffer, MPI_Count count, obj_datatype_t *datatype, int root,
                             obj_comm_t *comm, unsigned flags, obj_info_t *info,
                             MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_bcast, root, NULL,
                   mpi_coll_chk_rooted(chk, comm, root, false, count, datatype, count, datatype));
    if (rc != MPI_SUCCESS || MPI_COLL_NOTHING(comm, request, count, datatype))
        return rc;
    MPI_COLL_RUN(bcast, (buffer, count, datatype, root, comm), flags, info, request);
}

MPI_COLL_BLOCKING(mpii_bcast, bcast_any,
                  (void *buffer, MPI_Count count, obj_datatype_t *datatype, int root,
                   obj_comm_t *comm),
                  (buffer, count, datatype, root, comm))

int mpii_ibcast(void *buffer, MPI_Count count, obj_datatype_t *datatype, int root,
                obj_comm_t *comm, MPI_Request *request)
{
    return bcast_any(buffer, count, datatype, root, comm, 0, NULL, request);
}

int mpii_bcast_init(void *buffer, MPI_Count count, obj_datatype_t *datatype, int root,
                    obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    return bcast_any(buffer, count, datatype, root, comm, MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ gather */

MPI_COLL_FRONT int gather_any(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                              void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                              int root, obj_comm_t *comm, unsigned flags, obj_info_t *info,
                              MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    if (intra_root(comm, root) && sendbuf != MPI_IN_PLACE) {
        rc = mpi_coll_check_self(sendcount, sendtype, recvcount, recvtype);
        if (rc == MPI_SUCCESS)
            rc = mpi_coll_check_alias_self(sendbuf, 0, sendcount, sendtype, recvbuf,
                                           (MPI_Count)root * recvcount * recvtype->extent,
                                           recvcount, recvtype);
    }
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_gather, root, NULL, {
        bool in_place = mpi_coll_is_root(comm, root) && sendbuf == MPI_IN_PLACE;
        mpi_coll_chk_rooted(chk, comm, root, true, recvcount, recvtype,
                            in_place ? recvcount : sendcount, in_place ? recvtype : sendtype);
    });
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm->rank == root ? MPI_COLL_NOTHING(comm, request, recvcount, recvtype)
                           : MPI_COLL_NOTHING(comm, request, sendcount, sendtype))
        return MPI_SUCCESS;
    MPI_COLL_RUN(gather, (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                 flags, info, request);
}

MPI_COLL_BLOCKING(mpii_gather, gather_any,
                  (const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, int root,
                   obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))

int mpii_igather(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                 void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, int root,
                 obj_comm_t *comm, MPI_Request *request)
{
    return gather_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, 0,
                      NULL, request);
}

int mpii_gather_init(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                     void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, int root,
                     obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    return gather_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ gatherv */

MPI_COLL_FRONT int gatherv_any(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               obj_datatype_t *recvtype, int root, obj_comm_t *comm, unsigned flags,
                               obj_info_t *info, MPI_Request *request)
{
    bool is_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
    int rc = MPI_SUCCESS;
    if (is_root) {
        rc = mpi_coll_check_displs(displs, comm->remote_size, "displs");
        if (rc == MPI_SUCCESS && intra_root(comm, root) && sendbuf != MPI_IN_PLACE) {
            rc = mpi_coll_check_self(sendcount, sendtype, recvcounts[root], recvtype);
            if (rc == MPI_SUCCESS)
                rc = mpi_coll_check_alias_self(sendbuf, 0, sendcount, sendtype, recvbuf,
                                               displs[root] * recvtype->extent,
                                               recvcounts[root], recvtype);
        }
    }
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_gatherv, root, NULL, {
        int rp = mpi_coll_root_peer(comm, root);
        if (rp >= 0)
            chk->to[rp] = is_root && sendbuf == MPI_IN_PLACE
                             ? mpi_coll_sig(recvcounts[rp], recvtype)
                             : mpi_coll_sig(sendcount, sendtype);
        for (int q = 0; is_root && q < chk->n; q++)
            chk->from[q] = mpi_coll_sig(recvcounts[q], recvtype);
    });
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(gatherv,
                 (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),
                 flags, info, request);
}

MPI_COLL_BLOCKING(mpii_gatherv, gatherv_any,
                  (const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                   obj_datatype_t *recvtype, int root, obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))

int mpii_igatherv(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                  void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                  obj_datatype_t *recvtype, int root, obj_comm_t *comm, MPI_Request *request)
{
    return gatherv_any(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                       comm, 0, NULL, request);
}

int mpii_gatherv_init(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      obj_datatype_t *recvtype, int root, obj_comm_t *comm, obj_info_t *info,
                      MPI_Request *request)
{
    return gatherv_any(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                       comm, MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ scatter */

MPI_COLL_FRONT int scatter_any(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                               void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                               int root, obj_comm_t *comm, unsigned flags, obj_info_t *info,
                               MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    if (intra_root(comm, root) && recvbuf != MPI_IN_PLACE) {
        rc = mpi_coll_check_self(sendcount, sendtype, recvcount, recvtype);
        if (rc == MPI_SUCCESS)
            rc = mpi_coll_check_alias_self(sendbuf,
                                           (MPI_Count)root * sendcount * sendtype->extent,
                                           sendcount, sendtype, recvbuf, 0, recvcount, recvtype);
    }
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_scatter, root, NULL, {
        bool in_place = mpi_coll_is_root(comm, root) && recvbuf == MPI_IN_PLACE;
        mpi_coll_chk_rooted(chk, comm, root, false, sendcount, sendtype,
                            in_place ? sendcount : recvcount, in_place ? sendtype : recvtype);
    });
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm->rank == root ? MPI_COLL_NOTHING(comm, request, sendcount, sendtype)
                           : MPI_COLL_NOTHING(comm, request, recvcount, recvtype))
        return MPI_SUCCESS;
    MPI_COLL_RUN(scatter, (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                 flags, info, request);
}

MPI_COLL_BLOCKING(mpii_scatter, scatter_any,
                  (const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, int root,
                   obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))

int mpii_iscatter(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                  void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, int root,
                  obj_comm_t *comm, MPI_Request *request)
{
    return scatter_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, 0,
                       NULL, request);
}

int mpii_scatter_init(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                      void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, int root,
                      obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    return scatter_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ scatterv */

MPI_COLL_FRONT int scatterv_any(const void *sendbuf, const MPI_Count sendcounts[],
                                const MPI_Aint displs[], obj_datatype_t *sendtype, void *recvbuf,
                                MPI_Count recvcount, obj_datatype_t *recvtype, int root,
                                obj_comm_t *comm, unsigned flags, obj_info_t *info,
                                MPI_Request *request)
{
    bool is_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
    int rc = MPI_SUCCESS;
    if (is_root) {
        rc = mpi_coll_check_displs(displs, comm->remote_size, "displs");
        if (rc == MPI_SUCCESS && intra_root(comm, root) && recvbuf != MPI_IN_PLACE) {
            rc = mpi_coll_check_self(sendcounts[root], sendtype, recvcount, recvtype);
            if (rc == MPI_SUCCESS)
                rc = mpi_coll_check_alias_self(sendbuf, displs[root] * sendtype->extent,
                                               sendcounts[root], sendtype, recvbuf, 0, recvcount,
                                               recvtype);
        }
    }
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_scatterv, root, NULL, {
        int rp = mpi_coll_root_peer(comm, root);
        for (int q = 0; is_root && q < chk->n; q++)
            chk->to[q] = mpi_coll_sig(sendcounts[q], sendtype);
        if (rp >= 0)
            chk->from[rp] = is_root && recvbuf == MPI_IN_PLACE
                               ? mpi_coll_sig(sendcounts[rp], sendtype)
                               : mpi_coll_sig(recvcount, recvtype);
    });
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(scatterv,
                 (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),
                 flags, info, request);
}

MPI_COLL_BLOCKING(mpii_scatterv, scatterv_any,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                   obj_datatype_t *sendtype, void *recvbuf, MPI_Count recvcount,
                   obj_datatype_t *recvtype, int root, obj_comm_t *comm),
                  (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))

int mpii_iscatterv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                   obj_datatype_t *sendtype, void *recvbuf, MPI_Count recvcount,
                   obj_datatype_t *recvtype, int root, obj_comm_t *comm, MPI_Request *request)
{
    return scatterv_any(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                        comm, 0, NULL, request);
}

int mpii_scatterv_init(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                       obj_datatype_t *sendtype, void *recvbuf, MPI_Count recvcount,
                       obj_datatype_t *recvtype, int root, obj_comm_t *comm, obj_info_t *info,
                       MPI_Request *request)
{
    return scatterv_any(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                        comm, MPI_COLL_PERSISTENT, info, request);
}
