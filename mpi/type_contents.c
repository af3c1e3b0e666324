/*
 * MPI_Type_get_envelope / MPI_Type_get_contents and their _c forms: the
 * arguments recorded by the constructors (type_impl.h).  Datatypes handed
 * back are new handles of derived types (the caller frees them) and the
 * predefined handles as they are.
 */
#include "obj/type_impl.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <string.h>

static const struct obj_type_contents empty;

static const struct obj_type_contents *contents_of(const obj_datatype_t *d)
{
    return d->contents ? d->contents : &empty;
}

static int named_error(const obj_datatype_t *d)
{
    return obj_errf(MPI_ERR_TYPE, "%s is a named predefined datatype: it has no contents",
                    d->name[0] ? d->name : "the datatype");
}

int mpii_type_get_envelope(obj_datatype_t *datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    const struct obj_type_contents *c = contents_of(datatype);
    if (c->nc > 0)
        return obj_errf(MPI_ERR_TYPE, "the datatype was built with counts that do not fit in an "
                        "int: use MPI_Type_get_envelope_c");
    *num_integers = (int)c->ni;
    *num_addresses = (int)c->na;
    *num_datatypes = (int)c->nd;
    *combiner = datatype->combiner;
    return MPI_SUCCESS;
}

int mpii_type_get_envelope_c(obj_datatype_t *datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    const struct obj_type_contents *c = contents_of(datatype);
    *num_integers = c->ni;
    *num_addresses = c->na;
    *num_large_counts = c->nc;
    *num_datatypes = c->nd;
    *combiner = datatype->combiner;
    return MPI_SUCCESS;
}

static int check_room(const char *what, MPI_Count have, MPI_Count need, const void *array)
{
    if (have < need)
        return obj_errf(MPI_ERR_ARG, "%s is %lld: the datatype has %lld (MPI_Type_get_envelope)",
                        what, (long long)have, (long long)need);
    if (need > 0 && !array)
        return obj_errf(MPI_ERR_ARG, "the array for %lld %s must not be NULL", (long long)need,
                        what + 4);
    return MPI_SUCCESS;
}

static void copy_out(const struct obj_type_contents *c, int ints[], MPI_Aint addrs[],
                     MPI_Count counts[], MPI_Datatype types[])
{
    if (c->ni)
        memcpy(ints, c->ints, (size_t)c->ni * sizeof(int));
    if (c->na)
        memcpy(addrs, c->aints, (size_t)c->na * sizeof(MPI_Aint));
    if (c->nc)
        memcpy(counts, c->counts, (size_t)c->nc * sizeof(MPI_Count));
    for (MPI_Count i = 0; i < c->nd; i++)
        types[i] = obj_type_new_handle(c->types[i]);
}

int mpii_type_get_contents(obj_datatype_t *datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    if (datatype->combiner == MPI_COMBINER_NAMED)
        return named_error(datatype);
    const struct obj_type_contents *c = contents_of(datatype);
    if (c->nc > 0)
        return obj_errf(MPI_ERR_TYPE, "the datatype was built with counts that do not fit in an "
                        "int: use MPI_Type_get_contents_c");
    int rc = check_room("max_integers", max_integers, c->ni, array_of_integers);
    if (rc == MPI_SUCCESS)
        rc = check_room("max_addresses", max_addresses, c->na, array_of_addresses);
    if (rc == MPI_SUCCESS)
        rc = check_room("max_datatypes", max_datatypes, c->nd, array_of_datatypes);
    if (rc == MPI_SUCCESS)
        copy_out(c, array_of_integers, array_of_addresses, NULL, array_of_datatypes);
    return rc;
}

int mpii_type_get_contents_c(obj_datatype_t *datatype, MPI_Count max_integers,
                             MPI_Count max_addresses, MPI_Count max_large_counts,
                             MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    if (datatype->combiner == MPI_COMBINER_NAMED)
        return named_error(datatype);
    const struct obj_type_contents *c = contents_of(datatype);
    int rc = check_room("max_integers", max_integers, c->ni, array_of_integers);
    if (rc == MPI_SUCCESS)
        rc = check_room("max_addresses", max_addresses, c->na, array_of_addresses);
    if (rc == MPI_SUCCESS)
        rc = check_room("max_large_counts", max_large_counts, c->nc, array_of_large_counts);
    if (rc == MPI_SUCCESS)
        rc = check_room("max_datatypes", max_datatypes, c->nd, array_of_datatypes);
    if (rc == MPI_SUCCESS)
        copy_out(c, array_of_integers, array_of_addresses, array_of_large_counts,
                 array_of_datatypes);
    return rc;
}
