/* MPI_Comm_split (intra- and intercommunicators), MPI_Comm_split_type, and
 * MPI_Comm_create on intercommunicators. */
#include "obj/comm_int.h"
#include "obj/info.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    int color, key;
} split_rec_t;

typedef struct {
    int key, index, world;
} split_member_t;

static int member_cmp(const void *a, const void *b)
{
    const split_member_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The group of the processes of `g` whose record has `color`, ordered by
 * (key, rank in g).  Empty when color is MPI_UNDEFINED. */
static int split_group(const split_rec_t *recs, const obj_group_t *g, int color,
                       obj_session_t *session, obj_group_t **out)
{
    split_member_t *m = malloc((size_t)RAIL_MAX(g->size, 1) * sizeof(*m));
    if (!m)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int n = 0;
    for (int i = 0; color != MPI_UNDEFINED && i < g->size; i++)
        if (recs[i].color == color)
            m[n++] = (split_member_t){recs[i].key, i, obj_group_world_rank(g, i)};
    qsort(m, (size_t)n, sizeof(*m), member_cmp);
    int *ranks = malloc((size_t)RAIL_MAX(n, 1) * sizeof(int));
    if (!ranks) {
        free(m);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        ranks[i] = m[i].world;
    free(m);
    return obj_group_make(n, ranks, session, out);
}

static int split_intra(obj_comm_t *comm, split_rec_t mine, obj_comm_t **out)
{
    split_rec_t *recs = malloc((size_t)comm->size * sizeof(*recs));
    if (!recs)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    comm_xchg_t x = comm_xchg_intra(comm);
    int rc = comm_xchg_allgather(&x, &mine, sizeof(mine), recs);
    bool member = mine.color != MPI_UNDEFINED;
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_over(comm, member, &a);
    if (rc == MPI_SUCCESS)
        rc = comm_ctxid_agree(&a, ids);
    obj_group_t *g = NULL;
    if (rc == MPI_SUCCESS && member)
        rc = split_group(recs, comm->group, mine.color, comm->session, &g);
    free(recs);
    if (rc != MPI_SUCCESS || !member)
        return rc;
    obj_comm_t *c = comm_new(comm);
    rc = c ? comm_setup_intra(c, g, ids[0]) : obj_errf(MPI_ERR_NO_MEM, "out of memory");
    obj_group_release(g);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}

/* Build an intercommunicator over (local, remote) with ids, or nothing when
 * either is empty or this process is not in local; takes the groups. */
static int make_inter(obj_comm_t *comm, obj_group_t *local, obj_group_t *remote,
                      const uint32_t ids[2], obj_comm_t **out)
{
    int rc = MPI_SUCCESS;
    if (local->rank != MPI_UNDEFINED && remote->size > 0) {
        obj_comm_t *c = comm_new(comm);
        rc = c ? comm_setup_inter(c, local, remote, ids[0], ids[1])
               : obj_errf(MPI_ERR_NO_MEM, "out of memory");
        if (rc == MPI_SUCCESS)
            *out = c;
    }
    obj_group_release(local);
    obj_group_release(remote);
    return rc;
}

static int split_inter(obj_comm_t *comm, split_rec_t mine, obj_comm_t **out)
{
    int n = comm->size + comm->remote_size;
    split_rec_t *recs = malloc((size_t)n * sizeof(*recs));
    if (!recs)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int rc = intercomm_allgather(comm, &mine, sizeof(mine), recs);
    obj_group_t *local = NULL, *remote = NULL;
    if (rc == MPI_SUCCESS)
        rc = split_group(recs, comm->group, mine.color, comm->session, &local);
    if (rc == MPI_SUCCESS)
        rc = split_group(recs + comm->size, comm->remote_group, mine.color, comm->session,
                         &remote);
    free(recs);
    bool member = rc == MPI_SUCCESS && mine.color != MPI_UNDEFINED && remote->size > 0;
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_over(comm, member, &a);
    a.nids = 2;
    if (rc == MPI_SUCCESS)
        rc = comm_ctxid_agree(&a, ids);
    if (rc == MPI_SUCCESS)
        return make_inter(comm, local, remote, ids, out);
    obj_group_release(local);
    obj_group_release(remote);
    return rc;
}

int obj_comm_split(obj_comm_t *comm, int color, int key, obj_comm_t **out)
{
    int bad = color != MPI_UNDEFINED && color < 0;
    split_rec_t mine = {bad ? MPI_UNDEFINED : color, key};
    *out = NULL;
    /* A bad color still takes part, so that the others do not hang. */
    int rc = comm->is_inter ? split_inter(comm, mine, out) : split_intra(comm, mine, out);
    if (rc == MPI_SUCCESS && bad)
        rc = obj_errf(MPI_ERR_ARG, "invalid color %d (must be non-negative or MPI_UNDEFINED)",
                      color);
    return rc;
}

/* ------------------------------------------------------------ create on intercommunicators */

static int create_inter(obj_comm_t *comm, obj_group_t *group, obj_comm_t **out)
{
    if (!obj_group_is_subset(group, comm->group))
        return obj_errf(MPI_ERR_GROUP, "the group of MPI_Comm_create is not a subgroup of the "
                        "local group of the intercommunicator");
    obj_group_t *remote = NULL;
    int rc = intercomm_swap_group(comm, group, &remote);
    bool member = rc == MPI_SUCCESS && group->rank != MPI_UNDEFINED && remote->size > 0;
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_over(comm, member, &a);
    a.nids = 2;
    if (rc == MPI_SUCCESS)
        rc = comm_ctxid_agree(&a, ids);
    if (rc != MPI_SUCCESS) {
        obj_group_release(remote);
        return rc;
    }
    obj_group_retain(group);
    return make_inter(comm, group, remote, ids, out);
}

int obj_comm_create(obj_comm_t *comm, obj_group_t *group, obj_comm_t **out)
{
    *out = NULL;
    return comm->is_inter ? create_inter(comm, group, out) : comm_create_intra(comm, group, out);
}

/* ------------------------------------------------------------ split_type */

/* Color for MPI_COMM_TYPE_HW_GUIDED / RESOURCE_GUIDED from the info keys;
 * *type gets the resource type used (for the new communicator's hints). */
static void guided_color(obj_comm_t *comm, int split_type, const obj_info_t *info, int *color,
                         const char **type)
{
    const char *pset = split_type == MPI_COMM_TYPE_RESOURCE_GUIDED
                           ? obj_info_value(info, "mpi_pset_name") : NULL;
    const char *hw = obj_info_value(info, "mpi_hw_resource_type");
    bool known = false;
    *color = MPI_UNDEFINED;
    *type = NULL;
    if (pset && strcasecmp(pset, "mpi://WORLD") == 0) {
        *color = 0;
        *type = NULL;
    } else if (pset && strcasecmp(pset, "mpi://SELF") == 0) {
        *color = comm->rank;
    } else if (hw && strcmp(hw, "mpi_shared_memory") == 0) {
        *color = (int)rte_info.node_id;
        *type = "mpi_shared_memory";
    } else if (hw && comm_hw_color(hw, color, &known) == MPI_SUCCESS && known) {
        *type = hw;
    }
}

/* MPI_COMM_TYPE_HW_UNGUIDED: the first hwloc level, top down, at which some
 * process is inside one object and every such process's group is a strict
 * subset of comm.  Processes inside no object of that level, and all when
 * no level qualifies, get MPI_COMM_NULL. */
enum { LEVEL_NONE = 0, LEVEL_STRICT = 1, LEVEL_WHOLE = 2 };

static int level_verdict(obj_comm_t *comm, obj_comm_t *c, bool *take)
{
    int mine = !c ? LEVEL_NONE : c->size < comm->size ? LEVEL_STRICT : LEVEL_WHOLE;
    int *all = malloc((size_t)comm->size * sizeof(int));
    if (!all)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    comm_xchg_t x = comm_xchg_intra(comm);
    int rc = comm_xchg_allgather(&x, &mine, sizeof(int), all);
    bool some = false, whole = false;
    for (int i = 0; i < comm->size; i++) {
        some = some || all[i] == LEVEL_STRICT;
        whole = whole || all[i] == LEVEL_WHOLE;
    }
    free(all);
    *take = some && !whole;
    return rc;
}

static int split_unguided(obj_comm_t *comm, int key, obj_comm_t **out)
{
    *out = NULL;
    for (int l = 0; comm_hw_levels[l]; l++) {
        int color;
        bool known, take = false;
        comm_hw_color(comm_hw_levels[l], &color, &known);
        obj_comm_t *c = NULL;
        int rc = obj_comm_split(comm, color, key, &c);
        if (rc == MPI_SUCCESS)
            rc = level_verdict(comm, c, &take);
        if (rc == MPI_SUCCESS && take) {
            *out = c;
            return c ? comm_set_hint(c, "mpi_hw_resource_type", comm_hw_levels[l]) : MPI_SUCCESS;
        }
        if (c)
            obj_comm_release(c);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static bool split_type_color(obj_comm_t *comm, int split_type, const obj_info_t *info, int *color,
                             const char **type)
{
    *type = NULL;
    switch (split_type) {
    case MPI_UNDEFINED: *color = MPI_UNDEFINED; return false;
    case MPI_COMM_TYPE_SHARED: *color = (int)rte_info.node_id; return false;
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        guided_color(comm, split_type, info, color, type);
        return false;
    default:
        *color = MPI_UNDEFINED;
        return true;
    }
}

int obj_comm_split_type(obj_comm_t *comm, int split_type, int key, const obj_info_t *info,
                        obj_comm_t **out)
{
    obj_comm_t *c = NULL;
    int rc;
    if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        rc = split_unguided(comm, key, &c);
    } else {
        int color;
        const char *type;
        /* An invalid type still takes part, so that the others do not hang. */
        int bad = split_type_color(comm, split_type, info, &color, &type);
        rc = obj_comm_split(comm, color, key, &c);
        if (rc == MPI_SUCCESS && c && type)
            rc = comm_set_hint(c, "mpi_hw_resource_type", type);
        if (rc == MPI_SUCCESS && bad)
            rc = obj_errf(MPI_ERR_ARG, "invalid split_type %d", split_type);
    }
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}
