/* Duplication (dup, dup_with_info, idup, idup_with_info) and creation from
 * a group (create, create_group). */
#include "obj/comm_int.h"
#include "obj/attr.h"
#include "obj/info.h"
#include "obj/request.h"
#include "obj/topo.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ dup */

/* Set up dup's object after the agreement (same groups as comm). */
static int dup_setup(obj_comm_t *comm, obj_comm_t *c, const uint32_t ids[2])
{
    if (comm->is_inter)
        return comm_setup_inter(c, comm->group, comm->remote_group, ids[0], ids[1]);
    return comm_setup_intra(c, comm->group, ids[0]);
}

/* What dup copies besides the groups: topology, hints, attributes.  The
 * info of dup_with_info replaces comm's hints. */
static int dup_copy(obj_comm_t *comm, obj_comm_t *c, const obj_info_t *info, bool with_info)
{
    int rc = obj_topo_copy(comm->topo, &c->topo);
    if (rc == MPI_SUCCESS)
        rc = with_info ? comm_info_merge(&c->info, info) : comm_info_copy(&c->info, comm->info);
    if (rc == MPI_SUCCESS)
        rc = obj_attr_copy_all(OBJ_ATTR_COMM, obj_comm_handle(comm), comm->attrs, &c->attrs);
    return rc;
}

int obj_comm_dup(obj_comm_t *comm, const obj_info_t *info, bool with_info, obj_comm_t **out)
{
    obj_comm_t *c = comm_new(comm);
    if (!c)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_over(comm, true, &a);
    a.nids = comm->is_inter ? 2 : 1;
    int rc = comm_ctxid_agree(&a, ids);
    if (rc != MPI_SUCCESS) {
        comm_destroy(c);
        return rc;
    }
    if ((rc = dup_setup(comm, c, ids)) != MPI_SUCCESS)
        return rc;
    if ((rc = dup_copy(comm, c, info, with_info)) != MPI_SUCCESS) {
        obj_comm_release(c);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ idup */

/* The request of MPI_Comm_idup: complete when the new communicator is
 * usable.  The handle exists (and attributes, hints and topology are
 * copied) at once; the context id is agreed in the progress engine. */
typedef struct idup_req {
    obj_request_t req;
    obj_comm_t *parent;
    obj_comm_t *newcomm;
} idup_req_t;

static void idup_release(obj_request_t *req)
{
    req->obj.kind = OBJ_FREED;
    free(req);
}

static const obj_request_ops_t idup_ops = { .release = idup_release };

/* Agreement done (progress engine, inside the critical section). */
static void idup_done(void *arg, int rc, const uint32_t ids[2])
{
    idup_req_t *r = arg;
    if (rc == MPI_SUCCESS)
        rc = dup_setup(r->parent, r->newcomm, ids);
    else
        comm_destroy(r->newcomm);
    obj_comm_release(r->parent);
    obj_req_status_empty(&r->req.status);
    r->req.status.error = rc;
    obj_request_complete(&r->req);
}

int obj_comm_idup(obj_comm_t *comm, const obj_info_t *info, bool with_info, obj_comm_t **out,
                  obj_request_t **request)
{
    idup_req_t *r = calloc(1, sizeof(*r));
    obj_comm_t *c = r ? comm_new(comm) : NULL;
    if (!c) {
        free(r);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    int rc = dup_copy(comm, c, info, with_info);
    if (rc != MPI_SUCCESS) {
        comm_destroy(c);
        free(r);
        return rc;
    }
    obj_request_init(&r->req, OBJ_REQ_COLL, &idup_ops, comm);
    r->parent = comm;
    r->newcomm = c;
    obj_comm_retain(comm);
    comm_agree_t a;
    comm_agree_over(comm, true, &a);
    a.nids = comm->is_inter ? 2 : 1;
    rc = comm_ctxid_agree_start(&a, idup_done, r);
    if (rc != MPI_SUCCESS) {
        obj_comm_release(comm);
        comm_destroy(c);
        free(r);
        return rc;
    }
    *out = c;
    *request = &r->req;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ create */

/* Intracommunicator: every process of comm takes part in the agreement;
 * members of group get the communicator. */
int comm_create_intra(obj_comm_t *comm, obj_group_t *group, obj_comm_t **out)
{
    if (!obj_group_is_subset(group, comm->group))
        return obj_errf(MPI_ERR_GROUP, "the group of MPI_Comm_create is not a subgroup of the "
                        "communicator's group");
    bool member = group->rank != MPI_UNDEFINED;
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_over(comm, member, &a);
    int rc = comm_ctxid_agree(&a, ids);
    *out = NULL;
    if (rc != MPI_SUCCESS || !member)
        return rc;
    obj_comm_t *c = comm_new(comm);
    if (!c)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    rc = comm_setup_intra(c, group, ids[0]);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}

/* ------------------------------------------------------------ create_group */

/* Ranks in comm of the members of group (a subgroup of comm's). */
static int group_ranks_in(const obj_group_t *group, const obj_comm_t *comm, int **out)
{
    int *r = malloc((size_t)RAIL_MAX(group->size, 1) * sizeof(int));
    if (!r)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < group->size; i++)
        r[i] = i;
    int rc = obj_group_translate_ranks(group, group->size, r, comm->group, r);
    for (int i = 0; rc == MPI_SUCCESS && i < group->size; i++)
        if (r[i] == MPI_UNDEFINED)
            rc = obj_errf(MPI_ERR_GROUP, "the group of MPI_Comm_create_group is not a subgroup "
                          "of the communicator's group");
    if (rc != MPI_SUCCESS) {
        free(r);
        return rc;
    }
    *out = r;
    return MPI_SUCCESS;
}

int obj_comm_create_group(obj_comm_t *comm, obj_group_t *group, int tag, obj_comm_t **out)
{
    if (group->rank == MPI_UNDEFINED)
        return MPI_SUCCESS;   /* not a member: a local operation */
    int *ranks = NULL;
    int rc = group_ranks_in(group, comm, &ranks);
    if (rc != MPI_SUCCESS)
        return rc;
    comm_agree_t a = {
        .local = { .comm = comm, .flags = OBJ_P2P_COLL, .tag = comm_tag_user(COMM_TAG_GROUP, tag),
                   .n = group->size, .me = group->rank, .ranks = ranks },
        .member = true, .nids = 1,
        .key = COMM_KEY(COMM_KEY_GROUP, comm->context_id, tag),
    };
    uint32_t ids[2];
    rc = comm_ctxid_agree(&a, ids);
    free(ranks);
    if (rc != MPI_SUCCESS)
        return rc;
    obj_comm_t *c = comm_new(comm);
    if (!c)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    rc = comm_setup_intra(c, group, ids[0]);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}
