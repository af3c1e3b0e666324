/* coll nbc: schedules of the neighbourhood collectives (one round: every
 * receive and send, in the order of the topology's neighbour lists). */
#include "coll/nbc/nbc.h"

static int nbr_exchange(coll_sched_t *s, const coll_blocks_t *sb, const coll_blocks_t *rb,
                        const obj_topo_t *t)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < t->indegree; i++)
        if (t->in[i] != MPI_PROC_NULL)
            RAIL_CHECK(coll_sched_recv(s, coll_block(rb, i), rb->counts[i], rb->dts[i], t->in[i]));
    for (int k = 0; k < t->outdegree; k++) {
        int j = coll_nbr_send_block(t, k);
        if (t->out[j] != MPI_PROC_NULL)
            RAIL_CHECK(coll_sched_send(s, coll_block(sb, j), sb->counts[j], sb->dts[j], t->out[j]));
    }
fail:
    return rc;
}

static int nbr_any(coll_sched_t *s, const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                   const MPI_Aint *sdispls, MPI_Aint sstride, obj_datatype_t *sdt, void *rbuf,
                   MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *rdispls,
                   obj_datatype_t *rdt, obj_comm_t *comm)
{
    const obj_topo_t *t;
    int rc = coll_topo(comm, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_blocks_t sb = { 0 }, rb = { 0 };
    rc = coll_blocks_make(&sb, sbuf, t->outdegree, scount, scounts, sdispls, sstride, sdt);
    if (rc == MPI_SUCCESS)
        rc = coll_blocks_make(&rb, rbuf, t->indegree, rcount, rcounts, rdispls, rcount, rdt);
    if (rc == MPI_SUCCESS)
        rc = nbr_exchange(s, &sb, &rb, t);
    coll_blocks_free(&sb);
    coll_blocks_free(&rb);
    return rc;
}

int coll_nbc_build_neighbor_allgather(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                                      obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                                      obj_datatype_t *rdt, obj_comm_t *comm)
{
    return nbr_any(s, sbuf, scount, NULL, NULL, 0, sdt, rbuf, rcount, NULL, NULL, rdt, comm);
}

int coll_nbc_build_neighbor_allgatherv(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                                       obj_datatype_t *sdt, void *rbuf, const MPI_Count rcounts[],
                                       const MPI_Aint displs[], obj_datatype_t *rdt,
                                       obj_comm_t *comm)
{
    return nbr_any(s, sbuf, scount, NULL, NULL, 0, sdt, rbuf, 0, rcounts, displs, rdt, comm);
}

int coll_nbc_build_neighbor_alltoall(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                                     obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                                     obj_datatype_t *rdt, obj_comm_t *comm)
{
    return nbr_any(s, sbuf, scount, NULL, NULL, scount, sdt, rbuf, rcount, NULL, NULL, rdt, comm);
}

int coll_nbc_build_neighbor_alltoallv(coll_sched_t *s, const void *sbuf,
                                      const MPI_Count scounts[], const MPI_Aint sdispls[],
                                      obj_datatype_t *sdt, void *rbuf, const MPI_Count rcounts[],
                                      const MPI_Aint rdispls[], obj_datatype_t *rdt,
                                      obj_comm_t *comm)
{
    return nbr_any(s, sbuf, 0, scounts, sdispls, 0, sdt, rbuf, 0, rcounts, rdispls, rdt, comm);
}

int coll_nbc_build_neighbor_alltoallw(coll_sched_t *s, const void *sbuf,
                                      const MPI_Count scounts[], const MPI_Aint sdispls[],
                                      obj_datatype_t *const sdts[], void *rbuf,
                                      const MPI_Count rcounts[], const MPI_Aint rdispls[],
                                      obj_datatype_t *const rdts[], obj_comm_t *comm)
{
    const obj_topo_t *t;
    int rc = coll_topo(comm, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_blocks_t sb = { sbuf, scounts, sdispls, sdts, NULL };
    coll_blocks_t rb = { rbuf, rcounts, rdispls, rdts, NULL };
    return nbr_exchange(s, &sb, &rb, t);
}
