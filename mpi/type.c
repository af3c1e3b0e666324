/*
 * MPI_Type_* (and MPI_Get_address, MPI_Aint_add / _diff): the entry points'
 * semantics.  Each looks up what the generated entry point has not (arrays
 * of handles), calls the datatype operation of the object layer
 * (obj/type_impl.h) and hands the new type back as a handle.  The queries
 * read the object's fields.
 */
#include "obj/type_impl.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The handle of a type an operation made (rc == MPI_SUCCESS). */
static int handle_out(int rc, obj_datatype_t *d, MPI_Datatype *newtype)
{
    if (rc == MPI_SUCCESS)
        *newtype = obj_datatype_handle(d);
    return rc;
}

/* ------------------------------------------------------------ objects */

int mpii_type_commit(MPI_Datatype *datatype)
{
    obj_datatype_t *d;
    int rc = obj_datatype_lookup(*datatype, &d);
    return rc == MPI_SUCCESS ? obj_type_commit(d) : rc;
}

int mpii_type_free(MPI_Datatype *datatype)
{
    obj_datatype_t *d;
    int rc = obj_datatype_lookup(*datatype, &d);
    if (rc == MPI_SUCCESS && (rc = obj_type_free(d)) == MPI_SUCCESS)
        *datatype = MPI_DATATYPE_NULL;
    return rc;
}

int mpii_type_dup(obj_datatype_t *oldtype, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_dup(oldtype, &d);
    return handle_out(rc, d, newtype);
}

/* ------------------------------------------------------------ constructors */

int mpii_type_contiguous(MPI_Count count, obj_datatype_t *oldtype, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_contiguous(count, oldtype, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                     obj_datatype_t *oldtype, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_vector(count, blocklength, stride, oldtype, false, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_hvector(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                             obj_datatype_t *oldtype, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_vector(count, blocklength, stride, oldtype, true, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_indexed(MPI_Count count, const MPI_Count array_of_blocklengths[],
                      const MPI_Count array_of_displacements[], obj_datatype_t *oldtype,
                      MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_indexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                              false, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_hindexed(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[], obj_datatype_t *oldtype,
                              MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_indexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                              true, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_indexed_block(MPI_Count count, MPI_Count blocklength,
                                   const MPI_Count array_of_displacements[],
                                   obj_datatype_t *oldtype, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_indexed_block(count, blocklength, array_of_displacements, oldtype, false,
                                    &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_hindexed_block(MPI_Count count, MPI_Count blocklength,
                                    const MPI_Count array_of_displacements[],
                                    obj_datatype_t *oldtype, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_indexed_block(count, blocklength, array_of_displacements, oldtype, true,
                                    &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_struct(MPI_Count count, const MPI_Count array_of_blocklengths[],
                            const MPI_Count array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    /* Counts and arrays first, then the types, as the arguments come. */
    int rc = obj_type_check_blocks(count, array_of_blocklengths, array_of_displacements);
    if (rc != MPI_SUCCESS)
        return rc;
    obj_datatype_t **objs = malloc((size_t)RAIL_MAX(count, 1) * sizeof(*objs));
    if (!objs)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    obj_datatype_t *d = NULL;
    rc = obj_type_lookup_array(array_of_types, count, objs);
    if (rc == MPI_SUCCESS)
        rc = obj_type_struct(count, array_of_blocklengths, array_of_displacements, objs, &d);
    free(objs);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_resized(obj_datatype_t *oldtype, MPI_Count lb, MPI_Count extent,
                             MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_resized(oldtype, lb, extent, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_subarray(int ndims, const MPI_Count array_of_sizes[],
                              const MPI_Count array_of_subsizes[],
                              const MPI_Count array_of_starts[], int order,
                              obj_datatype_t *oldtype, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                               oldtype, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_darray(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, obj_datatype_t *oldtype,
                            MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_darray(size, rank, ndims, array_of_gsizes, array_of_distribs,
                             array_of_dargs, array_of_psizes, order, oldtype, &d);
    return handle_out(rc, d, newtype);
}

/* ------------------------------------------------------------ by property */

int mpii_type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_match_size(typeclass, size, &d);
    return handle_out(rc, d, datatype);
}

int mpii_type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_f90_integer(r, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_f90_real(p, r, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    obj_datatype_t *d = NULL;
    int rc = obj_type_f90_complex(p, r, &d);
    return handle_out(rc, d, newtype);
}

int mpii_type_get_value_index(obj_datatype_t *value_type, obj_datatype_t *index_type,
                              MPI_Datatype *pair_type)
{
    obj_datatype_t *d = NULL;
    *pair_type = MPI_DATATYPE_NULL;
    int rc = obj_type_value_index(value_type, index_type, &d);
    return handle_out(rc, d, pair_type);
}

/* ------------------------------------------------------------ envelope, contents */

static int too_big(const char *fn)
{
    return obj_errf(MPI_ERR_TYPE, "the datatype was built with counts that do not fit in an "
                    "int: use %s_c", fn);
}

int mpii_type_get_envelope(obj_datatype_t *datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    MPI_Count ni, na, nc, nd;
    obj_type_envelope(datatype, &ni, &na, &nc, &nd, combiner);
    if (nc > 0)
        return too_big("MPI_Type_get_envelope");
    *num_integers = (int)ni;
    *num_addresses = (int)na;
    *num_datatypes = (int)nd;
    return MPI_SUCCESS;
}

int mpii_type_get_envelope_c(obj_datatype_t *datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    obj_type_envelope(datatype, num_integers, num_addresses, num_large_counts, num_datatypes,
                      combiner);
    return MPI_SUCCESS;
}

int mpii_type_get_contents(obj_datatype_t *datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    MPI_Count ni, na, nc, nd;
    int combiner;
    obj_type_envelope(datatype, &ni, &na, &nc, &nd, &combiner);
    if (nc > 0)
        return too_big("MPI_Type_get_contents");
    return obj_type_get_contents(datatype, max_integers, max_addresses, 0, max_datatypes,
                                 array_of_integers, array_of_addresses, NULL,
                                 array_of_datatypes);
}

int mpii_type_get_contents_c(obj_datatype_t *datatype, MPI_Count max_integers,
                             MPI_Count max_addresses, MPI_Count max_large_counts,
                             MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    return obj_type_get_contents(datatype, max_integers, max_addresses, max_large_counts,
                                 max_datatypes, array_of_integers, array_of_addresses,
                                 array_of_large_counts, array_of_datatypes);
}

/* ------------------------------------------------------------ queries */

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
    /* MPI-4.1 5.1.14: the null handle has a name too. */
    const char *name = datatype ? datatype->name : "MPI_DATATYPE_NULL";
    size_t n = strlen(name);
    memcpy(type_name, name, n + 1);
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
