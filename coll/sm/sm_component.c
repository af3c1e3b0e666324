/* coll sm: the component (which communicators, the module; its parameters
 * are in sm_params.c), the hand-off to the next module, and moving packed
 * bytes of user data. */
#include "coll/sm/coll_sm.h"
#include "accel/accel.h"
#include "accel/accel_dt.h"
#include "base/copy.h"
#include "base/log.h"
#include "obj/err.h"
#include "runtime/rte.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ module */

static void sm_release(coll_module_t *module, obj_comm_t *comm)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    coll_sm_segment_keep(m, comm);
    free(m->scratch);
    free(m->cma_buf);
    free(m->dev_ptr);
    free(m->dev_held);
    free(m->dev_in);
    free(m->dev_cdst);
    free(m->dev_one);
    free(m->dev_clen);
    if (m->dev_stream != NULL)
        accel_stream_destroy(m->dev_stream);
    free(m->small_seen);
    free(m->small_starts);
    free(m->small_x);
    free(m->bulk_t);
    free(m);
}

static int peer_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Whether every member of comm runs on this node. */
static bool sm_all_local(const obj_comm_t *comm)
{
    for (int i = 0; i < comm->size; i++) {
        int w = obj_group_world_rank(comm->group, i);
        if (!bsearch(&w, rte_info.local_peers, (size_t)rte_info.local_size, sizeof(int),
                     peer_cmp))
            return false;
    }
    return true;
}

static coll_module_t *sm_comm_query(obj_comm_t *comm, int *priority)
{
    if (comm->is_inter || comm->size < 2 || !rte_info.local_peers || !sm_all_local(comm)) {
        RAIL_VERBOSE(coll_sm_verbosity(), 3, "coll sm: not for communicator %s (%s)",
                     comm->name[0] ? comm->name : "(unnamed)",
                     comm->is_inter ? "intercommunicator"
                     : comm->size < 2 ? "a single process" : "processes on other nodes");
        return NULL;
    }
    coll_sm_module_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->super = (coll_module_t){
        .component = &coll_sm_component,
        .fns = {
            .barrier = coll_sm_barrier,
            .bcast = coll_sm_bcast,
            .reduce = coll_sm_reduce,
            .allreduce = coll_sm_allreduce,
            .reduce_scatter = coll_sm_reduce_scatter,
            .reduce_scatter_block = coll_sm_reduce_scatter_block,
            .scan = coll_sm_scan,
            .exscan = coll_sm_exscan,
            .gather = coll_sm_gather,
            .scatter = coll_sm_scatter,
            .allgather = coll_sm_allgather,
            .allgatherv = coll_sm_allgatherv,
            .gatherv = coll_sm_gatherv,
            .scatterv = coll_sm_scatterv,
            .alltoall = coll_sm_alltoall,
        },
        .release = sm_release,
    };
    m->n = comm->size;
    m->me = comm->rank;
    m->degree = RAIL_MAX(coll_sm_params.tree_degree, 1);
    m->oversub = rte_info.oversubscribed;
    *priority = coll_sm_params.priority;
    return &m->super;
}

const coll_component_t coll_sm_component = {
    .name = "sm",
    .register_params = coll_sm_register_params,
    .comm_query = sm_comm_query,
};

/* ------------------------------------------------------------ hand-off */

coll_module_t *coll_sm_next(obj_comm_t *comm, int op, coll_module_t *module, const char *why)
{
    coll_module_t *next = coll_next_module(comm, op, module);
    if (!next) {
        obj_errf(MPI_ERR_UNSUPPORTED_OPERATION,
                 "coll sm cannot serve this %s (%s) and no component below it offers it",
                 coll_op_name(op), why);
        return NULL;
    }
    RAIL_VERBOSE(coll_sm_verbosity(), 2, "coll sm: %s on %s handed to %s: %s", coll_op_name(op),
                 comm->name[0] ? comm->name : "(unnamed)", next->component->name, why);
    return next;
}

/* ------------------------------------------------------------ user data */

static int sm_copy_cb(void *dst, const void *src, size_t len, void *ctx)
{
    (void)ctx;
    return accel_copy(dst, src, len, NULL);
}

void coll_sm_data_init(coll_sm_data_t *d, const void *buf, MPI_Count count,
                       const obj_datatype_t *dt)
{
    d->dt = dt;
    d->buf = buf;
    d->count = count;
    d->bytes = (size_t)(count * dt->size);
    d->device = coll_is_device(buf, count, dt);
    d->contig = rail_dt_contig_ptr(dt->layout, count, buf);
    d->stream = false;
}

static int sm_move(const coll_sm_data_t *d, size_t off, void *shm, size_t len, bool pack)
{
    if (len == 0)
        return MPI_SUCCESS;
    if (d->contig) {
        char *u = d->contig + off;
        if (d->device)
            return accel_copy(pack ? shm : u, pack ? u : shm, len, NULL);
        if (pack)
            rail_copy_shared(shm, u, len, d->stream);
        else
            rail_copy(u, shm, len);
        return MPI_SUCCESS;
    }
    struct rail_dt_cursor cur;
    int rc = rail_dt_cursor_init(&cur, d->dt->layout, d->count, d->buf);
    if (rc != MPI_SUCCESS)
        return rc;
    rail_dt_cursor_seek(&cur, off);
    size_t done;
    if (d->device) {
        /* pieces gathered / scattered on the device, one copy to the segment */
        const void *like = (const char *)d->buf + d->dt->true_lb;
        rail_dt_cursor_set_copy(&cur, sm_copy_cb, NULL);
        done = pack ? accel_dt_pack(&cur, shm, len, like) : accel_dt_unpack(&cur, shm, len, like);
    } else {
        done = pack ? rail_dt_pack(&cur, shm, len) : rail_dt_unpack(&cur, shm, len);
    }
    if (done != len)
        return rail_dt_cursor_status(&cur) != MPI_SUCCESS ? rail_dt_cursor_status(&cur)
                                                         : MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

int coll_sm_pack(const coll_sm_data_t *d, size_t off, void *dst, size_t len)
{
    int rc = sm_move(d, off, dst, len, true);
    return rc == MPI_SUCCESS ? rc : obj_errf(rc, "coll sm: copying %zu bytes of a buffer failed",
                                             len);
}

int coll_sm_unpack(const coll_sm_data_t *d, size_t off, const void *src, size_t len)
{
    int rc = sm_move(d, off, (void *)src, len, false);
    return rc == MPI_SUCCESS ? rc : obj_errf(rc, "coll sm: copying %zu bytes to a buffer failed",
                                             len);
}
