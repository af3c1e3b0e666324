/* MPI_COMM_WORLD, MPI_COMM_SELF, their groups, MPI_GROUP_EMPTY and the
 * hidden bootstrap communicator. */
#include "obj/comm_int.h"
#include "obj/attr.h"
#include "obj/errhandler.h"
#include "obj/info.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static obj_comm_t comm_world, comm_self, comm_boot;
static obj_group_t group_world, group_self;
static int self_world_rank;
static bool boot_up, predef_up;

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
    if (!handle)
        c->flags |= OBJ_COMM_F_INTERNAL | OBJ_COMM_F_BOOT;
    return comm_layers_attach(c);
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
    boot_up = true;
    predef_up = true;
    return MPI_SUCCESS;
fail:
    return rc;
}

static void comm_predef_down(obj_comm_t *c)
{
    if (!c->active)
        return;
    comm_layers_detach(c);
    obj_errhandler_release(c->errhandler);
    c->errhandler = &obj_errhandler_fatal;
}

void obj_comm_predef_fini(void)
{
    if (!predef_up)
        return;
    obj_attr_delete_all(OBJ_ATTR_COMM, MPI_COMM_WORLD, &comm_world.attrs);
    obj_info_release(comm_world.info);
    obj_info_release(comm_self.info);
    comm_world.info = comm_self.info = NULL;
    comm_predef_down(&comm_boot);
    boot_up = false;
    comm_predef_down(&comm_self);
    comm_predef_down(&comm_world);
    comm_ctxid_fini();
    comm_hw_fini();
    /* The handles stay valid objects (errors after finalize are caught by
     * the library-state check), but no longer usable for communication. */
    predef_up = false;
}

obj_comm_t *obj_comm_bootstrap(void)
{
    return boot_up ? &comm_boot : NULL;
}

obj_comm_t *obj_comm_world(void)
{
    return predef_up ? &comm_world : NULL;
}

obj_comm_t *obj_comm_self(void)
{
    return predef_up ? &comm_self : NULL;
}
