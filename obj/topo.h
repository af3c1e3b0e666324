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

#endif
