/*
 * coll han: hierarchical collectives for intracommunicators that span
 * several nodes, built from two internal sub-communicators:
 *
 *   low  the processes of my node (rank order kept): served by the
 *        node-local components (sm);
 *   up   one leader per node, the lowest rank of each node, ordered by
 *        that rank (so node i of this module is rank i of up): served by
 *        the point-to-point components (tuned, basic).
 *
 * Both are made with the object layer's split (obj_comm_split) at
 * the first han collective on the communicator, not at its creation, and
 * released with it.  While han builds them it declines new communicators
 * (they would otherwise be split again with a node-split testing
 * parameter).  Operations (blocking only): barrier, bcast, reduce and
 * allreduce (commutative operations; others go to the next module: the
 * node-wise order would not be the rank order), allgather.  The phases
 * run one after the other; messages of the root's node and the leaders'
 * exchange are ordinary sub-communicator collectives.
 *
 * Nodes come from rte_node_of(); the parameter coll_han_split_nodes=K
 * (testing) treats the processes of each node as K nodes (the i-th process
 * of a node, in rank order, goes to part i % K), so han runs and is tested
 * on one machine.
 */
#ifndef COLL_HAN_COLL_HAN_H
#define COLL_HAN_COLL_HAN_H

#include "coll/coll.h"
#include "coll/coll_util.h"

typedef struct coll_han_module {
    coll_module_t super;
    int n;                         /* processes */
    int n_nodes;
    int *node_of;                  /* [n] node of each rank (0 .. n_nodes-1, by leader rank) */
    int *lrank_of;                 /* [n] rank in its node's low communicator */
    int *node_size;                /* [n_nodes] */
    int *leader;                   /* [n_nodes] comm rank of each node's leader */
    int my_node;
    bool is_leader;
    bool ready;                    /* low / up made */
    int setup_rc;                  /* their creation failed: this error, always */
    obj_comm_t *low, *up;          /* up: NULL but at leaders */
} coll_han_module_t;

typedef struct coll_han_params {
    int priority;
    int split_nodes;
    int verbose;
} coll_han_params_t;

extern coll_han_params_t coll_han_params;
extern const coll_component_t coll_han_component;

static inline int coll_han_verbosity(void)
{
    return RAIL_MAX(coll_han_params.verbose, coll_verbose);
}

/* Make low / up at the first call (collective over comm). */
int coll_han_setup(coll_han_module_t *m, obj_comm_t *comm);

int coll_han_barrier(obj_comm_t *comm, coll_module_t *module);
int coll_han_bcast(void *buf, MPI_Count count, obj_datatype_t *dt, int root, obj_comm_t *comm,
                   coll_module_t *module);
int coll_han_reduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                    obj_op_t *op, int root, obj_comm_t *comm, coll_module_t *module);
int coll_han_allreduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                       obj_op_t *op, obj_comm_t *comm, coll_module_t *module);
int coll_han_allgather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                       MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                       coll_module_t *module);

#endif
