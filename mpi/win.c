/* MPI_Win_create / allocate / allocate_shared / create_dynamic / free,
 * attach / detach, shared_query, attributes, info, name, group: windows
 * from the API's side (the one-sided layer is osc/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi/mpi_err.h"
#include "obj/attr.h"
#include "obj/comm.h"
#include "obj/errhandler.h"
#include "obj/info.h"
#include "osc/osc.h"
#include "mpi/binding/gen/mpi_impl.h"

static int win_check_args(obj_comm_t *comm, MPI_Aint size, MPI_Aint disp_unit)
{
    if (obj_comm_is_inter(comm))
        return obj_errf(MPI_ERR_COMM, "windows need an intracommunicator");
    if (size < 0)
        return obj_errf(MPI_ERR_SIZE, "negative window size %ld", (long)size);
    if (disp_unit <= 0 || disp_unit > INT32_MAX)
        return obj_errf(MPI_ERR_DISP, "invalid displacement unit %ld", (long)disp_unit);
    return MPI_SUCCESS;
}

static void win_destroy(obj_win_t *w)
{
    if (w->flavor == MPI_WIN_FLAVOR_ALLOCATE)
        free(w->base);
    if (w->info)
        obj_info_release(w->info);
    obj_errhandler_release(w->errhandler);
    obj_fini(&w->obj);
    free(w);
}

/* A window of flavor over comm; base NULL for allocate (allocated here). */
static int win_make(obj_comm_t *comm, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit,
                    obj_info_t *info, obj_win_t **out)
{
    int rc = MPI_SUCCESS;
    obj_win_t *w = calloc(1, sizeof *w);
    if (!w)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for a window");
    obj_init(&w->obj, OBJ_WIN);
    w->errhandler = &obj_errhandler_fatal;
    obj_errhandler_retain(w->errhandler);
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->base = base;
    w->size = size;
    w->disp_unit = disp_unit;
    w->disp_unit_attr = (int)disp_unit;
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE &&
        posix_memalign(&w->base, 64, size ? (size_t)size : 64) != 0) {
        w->base = NULL;
        rc = obj_errf(MPI_ERR_NO_MEM, "no memory for a window of %ld bytes", (long)size);
        goto fail;
    }
    w->info = obj_info_new();
    if (info && w->info) {
        obj_info_release(w->info);
        RAIL_CHECK(obj_info_copy(info, &w->info));
    }
    RAIL_CHECK(osc_win_create(w, comm, info));
    *out = w;
    return MPI_SUCCESS;
fail:
    win_destroy(w);
    return rc;
}

int mpii_win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, obj_info_t *info,
                    obj_comm_t *comm, MPI_Win *win)
{
    obj_win_t *w;
    int rc = win_check_args(comm, size, disp_unit);
    if (rc == MPI_SUCCESS && size > 0 && base == NULL)
        rc = obj_errf(MPI_ERR_ARG, "NULL base for a window of %ld bytes", (long)size);
    if (rc == MPI_SUCCESS && (rc = win_make(comm, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit,
                                            info, &w)) == MPI_SUCCESS)
        *win = obj_win_handle(w);
    return rc;
}

int mpii_win_allocate(MPI_Aint size, MPI_Aint disp_unit, obj_info_t *info, obj_comm_t *comm,
                      void *baseptr, MPI_Win *win)
{
    obj_win_t *w;
    int rc = win_check_args(comm, size, disp_unit);
    if (rc == MPI_SUCCESS && (rc = win_make(comm, MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit,
                                            info, &w)) == MPI_SUCCESS) {
        *(void **)baseptr = w->base;
        *win = obj_win_handle(w);
    }
    return rc;
}

int mpii_win_allocate_shared(MPI_Aint size, MPI_Aint disp_unit, obj_info_t *info,
                             obj_comm_t *comm, void *baseptr, MPI_Win *win)
{
    obj_win_t *w;
    int rc = win_check_args(comm, size, disp_unit);
    if (rc == MPI_SUCCESS && (rc = win_make(comm, MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit,
                                            info, &w)) == MPI_SUCCESS) {
        *(void **)baseptr = w->base;
        *win = obj_win_handle(w);
    }
    return rc;
}

int mpii_win_create_dynamic(obj_info_t *info, obj_comm_t *comm, MPI_Win *win)
{
    obj_win_t *w;
    int rc = win_check_args(comm, 0, 1);
    if (rc == MPI_SUCCESS &&
        (rc = win_make(comm, MPI_WIN_FLAVOR_DYNAMIC, MPI_BOTTOM, 0, 1, info, &w)) == MPI_SUCCESS)
        *win = obj_win_handle(w);
    return rc;
}

int mpii_win_free(MPI_Win *win)
{
    obj_win_t *w;
    int rc = obj_win_lookup(*win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    RAIL_CHECK(osc_win_free(w));
    RAIL_CHECK(obj_attr_delete_all(OBJ_ATTR_WIN, *win, &w->attrs));
    win_destroy(w);
    *win = MPI_WIN_NULL;
fail:
    return rc;
}

int mpii_win_attach(obj_win_t *win, void *base, MPI_Aint size)
{
    return osc_attach(win->osc, base, size);
}

int mpii_win_detach(obj_win_t *win, const void *base)
{
    return osc_detach(win->osc, base);
}

int mpii_win_shared_query(obj_win_t *win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                          void *baseptr)
{
    osc_win_t *w = win->osc;
    if (win->flavor != MPI_WIN_FLAVOR_SHARED)
        return obj_errf(MPI_ERR_RMA_FLAVOR, "the window was not made by "
                        "MPI_Win_allocate_shared");
    if (rank == MPI_PROC_NULL) {
        for (rank = 0; rank < w->size - 1 && w->sizes[rank] == 0; rank++)
            ;
    }
    if (rank < 0 || rank >= w->size)
        return obj_errf(MPI_ERR_RANK, "invalid rank %d (window of %d ranks)", rank, w->size);
    size_t off = 0;
    for (int i = 0; i < rank; i++)
        off += (size_t)w->sizes[i];
    *size = w->sizes[rank];
    *disp_unit = w->units[rank];
    *(void **)baseptr = w->sizes[rank] ? (char *)w->shm_base + off : NULL;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ attributes */

int mpii_win_get_attr(obj_win_t *win, int win_keyval, void *attribute_val, int *flag)
{
    void **out = attribute_val;
    *flag = 1;
    switch (win_keyval) {
    case MPI_WIN_BASE:
        *out = win->base;
        return MPI_SUCCESS;
    case MPI_WIN_SIZE:
        *out = &win->size;
        return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT:
        *out = &win->disp_unit_attr;
        return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR:
        *out = &win->flavor;
        return MPI_SUCCESS;
    case MPI_WIN_MODEL:
        *out = &win->model;
        return MPI_SUCCESS;
    }
    *flag = 0;
    if (obj_attr_is_predef(win_keyval))
        return obj_errf(MPI_ERR_KEYVAL, "keyval %d is not a window attribute", win_keyval);
    return obj_attr_get(OBJ_ATTR_WIN, win->attrs, win_keyval, attribute_val, flag);
}

int mpii_win_set_attr(obj_win_t *win, int win_keyval, void *attribute_val)
{
    if (obj_attr_is_predef(win_keyval))
        return obj_errf(MPI_ERR_KEYVAL, "keyval %d is predefined; its attribute cannot be "
                        "changed", win_keyval);
    return obj_attr_set(OBJ_ATTR_WIN, obj_win_handle(win), &win->attrs, win_keyval,
                        attribute_val);
}

int mpii_win_delete_attr(obj_win_t *win, int win_keyval)
{
    if (obj_attr_is_predef(win_keyval))
        return obj_errf(MPI_ERR_KEYVAL, "keyval %d is predefined; its attribute cannot be "
                        "deleted", win_keyval);
    return obj_attr_delete(OBJ_ATTR_WIN, obj_win_handle(win), &win->attrs, win_keyval);
}

/* ------------------------------------------------------------ info, name, group */

static const char *const win_info_defaults[][2] = {
    {"no_locks", "false"},
    {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"},
    {"same_size", "false"},
    {"same_disp_unit", "false"},
    {"mpi_accumulate_granularity", "0"},
    {"alloc_shared_noncontig", "false"},
};

int mpii_win_get_info(obj_win_t *win, MPI_Info *info_used)
{
    obj_info_t *copy;
    int rc = win->info ? obj_info_copy(win->info, &copy) : MPI_SUCCESS;
    if (!win->info)
        copy = obj_info_new();
    if (rc == MPI_SUCCESS && !copy)
        rc = obj_errf(MPI_ERR_NO_MEM, "no memory for an info object");
    for (size_t i = 0; rc == MPI_SUCCESS && i < RAIL_ARRAY_SIZE(win_info_defaults); i++)
        if (!obj_info_value(copy, win_info_defaults[i][0]))
            rc = obj_info_set_value(copy, win_info_defaults[i][0], win_info_defaults[i][1]);
    if (rc == MPI_SUCCESS)
        *info_used = obj_info_handle(copy);
    return rc;
}

int mpii_win_set_info(obj_win_t *win, obj_info_t *info)
{
    obj_info_t *copy;
    int rc = obj_info_copy(info, &copy);
    if (rc != MPI_SUCCESS)
        return rc;
    if (win->info)
        obj_info_release(win->info);
    win->info = copy;
    return osc_info_apply(win->osc, info);
}

int mpii_win_set_name(obj_win_t *win, const char *win_name)
{
    snprintf(win->name, sizeof win->name, "%s", win_name);
    return MPI_SUCCESS;
}

int mpii_win_get_group(obj_win_t *win, MPI_Group *group)
{
    obj_group_retain(win->osc->comm->group);
    *group = obj_group_handle(win->osc->comm->group);
    return MPI_SUCCESS;
}
