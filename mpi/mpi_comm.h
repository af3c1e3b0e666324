/*
 * Communicators (front-end view).  The struct grows with the layers below it
 * (pml matching state, coll tables); the fields here are what argument checks
 * and the environment need.
 */
#ifndef MPI_MPI_COMM_H
#define MPI_MPI_COMM_H

#include "mpi/mpi_obj.h"
#include "mpi/mpi_group.h"

struct MPI_ABI_Comm {
    mpi_obj_t obj;
    int rank;                 /* my rank in the local group */
    int size;                 /* size of the local group */
    int remote_size;          /* intercommunicator: size of the remote group, else == size */
    int is_inter;
    uint32_t context_id;
    mpi_group_t *group;
    mpi_group_t *remote_group;
    mpi_errhandler_t *errhandler;
    struct mpi_attr_list *attrs;
    mpi_info_t *info;
    char name[MPI_MAX_OBJECT_NAME];
    struct pml_comm *pml;     /* point-to-point state (pml/pml.h) */
    struct coll_comm *coll;   /* collective function table (coll/coll.h) */
};

static inline int mpi_comm_size_of(const mpi_comm_t *c) { return c->size; }
static inline int mpi_comm_rank_of(const mpi_comm_t *c) { return c->rank; }
/* Size of the group that rank arguments of point-to-point calls refer to. */
static inline int mpi_comm_peer_size_of(const mpi_comm_t *c) { return c->remote_size; }
static inline int mpi_comm_is_inter(const mpi_comm_t *c) { return c->is_inter; }

/* Largest valid tag (value of the MPI_TAG_UB attribute). */
#define MPI_RAIL_TAG_UB 0x7fffffff

#endif
