/*
 * Groups (front-end view): an ordered set of job ranks.
 */
#ifndef MPI_MPI_GROUP_H
#define MPI_MPI_GROUP_H

#include "mpi/mpi_obj.h"

struct MPI_ABI_Group {
    mpi_obj_t obj;
    int size;
    int rank;              /* my rank in the group, MPI_UNDEFINED if not a member */
    int *world_ranks;      /* world rank of each member; NULL means identity (0..size-1) */
};

/* World (job) rank of group member i. */
static inline int mpi_group_world_rank(const mpi_group_t *g, int i)
{
    return g->world_ranks ? g->world_ranks[i] : i;
}

#endif
