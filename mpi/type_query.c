/*
 * Datatype queries: extent, true extent, size (and the deprecated _x
 * forms), names, addresses.
 */
#include "obj/type_impl.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <stdio.h>
#include <string.h>

int mpii_type_get_extent(obj_datatype_t *datatype, MPI_Count *lb, MPI_Count *extent)
{
    *lb = datatype->lb;
    *extent = datatype->extent;
    return MPI_SUCCESS;
}

int mpii_type_get_extent_x(obj_datatype_t *datatype, MPI_Count *lb, MPI_Count *extent)
{
    return mpii_type_get_extent(datatype, lb, extent);
}

int mpii_type_get_true_extent(obj_datatype_t *datatype, MPI_Count *true_lb,
                              MPI_Count *true_extent)
{
    *true_lb = datatype->true_lb;
    *true_extent = datatype->true_extent;
    return MPI_SUCCESS;
}

int mpii_type_get_true_extent_x(obj_datatype_t *datatype, MPI_Count *true_lb,
                                MPI_Count *true_extent)
{
    return mpii_type_get_true_extent(datatype, true_lb, true_extent);
}

int mpii_type_size(obj_datatype_t *datatype, MPI_Count *size)
{
    *size = datatype->size;
    return MPI_SUCCESS;
}

int mpii_type_size_x(obj_datatype_t *datatype, MPI_Count *size)
{
    return mpii_type_size(datatype, size);
}

int mpii_type_set_name(obj_datatype_t *datatype, const char *type_name)
{
    if (!type_name)
        return obj_errf(MPI_ERR_ARG, "type_name must not be NULL");
    /* Longer names are truncated (MPI-4.1 section 7.9). */
    snprintf(datatype->name, sizeof(datatype->name), "%s", type_name);
    return MPI_SUCCESS;
}

int mpii_type_get_name(obj_datatype_t *datatype, char *type_name, int *resultlen)
{
    if (!type_name || !resultlen)
        return obj_errf(MPI_ERR_ARG, "type_name and resultlen must not be NULL");
    size_t n = strlen(datatype->name);
    memcpy(type_name, datatype->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

int mpii_get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

MPI_Aint mpii_aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint mpii_aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
