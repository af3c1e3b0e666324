/*
 * Handles: MPI_<Kind>_c2f / MPI_<Kind>_f2c (the tables of obj/handle_f2c.c),
 * the status conversions (MPI_Status_c2f, _f2c, _c2f08, _f082c, _f082f,
 * _f2f08), MPIX_Live_objects and the name of MPI_WIN_NULL.
 */
#include "mpi/mpi_err.h"
#include "obj/obj.h"
#include "obj/win.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <stdio.h>
#include <string.h>

/* Live objects of a kind ("comm", "datatype", ... or "all"), for leak
 * checks in tests: MPI_ERR_ARG for another name. */
RAIL_EXPORT int MPIX_Live_objects(const char *kind, int *count)
{
    static const struct {
        const char *name;
        obj_kind_t kind;
    } kinds[] = {{"comm", OBJ_COMM},       {"datatype", OBJ_DATATYPE}, {"group", OBJ_GROUP},
                 {"op", OBJ_OP},           {"info", OBJ_INFO},         {"errhandler", OBJ_ERRHANDLER},
                 {"request", OBJ_REQUEST}, {"message", OBJ_MESSAGE},   {"win", OBJ_WIN},
                 {"file", OBJ_FILE},       {"session", OBJ_SESSION}};
    if (!kind || !count)
        return MPI_ERR_ARG;
    int total = 0;
    bool found = false;
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(kinds); i++) {
        if (strcmp(kind, "all") == 0 || strcmp(kind, kinds[i].name) == 0) {
            total += obj_live(kinds[i].kind);
            found = true;
        }
    }
    if (!found)
        return MPI_ERR_ARG;
    *count = total;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ handles */

/* Written out one by one: the binding generator looks for each definition
 * at the start of a line (mpi/binding/README.md). */
MPI_Fint mpii_comm_c2f(MPI_Comm h)
{
    return obj_handle_c2f(OBJ_COMM, (const void *)h);
}

MPI_Comm mpii_comm_f2c(MPI_Fint f)
{
    return (MPI_Comm)obj_handle_f2c(OBJ_COMM, f);
}

MPI_Fint mpii_type_c2f(MPI_Datatype h)
{
    return obj_handle_c2f(OBJ_DATATYPE, (const void *)h);
}

MPI_Datatype mpii_type_f2c(MPI_Fint f)
{
    return (MPI_Datatype)obj_handle_f2c(OBJ_DATATYPE, f);
}

MPI_Fint mpii_group_c2f(MPI_Group h)
{
    return obj_handle_c2f(OBJ_GROUP, (const void *)h);
}

MPI_Group mpii_group_f2c(MPI_Fint f)
{
    return (MPI_Group)obj_handle_f2c(OBJ_GROUP, f);
}

MPI_Fint mpii_op_c2f(MPI_Op h)
{
    return obj_handle_c2f(OBJ_OP, (const void *)h);
}

MPI_Op mpii_op_f2c(MPI_Fint f)
{
    return (MPI_Op)obj_handle_f2c(OBJ_OP, f);
}

MPI_Fint mpii_info_c2f(MPI_Info h)
{
    return obj_handle_c2f(OBJ_INFO, (const void *)h);
}

MPI_Info mpii_info_f2c(MPI_Fint f)
{
    return (MPI_Info)obj_handle_f2c(OBJ_INFO, f);
}

MPI_Fint mpii_errhandler_c2f(MPI_Errhandler h)
{
    return obj_handle_c2f(OBJ_ERRHANDLER, (const void *)h);
}

MPI_Errhandler mpii_errhandler_f2c(MPI_Fint f)
{
    return (MPI_Errhandler)obj_handle_f2c(OBJ_ERRHANDLER, f);
}

MPI_Fint mpii_request_c2f(MPI_Request h)
{
    return obj_handle_c2f(OBJ_REQUEST, (const void *)h);
}

MPI_Request mpii_request_f2c(MPI_Fint f)
{
    return (MPI_Request)obj_handle_f2c(OBJ_REQUEST, f);
}

MPI_Fint mpii_message_c2f(MPI_Message h)
{
    return obj_handle_c2f(OBJ_MESSAGE, (const void *)h);
}

MPI_Message mpii_message_f2c(MPI_Fint f)
{
    return (MPI_Message)obj_handle_f2c(OBJ_MESSAGE, f);
}

MPI_Fint mpii_win_c2f(MPI_Win h)
{
    return obj_handle_c2f(OBJ_WIN, (const void *)h);
}

MPI_Win mpii_win_f2c(MPI_Fint f)
{
    return (MPI_Win)obj_handle_f2c(OBJ_WIN, f);
}

MPI_Fint mpii_file_c2f(MPI_File h)
{
    return obj_handle_c2f(OBJ_FILE, (const void *)h);
}

MPI_File mpii_file_f2c(MPI_Fint f)
{
    return (MPI_File)obj_handle_f2c(OBJ_FILE, f);
}

MPI_Fint mpii_session_c2f(MPI_Session h)
{
    return obj_handle_c2f(OBJ_SESSION, (const void *)h);
}

MPI_Session mpii_session_f2c(MPI_Fint f)
{
    return (MPI_Session)obj_handle_f2c(OBJ_SESSION, f);
}

/* ------------------------------------------------------------ statuses */

/* MPI_F_STATUS_IGNORE and friends are defined by the generated code. */

/* All three forms hold the same MPI_F_STATUS_SIZE integers in the same order
 * (MPI_SOURCE, MPI_TAG, MPI_ERROR, then the hidden fields). */
static int copy_status(const void *in, void *out, bool in_ignorable, bool out_ignorable)
{
    if (!in || !out)
        return obj_errf(MPI_ERR_ARG, "the statuses to convert must not be NULL");
    if ((in_ignorable && (in == MPI_F_STATUS_IGNORE || in == MPI_F08_STATUS_IGNORE)) ||
        (out_ignorable && (out == MPI_F_STATUS_IGNORE || out == MPI_F08_STATUS_IGNORE)))
        return obj_errf(MPI_ERR_ARG, "MPI_F_STATUS_IGNORE / MPI_F08_STATUS_IGNORE cannot be "
                        "converted");
    _Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "status layout");
    _Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "status layout");
    memmove(out, in, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

int mpii_status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    return copy_status(c_status, f_status, false, true);
}

int mpii_status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    return copy_status(f_status, c_status, true, false);
}

int mpii_status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    return copy_status(c_status, f08_status, false, true);
}

int mpii_status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    return copy_status(f08_status, c_status, true, false);
}

int mpii_status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    return copy_status(f08_status, f_status, true, true);
}

int mpii_status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    return copy_status(f_status, f08_status, true, true);
}

/* MPI-4.1 12.8: the null handle has a name too. */
int mpii_win_get_name(obj_win_t *win, char *win_name, int *resultlen)
{
    snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", win ? win->name : "MPI_WIN_NULL");
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}
