/* Group constructors: incl, excl, range_incl, range_excl, union,
 * intersection, difference. */
#include "obj/group.h"
#include "obj/err.h"

#include <stdlib.h>
#include <string.h>

static int new_group(int n, int *ranks, const obj_group_t *parent, obj_group_t **out)
{
    return obj_group_make(n, ranks, parent->session, out);
}

static int *alloc_ranks(int n)
{
    return malloc((size_t)RAIL_MAX(n, 1) * sizeof(int));
}

/* ------------------------------------------------------------ incl / excl */

/* Check n ranks of g: valid and distinct; mark[] (size g->size) gets 1 for each. */
static int check_distinct(const obj_group_t *g, int n, const int ranks[], char *mark)
{
    if (n < 0 || n > g->size)
        return obj_errf(MPI_ERR_ARG, "invalid number of ranks %d (group of size %d)", n, g->size);
    if (n > 0 && !ranks)
        return obj_errf(MPI_ERR_ARG, "argument 'ranks' must not be NULL");
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size)
            return obj_errf(MPI_ERR_RANK, "invalid rank %d in ranks[%d] (group of size %d)", r, i,
                            g->size);
        if (mark[r])
            return obj_errf(MPI_ERR_RANK, "rank %d appears twice in ranks (ranks[%d])", r, i);
        mark[r] = 1;
    }
    return MPI_SUCCESS;
}

int obj_group_incl(obj_group_t *group, int n, const int ranks[], obj_group_t **newgroup)
{
    char *mark = calloc((size_t)RAIL_MAX(group->size, 1), 1);
    int *w = alloc_ranks(n > 0 ? n : 1);
    int rc = (!mark || !w) ? obj_errf(MPI_ERR_NO_MEM, "out of memory") : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = check_distinct(group, n, ranks, mark);
    free(mark);
    if (rc) {
        free(w);
        return rc;
    }
    for (int i = 0; i < n; i++)
        w[i] = obj_group_world_rank(group, ranks[i]);
    return new_group(n, w, group, newgroup);
}

/* The members of g whose mark is `keep`, in group order. */
static int select_marked(obj_group_t *g, const char *mark, char keep, obj_group_t **out)
{
    int *w = alloc_ranks(g->size);
    if (!w)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int k = 0;
    for (int i = 0; i < g->size; i++)
        if (mark[i] == keep)
            w[k++] = obj_group_world_rank(g, i);
    return new_group(k, w, g, out);
}

int obj_group_excl(obj_group_t *group, int n, const int ranks[], obj_group_t **newgroup)
{
    char *mark = calloc((size_t)RAIL_MAX(group->size, 1), 1);
    if (!mark)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int rc = check_distinct(group, n, ranks, mark);
    if (rc == MPI_SUCCESS)
        rc = select_marked(group, mark, 0, newgroup);
    free(mark);
    return rc;
}

/* ------------------------------------------------------------ ranges */

/* Number of ranks of one (first, last, stride) triplet after checking it. */
static int range_len(const obj_group_t *g, const int r[3], int i, int *len)
{
    int first = r[0], last = r[1], stride = r[2];
    if (stride == 0)
        return obj_errf(MPI_ERR_ARG, "ranges[%d] has stride 0", i);
    if (first < 0 || first >= g->size || last < 0 || last >= g->size)
        return obj_errf(MPI_ERR_RANK, "ranges[%d] = (%d, %d, %d) names a rank outside the group "
                        "of size %d", i, first, last, stride, g->size);
    if ((stride > 0 && first > last) || (stride < 0 && first < last))
        return obj_errf(MPI_ERR_ARG, "ranges[%d] = (%d, %d, %d): stride %d never reaches %d", i,
                        first, last, stride, stride, last);
    *len = (last - first) / stride + 1;
    return MPI_SUCCESS;
}

/* Mark the ranks of all ranges (distinct); *total their count; order[] (may
 * be NULL) gets them in range order. */
static int mark_ranges(const obj_group_t *g, int n, int ranges[][3], char *mark, int *order,
                       int *total)
{
    if (n < 0)
        return obj_errf(MPI_ERR_ARG, "invalid number of ranges %d", n);
    if (n > 0 && !ranges)
        return obj_errf(MPI_ERR_ARG, "argument 'ranges' must not be NULL");
    int k = 0;
    for (int i = 0; i < n; i++) {
        int len = 0, rc = range_len(g, ranges[i], i, &len);
        if (rc)
            return rc;
        for (int j = 0; j < len; j++) {
            int r = ranges[i][0] + j * ranges[i][2];
            if (mark[r])
                return obj_errf(MPI_ERR_RANK, "rank %d appears twice in the ranges (ranges[%d])",
                                r, i);
            mark[r] = 1;
            if (order)
                order[k] = r;
            k++;
        }
    }
    *total = k;
    return MPI_SUCCESS;
}

int obj_group_range_incl(obj_group_t *group, int n, int ranges[][3], obj_group_t **newgroup)
{
    char *mark = calloc((size_t)RAIL_MAX(group->size, 1), 1);
    int *w = alloc_ranks(group->size);
    int total = 0;
    int rc = (!mark || !w) ? obj_errf(MPI_ERR_NO_MEM, "out of memory") : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = mark_ranges(group, n, ranges, mark, w, &total);
    free(mark);
    if (rc) {
        free(w);
        return rc;
    }
    for (int i = 0; i < total; i++)
        w[i] = obj_group_world_rank(group, w[i]);
    return new_group(total, w, group, newgroup);
}

int obj_group_range_excl(obj_group_t *group, int n, int ranges[][3], obj_group_t **newgroup)
{
    char *mark = calloc((size_t)RAIL_MAX(group->size, 1), 1);
    if (!mark)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int total;
    int rc = mark_ranges(group, n, ranges, mark, NULL, &total);
    if (rc == MPI_SUCCESS)
        rc = select_marked(group, mark, 0, newgroup);
    free(mark);
    return rc;
}

/* ------------------------------------------------------------ set algebra */

/* mark[i] = 1 when member i of a is in b. */
static int mark_in(const obj_group_t *a, const obj_group_t *b, char *mark)
{
    int *ranks = alloc_ranks(a->size);
    if (!ranks)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < a->size; i++)
        ranks[i] = i;
    int rc = obj_group_translate_ranks(a, a->size, ranks, b, ranks);
    for (int i = 0; rc == MPI_SUCCESS && i < a->size; i++)
        mark[i] = ranks[i] != MPI_UNDEFINED;
    free(ranks);
    return rc;
}

/* Members of g1 in (keep = 1) or not in (keep = 0) g2, in g1's order. */
static int filter(obj_group_t *g1, obj_group_t *g2, char keep, obj_group_t **out)
{
    char *mark = calloc((size_t)RAIL_MAX(g1->size, 1), 1);
    if (!mark)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int rc = mark_in(g1, g2, mark);
    if (rc == MPI_SUCCESS)
        rc = select_marked(g1, mark, keep, out);
    free(mark);
    return rc;
}

int obj_group_intersection(obj_group_t *group1, obj_group_t *group2, obj_group_t **newgroup)
{
    return filter(group1, group2, 1, newgroup);
}

int obj_group_difference(obj_group_t *group1, obj_group_t *group2, obj_group_t **newgroup)
{
    return filter(group1, group2, 0, newgroup);
}

int obj_group_union(obj_group_t *group1, obj_group_t *group2, obj_group_t **newgroup)
{
    char *mark = calloc((size_t)RAIL_MAX(group2->size, 1), 1);
    int *w = alloc_ranks(group1->size + group2->size);
    int rc = (!mark || !w) ? obj_errf(MPI_ERR_NO_MEM, "out of memory") : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = mark_in(group2, group1, mark);
    if (rc) {
        free(mark);
        free(w);
        return rc;
    }
    int k = 0;
    for (int i = 0; i < group1->size; i++)
        w[k++] = obj_group_world_rank(group1, i);
    for (int i = 0; i < group2->size; i++)
        if (!mark[i])
            w[k++] = obj_group_world_rank(group2, i);
    free(mark);
    return new_group(k, w, group1, newgroup);
}
