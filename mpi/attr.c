/* MPI_*_create_keyval, MPI_*_set/get/delete_attr and the MPI-1 names, on
 * the keyvals and attribute lists of obj/attr.c. */
#include "mpi/mpi_err.h"
#include "obj/attr.h"
#include "obj/comm.h"
#include "obj/datatype.h"
#include "obj/win.h"
#include "mpi/binding/gen/mpi_impl.h"

static int predef_readonly(int keyval)
{
    return obj_errf(MPI_ERR_KEYVAL, "keyval %d is predefined; its attribute cannot be changed",
                    keyval);
}

/* ------------------------------------------------------------ comm API */

int mpii_comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                            MPI_Comm_delete_attr_function *delete_fn, int *comm_keyval,
                            void *extra_state)
{
    return obj_attr_keyval_create(OBJ_ATTR_COMM, (void (*)(void))copy_fn, (void (*)(void))delete_fn,
                         extra_state, comm_keyval);
}

int mpii_comm_free_keyval(int *comm_keyval)
{
    return obj_attr_keyval_free(OBJ_ATTR_COMM, comm_keyval);
}

int mpii_comm_set_attr(obj_comm_t *comm, int comm_keyval, void *attribute_val)
{
    if (obj_attr_is_predef(comm_keyval))
        return predef_readonly(comm_keyval);
    return obj_attr_set(OBJ_ATTR_COMM, obj_comm_handle(comm), &comm->attrs, comm_keyval,
                        attribute_val);
}

int mpii_comm_get_attr(obj_comm_t *comm, int comm_keyval, void *attribute_val, int *flag)
{
    if (obj_attr_comm_predef(comm_keyval, attribute_val, flag))
        return MPI_SUCCESS;
    if (obj_attr_is_predef(comm_keyval))
        return obj_errf(MPI_ERR_KEYVAL, "keyval %d is a window attribute", comm_keyval);
    return obj_attr_get(OBJ_ATTR_COMM, comm->attrs, comm_keyval, attribute_val, flag);
}

int mpii_comm_delete_attr(obj_comm_t *comm, int comm_keyval)
{
    if (obj_attr_is_predef(comm_keyval))
        return predef_readonly(comm_keyval);
    return obj_attr_delete(OBJ_ATTR_COMM, obj_comm_handle(comm), &comm->attrs, comm_keyval);
}

/* MPI-1 names, deprecated but still part of MPI-4.1. */
int mpii_keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return mpii_comm_create_keyval((MPI_Comm_copy_attr_function *)copy_fn,
                                   (MPI_Comm_delete_attr_function *)delete_fn, keyval, extra_state);
}

int mpii_keyval_free(int *keyval)
{
    return mpii_comm_free_keyval(keyval);
}

int mpii_attr_put(obj_comm_t *comm, int keyval, void *attribute_val)
{
    return mpii_comm_set_attr(comm, keyval, attribute_val);
}

int mpii_attr_get(obj_comm_t *comm, int keyval, void *attribute_val, int *flag)
{
    return mpii_comm_get_attr(comm, keyval, attribute_val, flag);
}

int mpii_attr_delete(obj_comm_t *comm, int keyval)
{
    return mpii_comm_delete_attr(comm, keyval);
}

/* ------------------------------------------------------------ type API */

int mpii_type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
                            MPI_Type_delete_attr_function *delete_fn, int *type_keyval,
                            void *extra_state)
{
    return obj_attr_keyval_create(OBJ_ATTR_TYPE, (void (*)(void))copy_fn, (void (*)(void))delete_fn,
                         extra_state, type_keyval);
}

int mpii_type_free_keyval(int *type_keyval)
{
    return obj_attr_keyval_free(OBJ_ATTR_TYPE, type_keyval);
}

int mpii_type_set_attr(obj_datatype_t *datatype, int type_keyval, void *attribute_val)
{
    return obj_attr_set(OBJ_ATTR_TYPE, obj_datatype_handle(datatype), &datatype->attrs,
                        type_keyval, attribute_val);
}

int mpii_type_get_attr(obj_datatype_t *datatype, int type_keyval, void *attribute_val, int *flag)
{
    return obj_attr_get(OBJ_ATTR_TYPE, datatype->attrs, type_keyval, attribute_val, flag);
}

int mpii_type_delete_attr(obj_datatype_t *datatype, int type_keyval)
{
    return obj_attr_delete(OBJ_ATTR_TYPE, obj_datatype_handle(datatype), &datatype->attrs,
                           type_keyval);
}

/* ------------------------------------------------------------ win API */

int mpii_win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                           MPI_Win_delete_attr_function *delete_fn, int *win_keyval,
                           void *extra_state)
{
    return obj_attr_keyval_create(OBJ_ATTR_WIN, (void (*)(void))copy_fn, (void (*)(void))delete_fn,
                         extra_state, win_keyval);
}

int mpii_win_free_keyval(int *win_keyval)
{
    return obj_attr_keyval_free(OBJ_ATTR_WIN, win_keyval);
}
