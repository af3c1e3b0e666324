/*
 * Process topologies attached to a communicator (comm->topo; NULL when the
 * communicator has none).  Made by MPI_Cart_create / MPI_Cart_sub,
 * MPI_Graph_create, MPI_Dist_graph_create(_adjacent); copied by
 * MPI_Comm_dup / idup / dup_with_info; freed with the communicator.
 *
 * NEIGHBOURHOOD COLLECTIVES read only the common part:
 *
 *   indegree, in[]    the ranks (in comm) this process receives from, in the
 *                     order of the receive buffer blocks of
 *                     MPI_Neighbor_allgather/alltoall(v,w);
 *   outdegree, out[]  the ranks it sends to, in the order of the send
 *                     buffer blocks.
 *
 * in[] and out[] may hold MPI_PROC_NULL (Cartesian edges of non-periodic
 * dimensions: the block is left untouched / nothing is sent) and repeated
 * ranks (graphs with multi-edges: one message per edge, matched in order).
 * The order is the standard's (MPI-4.1 section 8.6):
 *
 *   MPI_CART        for each dimension d = 0 .. ndims-1: the neighbour at
 *                   displacement -1, then the one at +1 (what
 *                   MPI_Cart_shift(comm, d, 1) returns as source, then as
 *                   dest); in[] == out[], 2*ndims entries each;
 *   MPI_GRAPH       the neighbours of this rank in the order of `edges`
 *                   (MPI_Graph_neighbors); in[] == out[];
 *   MPI_DIST_GRAPH  in[] = sources, out[] = destinations, in the order
 *                   MPI_Dist_graph_neighbors returns them (for the
 *                   _adjacent form, the order given by the user).
 *
 * in_weights / out_weights are set for weighted distributed graphs only
 * (NULL otherwise).  All arrays are owned by the topology; in == out may
 * share one array (in_shared).
 */
#ifndef OBJ_TOPO_H
#define OBJ_TOPO_H

#include <stdbool.h>
#include "obj/obj.h"

typedef struct obj_topo {
    int kind;               /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int indegree, outdegree;
    int *in, *out;
    int *in_weights, *out_weights;
    bool weighted;          /* MPI_DIST_GRAPH: weights were given (not MPI_UNWEIGHTED) */
    bool in_shared;         /* in == out (one allocation) */
    union {
        struct {
            int ndims;
            int *dims;      /* ndims entries */
            int *periods;   /* 0 / 1 */
            int *coords;    /* this process's coordinates */
        } cart;
        struct {
            int nnodes;
            int *index;     /* nnodes entries, as given to MPI_Graph_create */
            int *edges;     /* index[nnodes-1] entries */
        } graph;
    } u;
} obj_topo_t;

/* Deep copy (for MPI_Comm_dup); *out NULL when src is NULL. */
int obj_topo_copy(const obj_topo_t *src, obj_topo_t **out);
void obj_topo_free(obj_topo_t *topo);

/* Rank of the Cartesian coordinates (periodic dimensions wrap; others must
 * be in range: MPI_ERR_RANK). */
int obj_topo_cart_rank(const obj_topo_t *t, const int coords[], int *rank);
/* Coordinates of a rank of the grid. */
void obj_topo_cart_coords(const obj_topo_t *t, int rank, int coords[]);
/* comm's topology when it is of this kind, else MPI_ERR_TOPOLOGY. */
int obj_topo_of(const obj_comm_t *comm, int kind, const obj_topo_t **t);
/* Neighbours of node r of a graph topology: edges[first .. first + n). */
void obj_topo_graph_span(const obj_topo_t *t, int r, int *first, int *n);

/* ------------------------------------------------------------ the front end's calls
 *
 * What MPI_Cart_*, MPI_Graph_*, MPI_Dist_graph_* and MPI_Dims_create do once
 * their handles are looked up; they check the topology arguments.  The
 * constructors are collective over comm_old (an intracommunicator) and
 * ignore reorder (the identity); *out is NULL at processes left out. */
int obj_topo_cart_create(obj_comm_t *comm_old, int ndims, const int dims[], const int periods[],
                         obj_comm_t **out);
int obj_topo_cart_sub(obj_comm_t *comm, const int remain_dims[], obj_comm_t **out);
int obj_topo_cart_map(const obj_comm_t *comm, int ndims, const int dims[], const int periods[],
                      int *newrank);
/* Neighbours at disp along direction (valid; MPI_PROC_NULL off the grid). */
void obj_topo_cart_shift(const obj_topo_t *t, int direction, int disp, int *rank_source,
                         int *rank_dest);
int obj_topo_graph_create(obj_comm_t *comm_old, int nnodes, const int index[], const int edges[],
                          obj_comm_t **out);
int obj_topo_graph_map(const obj_comm_t *comm, int nnodes, const int index[], const int edges[],
                       int *newrank);
int obj_topo_dist_graph_create_adjacent(obj_comm_t *comm_old, int indegree, const int sources[],
                                        const int sourceweights[], int outdegree,
                                        const int destinations[], const int destweights[],
                                        obj_comm_t **out);
int obj_topo_dist_graph_create(obj_comm_t *comm_old, int n, const int sources[],
                               const int degrees[], const int destinations[], const int weights[],
                               obj_comm_t **out);
/* Fill the zero entries of dims with factors as close as possible. */
int obj_topo_dims_create(int nnodes, int ndims, int dims[]);

#endif
