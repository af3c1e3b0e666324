/* coll basic: gather-to-all and all-to-all (allgather(v), alltoall(v,w)),
 * all through one exchange: every send and receive posted at once. */
#include "coll/basic/coll_basic.h"

#include <stdlib.h>

/* MPI_IN_PLACE all-to-all: pack the receive blocks to send (all but our
 * own) into one host staging buffer; *offs: offset of each block there. */
static int stage_blocks(const coll_blocks_t *r, int n, int me, char **tmp, MPI_Count **offs)
{
    MPI_Count total = 0;
    int rc = MPI_SUCCESS;
    *offs = malloc(((size_t)n + 1) * sizeof(**offs));
    if (!*offs)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory staging MPI_IN_PLACE data");
    for (int i = 0; i < n; i++) {
        (*offs)[i] = total;
        if (i != me)
            total += r->counts[i] * r->dts[i]->size;
    }
    *tmp = malloc((size_t)total + 1);
    if (!*tmp)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory staging %lld bytes of MPI_IN_PLACE data",
                        (long long)total);
    obj_datatype_t *byte = coll_byte_type();
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        if (i != me)
            rc = coll_copy(coll_block(r, i), r->counts[i], r->dts[i], *tmp + (*offs)[i],
                           r->counts[i] * r->dts[i]->size, byte);
    return rc;
}

int coll_basic_exchange(const coll_blocks_t *s, const coll_blocks_t *r, bool self_copy,
                        bool stage, int tag, obj_comm_t *comm)
{
    int n = comm->remote_size, me = comm->is_inter ? -1 : comm->rank, rc = MPI_SUCCESS;
    char *tmp = NULL;
    MPI_Count *offs = NULL;
    coll_reqs_t b;
    coll_reqs_init(&b);
    if (stage)
        rc = stage_blocks(r, n, me, &tmp, &offs);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        if (i != me)
            rc = coll_reqs_irecv(&b, coll_block(r, i), r->counts[i], r->dts[i], i, tag, comm);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        if (i == me)
            continue;
        if (stage)
            rc = coll_reqs_isend(&b, tmp + offs[i], r->counts[i] * r->dts[i]->size,
                                 coll_byte_type(), i, tag, comm);
        else
            rc = coll_reqs_isend(&b, coll_block(s, i), s->counts[i], s->dts[i], i, tag, comm);
    }
    if (rc == MPI_SUCCESS && me >= 0 && self_copy)
        rc = coll_copy(coll_block(s, me), s->counts[me], s->dts[me], coll_block(r, me), r->counts[me],
                       r->dts[me]);
    rc = coll_reqs_wait(&b, rc);
    free(tmp);
    free(offs);
    return rc;
}

/* ------------------------------------------------------------ allgather */

static int allgather_any(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                         MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *displs,
                         obj_datatype_t *rdt, obj_comm_t *comm)
{
    int tag = coll_tag_next(comm), n = comm->remote_size;
    coll_blocks_t s = { 0 }, r = { 0 };
    int rc = coll_blocks_make(&r, rbuf, n, rcount, rcounts, displs, rcount, rdt);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (rc == MPI_SUCCESS && inplace)   /* send our own block of rbuf to everyone */
        rc = coll_blocks_make(&s, coll_elem(rbuf, rdt, displs ? displs[comm->rank] :
                                                  (MPI_Count)comm->rank * rcount),
                                    n, rcounts ? rcounts[comm->rank] : rcount, NULL, NULL, 0, rdt);
    else if (rc == MPI_SUCCESS)
        rc = coll_blocks_make(&s, sbuf, n, scount, NULL, NULL, 0, sdt);
    if (rc == MPI_SUCCESS)
        rc = coll_basic_exchange(&s, &r, !inplace, false, tag, comm);
    coll_blocks_free(&s);
    coll_blocks_free(&r);
    return rc;
}

int coll_basic_allgather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                         MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                         coll_module_t *module)
{
    (void)module;
    return allgather_any(sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, comm);
}

int coll_basic_allgatherv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                          const MPI_Count rcounts[], const MPI_Aint displs[], obj_datatype_t *rdt,
                          obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    return allgather_any(sbuf, scount, sdt, rbuf, 0, rcounts, displs, rdt, comm);
}

/* ------------------------------------------------------------ alltoall */

static int alltoall_any(const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                        const MPI_Aint *sdispls, obj_datatype_t *sdt, void *rbuf,
                        MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *rdispls,
                        obj_datatype_t *rdt, obj_comm_t *comm)
{
    int tag = coll_tag_next(comm), n = comm->remote_size;
    coll_blocks_t s = { 0 }, r = { 0 };
    bool inplace = sbuf == MPI_IN_PLACE;
    int rc = coll_blocks_make(&r, rbuf, n, rcount, rcounts, rdispls, rcount, rdt);
    if (rc == MPI_SUCCESS && !inplace)
        rc = coll_blocks_make(&s, sbuf, n, scount, scounts, sdispls, scount, sdt);
    if (rc == MPI_SUCCESS)
        rc = coll_basic_exchange(&s, &r, !inplace, inplace, tag, comm);
    coll_blocks_free(&s);
    coll_blocks_free(&r);
    return rc;
}

int coll_basic_alltoall(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                        MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                        coll_module_t *module)
{
    (void)module;
    return alltoall_any(sbuf, scount, NULL, NULL, sdt, rbuf, rcount, NULL, NULL, rdt, comm);
}

int coll_basic_alltoallv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                         obj_datatype_t *sdt, void *rbuf, const MPI_Count rcounts[],
                         const MPI_Aint rdispls[], obj_datatype_t *rdt, obj_comm_t *comm,
                         coll_module_t *module)
{
    (void)module;
    return alltoall_any(sbuf, 0, scounts, sdispls, sdt, rbuf, 0, rcounts, rdispls, rdt, comm);
}

int coll_basic_alltoallw(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                         obj_datatype_t *const sdts[], void *rbuf, const MPI_Count rcounts[],
                         const MPI_Aint rdispls[], obj_datatype_t *const rdts[], obj_comm_t *comm,
                         coll_module_t *module)
{
    (void)module;
    int tag = coll_tag_next(comm);
    bool inplace = sbuf == MPI_IN_PLACE;
    coll_blocks_t s = { sbuf, scounts, sdispls, sdts, NULL };
    coll_blocks_t r = { rbuf, rcounts, rdispls, rdts, NULL };
    return coll_basic_exchange(&s, &r, !inplace, inplace, tag, comm);
}
