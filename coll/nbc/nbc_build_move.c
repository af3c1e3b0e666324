/* coll nbc: schedules of the data movements (barrier, bcast, gather(v),
 * scatter(v), allgather(v), alltoall(v,w)); the algorithms of coll basic. */
#include "coll/nbc/nbc.h"

#define INTER_IDLE(comm, root) ((comm)->is_inter && (root) == MPI_PROC_NULL)

static bool am_root(const obj_comm_t *comm, int root)
{
    return comm->is_inter ? root == MPI_ROOT : comm->rank == root;
}

/* ------------------------------------------------------------ barrier */

int coll_nbc_build_barrier(coll_sched_t *s, obj_comm_t *comm)
{
    obj_datatype_t *byte = coll_byte_type();
    int rc = MPI_SUCCESS, n = comm->size, me = comm->rank;
    if (comm->is_inter) {
        for (int i = 0; i < comm->remote_size; i++) {
            RAIL_CHECK(coll_sched_recv(s, NULL, 0, byte, i));
            RAIL_CHECK(coll_sched_send(s, NULL, 0, byte, i));
        }
        return MPI_SUCCESS;
    }
    /* Dissemination: in round k, tell me+2^k, hear from me-2^k. */
    for (int d = 1; d < n; d <<= 1) {
        RAIL_CHECK(coll_sched_recv(s, NULL, 0, byte, (me - d + n) % n));
        RAIL_CHECK(coll_sched_send(s, NULL, 0, byte, (me + d) % n));
        RAIL_CHECK(coll_sched_round(s));
    }
fail:
    return rc;
}

/* ------------------------------------------------------------ rooted */

int coll_nbc_build_bcast(coll_sched_t *s, void *buf, MPI_Count count, obj_datatype_t *dt,
                         int root, obj_comm_t *comm)
{
    int rc = MPI_SUCCESS;
    if (INTER_IDLE(comm, root))
        return MPI_SUCCESS;
    if (!am_root(comm, root))
        return coll_sched_recv_all(s, buf, count, dt, root);
    for (int i = 0; i < comm->remote_size; i++)
        if (comm->is_inter || i != comm->rank)
            RAIL_CHECK(coll_sched_send(s, buf, count, dt, i));
fail:
    return rc;
}

static int gather_root(coll_sched_t *s, const void *sbuf, MPI_Count scount, obj_datatype_t *sdt,
                       void *rbuf, MPI_Count rcount, const MPI_Count rcounts[],
                       const MPI_Aint displs[], obj_datatype_t *rdt, obj_comm_t *comm)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < comm->remote_size; i++) {
        MPI_Count n = rcounts ? rcounts[i] : rcount;
        void *blk = coll_elem(rbuf, rdt, displs ? displs[i] : (MPI_Count)i * rcount);
        if (comm->is_inter || i != comm->rank)
            RAIL_CHECK(coll_sched_recv_all(s, blk, n, rdt, i));   /* short: MPI_ERR_COUNT */
        else if (sbuf != MPI_IN_PLACE)
            RAIL_CHECK(coll_sched_copy(s, sbuf, scount, sdt, blk, n, rdt));
    }
fail:
    return rc;
}

int coll_nbc_build_gather(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                          obj_datatype_t *sdt, void *rbuf, MPI_Count rcount, obj_datatype_t *rdt,
                          int root, obj_comm_t *comm)
{
    if (INTER_IDLE(comm, root))
        return MPI_SUCCESS;
    if (!am_root(comm, root))
        return coll_sched_send(s, sbuf, scount, sdt, root);
    return gather_root(s, sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, comm);
}

int coll_nbc_build_gatherv(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                           obj_datatype_t *sdt, void *rbuf, const MPI_Count rcounts[],
                           const MPI_Aint displs[], obj_datatype_t *rdt, int root,
                           obj_comm_t *comm)
{
    if (INTER_IDLE(comm, root))
        return MPI_SUCCESS;
    if (!am_root(comm, root))
        return coll_sched_send(s, sbuf, scount, sdt, root);
    return gather_root(s, sbuf, scount, sdt, rbuf, 0, rcounts, displs, rdt, comm);
}

static int scatter_root(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                        const MPI_Count scounts[], const MPI_Aint displs[], obj_datatype_t *sdt,
                        void *rbuf, MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < comm->remote_size; i++) {
        MPI_Count n = scounts ? scounts[i] : scount;
        const void *blk = coll_elem(sbuf, sdt, displs ? displs[i] : (MPI_Count)i * scount);
        if (comm->is_inter || i != comm->rank)
            RAIL_CHECK(coll_sched_send(s, blk, n, sdt, i));
        else if (rbuf != MPI_IN_PLACE)
            RAIL_CHECK(coll_sched_copy(s, blk, n, sdt, rbuf, rcount, rdt));
    }
fail:
    return rc;
}

int coll_nbc_build_scatter(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                           obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                           obj_datatype_t *rdt, int root, obj_comm_t *comm)
{
    if (INTER_IDLE(comm, root))
        return MPI_SUCCESS;
    if (!am_root(comm, root))
        return coll_sched_recv_all(s, rbuf, rcount, rdt, root);
    return scatter_root(s, sbuf, scount, NULL, NULL, sdt, rbuf, rcount, rdt, comm);
}

int coll_nbc_build_scatterv(coll_sched_t *s, const void *sbuf, const MPI_Count scounts[],
                            const MPI_Aint displs[], obj_datatype_t *sdt, void *rbuf,
                            MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm)
{
    if (INTER_IDLE(comm, root))
        return MPI_SUCCESS;
    if (!am_root(comm, root))
        return coll_sched_recv_all(s, rbuf, rcount, rdt, root);
    return scatter_root(s, sbuf, 0, scounts, displs, sdt, rbuf, rcount, rdt, comm);
}

/* ------------------------------------------------------------ exchanges */

/* Block i of sb to peer i, block i of rb from it (peers: the remote group of
 * an intercommunicator).  self_copy: copy our own block locally; stage: the
 * MPI_IN_PLACE all-to-all, whose send blocks are the receive blocks: they
 * are packed into a temporary first (local actions run before the round's
 * receives are posted). */
static int exchange(coll_sched_t *s, const coll_blocks_t *sb, const coll_blocks_t *rb,
                    bool self_copy, bool stage, obj_comm_t *comm)
{
    int rc = MPI_SUCCESS, n = comm->remote_size, me = comm->is_inter ? -1 : comm->rank;
    obj_datatype_t *byte = coll_byte_type();
    char *tmp = NULL;
    if (stage) {
        size_t total = 0;
        for (int i = 0; i < n; i++)
            if (i != me)
                total += (size_t)(rb->counts[i] * rb->dts[i]->size);
        tmp = coll_sched_host_tmp(s, total);
        if (!tmp)
            return obj_errf(MPI_ERR_NO_MEM, "out of memory staging %zu bytes of MPI_IN_PLACE "
                            "data", total);
    }
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        if (i == me) {
            if (self_copy)
                RAIL_CHECK(coll_sched_copy(s, coll_block(sb, i), sb->counts[i], sb->dts[i],
                                           coll_block(rb, i), rb->counts[i], rb->dts[i]));
            continue;
        }
        RAIL_CHECK(coll_sched_recv(s, coll_block(rb, i), rb->counts[i], rb->dts[i], i));
        if (stage) {
            MPI_Count bytes = rb->counts[i] * rb->dts[i]->size;
            RAIL_CHECK(coll_sched_copy(s, coll_block(rb, i), rb->counts[i], rb->dts[i],
                                       tmp + off, bytes, byte));
            RAIL_CHECK(coll_sched_send(s, tmp + off, bytes, byte, i));
            off += (size_t)bytes;
        } else {
            RAIL_CHECK(coll_sched_send(s, coll_block(sb, i), sb->counts[i], sb->dts[i], i));
        }
    }
fail:
    return rc;
}

static int allgather_any(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                         obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                         const MPI_Count *rcounts, const MPI_Aint *displs, obj_datatype_t *rdt,
                         obj_comm_t *comm)
{
    int n = comm->remote_size, me = comm->rank;
    coll_blocks_t sb = { 0 }, rb = { 0 };
    bool inplace = sbuf == MPI_IN_PLACE;
    int rc = coll_blocks_make(&rb, rbuf, n, rcount, rcounts, displs, rcount, rdt);
    if (rc == MPI_SUCCESS && inplace)
        rc = coll_blocks_make(&sb, coll_elem(rbuf, rdt, displs ? displs[me] : me * rcount), n,
                              rcounts ? rcounts[me] : rcount, NULL, NULL, 0, rdt);
    else if (rc == MPI_SUCCESS)
        rc = coll_blocks_make(&sb, sbuf, n, scount, NULL, NULL, 0, sdt);
    if (rc == MPI_SUCCESS)
        rc = exchange(s, &sb, &rb, !inplace, false, comm);
    coll_blocks_free(&sb);
    coll_blocks_free(&rb);
    return rc;
}

int coll_nbc_build_allgather(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                             obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                             obj_datatype_t *rdt, obj_comm_t *comm)
{
    return allgather_any(s, sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, comm);
}

int coll_nbc_build_allgatherv(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                              obj_datatype_t *sdt, void *rbuf, const MPI_Count rcounts[],
                              const MPI_Aint displs[], obj_datatype_t *rdt, obj_comm_t *comm)
{
    return allgather_any(s, sbuf, scount, sdt, rbuf, 0, rcounts, displs, rdt, comm);
}

static int alltoall_any(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                        const MPI_Count *scounts, const MPI_Aint *sdispls, obj_datatype_t *sdt,
                        void *rbuf, MPI_Count rcount, const MPI_Count *rcounts,
                        const MPI_Aint *rdispls, obj_datatype_t *rdt, obj_comm_t *comm)
{
    int n = comm->remote_size;
    coll_blocks_t sb = { 0 }, rb = { 0 };
    bool inplace = sbuf == MPI_IN_PLACE;
    int rc = coll_blocks_make(&rb, rbuf, n, rcount, rcounts, rdispls, rcount, rdt);
    if (rc == MPI_SUCCESS && !inplace)
        rc = coll_blocks_make(&sb, sbuf, n, scount, scounts, sdispls, scount, sdt);
    if (rc == MPI_SUCCESS)
        rc = exchange(s, &sb, &rb, !inplace, inplace, comm);
    coll_blocks_free(&sb);
    coll_blocks_free(&rb);
    return rc;
}

int coll_nbc_build_alltoall(coll_sched_t *s, const void *sbuf, MPI_Count scount,
                            obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                            obj_datatype_t *rdt, obj_comm_t *comm)
{
    return alltoall_any(s, sbuf, scount, NULL, NULL, sdt, rbuf, rcount, NULL, NULL, rdt, comm);
}

int coll_nbc_build_alltoallv(coll_sched_t *s, const void *sbuf, const MPI_Count scounts[],
                             const MPI_Aint sdispls[], obj_datatype_t *sdt, void *rbuf,
                             const MPI_Count rcounts[], const MPI_Aint rdispls[],
                             obj_datatype_t *rdt, obj_comm_t *comm)
{
    return alltoall_any(s, sbuf, 0, scounts, sdispls, sdt, rbuf, 0, rcounts, rdispls, rdt, comm);
}

int coll_nbc_build_alltoallw(coll_sched_t *s, const void *sbuf, const MPI_Count scounts[],
                             const MPI_Aint sdispls[], obj_datatype_t *const sdts[], void *rbuf,
                             const MPI_Count rcounts[], const MPI_Aint rdispls[],
                             obj_datatype_t *const rdts[], obj_comm_t *comm)
{
    bool inplace = sbuf == MPI_IN_PLACE;
    coll_blocks_t sb = { sbuf, scounts, sdispls, sdts, NULL };
    coll_blocks_t rb = { rbuf, rcounts, rdispls, rdts, NULL };
    return exchange(s, &sb, &rb, !inplace, inplace, comm);
}
