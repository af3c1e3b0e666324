/* Group objects: making, references, membership, comparison, translation. */
#include "obj/group.h"
#include "obj/err.h"
#include "base/atomic.h"
#include "runtime/rte.h"

#include <stdlib.h>
#include <string.h>

static obj_group_t group_empty;

obj_group_t *obj_group_empty(void)
{
    if (group_empty.obj.kind != OBJ_GROUP) {
        obj_init_predef(&group_empty.obj, OBJ_GROUP, MPI_GROUP_EMPTY);
        group_empty.rank = MPI_UNDEFINED;
        group_empty.predef = true;
    }
    return &group_empty;
}

int obj_group_make(int n, int *ranks, obj_session_t *session, obj_group_t **out)
{
    if (n == 0) {
        free(ranks);
        *out = obj_group_empty();
        return MPI_SUCCESS;
    }
    obj_group_t *g = calloc(1, sizeof(*g));
    if (!g) {
        free(ranks);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for a group of %d processes", n);
    }
    obj_init(&g->obj, OBJ_GROUP);
    g->size = n;
    g->world_ranks = ranks;
    g->session = session;
    g->rank = obj_group_rank_of_world(g, rte_info.rank);
    *out = g;
    return MPI_SUCCESS;
}

int obj_group_make_copy(int n, const int *ranks, obj_session_t *session, obj_group_t **out)
{
    int *copy = NULL;
    if (n > 0) {
        copy = malloc((size_t)n * sizeof(int));
        if (!copy)
            return obj_errf(MPI_ERR_NO_MEM, "out of memory for a group of %d processes", n);
        memcpy(copy, ranks, (size_t)n * sizeof(int));
    }
    return obj_group_make(n, copy, session, out);
}

void obj_group_retain(obj_group_t *g)
{
    if (g && !g->predef)
        rail_atomic_add_fetch(&g->obj.refcount, 1);
}

void obj_group_release(obj_group_t *g)
{
    if (!g || g->predef || rail_atomic_sub_fetch(&g->obj.refcount, 1) > 0)
        return;
    free(g->world_ranks);
    obj_fini(&g->obj);
    free(g);
}

int obj_group_rank_of_world(const obj_group_t *g, int world)
{
    if (!g->world_ranks)
        return world >= 0 && world < g->size ? world : MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->world_ranks[i] == world)
            return i;
    return MPI_UNDEFINED;
}

/* ------------------------------------------------------------ sorted views */

typedef struct {
    int world, index;
} member_t;

static int member_cmp(const void *a, const void *b)
{
    const member_t *x = a, *y = b;
    return x->world < y->world ? -1 : x->world > y->world;
}

/* Members of g sorted by world rank (NULL with *ok false when out of memory). */
static member_t *sorted_members(const obj_group_t *g, bool *ok)
{
    *ok = true;
    if (g->size == 0)
        return NULL;
    member_t *m = malloc((size_t)g->size * sizeof(*m));
    if (!m) {
        *ok = false;
        return NULL;
    }
    for (int i = 0; i < g->size; i++)
        m[i] = (member_t){obj_group_world_rank(g, i), i};
    qsort(m, (size_t)g->size, sizeof(*m), member_cmp);
    return m;
}

static int find_sorted(const member_t *m, int n, int world)
{
    member_t key = {world, 0};
    const member_t *f = n ? bsearch(&key, m, (size_t)n, sizeof(*m), member_cmp) : NULL;
    return f ? f->index : MPI_UNDEFINED;
}

bool obj_group_is_subset(const obj_group_t *sub, const obj_group_t *g)
{
    bool ok;
    member_t *m = sorted_members(g, &ok);
    bool subset = ok;
    for (int i = 0; subset && i < sub->size; i++)
        subset = find_sorted(m, g->size, obj_group_world_rank(sub, i)) != MPI_UNDEFINED;
    free(m);
    return subset;
}

int obj_group_compare(const obj_group_t *a, const obj_group_t *b)
{
    if (a == b)
        return MPI_IDENT;
    if (a->size != b->size)
        return MPI_UNEQUAL;
    bool same_order = true;
    for (int i = 0; i < a->size && same_order; i++)
        same_order = obj_group_world_rank(a, i) == obj_group_world_rank(b, i);
    if (same_order)
        return MPI_IDENT;
    return obj_group_is_subset(a, b) ? MPI_SIMILAR : MPI_UNEQUAL;
}

int obj_group_translate_ranks(const obj_group_t *group1, int n, const int ranks1[],
                              const obj_group_t *group2, int ranks2[])
{
    bool ok;
    member_t *m = sorted_members(group2, &ok);
    if (!ok)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory translating ranks");
    for (int i = 0; i < n; i++)
        ranks2[i] = ranks1[i] == MPI_PROC_NULL
                        ? MPI_PROC_NULL
                        : find_sorted(m, group2->size, obj_group_world_rank(group1, ranks1[i]));
    free(m);
    return MPI_SUCCESS;
}
