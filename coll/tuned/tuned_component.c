/*
 * coll tuned: the component.  Offers the blocking barrier, bcast, reduce,
 * allreduce, allgather, alltoall, reduce_scatter(_block), gather and
 * scatter of intracommunicators; everything else (nonblocking and
 * persistent forms, v/w variants, scans, neighbourhood and
 * intercommunicator collectives) is left to lower components.
 *
 * Each entry point takes the call's tag first (every process takes one
 * per call, whatever happens next), handles what needs no algorithm (one
 * process, no data), then runs the algorithm tuned_decide picks.
 */
#include "coll/tuned/tuned_impl.h"
#include "base/log.h"
#include "base/param.h"

static int tuned_priority;

static int tuned_register_params(void)
{
    int rc = rail_param_register_int("coll_tuned_priority", 30,
                                     "Priority of the tuned collective component (algorithms "
                                     "chosen by communicator and message size; negative: do "
                                     "not use)",
                                     RAIL_PARAM_LEVEL_TUNER, &tuned_priority);
    if (rc == MPI_SUCCESS)
        rc = rail_param_register_size("coll_tuned_alltoall_single_copy_min", (size_t)128 << 10,
                                      "On a node with more processes of the job than CPUs: "
                                      "MPI_Alltoall of blocks of at least this many bytes posts "
                                      "every exchange at once and moves each block by the "
                                      "btl's single-copy get (CMA on sm), which the receiver "
                                      "does alone (np 4 on 2 cores: 128 KiB to 4 MiB blocks "
                                      "10-40% faster than pairwise through the pipeline; 0: "
                                      "never).  Measured on one machine: bench alltoall at np 4",
                                      RAIL_PARAM_LEVEL_TUNER, &coll_tuned_alltoall_single_copy_min);
    if (rc == MPI_SUCCESS)
        rc = rail_param_set_flags("coll_tuned_alltoall_single_copy_min", RAIL_PARAM_F_MEASURED);
    if (rc == MPI_SUCCESS)
        rc = tuned_table_register_params();
    if (rc == MPI_SUCCESS)
        rc = tuned_decide_register_params();
    return rc;
}

static int run(coll_tuned_call_t *c)
{
    return tuned_decide(c)->fn(c);
}

/* Fill a call field by field (a zeroing initializer of the whole struct
 * costs more than the small collectives it describes). */
static inline void call_set(coll_tuned_call_t *c, int op, obj_comm_t *comm, const void *sbuf,
                            MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count count,
                            obj_datatype_t *dt, const MPI_Count *counts, obj_op_t *mop, int root)
{
    c->op = op;
    c->sbuf = sbuf;
    c->rbuf = rbuf;
    c->scount = scount;
    c->sdt = sdt;
    c->count = count;
    c->dt = dt;
    c->counts = counts;
    c->mop = mop;
    c->root = root;
    c->comm = comm;
    c->tag = coll_tag_next(comm);
    c->rank = comm->rank;
    c->size = comm->size;
    c->bytes = 0;
    c->param = 0;
    c->inplace = c->inplace_all = false;
}

/* The end of every entry point with data: nothing to do without bytes, a
 * local copy (unless in place) on one process, else the algorithm. */
static int run_or_local(coll_tuned_call_t *c, MPI_Count scount, obj_datatype_t *sdt,
                        MPI_Count rcount, obj_datatype_t *rdt)
{
    if (!c->bytes)
        return MPI_SUCCESS;
    if (c->size == 1)
        return c->inplace ? MPI_SUCCESS
                          : coll_copy(c->sbuf, scount, sdt, c->rbuf, rcount, rdt);
    return run(c);
}

/* ------------------------------------------------------------ entry points */

static int tuned_barrier(obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    coll_tuned_call_t c;
    call_set(&c, COLL_OP_barrier, comm, NULL, 0, NULL, NULL, 0, NULL, NULL, NULL, 0);
    return c.size > 1 ? run(&c) : MPI_SUCCESS;
}

static int tuned_bcast(void *buf, MPI_Count count, obj_datatype_t *dt, int root, obj_comm_t *comm,
                       coll_module_t *module)
{
    (void)module;
    coll_tuned_call_t c;
    call_set(&c, COLL_OP_bcast, comm, NULL, 0, NULL, buf, count, dt, NULL, NULL, root);
    c.bytes = (size_t)(count * dt->size);
    return c.size > 1 && c.bytes ? run(&c) : MPI_SUCCESS;
}

static int tuned_reduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                        obj_op_t *op, int root, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    coll_tuned_call_t c;
    call_set(&c, COLL_OP_reduce, comm, sbuf, 0, NULL, rbuf, count, dt, NULL, op, root);
    c.bytes = (size_t)(count * dt->size);
    c.inplace = sbuf == MPI_IN_PLACE;
    return run_or_local(&c, count, dt, count, dt);
}

static int tuned_allreduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                           obj_op_t *op, obj_comm_t *comm, coll_module_t *module)
{
    (void)module;
    coll_tuned_call_t c;
    call_set(&c, COLL_OP_allreduce, comm, sbuf, 0, NULL, rbuf, count, dt, NULL, op, 0);
    c.bytes = (size_t)(count * dt->size);
    c.inplace = c.inplace_all = sbuf == MPI_IN_PLACE;
    return run_or_local(&c, count, dt, count, dt);
}

static int tuned_allgather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                           MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                           coll_module_t *module)
{
    (void)module;
    coll_tuned_call_t c;
    call_set(&c, COLL_OP_allgather, comm, sbuf, scount, sdt, rbuf, rcount, rdt, NULL, NULL, 0);
    c.bytes = (size_t)(rcount * rdt->size);
    c.inplace = c.inplace_all = sbuf == MPI_IN_PLACE;
    return run_or_local(&c, scount, sdt, rcount, rdt);
}

static int tuned_alltoall(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                          MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                          coll_module_t *module)
{
    (void)module;
    coll_tuned_call_t c;
    call_set(&c, COLL_OP_alltoall, comm, sbuf, scount, sdt, rbuf, rcount, rdt, NULL, NULL, 0);
    c.bytes = (size_t)(rcount * rdt->size);
    c.inplace = c.inplace_all = sbuf == MPI_IN_PLACE;
    return run_or_local(&c, scount, sdt, rcount, rdt);
}

/* reduce_scatter and reduce_scatter_block: counts NULL means count each. */
static int reduce_scatter_any(int op, const void *sbuf, void *rbuf, const MPI_Count counts[],
                              MPI_Count count, obj_datatype_t *dt, obj_op_t *mop,
                              obj_comm_t *comm)
{
    coll_tuned_call_t c;
    call_set(&c, op, comm, sbuf, 0, NULL, rbuf, count, dt, counts, mop, 0);
    MPI_Count total = 0;
    for (int i = 0; i < c.size; i++)
        total += counts ? counts[i] : count;
    c.bytes = (size_t)(total * dt->size / c.size);
    c.inplace = c.inplace_all = sbuf == MPI_IN_PLACE;
    if (!total || !dt->size)
        return MPI_SUCCESS;
    if (c.size == 1)
        return c.inplace ? MPI_SUCCESS : coll_copy(sbuf, total, dt, rbuf, total, dt);
    return run(&c);
}

static int tuned_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count rcounts[],
                                obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm,
                                coll_module_t *module)
{
    (void)module;
    return reduce_scatter_any(COLL_OP_reduce_scatter, sbuf, rbuf, rcounts, 0, dt, op, comm);
}

static int tuned_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount,
                                      obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm,
                                      coll_module_t *module)
{
    (void)module;
    return reduce_scatter_any(COLL_OP_reduce_scatter_block, sbuf, rbuf, NULL, rcount, dt, op,
                              comm);
}

static int tuned_gather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                        MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm,
                        coll_module_t *module)
{
    (void)module;
    coll_tuned_call_t c;
    call_set(&c, COLL_OP_gather, comm, sbuf, scount, sdt, rbuf, rcount, rdt, NULL, NULL, root);
    bool am_root = c.rank == root;
    c.bytes = (size_t)(am_root ? rcount * rdt->size : scount * sdt->size);
    c.inplace = am_root && sbuf == MPI_IN_PLACE;
    return run_or_local(&c, scount, sdt, rcount, rdt);
}

static int tuned_scatter(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                         MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm,
                         coll_module_t *module)
{
    (void)module;
    coll_tuned_call_t c;
    call_set(&c, COLL_OP_scatter, comm, sbuf, scount, sdt, rbuf, rcount, rdt, NULL, NULL, root);
    bool am_root = c.rank == root;
    c.bytes = (size_t)(am_root ? scount * sdt->size : rcount * rdt->size);
    c.inplace = am_root && rbuf == MPI_IN_PLACE;
    return run_or_local(&c, scount, sdt, rcount, rdt);
}

/* ------------------------------------------------------------ the component */

extern const coll_component_t coll_tuned_component;


static coll_module_t tuned_module = {
    .component = &coll_tuned_component,
    .fns = {
        .barrier = tuned_barrier,
        .bcast = tuned_bcast,
        .reduce = tuned_reduce,
        .allreduce = tuned_allreduce,
        .allgather = tuned_allgather,
        .alltoall = tuned_alltoall,
        .reduce_scatter = tuned_reduce_scatter,
        .reduce_scatter_block = tuned_reduce_scatter_block,
        .gather = tuned_gather,
        .scatter = tuned_scatter,
    },
};

static coll_module_t *tuned_comm_query(obj_comm_t *comm, int *priority)
{
    if (comm->is_inter) {
        RAIL_VERBOSE(coll_verbose, 1, "coll tuned: not for intercommunicators");
        return NULL;
    }
    tuned_decide_init();
    *priority = tuned_priority;
    return &tuned_module;
}

const coll_component_t coll_tuned_component = {
    .name = "tuned",
    .register_params = tuned_register_params,
    .comm_query = tuned_comm_query,
};
