/* MPI_Allgather(v), MPI_Alltoall(v,w): blocking, nonblocking and
 * persistent (see coll_api.h). */
#include "mpi/coll_api.h"

#include <stdlib.h>

/* The check's signatures of an allgather or alltoall: the same block to
 * and from every process (in place: the receive block's). */
static void blocks_sigs(mpi_coll_chk_t *c, const void *sendbuf, MPI_Count sendcount,
                        const obj_datatype_t *sendtype, MPI_Count recvcount,
                        const obj_datatype_t *recvtype)
{
    if (sendbuf == MPI_IN_PLACE)
        mpi_coll_chk_fill(c->to, c->n, recvcount, recvtype);
    else
        mpi_coll_chk_fill(c->to, c->n, sendcount, sendtype);
    mpi_coll_chk_fill(c->from, c->n, recvcount, recvtype);
}

/* ------------------------------------------------------------ allgather */

MPI_COLL_FRONT int allgather_any(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                                 void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                                 obj_comm_t *comm, unsigned flags, obj_info_t *info,
                                 MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    if (!comm->is_inter && sendbuf != MPI_IN_PLACE) {
        rc = mpi_coll_check_self(sendcount, sendtype, recvcount, recvtype);
        if (rc == MPI_SUCCESS)
            rc = mpi_coll_check_alias_self(sendbuf, 0, sendcount, sendtype, recvbuf,
                                           (MPI_Count)comm->rank * recvcount * recvtype->extent,
                                           recvcount, recvtype);
    }
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_allgather, MPI_COLL_NO_ROOT, NULL,
                   blocks_sigs(chk, sendbuf, sendcount, sendtype, recvcount, recvtype));
    if (rc != MPI_SUCCESS || MPI_COLL_NOTHING(comm, request, recvcount, recvtype))
        return rc;
    MPI_COLL_RUN(allgather, (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                 flags, info, request);
}

MPI_COLL_BLOCKING(mpii_allgather, allgather_any,
                  (const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

int mpii_iallgather(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                    void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                    obj_comm_t *comm, MPI_Request *request)
{
    return allgather_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0,
                         NULL, request);
}

int mpii_allgather_init(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                        void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                        obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    return allgather_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ allgatherv */

MPI_COLL_FRONT int allgatherv_any(const void *sendbuf, MPI_Count sendcount,
                                  obj_datatype_t *sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint displs[],
                                  obj_datatype_t *recvtype, obj_comm_t *comm, unsigned flags,
                                  obj_info_t *info, MPI_Request *request)
{
    int rc = mpi_coll_check_displs(displs, comm->remote_size, "displs");
    if (rc == MPI_SUCCESS && !comm->is_inter && sendbuf != MPI_IN_PLACE)
        rc = mpi_coll_check_self(sendcount, sendtype, recvcounts[comm->rank], recvtype);
    if (rc == MPI_SUCCESS && !comm->is_inter && sendbuf != MPI_IN_PLACE)
        rc = mpi_coll_check_alias_self(sendbuf, 0, sendcount, sendtype, recvbuf,
                                       displs[comm->rank] * recvtype->extent,
                                       recvcounts[comm->rank], recvtype);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_allgatherv, MPI_COLL_NO_ROOT, NULL, {
        if (sendbuf == MPI_IN_PLACE)
            mpi_coll_chk_fill(chk->to, chk->n, recvcounts[comm->rank], recvtype);
        else
            mpi_coll_chk_fill(chk->to, chk->n, sendcount, sendtype);
        for (int q = 0; q < chk->n; q++)
            chk->from[q] = mpi_coll_sig(recvcounts[q], recvtype);
    });
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(allgatherv,
                 (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
                 flags, info, request);
}

MPI_COLL_BLOCKING(mpii_allgatherv, allgatherv_any,
                  (const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                   obj_datatype_t *recvtype, obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))

int mpii_iallgatherv(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                     void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                     obj_datatype_t *recvtype, obj_comm_t *comm, MPI_Request *request)
{
    return allgatherv_any(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          comm, 0, NULL, request);
}

int mpii_allgatherv_init(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                         void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                         obj_datatype_t *recvtype, obj_comm_t *comm, obj_info_t *info,
                         MPI_Request *request)
{
    return allgatherv_any(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          comm, MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ alltoall */

MPI_COLL_FRONT int alltoall_any(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                                void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                                obj_comm_t *comm, unsigned flags, obj_info_t *info,
                                MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    if (!comm->is_inter && sendbuf != MPI_IN_PLACE) {
        rc = mpi_coll_check_self(sendcount, sendtype, recvcount, recvtype);
        if (rc == MPI_SUCCESS)
            rc = mpi_coll_check_alias_self(
                sendbuf, (MPI_Count)comm->rank * sendcount * sendtype->extent, sendcount,
                sendtype, recvbuf, (MPI_Count)comm->rank * recvcount * recvtype->extent,
                recvcount, recvtype);
    }
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_alltoall, MPI_COLL_NO_ROOT, NULL,
                   blocks_sigs(chk, sendbuf, sendcount, sendtype, recvcount, recvtype));
    if (rc != MPI_SUCCESS || MPI_COLL_NOTHING(comm, request, recvcount, recvtype))
        return rc;
    MPI_COLL_RUN(alltoall, (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                 flags, info, request);
}

MPI_COLL_BLOCKING(mpii_alltoall, alltoall_any,
                  (const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

int mpii_ialltoall(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, obj_comm_t *comm,
                   MPI_Request *request)
{
    return alltoall_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0, NULL,
                        request);
}

int mpii_alltoall_init(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                       void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                       obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    return alltoall_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                        MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ alltoallv */

MPI_COLL_FRONT int alltoallv_any(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint sdispls[], obj_datatype_t *sendtype, void *recvbuf,
                                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                 obj_datatype_t *recvtype, obj_comm_t *comm, unsigned flags,
                                 obj_info_t *info, MPI_Request *request)
{
    int n = comm->remote_size, rc = mpi_coll_check_displs(rdispls, n, "rdispls");
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        rc = mpi_coll_check_displs(sdispls, n, "sdispls");
    if (rc == MPI_SUCCESS && !comm->is_inter && sendbuf != MPI_IN_PLACE)
        rc = mpi_coll_check_self(sendcounts[comm->rank], sendtype, recvcounts[comm->rank],
                                 recvtype);
    if (rc == MPI_SUCCESS && !comm->is_inter && sendbuf != MPI_IN_PLACE)
        rc = mpi_coll_check_alias_self(sendbuf, sdispls[comm->rank] * sendtype->extent,
                                       sendcounts[comm->rank], sendtype, recvbuf,
                                       rdispls[comm->rank] * recvtype->extent,
                                       recvcounts[comm->rank], recvtype);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_alltoallv, MPI_COLL_NO_ROOT, NULL, {
        for (int q = 0; q < chk->n; q++) {
            chk->to[q] = sendbuf == MPI_IN_PLACE ? mpi_coll_sig(recvcounts[q], recvtype)
                                                : mpi_coll_sig(sendcounts[q], sendtype);
            chk->from[q] = mpi_coll_sig(recvcounts[q], recvtype);
        }
    });
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(alltoallv,
                 (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                  comm),
                 flags, info, request);
}

MPI_COLL_BLOCKING(mpii_alltoallv, alltoallv_any,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   obj_datatype_t *sendtype, void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], obj_datatype_t *recvtype, obj_comm_t *comm),
                  (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm))

int mpii_ialltoallv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    obj_datatype_t *sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], obj_datatype_t *recvtype, obj_comm_t *comm,
                    MPI_Request *request)
{
    return alltoallv_any(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm, 0, NULL, request);
}

int mpii_alltoallv_init(const void *sendbuf, const MPI_Count sendcounts[],
                        const MPI_Aint sdispls[], obj_datatype_t *sendtype, void *recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                        obj_datatype_t *recvtype, obj_comm_t *comm, obj_info_t *info,
                        MPI_Request *request)
{
    return alltoallv_any(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm, MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ alltoallw */

MPI_COLL_FRONT int alltoallw_any(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                 obj_comm_t *comm, unsigned flags, obj_info_t *info,
                                 MPI_Request *request)
{
    int n = comm->remote_size, me = comm->rank;
    bool inplace = sendbuf == MPI_IN_PLACE;
    obj_datatype_t **st = NULL, **rt = NULL;
    int rc = mpi_coll_check_displs(rdispls, n, "rdispls");
    if (rc == MPI_SUCCESS && !inplace)
        rc = mpi_coll_check_displs(sdispls, n, "sdispls");
    if (rc == MPI_SUCCESS && !inplace)
        rc = mpi_coll_types(sendtypes, n, "sendtypes", &st);
    if (rc == MPI_SUCCESS)
        rc = mpi_coll_types(recvtypes, n, "recvtypes", &rt);
    if (rc == MPI_SUCCESS && !comm->is_inter && !inplace)
        rc = mpi_coll_check_self(sendcounts[me], st[me], recvcounts[me], rt[me]);
    if (rc == MPI_SUCCESS && !comm->is_inter && !inplace)
        rc = mpi_coll_check_alias_self(sendbuf, sdispls[me], sendcounts[me], st[me], recvbuf,
                                       rdispls[me], recvcounts[me], rt[me]);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_alltoallw, MPI_COLL_NO_ROOT, NULL, {
        for (int q = 0; q < chk->n; q++) {
            chk->to[q] = inplace ? mpi_coll_sig(recvcounts[q], rt[q])
                                : mpi_coll_sig(sendcounts[q], st[q]);
            chk->from[q] = mpi_coll_sig(recvcounts[q], rt[q]);
        }
    });
    if (rc != MPI_SUCCESS)
        goto out;
    if (!request) {
        rc = coll_alltoallw(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt,
                            comm);
    } else {
        obj_request_t *req;
        rc = coll_ialltoallw(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt,
                             comm, flags & ~MPI_COLL_F_CHECK, info, &req);
        if (rc == MPI_SUCCESS)
            *request = (MPI_Request)req;
    }
out:
    free(st);
    free(rt);
    return rc;
}

MPI_COLL_BLOCKING(mpii_alltoallw, alltoallw_any,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], obj_comm_t *comm),
                  (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, comm))

int mpii_ialltoallw(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], obj_comm_t *comm,
                    MPI_Request *request)
{
    return alltoallw_any(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm, 0, NULL, request);
}

int mpii_alltoallw_init(const void *sendbuf, const MPI_Count sendcounts[],
                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                        const MPI_Datatype recvtypes[], obj_comm_t *comm, obj_info_t *info,
                        MPI_Request *request)
{
    return alltoallw_any(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm, MPI_COLL_PERSISTENT, info, request);
}
