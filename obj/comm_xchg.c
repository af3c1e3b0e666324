/*
 * Small internal exchanges for communicator construction, straight on the
 * point-to-point operations the pml hands over (obj/comm.h): bcast,
 * allgather and leader-to-leader sendrecv of a few bytes.
 *
 * They run on the collective context of the parent communicator with
 * NEGATIVE tags, which no collective component uses (coll/coll.h: tags >= 0)
 * and which no user receive can match (MPI_ANY_TAG matches tags >= 0 only;
 * user tags are >= 0).  So they need no collective component, work while a
 * communicator is being built, and never disturb anything else.  See the
 * tag ranges in obj/comm_int.h.  A participant set may be a subset of the
 * communicator (MPI_Comm_create_group) or the members of a group on the
 * bootstrap communicator (MPI_Comm_create_from_group).
 *
 * Trees are binomial over participant indices relative to the root.
 */
#include "obj/comm_int.h"

#include <stdlib.h>
#include <string.h>

/* Wait for the requests posted (NULL: none), all of them; the first error. */
static int waitall(int n, obj_request_t **reqs)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!reqs[i])
            continue;
        int e = comm_p2p()->wait(reqs[i], NULL);
        if (e != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = e;
        reqs[i] = NULL;
    }
    return rc;
}

comm_xchg_t comm_xchg_intra(obj_comm_t *comm)
{
    return (comm_xchg_t){ .comm = comm, .flags = OBJ_P2P_COLL, .tag = comm_tag_next(comm),
                          .n = comm->size, .me = comm->rank, .ranks = NULL };
}

static int rank_of(const comm_xchg_t *x, int idx)
{
    return x->ranks ? x->ranks[idx] : idx;
}

/* Relative index v <-> participant index, for a tree rooted at root. */
static int abs_of(const comm_xchg_t *x, int root, int v)
{
    return (v + root) % x->n;
}

int comm_xchg_send(const comm_xchg_t *x, int idx, const void *buf, size_t bytes)
{
    obj_request_t *req;
    int rc = comm_p2p()->isend(buf, bytes, rank_of(x, idx), x->tag, x->comm, x->flags, &req);
    return rc == MPI_SUCCESS ? comm_p2p()->wait(req, NULL) : rc;
}

int comm_xchg_recv(const comm_xchg_t *x, int idx, void *buf, size_t bytes)
{
    obj_req_status_t st;
    obj_request_t *req;
    int rc = comm_p2p()->irecv(buf, bytes, rank_of(x, idx), x->tag, x->comm, x->flags, &req);
    if (rc == MPI_SUCCESS)
        rc = comm_p2p()->wait(req, &st);
    if (rc == MPI_SUCCESS && (size_t)st.count != bytes)
        rc = obj_errf(MPI_ERR_INTERN, "internal exchange: %lld bytes where %zu were expected",
                      (long long)st.count, bytes);
    return rc;
}

int comm_xchg_bcast(const comm_xchg_t *x, int root, void *buf, size_t bytes)
{
    int v = (x->me - root + x->n) % x->n, rc = MPI_SUCCESS;
    int mask = 1;
    while (mask < x->n && !(v & mask))
        mask <<= 1;
    if (v != 0)
        rc = comm_xchg_recv(x, abs_of(x, root, v & ~mask), buf, bytes);
    for (mask >>= 1; rc == MPI_SUCCESS && mask > 0; mask >>= 1)
        if (v + mask < x->n)
            rc = comm_xchg_send(x, abs_of(x, root, v + mask), buf, bytes);
    return rc;
}

/* Binomial gather to index 0: all[i * rec] receives participant i's record. */
static int gather0(const comm_xchg_t *x, size_t rec, char *all)
{
    int me = x->me, rc = MPI_SUCCESS;
    for (int mask = 1; mask < x->n; mask <<= 1) {
        if (me & mask) {
            int have = RAIL_MIN(mask, x->n - me);
            return comm_xchg_send(x, me - mask, all + (size_t)me * rec, (size_t)have * rec);
        }
        if (me + mask < x->n) {
            int get = RAIL_MIN(mask, x->n - me - mask);
            rc = comm_xchg_recv(x, me + mask, all + (size_t)(me + mask) * rec, (size_t)get * rec);
            if (rc)
                return rc;
        }
    }
    return rc;
}

int comm_xchg_allgather(const comm_xchg_t *x, const void *mine, size_t rec, void *all)
{
    memcpy((char *)all + (size_t)x->me * rec, mine, rec);
    int rc = gather0(x, rec, all);
    if (rc == MPI_SUCCESS)
        rc = comm_xchg_bcast(x, 0, all, (size_t)x->n * rec);
    return rc;
}

int comm_xchg_sendrecv(obj_comm_t *comm, unsigned flags, int peer, int tag, const void *sbuf,
                       size_t sbytes, void *rbuf, size_t rbytes)
{
    obj_request_t *reqs[2] = {NULL, NULL};
    int rc = comm_p2p()->irecv(rbuf, rbytes, peer, tag, comm, flags, &reqs[0]);
    if (rc == MPI_SUCCESS)
        rc = comm_p2p()->isend(sbuf, sbytes, peer, tag, comm, flags, &reqs[1]);
    int rc2 = waitall(2, reqs);
    return rc ? rc : rc2;
}

int comm_xchg_barrier(const comm_xchg_t *x)
{
    char all[1] = {0};
    char *buf = x->n > 1 ? calloc((size_t)x->n, 1) : all;
    if (!buf)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int rc = comm_xchg_allgather(x, all, 1, buf);
    if (buf != all)
        free(buf);
    return rc;
}

int comm_xchg_alltoall_counts(const comm_xchg_t *x, const int *send, int *recv)
{
    int n = x->n, rc = MPI_SUCCESS;
    obj_request_t **reqs = calloc((size_t)2 * n, sizeof(*reqs));
    if (!reqs)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = comm_p2p()->irecv(&recv[i], sizeof(int), rank_of(x, i), x->tag, x->comm, x->flags,
                               &reqs[i]);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = comm_p2p()->isend(&send[i], sizeof(int), rank_of(x, i), x->tag, x->comm, x->flags,
                               &reqs[n + i]);
    int rc2 = waitall(2 * n, reqs);
    free(reqs);
    return rc ? rc : rc2;
}

int comm_xchg_alltoallv(const comm_xchg_t *x, const void *sbuf, const int *scounts,
                        const int *sdispls, void *rbuf, const int *rcounts, const int *rdispls,
                        size_t elem)
{
    int n = x->n, rc = MPI_SUCCESS;
    obj_request_t **reqs = calloc((size_t)2 * n, sizeof(*reqs));
    if (!reqs)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = comm_p2p()->irecv((char *)rbuf + (size_t)rdispls[i] * elem,
                               (size_t)rcounts[i] * elem, rank_of(x, i), x->tag, x->comm,
                               x->flags, &reqs[i]);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = comm_p2p()->isend((const char *)sbuf + (size_t)sdispls[i] * elem,
                               (size_t)scounts[i] * elem, rank_of(x, i), x->tag, x->comm,
                               x->flags, &reqs[n + i]);
    int rc2 = waitall(2 * n, reqs);
    free(reqs);
    return rc ? rc : rc2;
}
