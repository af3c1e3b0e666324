/* MPI_Topo_test, MPI_Dims_create, MPI_Cart_*, MPI_Graph_*, MPI_Graphdims_get
 * and MPI_Dist_graph_*: the queries read the topology of obj/topo.h; the
 * constructors are obj/topo_*.c's. */
#include "mpi/mpi_err.h"
#include "obj/comm.h"
#include "obj/topo.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <string.h>

/* The result of a constructor: its handle, or MPI_COMM_NULL (also on an
 * error: not left unset). */
static int topo_out(int rc, obj_comm_t *const *c, MPI_Comm *newcomm)
{
    *newcomm = rc == MPI_SUCCESS ? obj_comm_handle(*c) : MPI_COMM_NULL;
    return rc;
}

int mpii_dims_create(int nnodes, int ndims, int dims[])
{
    return obj_topo_dims_create(nnodes, ndims, dims);
}

int mpii_topo_test(obj_comm_t *comm, int *status)
{
    *status = comm->topo ? comm->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int mpii_cartdim_get(obj_comm_t *comm, int *ndims)
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_CART, &t);
    if (rc == MPI_SUCCESS)
        *ndims = t->u.cart.ndims;
    return rc;
}

static int check_maxdims(const obj_topo_t *t, int maxdims)
{
    if (maxdims < t->u.cart.ndims)
        return obj_errf(MPI_ERR_ARG, "maxdims %d is less than the %d dimensions of the topology",
                        maxdims, t->u.cart.ndims);
    return MPI_SUCCESS;
}

int mpii_cart_get(obj_comm_t *comm, int maxdims, int dims[], int periods[], int coords[])
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_CART, &t);
    if (rc == MPI_SUCCESS)
        rc = check_maxdims(t, maxdims);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = t->u.cart.ndims;
    if (n > 0 && (!dims || !periods || !coords))
        return obj_errf(MPI_ERR_ARG, "dims, periods and coords must not be NULL");
    for (int d = 0; d < n; d++) {
        dims[d] = t->u.cart.dims[d];
        periods[d] = t->u.cart.periods[d];
        coords[d] = t->u.cart.coords[d];
    }
    return MPI_SUCCESS;
}

int mpii_cart_rank(obj_comm_t *comm, const int coords[], int *rank)
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_CART, &t);
    if (rc == MPI_SUCCESS && t->u.cart.ndims > 0 && !coords)
        rc = obj_errf(MPI_ERR_ARG, "argument 'coords' must not be NULL");
    if (rc == MPI_SUCCESS)
        rc = obj_topo_cart_rank(t, coords, rank);
    return rc;
}

int mpii_cart_coords(obj_comm_t *comm, int rank, int maxdims, int coords[])
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_CART, &t);
    if (rc == MPI_SUCCESS)
        rc = check_maxdims(t, maxdims);
    if (rc == MPI_SUCCESS && (rank < 0 || rank >= comm->size))
        rc = obj_errf(MPI_ERR_RANK, "invalid rank %d (communicator of size %d)", rank,
                      comm->size);
    if (rc == MPI_SUCCESS && t->u.cart.ndims > 0 && !coords)
        rc = obj_errf(MPI_ERR_ARG, "argument 'coords' must not be NULL");
    if (rc == MPI_SUCCESS)
        obj_topo_cart_coords(t, rank, coords);
    return rc;
}

/* ------------------------------------------------------------ Cartesian */

int mpii_cart_create(obj_comm_t *comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    (void)reorder;
    obj_comm_t *c = NULL;
    return topo_out(obj_topo_cart_create(comm_old, ndims, dims, periods, &c), &c, comm_cart);
}

int mpii_cart_shift(obj_comm_t *comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_CART, &t);
    if (rc == MPI_SUCCESS && (direction < 0 || direction >= t->u.cart.ndims))
        rc = obj_errf(MPI_ERR_ARG, "invalid direction %d (the topology has %d dimensions)",
                      direction, t->u.cart.ndims);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!rank_source || !rank_dest)
        return obj_errf(MPI_ERR_ARG, "rank_source and rank_dest must not be NULL");
    obj_topo_cart_shift(t, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

int mpii_cart_sub(obj_comm_t *comm, const int remain_dims[], MPI_Comm *newcomm)
{
    obj_comm_t *c = NULL;
    int rc = obj_topo_cart_sub(comm, remain_dims, &c);
    if (rc == MPI_SUCCESS)
        *newcomm = obj_comm_handle(c);
    return rc;
}

int mpii_cart_map(obj_comm_t *comm, int ndims, const int dims[], const int periods[],
                  int *newrank)
{
    return obj_topo_cart_map(comm, ndims, dims, periods, newrank);
}

int mpii_graphdims_get(obj_comm_t *comm, int *nnodes, int *nedges)
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_GRAPH, &t);
    if (rc == MPI_SUCCESS) {
        *nnodes = t->u.graph.nnodes;
        *nedges = t->u.graph.index[t->u.graph.nnodes - 1];
    }
    return rc;
}

int mpii_graph_get(obj_comm_t *comm, int maxindex, int maxedges, int index[], int edges[])
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_GRAPH, &t);
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
    int rc = obj_topo_of(comm, MPI_GRAPH, t);
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
        obj_topo_graph_span(t, rank, &first, nneighbors);
    return rc;
}

int mpii_graph_neighbors(obj_comm_t *comm, int rank, int maxneighbors, int neighbors[])
{
    const obj_topo_t *t;
    int first, n, rc = graph_node(comm, rank, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    obj_topo_graph_span(t, rank, &first, &n);
    n = RAIL_MIN(n, maxneighbors);
    if (n > 0 && !neighbors)
        return obj_errf(MPI_ERR_ARG, "argument 'neighbors' must not be NULL");
    for (int i = 0; i < n; i++)
        neighbors[i] = t->u.graph.edges[first + i];
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ graphs */

int mpii_graph_create(obj_comm_t *comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    (void)reorder;
    obj_comm_t *c = NULL;
    int rc = obj_topo_graph_create(comm_old, nnodes, index, edges, &c);
    if (rc == MPI_SUCCESS)
        *comm_graph = obj_comm_handle(c);
    return rc;
}

int mpii_graph_map(obj_comm_t *comm, int nnodes, const int index[], const int edges[],
                   int *newrank)
{
    return obj_topo_graph_map(comm, nnodes, index, edges, newrank);
}

int mpii_dist_graph_neighbors_count(obj_comm_t *comm, int *indegree, int *outdegree,
                                    int *weighted)
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_DIST_GRAPH, &t);
    if (rc == MPI_SUCCESS) {
        *indegree = t->indegree;
        *outdegree = t->outdegree;
        *weighted = t->weighted;
    }
    return rc;
}

static void copy_list(int *dst, const int *src, int n)
{
    if (dst && dst != MPI_UNWEIGHTED && dst != MPI_WEIGHTS_EMPTY && src)
        memcpy(dst, src, (size_t)n * sizeof(int));
}

int mpii_dist_graph_neighbors(obj_comm_t *comm, int maxindegree, int sources[],
                              int sourceweights[], int maxoutdegree, int destinations[],
                              int destweights[])
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_DIST_GRAPH, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    int nin = RAIL_MIN(maxindegree, t->indegree), nout = RAIL_MIN(maxoutdegree, t->outdegree);
    if ((nin > 0 && !sources) || (nout > 0 && !destinations))
        return obj_errf(MPI_ERR_ARG, "sources and destinations must not be NULL");
    copy_list(sources, t->in, RAIL_MAX(nin, 0));
    copy_list(destinations, t->out, RAIL_MAX(nout, 0));
    if (t->weighted) {
        copy_list(sourceweights, t->in_weights, RAIL_MAX(nin, 0));
        copy_list(destweights, t->out_weights, RAIL_MAX(nout, 0));
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ distributed graphs */

int mpii_dist_graph_create_adjacent(obj_comm_t *comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    obj_info_t *info, int reorder, MPI_Comm *comm_dist_graph)
{
    (void)info;
    (void)reorder;
    obj_comm_t *c = NULL;
    int rc = obj_topo_dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights,
                                                 outdegree, destinations, destweights, &c);
    if (rc == MPI_SUCCESS)
        *comm_dist_graph = obj_comm_handle(c);
    return rc;
}

int mpii_dist_graph_create(obj_comm_t *comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], obj_info_t *info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    (void)info;
    (void)reorder;
    obj_comm_t *c = NULL;
    int rc = obj_topo_dist_graph_create(comm_old, n, sources, degrees, destinations, weights, &c);
    if (rc == MPI_SUCCESS)
        *comm_dist_graph = obj_comm_handle(c);
    return rc;
}
