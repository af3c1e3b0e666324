/*
 * Groups (front-end view): an ordered set of job ranks.
 *
 * A group is immutable once made, so communicators and users share one
 * object through its reference count (MPI_Comm_group hands out the
 * communicator's own group).  MPI_GROUP_EMPTY is predefined and never
 * freed; every operation whose result is empty returns it.
 */
#ifndef OBJ_GROUP_H
#define OBJ_GROUP_H

#include "obj/obj.h"

struct MPI_ABI_Group {
    obj_t obj;
    int size;
    int rank;              /* my rank in the group, MPI_UNDEFINED if not a member */
    int *world_ranks;      /* world rank of each member; NULL means identity (0..size-1) */
    obj_session_t *session;   /* session the group derives from (NULL: World model) */
    bool predef;           /* predefined or library-internal: never freed */
};

/* World (job) rank of group member i. */
static inline int obj_group_world_rank(const obj_group_t *g, int i)
{
    return g->world_ranks ? g->world_ranks[i] : i;
}

/* A new group of n members (world ranks taken over: ranks is malloc()ed
 * and owned by the group afterwards; freed on failure).  n == 0 gives
 * MPI_GROUP_EMPTY's object. */
int obj_group_make(int n, int *ranks, obj_session_t *session, obj_group_t **out);
/* Same from a copy of n world ranks. */
int obj_group_make_copy(int n, const int *ranks, obj_session_t *session, obj_group_t **out);
void obj_group_retain(obj_group_t *g);
void obj_group_release(obj_group_t *g);
/* Rank in g of a world rank, MPI_UNDEFINED if not a member (O(size)). */
int obj_group_rank_of_world(const obj_group_t *g, int world);
/* Whether every member of sub is a member of g. */
bool obj_group_is_subset(const obj_group_t *sub, const obj_group_t *g);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int obj_group_compare(const obj_group_t *a, const obj_group_t *b);
/* The predefined MPI_GROUP_EMPTY object. */
obj_group_t *obj_group_empty(void);

#endif
