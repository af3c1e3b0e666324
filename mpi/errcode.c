/* MPI_Error_class/string, MPI_Add_error_*, MPI_Remove_error_* (MPI-4.1):
 * the error codes of obj/errcode.c. */
#include "mpi/mpi_err.h"
#include "obj/errcode.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <string.h>

int mpii_error_class(int errorcode, int *errorclass)
{
    if (!obj_errcode_is_predefined(errorcode) && obj_errcode_class(errorcode) == MPI_ERR_UNKNOWN &&
        errorcode != MPI_ERR_UNKNOWN)
        return obj_errf(MPI_ERR_ARG, "invalid error code %d", errorcode);
    *errorclass = obj_errcode_class(errorcode);
    return MPI_SUCCESS;
}

int mpii_error_string(int errorcode, char *string, int *resultlen)
{
    if (obj_errcode_string(errorcode, string, resultlen) != MPI_SUCCESS)
        return obj_errf(MPI_ERR_ARG, "invalid error code %d", errorcode);
    return MPI_SUCCESS;
}

int mpii_add_error_class(int *errorclass)
{
    return obj_errcode_add_class(errorclass);
}

int mpii_add_error_code(int errorclass, int *errorcode)
{
    return obj_errcode_add_code(errorclass, errorcode);
}

int mpii_add_error_string(int errorcode, const char *string)
{
    if (strlen(string) >= MPI_MAX_ERROR_STRING)
        return obj_errf(MPI_ERR_ARG, "error string longer than MPI_MAX_ERROR_STRING-1 (%d)",
                        MPI_MAX_ERROR_STRING - 1);
    return obj_errcode_set_string(errorcode, string);
}

int mpii_remove_error_class(int errorclass)
{
    return obj_errcode_remove(errorclass, true);
}

int mpii_remove_error_code(int errorcode)
{
    return obj_errcode_remove(errorcode, false);
}

int mpii_remove_error_string(int errorcode)
{
    return obj_errcode_remove_string(errorcode);
}
