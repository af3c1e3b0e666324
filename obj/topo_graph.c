/* Graph topologies: MPI_Graph_create and MPI_Graph_map (reorder is
 * ignored: the identity). */
#include "obj/comm_int.h"
#include "obj/topo.h"

#include <stdlib.h>
#include <string.h>

static int graph_check(int nnodes, const int index[], const int edges[], int size)
{
    if (nnodes < 0 || nnodes > size)
        return obj_errf(MPI_ERR_ARG, "invalid nnodes %d (communicator of size %d)", nnodes, size);
    if (nnodes > 0 && !index)
        return obj_errf(MPI_ERR_ARG, "argument 'index' must not be NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return obj_errf(MPI_ERR_ARG, "index[%d] = %d is smaller than the previous entry", i,
                            index[i]);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges)
        return obj_errf(MPI_ERR_ARG, "argument 'edges' must not be NULL");
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return obj_errf(MPI_ERR_ARG, "edges[%d] = %d is not a node of the graph (0..%d)", i,
                            edges[i], nnodes - 1);
    return MPI_SUCCESS;
}

void obj_topo_graph_span(const obj_topo_t *t, int r, int *first, int *n)
{
    *first = r ? t->u.graph.index[r - 1] : 0;
    *n = t->u.graph.index[r] - *first;
}

static int graph_attach(obj_comm_t *c, int nnodes, const int index[], const int edges[])
{
    obj_topo_t *t = calloc(1, sizeof(*t));
    if (!t)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    bool ok = true;
    t->kind = MPI_GRAPH;
    t->u.graph.nnodes = nnodes;
    t->u.graph.index = topo_dup_ints(index, nnodes, &ok);
    t->u.graph.edges = topo_dup_ints(edges, index[nnodes - 1], &ok);
    int first, n;
    if (ok) {
        obj_topo_graph_span(t, c->rank, &first, &n);
        t->in = topo_dup_ints(edges + first, n, &ok);
        t->out = t->in;
        t->in_shared = true;
        t->indegree = t->outdegree = n;
    }
    if (!ok) {
        obj_topo_free(t);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    c->topo = t;
    return MPI_SUCCESS;
}

int obj_topo_graph_create(obj_comm_t *comm_old, int nnodes, const int index[], const int edges[],
                          obj_comm_t **out)
{
    if (comm_old->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Graph_create needs an intracommunicator");
    int rc = graph_check(nnodes, index, edges, comm_old->size);
    obj_comm_t *c = NULL;
    if (rc == MPI_SUCCESS)
        rc = topo_comm_first(comm_old, nnodes, &c);
    if (rc == MPI_SUCCESS && c && (rc = graph_attach(c, nnodes, index, edges)) != MPI_SUCCESS)
        obj_comm_release(c);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}

int obj_topo_graph_map(const obj_comm_t *comm, int nnodes, const int index[], const int edges[],
                       int *newrank)
{
    int rc = graph_check(nnodes, index, edges, comm->size);
    if (rc == MPI_SUCCESS)
        *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return rc;
}
