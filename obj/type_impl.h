/*
 * Internals of the datatype front end (mpi/type_*.c, mpi/pack_*.c,
 * mpi/datatype_predef.c).
 *
 * Contents.  Each derived type keeps the arguments of the call that made it
 * (MPI_Type_get_envelope / get_contents), already in the encoding MPI-4.1
 * section 5.1.13 gives for its combiner: the classic one (integers,
 * addresses, datatypes) or, when a count, block length or displacement does
 * not fit in an int, the large-count one (MPI_Count values in
 * array_of_large_counts).  The implementation functions get every count as
 * MPI_Count whichever binding was called, so the values decide: a type made
 * by MPI_Type_vector_c(10, 1, 2, ...) reads back in the classic encoding,
 * one made with a count of 2^31 in the large one (and then the classic
 * MPI_Type_get_envelope / get_contents refuse it with MPI_ERR_TYPE, as the
 * standard requires).
 */
#ifndef OBJ_TYPE_IMPL_H
#define OBJ_TYPE_IMPL_H

#include <limits.h>
#include "obj/err.h"
#include "obj/datatype.h"
#include "base/dt.h"

struct obj_type_contents {
    MPI_Count ni, na, nc, nd;
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    obj_datatype_t **types;   /* each holds a reference (obj_datatype_retain) */
};

/* One block for all four arrays; types[] are filled (and retained) by
 * obj_type_contents_set_type.  NULL when out of memory. */
struct obj_type_contents *obj_type_contents_new(MPI_Count ni, MPI_Count na, MPI_Count nc,
                                                MPI_Count nd);
void obj_type_contents_set_type(struct obj_type_contents *c, MPI_Count i, obj_datatype_t *t);
void obj_type_contents_free(struct obj_type_contents *c);

/* A new derived type around layout (whose reference it takes, also on
 * failure) with the given combiner and contents (taken likewise); basic is
 * computed from the contents' types. */
int obj_type_new(struct rail_dt *layout, int combiner, struct obj_type_contents *c,
                 MPI_Datatype *newtype);

/* A new user handle for d (a reference; the predefined handle as is). */
MPI_Datatype obj_type_new_handle(obj_datatype_t *d);

/* Values that need the large-count encoding. */
static inline bool obj_type_big(MPI_Count v) { return v > INT_MAX || v < INT_MIN; }
static inline bool obj_type_any_big(const MPI_Count *a, MPI_Count n)
{
    for (MPI_Count i = 0; i < n; i++)
        if (obj_type_big(a[i]))
            return true;
    return false;
}

/* Look up array_of_types[i] for a constructor: MPI_ERR_TYPE for
 * MPI_DATATYPE_NULL or an invalid handle, with the index in the message. */
int obj_type_lookup_array(const MPI_Datatype types[], MPI_Count n, obj_datatype_t **objs);

/* Copy callback through accel for device buffers (pack_native.c). */
int obj_pack_accel_copy(void *dst, const void *src, size_t len, void *ctx);
/* Whether ptr is device memory (false without any device component). */
bool obj_pack_is_device(const void *ptr);

#endif
