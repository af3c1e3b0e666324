/*
 * Groups: ordered sets of job ranks.
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
/* ranks2[i] = rank in group2 of member ranks1[i] of group1 (MPI_UNDEFINED
 * when it is not in group2, MPI_PROC_NULL for MPI_PROC_NULL); the ranks
 * must be valid. */
int obj_group_translate_ranks(const obj_group_t *group1, int n, const int ranks1[],
                              const obj_group_t *group2, int ranks2[]);

/* The constructors of MPI_Group_* (obj/group_ops.c): a new group, its
 * session the first argument's; MPI_ERR_RANK / MPI_ERR_ARG for ranks or
 * ranges that are invalid or repeated. */
int obj_group_incl(obj_group_t *group, int n, const int ranks[], obj_group_t **out);
int obj_group_excl(obj_group_t *group, int n, const int ranks[], obj_group_t **out);
int obj_group_range_incl(obj_group_t *group, int n, int ranges[][3], obj_group_t **out);
int obj_group_range_excl(obj_group_t *group, int n, int ranges[][3], obj_group_t **out);
int obj_group_union(obj_group_t *group1, obj_group_t *group2, obj_group_t **out);
int obj_group_intersection(obj_group_t *group1, obj_group_t *group2, obj_group_t **out);
int obj_group_difference(obj_group_t *group1, obj_group_t *group2, obj_group_t **out);

#endif
