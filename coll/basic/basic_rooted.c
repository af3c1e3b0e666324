/* coll basic: barrier, and the rooted data movements (bcast, gather(v),
 * scatter(v)), linear: the root talks to every other process. */
#include "coll/basic/coll_basic.h"

/* On an intercommunicator, the processes of the root's group other than the
 * root pass MPI_PROC_NULL and take no part. */
#define INTER_ROOT_GROUP_IDLE(comm, root) ((comm)->is_inter && (root) == MPI_PROC_NULL)

/* ------------------------------------------------------------ barrier */

int coll_basic_barrier(obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    int tag = coll_tag_next(comm), rc = MPI_SUCCESS;
    obj_datatype_t *byte = coll_byte_type();
    coll_reqs_t b;
    coll_reqs_init(&b);
    if (comm->is_inter) {
        /* Leave once every process of the other group has entered. */
        for (int i = 0; i < comm->remote_size && rc == MPI_SUCCESS; i++)
            rc = coll_reqs_irecv(&b, NULL, 0, byte, i, tag, comm);
        for (int i = 0; i < comm->remote_size && rc == MPI_SUCCESS; i++)
            rc = coll_reqs_isend(&b, NULL, 0, byte, i, tag, comm);
        return coll_reqs_wait(&b, rc);
    }
    if (comm->size == 1)
        return MPI_SUCCESS;
    if (comm->rank != 0) {
        rc = coll_send(NULL, 0, byte, 0, tag, comm);
        return rc == MPI_SUCCESS ? coll_recv(NULL, 0, byte, 0, tag, comm) : rc;
    }
    for (int i = 1; i < comm->size && rc == MPI_SUCCESS; i++)
        rc = coll_reqs_irecv(&b, NULL, 0, byte, i, tag, comm);
    rc = coll_reqs_wait(&b, rc);
    for (int i = 1; i < comm->size && rc == MPI_SUCCESS; i++)
        rc = coll_reqs_isend(&b, NULL, 0, byte, i, tag, comm);
    return coll_reqs_wait(&b, rc);
}

/* ------------------------------------------------------------ bcast */

int coll_basic_bcast(void *buf, MPI_Count count, obj_datatype_t *dt, int root, obj_comm_t *comm,
                     coll_module_t *module)
{
    (void)module;
    int tag = coll_tag_next(comm), rc = MPI_SUCCESS;
    if (INTER_ROOT_GROUP_IDLE(comm, root))
        return MPI_SUCCESS;
    bool am_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
    if (!am_root)
        return coll_recv_all(buf, count, dt, root, tag, comm);
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int i = 0; i < comm->remote_size && rc == MPI_SUCCESS; i++)
        if (comm->is_inter || i != comm->rank)
            rc = coll_reqs_isend(&b, buf, count, dt, i, tag, comm);
    return coll_reqs_wait(&b, rc);
}

/* ------------------------------------------------------------ gather */

/* The root's side of gather(v): block i of rbuf from peer i. */
static int gather_root(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                       MPI_Count rcount, const MPI_Count rcounts[], const MPI_Aint displs[],
                       obj_datatype_t *rdt, int tag, obj_comm_t *comm)
{
    int rc = MPI_SUCCESS;
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int i = 0; i < comm->remote_size && rc == MPI_SUCCESS; i++) {
        MPI_Count n = rcounts ? rcounts[i] : rcount;
        void *blk = coll_elem(rbuf, rdt, displs ? displs[i] : (MPI_Count)i * rcount);
        if (!comm->is_inter && i == comm->rank) {
            if (sbuf != MPI_IN_PLACE)
                rc = coll_copy(sbuf, scount, sdt, blk, n, rdt);
            continue;
        }
        rc = coll_reqs_irecv_all(&b, blk, n, rdt, i, tag, comm);   /* a short block: MPI_ERR_COUNT */
    }
    return coll_reqs_wait(&b, rc);
}

int coll_basic_gather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                      MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm,
                      coll_module_t *module)
{
    (void)module;
    int tag = coll_tag_next(comm);
    if (INTER_ROOT_GROUP_IDLE(comm, root))
        return MPI_SUCCESS;
    bool am_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
    if (!am_root)
        return coll_send(sbuf, scount, sdt, root, tag, comm);
    return gather_root(sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, tag, comm);
}

int coll_basic_gatherv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                       const MPI_Count rcounts[], const MPI_Aint displs[], obj_datatype_t *rdt,
                       int root, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    int tag = coll_tag_next(comm);
    if (INTER_ROOT_GROUP_IDLE(comm, root))
        return MPI_SUCCESS;
    bool am_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
    if (!am_root)
        return coll_send(sbuf, scount, sdt, root, tag, comm);
    return gather_root(sbuf, scount, sdt, rbuf, 0, rcounts, displs, rdt, tag, comm);
}

/* ------------------------------------------------------------ scatter */

static int scatter_root(const void *sbuf, MPI_Count scount, const MPI_Count scounts[],
                        const MPI_Aint displs[], obj_datatype_t *sdt, void *rbuf,
                        MPI_Count rcount, obj_datatype_t *rdt, int tag, obj_comm_t *comm)
{
    int rc = MPI_SUCCESS;
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int i = 0; i < comm->remote_size && rc == MPI_SUCCESS; i++) {
        MPI_Count n = scounts ? scounts[i] : scount;
        const void *blk = coll_elem(sbuf, sdt, displs ? displs[i] : (MPI_Count)i * scount);
        if (!comm->is_inter && i == comm->rank) {
            if (rbuf != MPI_IN_PLACE)
                rc = coll_copy(blk, n, sdt, rbuf, rcount, rdt);
            continue;
        }
        rc = coll_reqs_isend(&b, blk, n, sdt, i, tag, comm);
    }
    return coll_reqs_wait(&b, rc);
}

int coll_basic_scatter(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                       MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm,
                       coll_module_t *module)
{
    (void)module;
    int tag = coll_tag_next(comm);
    if (INTER_ROOT_GROUP_IDLE(comm, root))
        return MPI_SUCCESS;
    bool am_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
    if (!am_root)
        return coll_recv_all(rbuf, rcount, rdt, root, tag, comm);
    return scatter_root(sbuf, scount, NULL, NULL, sdt, rbuf, rcount, rdt, tag, comm);
}

int coll_basic_scatterv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                        obj_datatype_t *sdt, void *rbuf, MPI_Count rcount, obj_datatype_t *rdt,
                        int root, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    int tag = coll_tag_next(comm);
    if (INTER_ROOT_GROUP_IDLE(comm, root))
        return MPI_SUCCESS;
    bool am_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
    if (!am_root)
        return coll_recv_all(rbuf, rcount, rdt, root, tag, comm);
    return scatter_root(sbuf, 0, scounts, displs, sdt, rbuf, rcount, rdt, tag, comm);
}
