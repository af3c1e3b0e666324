/*
 * coll han: allgather (see han_ops.c).  Blocks travel packed (bb bytes:
 * rcount elements of rdt) through a host buffer of all n blocks grouped by
 * node at the leaders; processes of a node need not have consecutive ranks.
 */
#include "coll/han/coll_han.h"
#include "obj/err.h"

#include <stdlib.h>

typedef struct han_layout {
    MPI_Count *counts;             /* [n_nodes] bytes of each node's blocks */
    MPI_Aint *displs;              /* [n_nodes] where they start */
} han_layout_t;

static int han_layout(const coll_han_module_t *m, size_t bb, han_layout_t *l)
{
    l->counts = malloc((size_t)m->n_nodes * sizeof(MPI_Count));
    l->displs = malloc((size_t)m->n_nodes * sizeof(MPI_Aint));
    if (!l->counts || !l->displs)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    MPI_Aint off = 0;
    for (int i = 0; i < m->n_nodes; i++) {
        l->counts[i] = (MPI_Count)(m->node_size[i] * bb);
        l->displs[i] = off;
        off += l->counts[i];
    }
    return MPI_SUCCESS;
}

/* Leader: the gathered buffer of all blocks -> rbuf in rank order. */
static int han_unpack(const coll_han_module_t *m, const han_layout_t *l, const char *all,
                      size_t bb, void *rbuf, MPI_Count rcount, obj_datatype_t *rdt)
{
    int rc = MPI_SUCCESS;
    obj_datatype_t *byte = coll_byte_type();
    for (int r = 0; r < m->n && rc == MPI_SUCCESS; r++) {
        const char *blk = all + l->displs[m->node_of[r]] + (size_t)m->lrank_of[r] * bb;
        rc = coll_copy(blk, (MPI_Count)bb, byte, coll_elem(rbuf, rdt, r * rcount), rcount, rdt);
    }
    return rc;
}

static int han_allgather_leader(coll_han_module_t *m, const void *sbuf, MPI_Count scount,
                                obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                                obj_datatype_t *rdt, size_t bb)
{
    han_layout_t l = {NULL, NULL};
    obj_datatype_t *byte = coll_byte_type();
    char *all = malloc((size_t)m->n * bb);
    int rc = all ? han_layout(m, bb, &l) : obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS)
        rc = coll_gather(sbuf, scount, sdt, all + l.displs[m->my_node], (MPI_Count)bb, byte, 0,
                         m->low);
    if (rc == MPI_SUCCESS)
        rc = coll_allgatherv(MPI_IN_PLACE, 0, NULL, all, l.counts, l.displs, byte, m->up);
    if (rc == MPI_SUCCESS)
        rc = han_unpack(m, &l, all, bb, rbuf, rcount, rdt);
    free(l.counts);
    free(l.displs);
    free(all);
    return rc;
}

int coll_han_allgather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                       MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                       coll_module_t *module)
{
    coll_han_module_t *m = (coll_han_module_t *)module;
    size_t bb = (size_t)(rcount * rdt->size);
    if (bb == 0)
        return MPI_SUCCESS;
    int rc = coll_han_setup(m, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (sbuf == MPI_IN_PLACE) {   /* my block is in rbuf already */
        sbuf = coll_elem(rbuf, rdt, comm->rank * rcount);
        scount = rcount;
        sdt = rdt;
    }
    if (m->is_leader)
        rc = han_allgather_leader(m, sbuf, scount, sdt, rbuf, rcount, rdt, bb);
    else
        rc = coll_gather(sbuf, scount, sdt, NULL, 0, NULL, 0, m->low);
    int r = coll_bcast(rbuf, (MPI_Count)m->n * rcount, rdt, 0, m->low);
    return rc != MPI_SUCCESS ? rc : r;
}
