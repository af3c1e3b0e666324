/* Graph topologies: MPI_Graph_create, _get, _neighbors(_count), _map,
 * MPI_Graphdims_get.  reorder is ignored (identity). */
#include "obj/comm_int.h"
#include "obj/topo.h"
#include "mpi/binding/gen/mpi_impl.h"

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

/* Neighbours of node r: edges[first .. first + n). */
static void graph_span(const obj_topo_t *t, int r, int *first, int *n)
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
        graph_span(t, c->rank, &first, &n);
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

int mpii_graph_create(obj_comm_t *comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    (void)reorder;
    if (comm_old->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Graph_create needs an intracommunicator");
    int rc = graph_check(nnodes, index, edges, comm_old->size);
    obj_comm_t *c = NULL;
    if (rc == MPI_SUCCESS)
        rc = topo_comm_first(comm_old, nnodes, &c);
    if (rc == MPI_SUCCESS && c && (rc = graph_attach(c, nnodes, index, edges)) != MPI_SUCCESS)
        obj_comm_release(c);
    if (rc == MPI_SUCCESS)
        *comm_graph = obj_comm_handle(c);
    return rc;
}

int mpii_graphdims_get(obj_comm_t *comm, int *nnodes, int *nedges)
{
    const obj_topo_t *t;
    int rc = topo_of(comm, MPI_GRAPH, &t);
    if (rc == MPI_SUCCESS) {
        *nnodes = t->u.graph.nnodes;
        *nedges = t->u.graph.index[t->u.graph.nnodes - 1];
    }
    return rc;
}

int mpii_graph_get(obj_comm_t *comm, int maxindex, int maxedges, int index[], int edges[])
{
    const obj_topo_t *t;
    int rc = topo_of(comm, MPI_GRAPH, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    int nn = RAIL_MIN(maxindex, t->u.graph.nnodes);
    int ne = RAIL_MIN(maxedges, t->u.graph.index[t->u.graph.nnodes - 1]);
    if ((nn > 0 && !index) || (ne > 0 && !edges))
        return obj_errf(MPI_ERR_ARG, "index and edges must not be NULL");
    for (int i = 0; i < nn; i++)
        index[i] = t->u.graph.index[i];
    for (int i = 0; i < ne; i++)
        edges[i] = t->u.graph.edges[i];
    return MPI_SUCCESS;
}

static int graph_node(obj_comm_t *comm, int rank, const obj_topo_t **t)
{
    int rc = topo_of(comm, MPI_GRAPH, t);
    if (rc == MPI_SUCCESS && (rank < 0 || rank >= (*t)->u.graph.nnodes))
        rc = obj_errf(MPI_ERR_RANK, "invalid rank %d (graph of %d nodes)", rank,
                      (*t)->u.graph.nnodes);
    return rc;
}

int mpii_graph_neighbors_count(obj_comm_t *comm, int rank, int *nneighbors)
{
    const obj_topo_t *t;
    int first, rc = graph_node(comm, rank, &t);
    if (rc == MPI_SUCCESS)
        graph_span(t, rank, &first, nneighbors);
    return rc;
}

int mpii_graph_neighbors(obj_comm_t *comm, int rank, int maxneighbors, int neighbors[])
{
    const obj_topo_t *t;
    int first, n, rc = graph_node(comm, rank, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    graph_span(t, rank, &first, &n);
    n = RAIL_MIN(n, maxneighbors);
    if (n > 0 && !neighbors)
        return obj_errf(MPI_ERR_ARG, "argument 'neighbors' must not be NULL");
    for (int i = 0; i < n; i++)
        neighbors[i] = t->u.graph.edges[first + i];
    return MPI_SUCCESS;
}

int mpii_graph_map(obj_comm_t *comm, int nnodes, const int index[], const int edges[],
                   int *newrank)
{
    int rc = graph_check(nnodes, index, edges, comm->size);
    if (rc == MPI_SUCCESS)
        *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return rc;
}
