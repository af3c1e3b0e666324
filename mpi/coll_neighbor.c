/*
 * Neighbourhood collectives (MPI_Neighbor_allgather(v), _alltoall(v,w)):
 * blocking, nonblocking and persistent, int and big-count forms.  Array
 * lengths come from the communicator's topology (indegree / outdegree), so
 * the checks and conversions the generator cannot make happen here.
 */
#include "mpi/coll_api.h"
#include "obj/topo.h"

#include <stdlib.h>

static int topo_of(const obj_comm_t *comm, const obj_topo_t **t)
{
    *t = comm->topo;
    if (comm->is_inter || !*t)
        return obj_errf(MPI_ERR_TOPOLOGY, "neighbourhood collectives need an intracommunicator "
                        "with a process topology (MPI_Cart_create, MPI_Graph_create, "
                        "MPI_Dist_graph_create)");
    return MPI_SUCCESS;
}

/* The check's signatures of a neighbourhood collective: what goes along
 * each out-edge (scounts[k] x stypes[k], where the arrays are given, else
 * scount x stype) and comes along each in-edge, added up per process. */
typedef struct nbr_args {
    const MPI_Count *scounts, *rcounts;
    MPI_Count scount, rcount;
    obj_datatype_t *const *stypes, *const *rtypes;
    const obj_datatype_t *stype, *rtype;
} nbr_args_t;

static void nbr_sigs(mpi_coll_chk_t *c, const obj_topo_t *t, nbr_args_t a)
{
    for (int k = 0; k < t->outdegree; k++)
        if (t->out[k] != MPI_PROC_NULL)
            mpi_coll_sig_add(&c->to[t->out[k]], a.scounts ? a.scounts[k] : a.scount,
                             a.stypes ? a.stypes[k] : a.stype);
    for (int k = 0; k < t->indegree; k++)
        if (t->in[k] != MPI_PROC_NULL)
            mpi_coll_sig_add(&c->from[t->in[k]], a.rcounts ? a.rcounts[k] : a.rcount,
                             a.rtypes ? a.rtypes[k] : a.rtype);
}

/* Arrays of the int forms, as big-count arrays (freed by conv_free). */
typedef struct conv {
    MPI_Count *sc, *rc;
    MPI_Aint *sd, *rd;
} conv_t;

static void conv_free(conv_t *c)
{
    free(c->sc);
    free(c->rc);
    free(c->sd);
    free(c->rd);
}

static int counts_conv(const int *a, int n, const char *name, MPI_Count **out)
{
    int rc = mpi_check_counts_int(a, n, name);
    return rc == MPI_SUCCESS ? mpi_conv_int_to_count(a, n, out) : rc;
}

static int displs_conv(const int *a, int n, const char *name, MPI_Aint **out)
{
    *out = NULL;
    if (n > 0 && !a)
        return obj_errf(MPI_ERR_ARG, "argument '%s' must not be NULL", name);
    return mpi_conv_int_to_aint(a, n, out);
}

/* ------------------------------------------------------------ allgather, alltoall */

MPI_COLL_FRONT int allgather_any(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                                 void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                                 obj_comm_t *comm, unsigned flags, obj_info_t *info,
                                 MPI_Request *request)
{
    const obj_topo_t *t;
    int rc = topo_of(comm, &t);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_neighbor_allgather, MPI_COLL_NO_ROOT, NULL,
                   nbr_sigs(chk, t, (nbr_args_t){.scount = sendcount, .stype = sendtype,
                                                  .rcount = recvcount, .rtype = recvtype}));
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(neighbor_allgather,
                 (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), flags, info,
                 request);
}

MPI_COLL_BLOCKING(mpii_neighbor_allgather, allgather_any,
                  (const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

int mpii_ineighbor_allgather(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                             void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                             obj_comm_t *comm, MPI_Request *request)
{
    return allgather_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0,
                         NULL, request);
}

int mpii_neighbor_allgather_init(const void *sendbuf, MPI_Count sendcount,
                                 obj_datatype_t *sendtype, void *recvbuf, MPI_Count recvcount,
                                 obj_datatype_t *recvtype, obj_comm_t *comm, obj_info_t *info,
                                 MPI_Request *request)
{
    return allgather_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         MPI_COLL_PERSISTENT, info, request);
}

MPI_COLL_FRONT int alltoall_any(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                                void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                                obj_comm_t *comm, unsigned flags, obj_info_t *info,
                                MPI_Request *request)
{
    const obj_topo_t *t;
    int rc = topo_of(comm, &t);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_neighbor_alltoall, MPI_COLL_NO_ROOT, NULL,
                   nbr_sigs(chk, t, (nbr_args_t){.scount = sendcount, .stype = sendtype,
                                                  .rcount = recvcount, .rtype = recvtype}));
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(neighbor_alltoall,
                 (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), flags, info,
                 request);
}

MPI_COLL_BLOCKING(mpii_neighbor_alltoall, alltoall_any,
                  (const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype, obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

int mpii_ineighbor_alltoall(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                            void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                            obj_comm_t *comm, MPI_Request *request)
{
    return alltoall_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0, NULL,
                        request);
}

int mpii_neighbor_alltoall_init(const void *sendbuf, MPI_Count sendcount,
                                obj_datatype_t *sendtype, void *recvbuf, MPI_Count recvcount,
                                obj_datatype_t *recvtype, obj_comm_t *comm, obj_info_t *info,
                                MPI_Request *request)
{
    return alltoall_any(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                        MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ allgatherv */

static int allgatherv_c(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                        obj_datatype_t *recvtype, obj_comm_t *comm, unsigned flags,
                        obj_info_t *info, MPI_Request *request)
{
    const obj_topo_t *t;
    int rc = topo_of(comm, &t);
    if (rc == MPI_SUCCESS)
        rc = mpi_check_counts_count(recvcounts, t->indegree, "recvcounts");
    if (rc == MPI_SUCCESS)
        rc = mpi_coll_check_displs(displs, t->indegree, "displs");
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_neighbor_allgatherv, MPI_COLL_NO_ROOT, NULL,
                   nbr_sigs(chk, t, (nbr_args_t){.scount = sendcount, .stype = sendtype,
                                                  .rcounts = recvcounts, .rtype = recvtype}));
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(neighbor_allgatherv,
                 (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
                 flags, info, request);
}

static int allgatherv_int(const void *sendbuf, int sendcount, obj_datatype_t *sendtype,
                          void *recvbuf, const int recvcounts[], const int displs[],
                          obj_datatype_t *recvtype, obj_comm_t *comm, unsigned flags,
                          obj_info_t *info, MPI_Request *request)
{
    const obj_topo_t *t;
    conv_t c = { 0 };
    int rc = topo_of(comm, &t);
    if (rc == MPI_SUCCESS)
        rc = counts_conv(recvcounts, t->indegree, "recvcounts", &c.rc);
    if (rc == MPI_SUCCESS)
        rc = displs_conv(displs, t->indegree, "displs", &c.rd);
    if (rc == MPI_SUCCESS)
        rc = allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, c.rc, c.rd, recvtype, comm, flags,
                          info, request);
    conv_free(&c);
    return rc;
}

MPI_COLL_BLOCKING(mpii_neighbor_allgatherv, allgatherv_int,
                  (const void *sendbuf, int sendcount, obj_datatype_t *sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], obj_datatype_t *recvtype,
                   obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))

MPI_COLL_BLOCKING(mpii_neighbor_allgatherv_c, allgatherv_c,
                  (const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                   void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                   obj_datatype_t *recvtype, obj_comm_t *comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))

int mpii_ineighbor_allgatherv(const void *sendbuf, int sendcount, obj_datatype_t *sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              obj_datatype_t *recvtype, obj_comm_t *comm, MPI_Request *request)
{
    return allgatherv_int(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          comm, 0, NULL, request);
}

int mpii_ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount,
                                obj_datatype_t *sendtype, void *recvbuf,
                                const MPI_Count recvcounts[], const MPI_Aint displs[],
                                obj_datatype_t *recvtype, obj_comm_t *comm, MPI_Request *request)
{
    return allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                        0, NULL, request);
}

int mpii_neighbor_allgatherv_init(const void *sendbuf, int sendcount, obj_datatype_t *sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  obj_datatype_t *recvtype, obj_comm_t *comm, obj_info_t *info,
                                  MPI_Request *request)
{
    return allgatherv_int(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          comm, MPI_COLL_PERSISTENT, info, request);
}

int mpii_neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount,
                                    obj_datatype_t *sendtype, void *recvbuf,
                                    const MPI_Count recvcounts[], const MPI_Aint displs[],
                                    obj_datatype_t *recvtype, obj_comm_t *comm, obj_info_t *info,
                                    MPI_Request *request)
{
    return allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                        MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ alltoallv */

static int alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                       obj_datatype_t *sendtype, void *recvbuf, const MPI_Count recvcounts[],
                       const MPI_Aint rdispls[], obj_datatype_t *recvtype, obj_comm_t *comm,
                       unsigned flags, obj_info_t *info, MPI_Request *request)
{
    const obj_topo_t *t;
    int rc = topo_of(comm, &t);
    if (rc == MPI_SUCCESS)
        rc = mpi_check_counts_count(sendcounts, t->outdegree, "sendcounts");
    if (rc == MPI_SUCCESS)
        rc = mpi_coll_check_displs(sdispls, t->outdegree, "sdispls");
    if (rc == MPI_SUCCESS)
        rc = mpi_check_counts_count(recvcounts, t->indegree, "recvcounts");
    if (rc == MPI_SUCCESS)
        rc = mpi_coll_check_displs(rdispls, t->indegree, "rdispls");
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_neighbor_alltoallv, MPI_COLL_NO_ROOT, NULL,
                   nbr_sigs(chk, t, (nbr_args_t){.scounts = sendcounts, .stype = sendtype,
                                                  .rcounts = recvcounts, .rtype = recvtype}));
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_COLL_RUN(neighbor_alltoallv,
                 (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                  comm),
                 flags, info, request);
}

static int alltoallv_int(const void *sendbuf, const int sendcounts[], const int sdispls[],
                         obj_datatype_t *sendtype, void *recvbuf, const int recvcounts[],
                         const int rdispls[], obj_datatype_t *recvtype, obj_comm_t *comm,
                         unsigned flags, obj_info_t *info, MPI_Request *request)
{
    const obj_topo_t *t;
    conv_t c = { 0 };
    int rc = topo_of(comm, &t);
    if (rc == MPI_SUCCESS)
        rc = counts_conv(sendcounts, t->outdegree, "sendcounts", &c.sc);
    if (rc == MPI_SUCCESS)
        rc = displs_conv(sdispls, t->outdegree, "sdispls", &c.sd);
    if (rc == MPI_SUCCESS)
        rc = counts_conv(recvcounts, t->indegree, "recvcounts", &c.rc);
    if (rc == MPI_SUCCESS)
        rc = displs_conv(rdispls, t->indegree, "rdispls", &c.rd);
    if (rc == MPI_SUCCESS)
        rc = alltoallv_c(sendbuf, c.sc, c.sd, sendtype, recvbuf, c.rc, c.rd, recvtype, comm,
                         flags, info, request);
    conv_free(&c);
    return rc;
}

MPI_COLL_BLOCKING(mpii_neighbor_alltoallv, alltoallv_int,
                  (const void *sendbuf, const int sendcounts[], const int sdispls[],
                   obj_datatype_t *sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], obj_datatype_t *recvtype, obj_comm_t *comm),
                  (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm))

MPI_COLL_BLOCKING(mpii_neighbor_alltoallv_c, alltoallv_c,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   obj_datatype_t *sendtype, void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], obj_datatype_t *recvtype, obj_comm_t *comm),
                  (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm))

int mpii_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             obj_datatype_t *sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], obj_datatype_t *recvtype, obj_comm_t *comm,
                             MPI_Request *request)
{
    return alltoallv_int(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm, 0, NULL, request);
}

int mpii_ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], obj_datatype_t *sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               obj_datatype_t *recvtype, obj_comm_t *comm, MPI_Request *request)
{
    return alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                       recvtype, comm, 0, NULL, request);
}

int mpii_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 obj_datatype_t *sendtype, void *recvbuf, const int recvcounts[],
                                 const int rdispls[], obj_datatype_t *recvtype, obj_comm_t *comm,
                                 obj_info_t *info, MPI_Request *request)
{
    return alltoallv_int(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm, MPI_COLL_PERSISTENT, info, request);
}

int mpii_neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], obj_datatype_t *sendtype,
                                   void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], obj_datatype_t *recvtype,
                                   obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    return alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                       recvtype, comm, MPI_COLL_PERSISTENT, info, request);
}

/* ------------------------------------------------------------ alltoallw */

static int alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], obj_comm_t *comm,
                       unsigned flags, obj_info_t *info, MPI_Request *request)
{
    const obj_topo_t *t;
    obj_datatype_t **st = NULL, **rt = NULL;
    int rc = topo_of(comm, &t);
    if (rc == MPI_SUCCESS)
        rc = mpi_check_counts_count(sendcounts, t->outdegree, "sendcounts");
    if (rc == MPI_SUCCESS)
        rc = mpi_coll_check_displs(sdispls, t->outdegree, "sdispls");
    if (rc == MPI_SUCCESS)
        rc = mpi_check_counts_count(recvcounts, t->indegree, "recvcounts");
    if (rc == MPI_SUCCESS)
        rc = mpi_coll_check_displs(rdispls, t->indegree, "rdispls");
    if (rc == MPI_SUCCESS)
        rc = mpi_coll_types(sendtypes, t->outdegree, "sendtypes", &st);
    if (rc == MPI_SUCCESS)
        rc = mpi_coll_types(recvtypes, t->indegree, "recvtypes", &rt);
    MPI_COLL_CHECK(comm, flags, rc, COLL_OP_neighbor_alltoallw, MPI_COLL_NO_ROOT, NULL,
                   nbr_sigs(chk, t, (nbr_args_t){.scounts = sendcounts, .stypes = st,
                                                  .rcounts = recvcounts, .rtypes = rt}));
    if (rc == MPI_SUCCESS && !request) {
        rc = coll_neighbor_alltoallw(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                     rdispls, rt, comm);
    } else if (rc == MPI_SUCCESS) {
        obj_request_t *req;
        rc = coll_ineighbor_alltoallw(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                      rdispls, rt, comm, flags & ~MPI_COLL_F_CHECK, info,
                                      &req);
        if (rc == MPI_SUCCESS)
            *request = (MPI_Request)req;
    }
    free(st);
    free(rt);
    return rc;
}

static int alltoallw_int(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                         obj_comm_t *comm, unsigned flags, obj_info_t *info, MPI_Request *request)
{
    const obj_topo_t *t;
    conv_t c = { 0 };
    int rc = topo_of(comm, &t);
    if (rc == MPI_SUCCESS)
        rc = counts_conv(sendcounts, t->outdegree, "sendcounts", &c.sc);
    if (rc == MPI_SUCCESS)
        rc = counts_conv(recvcounts, t->indegree, "recvcounts", &c.rc);
    if (rc == MPI_SUCCESS)
        rc = alltoallw_c(sendbuf, c.sc, sdispls, sendtypes, recvbuf, c.rc, rdispls, recvtypes,
                         comm, flags, info, request);
    conv_free(&c);
    return rc;
}

MPI_COLL_BLOCKING(mpii_neighbor_alltoallw, alltoallw_int,
                  (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], obj_comm_t *comm),
                  (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, comm))

MPI_COLL_BLOCKING(mpii_neighbor_alltoallw_c, alltoallw_c,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], obj_comm_t *comm),
                  (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, comm))

int mpii_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                             const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                             void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], obj_comm_t *comm,
                             MPI_Request *request)
{
    return alltoallw_int(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm, 0, NULL, request);
}

int mpii_ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                               obj_comm_t *comm, MPI_Request *request)
{
    return alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                       recvtypes, comm, 0, NULL, request);
}

int mpii_neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], obj_comm_t *comm,
                                 obj_info_t *info, MPI_Request *request)
{
    return alltoallw_int(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm, MPI_COLL_PERSISTENT, info, request);
}

int mpii_neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                   obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    return alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                       recvtypes, comm, MPI_COLL_PERSISTENT, info, request);
}
