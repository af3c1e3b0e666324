/* MPI_COMM_WORLD, MPI_COMM_SELF, their groups, and the basic queries. */
#include "mpi/mpi_err.h"
#include "mpi/mpi_env.h"
#include "mpi/mpi_comm.h"
#include "mpi/mpi_attr.h"
#include "mpi/mpi_errhandler.h"
#include "runtime/rte.h"
#include "pml/pml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mpi_comm_t comm_world, comm_self;
static mpi_group_t group_world, group_self, group_empty;
static int self_world_rank;

static void group_init(mpi_group_t *g, const void *handle, int size, int rank, int *ranks)
{
    memset(g, 0, sizeof(*g));
    if (handle)
        mpi_obj_init_predef(&g->obj, MPI_OBJ_GROUP, handle);
    else
        mpi_obj_init(&g->obj, MPI_OBJ_GROUP);
    g->obj.refcount = 1 << 30;   /* never freed */
    g->size = size;
    g->rank = rank;
    g->world_ranks = ranks;
}

static int comm_init(mpi_comm_t *c, MPI_Comm handle, mpi_group_t *g, uint32_t ctx,
                     const char *name)
{
    memset(c, 0, sizeof(*c));
    mpi_obj_init_predef(&c->obj, MPI_OBJ_COMM, handle);
    c->rank = g->rank;
    c->size = g->size;
    c->remote_size = g->size;
    c->context_id = ctx;
    c->group = g;
    c->errhandler = &mpi_errhandler_fatal;
    snprintf(c->name, sizeof(c->name), "%s", name);
    return pml_comm_create(c);
}

int mpi_comm_predef_init(void)
{
    int rc;
    group_init(&group_empty, MPI_GROUP_EMPTY, 0, MPI_UNDEFINED, NULL);
    group_init(&group_world, NULL, rte_info.size, rte_info.rank, NULL);
    self_world_rank = rte_info.rank;
    group_init(&group_self, NULL, 1, 0, &self_world_rank);
    RAIL_CHECK(comm_init(&comm_world, MPI_COMM_WORLD, &group_world, 0, "MPI_COMM_WORLD"));
    RAIL_CHECK(comm_init(&comm_self, MPI_COMM_SELF, &group_self, 1, "MPI_COMM_SELF"));
    mpi_env.comm_world = &comm_world;
    mpi_env.comm_self = &comm_self;
    return MPI_SUCCESS;
fail:
    return rc;
}

void mpi_comm_predef_fini(void)
{
    if (!mpi_env.comm_world)
        return;
    mpi_attr_delete_all(MPI_ATTR_COMM, MPI_COMM_WORLD, &comm_world.attrs);
    pml_comm_destroy(&comm_self);
    pml_comm_destroy(&comm_world);
    mpi_errhandler_release(comm_world.errhandler);
    mpi_errhandler_release(comm_self.errhandler);
    /* The handles stay valid objects (errors after finalize are caught by
     * the library-state check), but no longer usable for communication. */
    mpi_env.comm_world = mpi_env.comm_self = NULL;
}

int mpii_comm_rank(mpi_comm_t *comm, int *rank)
{
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int mpii_comm_size(mpi_comm_t *comm, int *size)
{
    *size = comm->size;
    return MPI_SUCCESS;
}

int mpii_comm_remote_size(mpi_comm_t *comm, int *size)
{
    if (!comm->is_inter)
        return mpi_errf(MPI_ERR_COMM, "MPI_Comm_remote_size needs an intercommunicator");
    *size = comm->remote_size;
    return MPI_SUCCESS;
}

int mpii_comm_test_inter(mpi_comm_t *comm, int *flag)
{
    *flag = comm->is_inter;
    return MPI_SUCCESS;
}

int mpii_comm_set_name(mpi_comm_t *comm, const char *comm_name)
{
    snprintf(comm->name, sizeof(comm->name), "%s", comm_name);
    return MPI_SUCCESS;
}

int mpii_comm_get_name(mpi_comm_t *comm, char *comm_name, int *resultlen)
{
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", comm->name);
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}
