/* coll basic: neighbourhood collectives (every send and receive posted at
 * once, in the order of the topology's neighbour lists). */
#include "coll/basic/coll_basic.h"

/* Block i of rb from in[i], block j of sb to out[j]; MPI_PROC_NULL
 * neighbours are skipped (their receive block stays untouched). */
static int nbr_exchange(const coll_blocks_t *sb, const coll_blocks_t *rb, const obj_topo_t *t,
                        int tag, obj_comm_t *comm)
{
    int rc = MPI_SUCCESS;
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int i = 0; i < t->indegree && rc == MPI_SUCCESS; i++)
        if (t->in[i] != MPI_PROC_NULL)
            rc = coll_reqs_irecv(&b, coll_block(rb, i), rb->counts[i], rb->dts[i], t->in[i], tag,
                                 comm);
    for (int k = 0; k < t->outdegree && rc == MPI_SUCCESS; k++) {
        int j = coll_nbr_send_block(t, k);
        if (t->out[j] != MPI_PROC_NULL)
            rc = coll_reqs_isend(&b, coll_block(sb, j), sb->counts[j], sb->dts[j], t->out[j], tag,
                                 comm);
    }
    return coll_reqs_wait(&b, rc);
}

/* The vector forms: counts/displs in elements (NULL: count, i * count). */
static int nbr_any(const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                   const MPI_Aint *sdispls, MPI_Aint sstride, obj_datatype_t *sdt, void *rbuf,
                   MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *rdispls,
                   obj_datatype_t *rdt, obj_comm_t *comm)
{
    const obj_topo_t *t;
    int tag = coll_tag_next(comm);
    int rc = coll_topo(comm, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_blocks_t sb = { 0 }, rb = { 0 };
    rc = coll_blocks_make(&sb, sbuf, t->outdegree, scount, scounts, sdispls, sstride, sdt);
    if (rc == MPI_SUCCESS)
        rc = coll_blocks_make(&rb, rbuf, t->indegree, rcount, rcounts, rdispls, rcount, rdt);
    if (rc == MPI_SUCCESS)
        rc = nbr_exchange(&sb, &rb, t, tag, comm);
    coll_blocks_free(&sb);
    coll_blocks_free(&rb);
    return rc;
}

int coll_basic_neighbor_allgather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt,
                                  void *rbuf, MPI_Count rcount, obj_datatype_t *rdt,
                                  obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    return nbr_any(sbuf, scount, NULL, NULL, 0, sdt, rbuf, rcount, NULL, NULL, rdt, comm);
}

int coll_basic_neighbor_allgatherv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt,
                                   void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                                   obj_datatype_t *rdt, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    return nbr_any(sbuf, scount, NULL, NULL, 0, sdt, rbuf, 0, rcounts, displs, rdt, comm);
}

int coll_basic_neighbor_alltoall(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt,
                                 void *rbuf, MPI_Count rcount, obj_datatype_t *rdt,
                                 obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    return nbr_any(sbuf, scount, NULL, NULL, scount, sdt, rbuf, rcount, NULL, NULL, rdt, comm);
}

int coll_basic_neighbor_alltoallv(const void *sbuf, const MPI_Count scounts[],
                                  const MPI_Aint sdispls[], obj_datatype_t *sdt, void *rbuf,
                                  const MPI_Count rcounts[], const MPI_Aint rdispls[],
                                  obj_datatype_t *rdt, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    return nbr_any(sbuf, 0, scounts, sdispls, 0, sdt, rbuf, 0, rcounts, rdispls, rdt, comm);
}

int coll_basic_neighbor_alltoallw(const void *sbuf, const MPI_Count scounts[],
                                  const MPI_Aint sdispls[], obj_datatype_t *const sdts[],
                                  void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                                  obj_datatype_t *const rdts[], obj_comm_t *comm,
                                  coll_module_t *module)
{
    (void)module;
    const obj_topo_t *t;
    int tag = coll_tag_next(comm);
    int rc = coll_topo(comm, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_blocks_t sb = { sbuf, scounts, sdispls, sdts, NULL };
    coll_blocks_t rb = { rbuf, rcounts, rdispls, rdts, NULL };
    return nbr_exchange(&sb, &rb, t, tag, comm);
}
