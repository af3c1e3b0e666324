/* MPI_Group_*: queries and constructors on the groups of obj/group*.c. */
#include "mpi/mpi_err.h"
#include "obj/group.h"
#include "mpi/binding/gen/mpi_impl.h"

/* The result of a constructor as a handle. */
static int group_out(int rc, obj_group_t *const *g, MPI_Group *newgroup)
{
    if (rc == MPI_SUCCESS)
        *newgroup = obj_group_handle(*g);
    return rc;
}

int mpii_group_size(obj_group_t *group, int *size)
{
    *size = group->size;
    return MPI_SUCCESS;
}

int mpii_group_rank(obj_group_t *group, int *rank)
{
    *rank = group->rank;
    return MPI_SUCCESS;
}

int mpii_group_free(MPI_Group *group)
{
    obj_group_t *g;
    int rc = obj_group_lookup(*group, &g);
    if (rc)
        return rc;
    obj_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int mpii_group_compare(obj_group_t *group1, obj_group_t *group2, int *result)
{
    *result = obj_group_compare(group1, group2);
    return MPI_SUCCESS;
}

static int check_ranks_in(const obj_group_t *g, int n, const int ranks[], const char *what)
{
    if (n < 0)
        return obj_errf(MPI_ERR_ARG, "invalid number of ranks %d (must be non-negative)", n);
    if (n > 0 && !ranks)
        return obj_errf(MPI_ERR_ARG, "argument '%s' must not be NULL", what);
    for (int i = 0; i < n; i++)
        if (ranks[i] != MPI_PROC_NULL && (ranks[i] < 0 || ranks[i] >= g->size))
            return obj_errf(MPI_ERR_RANK, "invalid rank %d in %s[%d] (group of size %d)",
                            ranks[i], what, i, g->size);
    return MPI_SUCCESS;
}

int mpii_group_translate_ranks(obj_group_t *group1, int n, const int ranks1[],
                               obj_group_t *group2, int ranks2[])
{
    int rc = check_ranks_in(group1, n, ranks1, "ranks1");
    if (rc)
        return rc;
    if (n > 0 && !ranks2)
        return obj_errf(MPI_ERR_ARG, "argument 'ranks2' must not be NULL");
    return obj_group_translate_ranks(group1, n, ranks1, group2, ranks2);
}

/* ------------------------------------------------------------ constructors */

int mpii_group_incl(obj_group_t *group, int n, const int ranks[], MPI_Group *newgroup)
{
    obj_group_t *g = NULL;
    return group_out(obj_group_incl(group, n, ranks, &g), &g, newgroup);
}

int mpii_group_excl(obj_group_t *group, int n, const int ranks[], MPI_Group *newgroup)
{
    obj_group_t *g = NULL;
    return group_out(obj_group_excl(group, n, ranks, &g), &g, newgroup);
}

int mpii_group_range_incl(obj_group_t *group, int n, int ranges[][3], MPI_Group *newgroup)
{
    obj_group_t *g = NULL;
    return group_out(obj_group_range_incl(group, n, ranges, &g), &g, newgroup);
}

int mpii_group_range_excl(obj_group_t *group, int n, int ranges[][3], MPI_Group *newgroup)
{
    obj_group_t *g = NULL;
    return group_out(obj_group_range_excl(group, n, ranges, &g), &g, newgroup);
}

int mpii_group_union(obj_group_t *group1, obj_group_t *group2, MPI_Group *newgroup)
{
    obj_group_t *g = NULL;
    return group_out(obj_group_union(group1, group2, &g), &g, newgroup);
}

int mpii_group_intersection(obj_group_t *group1, obj_group_t *group2, MPI_Group *newgroup)
{
    obj_group_t *g = NULL;
    return group_out(obj_group_intersection(group1, group2, &g), &g, newgroup);
}

int mpii_group_difference(obj_group_t *group1, obj_group_t *group2, MPI_Group *newgroup)
{
    obj_group_t *g = NULL;
    return group_out(obj_group_difference(group1, group2, &g), &g, newgroup);
}
