/* coll nbc: schedules of the reductions (reduce, allreduce,
 * reduce_scatter(_block), scan, exscan), combining in rank order. */
#include "coll/nbc/nbc.h"

#include <stdlib.h>

static const void *own(const void *sbuf, const void *rbuf)
{
    return sbuf == MPI_IN_PLACE ? rbuf : sbuf;
}

/* Round A: the operands of peers 0..n-1 into temporaries (peer `self`: a
 * copy of `mine`); round B (the caller's next round): combine them in rank
 * order.  *acc: the temporary holding the result after round B. */
static int operands_and_chain(coll_sched_t *s, const coll_red_t *r, int n, int self,
                              const void *mine, void **acc)
{
    int rc = MPI_SUCCESS;
    void **t = calloc((size_t)n + 1, sizeof(*t));
    if (!t)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory building a reduction schedule");
    for (int i = 0; i < n; i++) {
        t[i] = coll_sched_red_tmp(s, r->count);
        if (!t[i]) {
            rc = obj_errf(MPI_ERR_NO_MEM, "out of memory for %d reduction temporaries of %lld "
                          "elements", n, (long long)r->count);
            goto fail;
        }
        if (i == self)
            RAIL_CHECK(coll_sched_copy(s, mine, r->count, r->udt, t[i], r->count * r->factor,
                                       r->rdt));
        else
            RAIL_CHECK(coll_sched_recv_all(s, t[i], r->count * r->factor, r->rdt, i));
    }
    RAIL_CHECK(coll_sched_round(s));
    for (int i = n - 2; i >= 0; i--)
        RAIL_CHECK(coll_sched_reduce(s, t[i], t[n - 1], r->count));
    *acc = t[n - 1];
fail:
    free(t);
    return rc;
}

/* ------------------------------------------------------------ reduce */

static int reduce_root(coll_sched_t *s, const void *mine, void *rbuf, MPI_Count count,
                       obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm)
{
    coll_red_t *r;
    void *acc;
    int rc = coll_sched_red(s, op, dt, count, mine, rbuf, &r);
    if (rc != MPI_SUCCESS || count == 0)
        return rc;
    int self = comm->is_inter ? -1 : comm->rank;
    rc = operands_and_chain(s, r, comm->remote_size, self, mine, &acc);
    if (rc == MPI_SUCCESS)
        rc = coll_sched_copy(s, acc, count * r->factor, r->rdt, rbuf, count, r->udt);
    return rc;
}

int coll_nbc_build_reduce(coll_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count,
                          obj_datatype_t *dt, obj_op_t *op, int root, obj_comm_t *comm)
{
    if (comm->is_inter && root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    bool am_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
    if (!am_root)
        return count ? coll_sched_send(s, own(sbuf, rbuf), count, dt, root) : MPI_SUCCESS;
    return reduce_root(s, own(sbuf, rbuf), rbuf, count, dt, op, comm);
}

/* ------------------------------------------------------------ allreduce */

int coll_nbc_build_allreduce(coll_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count,
                             obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm)
{
    int rc = MPI_SUCCESS;
    if (count == 0)
        return MPI_SUCCESS;
    if (comm->is_inter) {
        for (int i = 0; i < comm->remote_size; i++)
            RAIL_CHECK(coll_sched_send(s, sbuf, count, dt, i));
        return reduce_root(s, sbuf, rbuf, count, dt, op, comm);
    }
    /* Reduce at 0, then 0 sends the result to everyone. */
    if (comm->rank != 0) {
        RAIL_CHECK(coll_sched_send(s, own(sbuf, rbuf), count, dt, 0));
        RAIL_CHECK(coll_sched_round(s));
        return coll_sched_recv_all(s, rbuf, count, dt, 0);
    }
    RAIL_CHECK(reduce_root(s, own(sbuf, rbuf), rbuf, count, dt, op, comm));
    for (int i = 1; i < comm->size; i++)
        RAIL_CHECK(coll_sched_send(s, rbuf, count, dt, i));
fail:
    return rc;
}

/* ------------------------------------------------------------ reduce_scatter */

static int reduce_scatter_any(coll_sched_t *s, const void *sbuf, void *rbuf,
                              const MPI_Count counts[], MPI_Count count, obj_datatype_t *dt,
                              obj_op_t *op, obj_comm_t *comm)
{
    int n = comm->size, me = comm->rank, rc = MPI_SUCCESS;
    MPI_Count total = 0, off = 0;
    for (int i = 0; i < n; i++) {
        if (i == me)
            off = total;
        total += counts ? counts[i] : count;
    }
    MPI_Count mycount = counts ? counts[me] : count;
    const void *mine = own(sbuf, rbuf);
    coll_red_t *r;
    void *acc;
    if (total == 0)
        return MPI_SUCCESS;
    RAIL_CHECK(coll_sched_red(s, op, dt, total, mine, rbuf, &r));
    if (comm->is_inter) {
        for (int i = 0; i < comm->remote_size; i++)
            RAIL_CHECK(coll_sched_send(s, sbuf, total, dt, i));
        RAIL_CHECK(operands_and_chain(s, r, comm->remote_size, -1, NULL, &acc));
        return coll_sched_copy(s, coll_red_at(r, acc, off), mycount * r->factor, r->rdt, rbuf,
                               mycount, r->udt);
    }
    if (me != 0) {
        RAIL_CHECK(coll_sched_send(s, mine, total, dt, 0));
        RAIL_CHECK(coll_sched_round(s));
        return coll_sched_recv_all(s, rbuf, mycount, dt, 0);
    }
    RAIL_CHECK(operands_and_chain(s, r, n, 0, mine, &acc));
    RAIL_CHECK(coll_sched_copy(s, acc, mycount * r->factor, r->rdt, rbuf, mycount, r->udt));
    MPI_Count o = mycount;
    for (int i = 1; i < n; i++) {
        MPI_Count c = counts ? counts[i] : count;
        RAIL_CHECK(coll_sched_send(s, coll_red_at(r, acc, o), c * r->factor, r->rdt, i));
        o += c;
    }
fail:
    return rc;
}

int coll_nbc_build_reduce_scatter(coll_sched_t *s, const void *sbuf, void *rbuf,
                                  const MPI_Count rcounts[], obj_datatype_t *dt, obj_op_t *op,
                                  obj_comm_t *comm)
{
    return reduce_scatter_any(s, sbuf, rbuf, rcounts, 0, dt, op, comm);
}

int coll_nbc_build_reduce_scatter_block(coll_sched_t *s, const void *sbuf, void *rbuf,
                                        MPI_Count rcount, obj_datatype_t *dt, obj_op_t *op,
                                        obj_comm_t *comm)
{
    return reduce_scatter_any(s, sbuf, rbuf, NULL, rcount, dt, op, comm);
}

/* ------------------------------------------------------------ scan, exscan */

static int scan_chain(coll_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count,
                      obj_datatype_t *dt, obj_op_t *op, bool exclusive, obj_comm_t *comm)
{
    int me = comm->rank, n = comm->size, rc = MPI_SUCCESS;
    const void *mine = own(sbuf, rbuf);
    coll_red_t *r;
    if (count == 0)
        return MPI_SUCCESS;
    RAIL_CHECK(coll_sched_red(s, op, dt, count, mine, rbuf, &r));
    MPI_Count rn = count * r->factor;
    void *acc = coll_sched_red_tmp(s, count);
    void *pre = me > 0 ? coll_sched_red_tmp(s, count) : NULL;
    if (!acc || (me > 0 && !pre))
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for scan temporaries");
    RAIL_CHECK(coll_sched_copy(s, mine, count, r->udt, acc, rn, r->rdt));
    if (me > 0)
        RAIL_CHECK(coll_sched_recv_all(s, pre, rn, r->rdt, me - 1));
    RAIL_CHECK(coll_sched_round(s));
    if (me > 0 && exclusive)
        RAIL_CHECK(coll_sched_copy(s, pre, rn, r->rdt, rbuf, count, r->udt));
    if (me > 0)
        RAIL_CHECK(coll_sched_reduce(s, pre, acc, count));
    if (!exclusive)
        RAIL_CHECK(coll_sched_copy(s, acc, rn, r->rdt, rbuf, count, r->udt));
    if (me < n - 1)
        RAIL_CHECK(coll_sched_send(s, acc, rn, r->rdt, me + 1));
fail:
    return rc;
}

int coll_nbc_build_scan(coll_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count,
                        obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm)
{
    return scan_chain(s, sbuf, rbuf, count, dt, op, false, comm);
}

int coll_nbc_build_exscan(coll_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count,
                          obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm)
{
    return scan_chain(s, sbuf, rbuf, count, dt, op, true, comm);
}
