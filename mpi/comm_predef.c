/* MPI_COMM_WORLD, MPI_COMM_SELF, their groups, MPI_GROUP_EMPTY, the hidden
 * bootstrap communicator, and the basic queries. */
#include "obj/comm_int.h"
#include "mpi/mpi_env.h"
#include "obj/attr.h"
#include "obj/errhandler.h"
#include "obj/info.h"
#include "mpi/binding/gen/mpi_impl.h"
#include "runtime/rte.h"
#include "pml/pml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static obj_comm_t comm_world, comm_self, comm_boot;
static obj_group_t group_world, group_self;
static int self_world_rank;
static bool boot_up;

/* A group that lives as long as the library (never counted, never freed). */
static void group_init(obj_group_t *g, int size, int rank, int *ranks)
{
    memset(g, 0, sizeof(*g));
    obj_init_predef(&g->obj, OBJ_GROUP, g);
    g->predef = true;
    g->size = size;
    g->rank = rank;
    g->world_ranks = ranks;
}

static int comm_init(obj_comm_t *c, MPI_Comm handle, obj_group_t *g, uint32_t ctx,
                     const char *name)
{
    memset(c, 0, sizeof(*c));
    obj_init_predef(&c->obj, OBJ_COMM, handle ? (const void *)handle : (const void *)c);
    c->flags = OBJ_COMM_F_PREDEF;
    c->rank = g->rank;
    c->size = g->size;
    c->remote_size = g->size;
    c->context_id = ctx;
    c->group = g;
    c->errhandler = &obj_errhandler_fatal;
    snprintf(c->name, sizeof(c->name), "%s", name);
    int rc = pml_comm_create(c);
    if (rc == MPI_SUCCESS && handle) {
        rc = comm_coll_attach(c);
        if (rc != MPI_SUCCESS)
            pml_comm_destroy(c);
    }
    c->active = rc == MPI_SUCCESS;
    return rc;
}

int obj_comm_predef_init(void)
{
    int rc;
    obj_group_empty();
    group_init(&group_world, rte_info.size, rte_info.rank, NULL);
    self_world_rank = rte_info.rank;
    group_init(&group_self, 1, 0, &self_world_rank);
    RAIL_CHECK(comm_ctxid_init());
    RAIL_CHECK(comm_init(&comm_world, MPI_COMM_WORLD, &group_world, COMM_CTXID_WORLD,
                         "MPI_COMM_WORLD"));
    RAIL_CHECK(comm_init(&comm_self, MPI_COMM_SELF, &group_self, COMM_CTXID_SELF,
                         "MPI_COMM_SELF"));
    RAIL_CHECK(comm_init(&comm_boot, NULL, &group_world, COMM_CTXID_BOOT, "(bootstrap)"));
    comm_boot.flags |= OBJ_COMM_F_INTERNAL;
    boot_up = true;
    mpi_env.comm_world = &comm_world;
    mpi_env.comm_self = &comm_self;
    return MPI_SUCCESS;
fail:
    return rc;
}

static void comm_predef_down(obj_comm_t *c, bool coll)
{
    if (!c->active)
        return;
    if (coll)
        comm_coll_detach(c);
    pml_comm_destroy(c);
    c->active = false;
    obj_errhandler_release(c->errhandler);
    c->errhandler = &obj_errhandler_fatal;
}

void obj_comm_predef_fini(void)
{
    if (!mpi_env.comm_world)
        return;
    obj_attr_delete_all(OBJ_ATTR_COMM, MPI_COMM_WORLD, &comm_world.attrs);
    obj_info_release(comm_world.info);
    obj_info_release(comm_self.info);
    comm_world.info = comm_self.info = NULL;
    comm_predef_down(&comm_boot, false);
    boot_up = false;
    comm_predef_down(&comm_self, true);
    comm_predef_down(&comm_world, true);
    comm_ctxid_fini();
    comm_hw_fini();
    /* The handles stay valid objects (errors after finalize are caught by
     * the library-state check), but no longer usable for communication. */
    mpi_env.comm_world = mpi_env.comm_self = NULL;
}

obj_comm_t *obj_comm_bootstrap(void)
{
    return boot_up ? &comm_boot : NULL;
}

/* ------------------------------------------------------------ queries */

int mpii_comm_rank(obj_comm_t *comm, int *rank)
{
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int mpii_comm_size(obj_comm_t *comm, int *size)
{
    *size = comm->size;
    return MPI_SUCCESS;
}

int mpii_comm_remote_size(obj_comm_t *comm, int *size)
{
    if (!comm->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Comm_remote_size needs an intercommunicator");
    *size = comm->remote_size;
    return MPI_SUCCESS;
}

int mpii_comm_test_inter(obj_comm_t *comm, int *flag)
{
    *flag = comm->is_inter;
    return MPI_SUCCESS;
}

int mpii_comm_set_name(obj_comm_t *comm, const char *comm_name)
{
    snprintf(comm->name, sizeof(comm->name), "%s", comm_name);
    return MPI_SUCCESS;
}

int mpii_comm_get_name(obj_comm_t *comm, char *comm_name, int *resultlen)
{
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", comm->name);
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}
