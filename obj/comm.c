/* Communicator objects: construction, references, free / disconnect, and
 * the queries about groups, comparison and info hints. */
#include "obj/comm_int.h"
#include "obj/attr.h"
#include "obj/errhandler.h"
#include "obj/info.h"
#include "obj/topo.h"
#include "base/atomic.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ construction */

obj_comm_t *comm_new(const obj_comm_t *parent)
{
    obj_comm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    obj_init(&c->obj, OBJ_COMM);
    c->errhandler = parent ? parent->errhandler : &obj_errhandler_fatal;
    obj_errhandler_retain(c->errhandler);
    c->session = parent ? parent->session : NULL;
    c->rank = MPI_UNDEFINED;
    return c;
}

int comm_setup_intra(obj_comm_t *c, obj_group_t *group, uint32_t cid)
{
    obj_group_retain(group);
    c->group = group;
    c->rank = group->rank;
    c->size = c->remote_size = group->size;
    c->context_id = cid;
    int rc = comm_layers_attach(c);
    if (rc != MPI_SUCCESS)
        comm_destroy(c);
    return rc;
}

int comm_setup_inter(obj_comm_t *c, obj_group_t *local, obj_group_t *remote, uint32_t cid,
                     uint32_t local_cid)
{
    obj_comm_t *lc = comm_new(NULL);
    if (!lc) {
        comm_destroy(c);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    lc->flags |= OBJ_COMM_F_INTERNAL;
    lc->session = c->session;
    int rc = comm_setup_intra(lc, local, local_cid);
    if (rc != MPI_SUCCESS) {
        comm_destroy(c);
        return rc;
    }
    c->local_comm = lc;
    obj_group_retain(local);
    obj_group_retain(remote);
    c->group = local;
    c->remote_group = remote;
    c->is_inter = 1;
    c->rank = local->rank;
    c->size = local->size;
    c->remote_size = remote->size;
    c->context_id = cid;
    rc = comm_layers_attach(c);
    if (rc != MPI_SUCCESS)
        comm_destroy(c);
    return rc;
}

void comm_destroy(obj_comm_t *c)
{
    comm_layers_detach(c);
    comm_ctxid_release(c->context_id);
    if (c->attrs)
        obj_attr_delete_all(OBJ_ATTR_COMM, obj_comm_handle(c), &c->attrs);
    if (c->local_comm)
        obj_comm_release(c->local_comm);
    obj_group_release(c->group);
    obj_group_release(c->remote_group);
    obj_errhandler_release(c->errhandler);
    obj_info_release(c->info);
    obj_topo_free(c->topo);
    obj_fini(&c->obj);
    free(c);
}

void obj_comm_retain(obj_comm_t *comm)
{
    if (comm && !(comm->flags & OBJ_COMM_F_PREDEF))
        rail_atomic_add_fetch(&comm->obj.refcount, 1);
}

void obj_comm_release(obj_comm_t *comm)
{
    if (!comm || (comm->flags & OBJ_COMM_F_PREDEF))
        return;
    if (rail_atomic_sub_fetch(&comm->obj.refcount, 1) == 0)
        comm_destroy(comm);
}

uint64_t comm_key_of(const obj_comm_t *comm)
{
    return COMM_KEY(COMM_KEY_COMM, comm->context_id, 0);
}

void comm_agree_over(obj_comm_t *comm, bool member, comm_agree_t *a)
{
    memset(a, 0, sizeof(*a));
    a->key = comm_key_of(comm);
    a->seq = comm->xchg_seq;
    a->member = member;
    a->nids = 1;
    if (!comm->is_inter) {
        a->local = comm_xchg_intra(comm);
        return;
    }
    a->local = comm_xchg_intra(comm->local_comm);
    int peer_tag = comm_tag_next(comm);
    if (comm->rank == 0) {
        a->peer_comm = comm;
        a->peer_flags = OBJ_P2P_COLL;
        a->peer_rank = 0;
        a->peer_tag = peer_tag;
    }
}

/* ------------------------------------------------------------ free */

static int check_freeable(obj_comm_t *c)
{
    if (c->flags & OBJ_COMM_F_PREDEF)
        return obj_errf(MPI_ERR_COMM, "%s cannot be freed", c->name);
    return MPI_SUCCESS;
}

int obj_comm_free(obj_comm_t *c)
{
    int rc = check_freeable(c);
    if (rc == MPI_SUCCESS)
        rc = obj_attr_delete_all(OBJ_ATTR_COMM, obj_comm_handle(c), &c->attrs);
    if (rc == MPI_SUCCESS)
        obj_comm_release(c);
    return rc;
}

/* Synchronize every process of comm (both groups of an intercommunicator). */
static int comm_sync(obj_comm_t *c)
{
    if (!c->is_inter) {
        comm_xchg_t x = comm_xchg_intra(c);
        return comm_xchg_barrier(&x);
    }
    char one = 1, *all = malloc((size_t)(c->size + c->remote_size));
    if (!all)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int rc = intercomm_allgather(c, &one, 1, all);
    free(all);
    return rc;
}

int obj_comm_disconnect(obj_comm_t *c)
{
    int rc = check_freeable(c);
    /* Every process has stopped sending on it once all have arrived here;
     * messages already sent are matched by then in a correct program. */
    if (rc == MPI_SUCCESS)
        rc = comm_sync(c);
    if (rc == MPI_SUCCESS)
        rc = obj_comm_free(c);
    return rc;
}

/* ------------------------------------------------------------ compare */

int obj_comm_compare(const obj_comm_t *comm1, const obj_comm_t *comm2)
{
    if (comm1 == comm2)
        return MPI_IDENT;
    if (comm1->is_inter != comm2->is_inter)
        return MPI_UNEQUAL;
    int g = obj_group_compare(comm1->group, comm2->group);
    int r = comm1->is_inter ? obj_group_compare(comm1->remote_group, comm2->remote_group)
                            : MPI_IDENT;
    if (g == MPI_IDENT && r == MPI_IDENT)
        return MPI_CONGRUENT;
    if (g != MPI_UNEQUAL && r != MPI_UNEQUAL)
        return MPI_SIMILAR;
    return MPI_UNEQUAL;
}

/* ------------------------------------------------------------ info hints */

/* The hints a communicator supports (MPI-4.1 7.4.4), with their defaults:
 * MPI_Comm_get_info returns each of them, and set_info, dup_with_info and
 * the session constructors ignore every other key.  The assertions are
 * accepted and not yet used to take a faster path.  Implementation-set
 * hints (mpi_hw_resource_type, comm_set_hint) come on top. */
static const struct {
    const char *key, *def;
} comm_hints[] = {
    {"mpi_assert_no_any_tag", "false"},
    {"mpi_assert_no_any_source", "false"},
    {"mpi_assert_exact_length", "false"},
    {"mpi_assert_allow_overtaking", "false"},
};

static bool comm_hint_supported(const char *key, const char *value)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(comm_hints); i++)
        if (strcmp(key, comm_hints[i].key) == 0)
            return strcmp(value, "true") == 0 || strcmp(value, "false") == 0;
    return false;
}

/* Merge the hints of info into *dst (created when needed); user_hints: keep
 * only the supported ones. */
static int comm_info_merge_keys(obj_info_t **dst, const obj_info_t *info, bool user_hints)
{
    if (!info || info->n == 0)
        return MPI_SUCCESS;
    if (!*dst && !(*dst = obj_info_new()))
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < info->n; i++) {
        if (user_hints && !comm_hint_supported(info->keys[i], info->values[i]))
            continue;
        if (obj_info_set_value(*dst, info->keys[i], info->values[i]) != MPI_SUCCESS)
            return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    return MPI_SUCCESS;
}

int comm_info_merge(obj_info_t **dst, const obj_info_t *info)
{
    return comm_info_merge_keys(dst, info, true);
}

int comm_info_copy(obj_info_t **dst, const obj_info_t *info)
{
    return comm_info_merge_keys(dst, info, false);
}

int obj_comm_set_info(obj_comm_t *comm, const obj_info_t *info)
{
    /* MPI-4.1 7.4.4: hints not named in info keep their values. */
    return comm_info_merge(&comm->info, info);
}

int obj_comm_get_info(const obj_comm_t *comm, obj_info_t **out)
{
    obj_info_t *info = NULL;
    int rc = comm->info ? obj_info_copy(comm->info, &info) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && !info && !(info = obj_info_new()))
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (size_t i = 0; rc == MPI_SUCCESS && i < RAIL_ARRAY_SIZE(comm_hints); i++)
        if (!obj_info_value(info, comm_hints[i].key) &&
            obj_info_set_value(info, comm_hints[i].key, comm_hints[i].def) != MPI_SUCCESS)
            rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc != MPI_SUCCESS) {
        obj_info_release(info);
        return rc;
    }
    *out = info;
    return MPI_SUCCESS;
}

int comm_set_hint(obj_comm_t *c, const char *key, const char *value)
{
    if (!c->info && !(c->info = obj_info_new()))
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (obj_info_set_value(c->info, key, value) != MPI_SUCCESS)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}
