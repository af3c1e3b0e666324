/* Duplication (dup, dup_with_info, idup, idup_with_info) and creation from
 * a group (create, create_group). */
#include "mpi/mpi_comm_int.h"
#include "mpi/mpi_attr.h"
#include "mpi/mpi_info.h"
#include "mpi/mpi_request.h"
#include "mpi/mpi_topo.h"
#include "mpi/binding/gen/mpi_impl.h"
#include "pml/pml.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ dup */

/* Set up dup's object after the agreement (same groups as comm). */
static int dup_setup(mpi_comm_t *comm, mpi_comm_t *c, const uint32_t ids[2])
{
    if (comm->is_inter)
        return comm_setup_inter(c, comm->group, comm->remote_group, ids[0], ids[1]);
    return comm_setup_intra(c, comm->group, ids[0]);
}

/* What dup copies besides the groups: topology, hints, attributes.  The
 * info of dup_with_info replaces comm's hints. */
static int dup_copy(mpi_comm_t *comm, mpi_comm_t *c, const mpi_info_t *info, bool with_info)
{
    int rc = mpi_topo_copy(comm->topo, &c->topo);
    if (rc == MPI_SUCCESS)
        rc = comm_info_merge(&c->info, with_info ? info : comm->info);
    if (rc == MPI_SUCCESS)
        rc = mpi_attr_copy_all(MPI_ATTR_COMM, mpi_comm_handle(comm), comm->attrs, &c->attrs);
    return rc;
}

static int dup_common(mpi_comm_t *comm, mpi_info_t *info, bool with_info, MPI_Comm *newcomm)
{
    mpi_comm_t *c = comm_new(comm);
    if (!c)
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
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
        mpi_comm_release(c);
        return rc;
    }
    *newcomm = mpi_comm_handle(c);
    return MPI_SUCCESS;
}

int mpii_comm_dup(mpi_comm_t *comm, MPI_Comm *newcomm)
{
    return dup_common(comm, NULL, false, newcomm);
}

int mpii_comm_dup_with_info(mpi_comm_t *comm, mpi_info_t *info, MPI_Comm *newcomm)
{
    return dup_common(comm, info, true, newcomm);
}

/* ------------------------------------------------------------ idup */

/* The request of MPI_Comm_idup: complete when the new communicator is
 * usable.  The handle exists (and attributes, hints and topology are
 * copied) at once; the context id is agreed in the progress engine. */
typedef struct idup_req {
    mpi_request_t req;
    mpi_comm_t *parent;
    mpi_comm_t *newcomm;
} idup_req_t;

static void idup_release(mpi_request_t *req)
{
    req->obj.kind = MPI_OBJ_FREED;
    free(req);
}

static const mpi_request_ops_t idup_ops = { .release = idup_release };

/* Agreement done (progress engine, inside the critical section). */
static void idup_done(void *arg, int rc, const uint32_t ids[2])
{
    idup_req_t *r = arg;
    if (rc == MPI_SUCCESS)
        rc = dup_setup(r->parent, r->newcomm, ids);
    else
        comm_destroy(r->newcomm);
    mpi_comm_release(r->parent);
    mpi_req_status_empty(&r->req.status);
    r->req.status.error = rc;
    mpi_request_complete(&r->req);
}

static int idup_common(mpi_comm_t *comm, mpi_info_t *info, bool with_info, MPI_Comm *newcomm,
                       MPI_Request *request)
{
    idup_req_t *r = calloc(1, sizeof(*r));
    mpi_comm_t *c = r ? comm_new(comm) : NULL;
    if (!c) {
        free(r);
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    int rc = dup_copy(comm, c, info, with_info);
    if (rc != MPI_SUCCESS) {
        comm_destroy(c);
        free(r);
        return rc;
    }
    mpi_request_init(&r->req, MPI_REQ_COLL, &idup_ops, comm);
    r->parent = comm;
    r->newcomm = c;
    mpi_comm_retain(comm);
    comm_agree_t a;
    comm_agree_over(comm, true, &a);
    a.nids = comm->is_inter ? 2 : 1;
    *newcomm = mpi_comm_handle(c);
    *request = (MPI_Request)&r->req;
    rc = comm_ctxid_agree_start(&a, idup_done, r);
    if (rc != MPI_SUCCESS) {
        mpi_comm_release(comm);
        comm_destroy(c);
        free(r);
        *newcomm = MPI_COMM_NULL;
        *request = MPI_REQUEST_NULL;
    }
    return rc;
}

int mpii_comm_idup(mpi_comm_t *comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_common(comm, NULL, false, newcomm, request);
}

int mpii_comm_idup_with_info(mpi_comm_t *comm, mpi_info_t *info, MPI_Comm *newcomm,
                             MPI_Request *request)
{
    return idup_common(comm, info, true, newcomm, request);
}

/* ------------------------------------------------------------ create */

int mpii_comm_create(mpi_comm_t *comm, mpi_group_t *group, MPI_Comm *newcomm)
{
    mpi_comm_t *c = NULL;
    int rc = comm_create_internal(comm, group, &c);
    if (rc == MPI_SUCCESS)
        *newcomm = mpi_comm_handle(c);
    return rc;
}

/* Intracommunicator: every process of comm takes part in the agreement;
 * members of group get the communicator. */
int comm_create_intra(mpi_comm_t *comm, mpi_group_t *group, mpi_comm_t **out)
{
    if (!mpi_group_is_subset(group, comm->group))
        return mpi_errf(MPI_ERR_GROUP, "the group of MPI_Comm_create is not a subgroup of the "
                        "communicator's group");
    bool member = group->rank != MPI_UNDEFINED;
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_over(comm, member, &a);
    int rc = comm_ctxid_agree(&a, ids);
    *out = NULL;
    if (rc != MPI_SUCCESS || !member)
        return rc;
    mpi_comm_t *c = comm_new(comm);
    if (!c)
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    rc = comm_setup_intra(c, group, ids[0]);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}

/* ------------------------------------------------------------ create_group */

/* Ranks in comm of the members of group (a subgroup of comm's). */
static int group_ranks_in(const mpi_group_t *group, const mpi_comm_t *comm, int **out)
{
    int *r = malloc((size_t)RAIL_MAX(group->size, 1) * sizeof(int));
    if (!r)
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < group->size; i++)
        r[i] = i;
    int rc = mpii_group_translate_ranks((mpi_group_t *)group, group->size, r, comm->group, r);
    for (int i = 0; rc == MPI_SUCCESS && i < group->size; i++)
        if (r[i] == MPI_UNDEFINED)
            rc = mpi_errf(MPI_ERR_GROUP, "the group of MPI_Comm_create_group is not a subgroup "
                          "of the communicator's group");
    if (rc != MPI_SUCCESS) {
        free(r);
        return rc;
    }
    *out = r;
    return MPI_SUCCESS;
}

int mpii_comm_create_group(mpi_comm_t *comm, mpi_group_t *group, int tag, MPI_Comm *newcomm)
{
    if (comm->is_inter)
        return mpi_errf(MPI_ERR_COMM, "MPI_Comm_create_group needs an intracommunicator");
    *newcomm = MPI_COMM_NULL;
    if (group->rank == MPI_UNDEFINED)
        return MPI_SUCCESS;   /* not a member: a local operation */
    int *ranks = NULL;
    int rc = group_ranks_in(group, comm, &ranks);
    if (rc != MPI_SUCCESS)
        return rc;
    comm_agree_t a = {
        .local = { .comm = comm, .flags = PML_COLL, .tag = comm_tag_user(COMM_TAG_GROUP, tag),
                   .n = group->size, .me = group->rank, .ranks = ranks },
        .member = true, .nids = 1,
        .key = COMM_KEY(COMM_KEY_GROUP, comm->context_id, tag),
    };
    uint32_t ids[2];
    rc = comm_ctxid_agree(&a, ids);
    free(ranks);
    if (rc != MPI_SUCCESS)
        return rc;
    mpi_comm_t *c = comm_new(comm);
    if (!c)
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    rc = comm_setup_intra(c, group, ids[0]);
    if (rc == MPI_SUCCESS)
        *newcomm = mpi_comm_handle(c);
    return rc;
}
