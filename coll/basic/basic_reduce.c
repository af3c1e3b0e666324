/* coll basic: reductions (reduce, allreduce, reduce_scatter(_block), scan,
 * exscan), combining operands in rank order (see coll_util.h). */
#include "coll/basic/coll_basic.h"

#include <stdlib.h>

/* Operand of peer i into temporary t. */
static int operand(const coll_red_t *r, int i, int self, const void *mine, void *t, int tag,
                   obj_comm_t *comm)
{
    if (i == self)
        return coll_red_load(r, t, mine, r->count);
    return coll_recv_all(t, r->count * r->factor, r->rdt, i, tag, comm);
}

int coll_basic_reduce_ordered(const coll_red_t *r, int n, int self, const void *mine, int tag,
                              obj_comm_t *comm, void **acc, void **mem)
{
    void *tmem = NULL;
    void *a = coll_red_tmp(r, r->count, mem);
    void *t = n > 1 ? coll_red_tmp(r, r->count, &tmem) : NULL;
    int rc = MPI_SUCCESS;
    if (!a || (n > 1 && !t)) {
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory for reduction temporaries (%lld elements)",
                      (long long)r->count);
        if (a)
            coll_red_tmp_free(r, *mem);
        *mem = NULL;
        a = NULL;
        goto out;
    }
    rc = operand(r, n - 1, self, mine, a, tag, comm);
    for (int i = n - 2; i >= 0; i--) {
        COLL_KEEP(operand(r, i, self, mine, t, tag, comm));
        if (rc == MPI_SUCCESS)
            rc = coll_red_apply(r, t, a, r->count);
    }
out:
    coll_red_tmp_free(r, tmem);
    *acc = a;
    return rc;
}

/* The process's own operand: sbuf, or rbuf with MPI_IN_PLACE. */
static const void *own(const void *sbuf, const void *rbuf)
{
    return sbuf == MPI_IN_PLACE ? rbuf : sbuf;
}

/* ------------------------------------------------------------ reduce */

/* Reduce at root (a rank of an intracommunicator, or MPI_ROOT) into rbuf. */
static int reduce_root(const void *mine, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                       obj_op_t *op, int tag, obj_comm_t *comm)
{
    coll_red_t r;
    void *acc, *mem = NULL;
    int rc = coll_red_init(&r, op, dt, count, mine, rbuf);
    if (rc != MPI_SUCCESS || count == 0)
        return rc;
    int self = comm->is_inter ? -1 : comm->rank;
    rc = coll_basic_reduce_ordered(&r, comm->remote_size, self, mine, tag, comm, &acc, &mem);
    if (rc == MPI_SUCCESS)
        rc = coll_red_store(&r, rbuf, acc, count);
    coll_red_tmp_free(&r, mem);
    return rc;
}

int coll_basic_reduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                      obj_op_t *op, int root, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    int tag = coll_tag_next(comm);
    if (comm->is_inter && root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    bool am_root = comm->is_inter ? root == MPI_ROOT : comm->rank == root;
    if (!am_root)
        return count ? coll_send(own(sbuf, rbuf), count, dt, root, tag, comm) : MPI_SUCCESS;
    return reduce_root(own(sbuf, rbuf), rbuf, count, dt, op, tag, comm);
}

/* ------------------------------------------------------------ allreduce */

/* Intercommunicator: this group's result is the reduction of the other
 * group's operands; everyone sends its operand to every remote process. */
static int allreduce_inter(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                           obj_op_t *op, int tag, obj_comm_t *comm)
{
    coll_reqs_t b;
    coll_reqs_init(&b);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < comm->remote_size && rc == MPI_SUCCESS; i++)
        rc = coll_reqs_isend(&b, sbuf, count, dt, i, tag, comm);
    if (rc == MPI_SUCCESS)
        rc = reduce_root(sbuf, rbuf, count, dt, op, tag, comm);
    return coll_reqs_wait(&b, rc);
}

int coll_basic_allreduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                         obj_op_t *op, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    int tag = coll_tag_next(comm), rc;
    if (count == 0)
        return MPI_SUCCESS;
    if (comm->is_inter)
        return allreduce_inter(sbuf, rbuf, count, dt, op, tag, comm);
    /* Reduce at 0, then 0 sends the result to everyone (same tag: the
     * messages go the other way). */
    if (comm->rank != 0) {
        rc = coll_send(own(sbuf, rbuf), count, dt, 0, tag, comm);
        COLL_KEEP(coll_recv_all(rbuf, count, dt, 0, tag, comm));
        return rc;
    }
    rc = reduce_root(own(sbuf, rbuf), rbuf, count, dt, op, tag, comm);
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int i = 1; i < comm->size; i++)   /* (after an error too: nobody waits for ever) */
        COLL_KEEP(coll_reqs_isend(&b, rbuf, count, dt, i, tag, comm));
    return coll_reqs_wait(&b, rc);
}

/* ------------------------------------------------------------ reduce_scatter */

/* counts: the local group's receive counts (NULL: count for everyone). */
static int reduce_scatter_any(const void *sbuf, void *rbuf, const MPI_Count counts[],
                              MPI_Count count, obj_datatype_t *dt, obj_op_t *op,
                              obj_comm_t *comm)
{
    int tag = coll_tag_next(comm), n = comm->size, me = comm->rank, rc = MPI_SUCCESS;
    MPI_Count total = 0, off = 0;
    for (int i = 0; i < n; i++) {
        if (i == me)
            off = total;
        total += counts ? counts[i] : count;
    }
    MPI_Count mycount = counts ? counts[me] : count;
    const void *mine = own(sbuf, rbuf);
    if (total == 0)
        return MPI_SUCCESS;
    coll_red_t r;
    coll_reqs_t b;
    void *acc = NULL, *mem = NULL;
    coll_reqs_init(&b);
    rc = coll_red_init(&r, op, dt, total, mine, rbuf);
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm->is_inter) {
        /* Reduce the other group's vectors here, keep our segment. */
        for (int i = 0; i < comm->remote_size && rc == MPI_SUCCESS; i++)
            rc = coll_reqs_isend(&b, sbuf, total, dt, i, tag, comm);
        if (rc == MPI_SUCCESS)
            rc = coll_basic_reduce_ordered(&r, comm->remote_size, -1, NULL, tag, comm, &acc, &mem);
        if (rc == MPI_SUCCESS)
            rc = coll_red_store(&r, rbuf, coll_red_at(&r, acc, off), mycount);
        rc = coll_reqs_wait(&b, rc);
        coll_red_tmp_free(&r, mem);
        return rc;
    }
    if (me != 0) {
        rc = coll_send(mine, total, dt, 0, tag, comm);
        COLL_KEEP(coll_recv_all(rbuf, mycount, dt, 0, tag, comm));
        return rc;
    }
    rc = coll_basic_reduce_ordered(&r, n, 0, mine, tag, comm, &acc, &mem);
    MPI_Count o = counts ? counts[0] : count;
    for (int i = 1; i < n && acc; i++) {   /* (after an error too: nobody waits for ever) */
        MPI_Count c = counts ? counts[i] : count;
        COLL_KEEP(coll_reqs_isend(&b, coll_red_at(&r, acc, o), c * r.factor, r.rdt, i, tag,
                                  comm));
        o += c;
    }
    if (rc == MPI_SUCCESS)
        rc = coll_red_store(&r, rbuf, acc, mycount);
    rc = coll_reqs_wait(&b, rc);
    coll_red_tmp_free(&r, mem);
    return rc;
}

int coll_basic_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count rcounts[],
                              obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm,
                              coll_module_t *module)
{
    (void)module;
    return reduce_scatter_any(sbuf, rbuf, rcounts, 0, dt, op, comm);
}

int coll_basic_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount,
                                    obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm,
                                    coll_module_t *module)
{
    (void)module;
    return reduce_scatter_any(sbuf, rbuf, NULL, rcount, dt, op, comm);
}

/* ------------------------------------------------------------ scan, exscan */

/* A chain: rank i receives the prefix of ranks 0..i-1 from i-1, combines
 * it with its operand and passes the new prefix to i+1. */
static int scan_chain(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                      obj_op_t *op, bool exclusive, obj_comm_t *comm)
{
    int tag = coll_tag_next(comm), me = comm->rank, n = comm->size;
    const void *mine = own(sbuf, rbuf);
    coll_red_t r;
    void *amem = NULL, *pmem = NULL;
    if (count == 0)
        return MPI_SUCCESS;
    int rc = coll_red_init(&r, op, dt, count, mine, rbuf);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The ends fold nothing, and a prefix crosses as count elements of dt
     * or of the temporaries' type alike (the same type signature): rank 0
     * sends its operand as it is; the last rank of an exscan receives its
     * result where it belongs (np 2, 64 KiB: 10.3-10.6 us -> 5.2-7.7, two
     * copies and a fold fewer; Open MPI 5.6-6.4). */
    if (me == 0) {
        if (n > 1)
            rc = coll_send(mine, count, dt, 1, tag, comm);
        if (rc == MPI_SUCCESS && !exclusive && sbuf != MPI_IN_PLACE)
            rc = coll_copy(sbuf, count, dt, rbuf, count, dt);
        return rc;
    }
    if (exclusive && me == n - 1)
        return coll_recv_all(rbuf, count, dt, me - 1, tag, comm);
    void *acc = coll_red_tmp(&r, count, &amem);
    void *pre = coll_red_tmp(&r, count, &pmem);
    if (!acc || !pre) {
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory for scan temporaries");
        goto out;
    }
    /* (after an error the prefix still goes on: nobody waits for ever) */
    rc = coll_red_load(&r, acc, mine, count);
    COLL_KEEP(coll_recv_all(pre, count * r.factor, r.rdt, me - 1, tag, comm));
    if (rc == MPI_SUCCESS && exclusive)
        rc = coll_red_store(&r, rbuf, pre, count);
    if (rc == MPI_SUCCESS)
        rc = coll_red_apply(&r, pre, acc, count);
    if (me < n - 1)
        COLL_KEEP(coll_send(acc, count * r.factor, r.rdt, me + 1, tag, comm));
    if (rc == MPI_SUCCESS && !exclusive)
        rc = coll_red_store(&r, rbuf, acc, count);
out:
    coll_red_tmp_free(&r, amem);
    coll_red_tmp_free(&r, pmem);
    return rc;
}

int coll_basic_scan(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                    obj_op_t *op, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    return scan_chain(sbuf, rbuf, count, dt, op, false, comm);
}

int coll_basic_exscan(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                      obj_op_t *op, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    return scan_chain(sbuf, rbuf, count, dt, op, true, comm);
}
