/*
 * Operations on datatype objects (obj/type_*.c, obj/datatype_predef.c,
 * obj/pack_*.c): the constructors, commit / free / dup, the recorded
 * constructor arguments, the types chosen by a property (f90, value-index),
 * and packing.  They take and return objects (obj/datatype.h), return an
 * MPI error class with the detail recorded by obj_errf, and check their
 * arguments themselves; the front end (mpi/type.c, mpi/pack.c) looks up
 * handles, calls one of them and converts the result to a handle.
 *
 * Contents.  Each derived type keeps the arguments of the call that made it
 * (MPI_Type_get_envelope / get_contents), already in the encoding MPI-4.1
 * section 5.1.13 gives for its combiner: the classic one (integers,
 * addresses, datatypes) or, when a count, block length or displacement does
 * not fit in an int, the large-count one (MPI_Count values in
 * array_of_large_counts).  The constructors get every count as MPI_Count
 * whichever binding was called, so the values decide: a type made by
 * MPI_Type_vector_c(10, 1, 2, ...) reads back in the classic encoding, one
 * made with a count of 2^31 in the large one (and then the classic
 * MPI_Type_get_envelope / get_contents refuse it with MPI_ERR_TYPE, as the
 * standard requires).
 */
#ifndef OBJ_TYPE_IMPL_H
#define OBJ_TYPE_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include "obj/err.h"
#include "obj/datatype.h"
#include "base/dt.h"

/* ------------------------------------------------------------ objects (type_obj.c) */

/* A new derived type around layout (whose reference it takes, also on
 * failure) with the given combiner and contents (taken likewise); basic is
 * computed from the contents' types.  The type has one user handle. */
int obj_type_new(struct rail_dt *layout, int combiner, struct obj_type_contents *c,
                 obj_datatype_t **out);

/* A new user handle for d (a reference; the predefined handle as is). */
MPI_Datatype obj_type_new_handle(obj_datatype_t *d);

/* MPI_Type_commit: compile the layout (once). */
int obj_type_commit(obj_datatype_t *d);
/* MPI_Type_free: drop one user handle of a derived type; the last one
 * deletes the attributes first (a failing delete callback fails the call
 * and leaves the type as it was) and invalidates the handle.  MPI_ERR_TYPE
 * for a predefined type. */
int obj_type_free(obj_datatype_t *d);
/* MPI_Type_dup: a new type with old's layout, committed state and copied
 * attributes. */
int obj_type_dup(obj_datatype_t *old, obj_datatype_t **out);

/* Look up array_of_types[i] for a constructor: MPI_ERR_TYPE for
 * MPI_DATATYPE_NULL or an invalid handle, with the index in the message. */
int obj_type_lookup_array(const MPI_Datatype types[], MPI_Count n, obj_datatype_t **objs);

/* ------------------------------------------------------------ constructors */

/* type_create.c.  Negative counts and block lengths are MPI_ERR_COUNT, as
 * is a type whose size or span would overflow MPI_Count; NULL arrays of
 * positive length are MPI_ERR_ARG.  The h- forms (in_bytes) take the
 * stride / displacements in bytes, the others in extents of old. */
int obj_type_contiguous(MPI_Count count, obj_datatype_t *old, obj_datatype_t **out);
int obj_type_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                    obj_datatype_t *old, bool stride_in_bytes, obj_datatype_t **out);
int obj_type_indexed(MPI_Count count, const MPI_Count blocklengths[],
                     const MPI_Count displacements[], obj_datatype_t *old,
                     bool displs_in_bytes, obj_datatype_t **out);
int obj_type_indexed_block(MPI_Count count, MPI_Count blocklength,
                           const MPI_Count displacements[], obj_datatype_t *old,
                           bool displs_in_bytes, obj_datatype_t **out);
/* The checks of count, blocklengths and displacements that struct makes
 * before looking at its types (the front end makes them before looking up
 * array_of_types, so that errors come in the order of the arguments). */
int obj_type_check_blocks(MPI_Count count, const MPI_Count blocklengths[],
                          const MPI_Count displacements[]);
int obj_type_struct(MPI_Count count, const MPI_Count blocklengths[],
                    const MPI_Count displacements[], obj_datatype_t *const types[],
                    obj_datatype_t **out);
int obj_type_resized(obj_datatype_t *old, MPI_Count lb, MPI_Count extent, obj_datatype_t **out);
int obj_type_subarray(int ndims, const MPI_Count sizes[], const MPI_Count subsizes[],
                      const MPI_Count starts[], int order, obj_datatype_t *old,
                      obj_datatype_t **out);
/* type_darray.c */
int obj_type_darray(int size, int rank, int ndims, const MPI_Count gsizes[], const int distribs[],
                    const int dargs[], const int psizes[], int order, obj_datatype_t *old,
                    obj_datatype_t **out);

/* type_f90.c: predefined types chosen by a property.  match_size and the
 * f90 functions fail with MPI_ERR_ARG when no type fits; value_index
 * yields NULL (MPI_DATATYPE_NULL) for a combination without a pair type. */
int obj_type_match_size(int typeclass, int size, obj_datatype_t **out);
int obj_type_f90_integer(int r, obj_datatype_t **out);
int obj_type_f90_real(int p, int r, obj_datatype_t **out);
int obj_type_f90_complex(int p, int r, obj_datatype_t **out);
int obj_type_value_index(obj_datatype_t *value, obj_datatype_t *index, obj_datatype_t **out);

/* ------------------------------------------------------------ contents (type_contents.c) */

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

/* The envelope: how many integers, addresses, large counts and datatypes
 * the constructor recorded (none for a named type), and the combiner. */
void obj_type_envelope(const obj_datatype_t *d, MPI_Count *ni, MPI_Count *na, MPI_Count *nc,
                       MPI_Count *nd, int *combiner);
/* Copy the recorded arguments out; the datatypes come back as new handles
 * (obj_type_new_handle).  MPI_ERR_TYPE for a named type, MPI_ERR_ARG when
 * a max_* is below the recorded number or its array is NULL. */
int obj_type_get_contents(const obj_datatype_t *d, MPI_Count max_integers,
                          MPI_Count max_addresses, MPI_Count max_large_counts,
                          MPI_Count max_datatypes, int ints[], MPI_Aint addrs[],
                          MPI_Count counts[], MPI_Datatype types[]);

/* Values that need the large-count encoding. */
static inline bool obj_type_big(MPI_Count v) { return v > INT_MAX || v < INT_MIN; }
static inline bool obj_type_any_big(const MPI_Count *a, MPI_Count n)
{
    for (MPI_Count i = 0; i < n; i++)
        if (obj_type_big(a[i]))
            return true;
    return false;
}

/* ------------------------------------------------------------ packing (pack_*.c) */

/* Pack count elements at buf into the packed buffer at *position, or
 * unpack them from there; *position advances past them.  MPI_ERR_COUNT for
 * a negative count, MPI_ERR_ARG for a position outside the packed buffer,
 * MPI_ERR_TRUNCATE when the data do not fit in what is left of it,
 * MPI_ERR_BUFFER for a NULL packed buffer.  Either side may be device
 * memory.  pack_native.c: the native representation (the signature's
 * bytes, count * size of them); pack_external.c: "external32". */
int obj_pack(const void *inbuf, MPI_Count incount, obj_datatype_t *datatype, void *outbuf,
             MPI_Count outsize, MPI_Count *position);
int obj_pack_unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                    MPI_Count outcount, obj_datatype_t *datatype);
int obj_pack_external(const void *inbuf, MPI_Count incount, obj_datatype_t *datatype,
                      void *outbuf, MPI_Count outsize, MPI_Count *position);
int obj_pack_unpack_external(const void *inbuf, MPI_Count insize, MPI_Count *position,
                             void *outbuf, MPI_Count outcount, obj_datatype_t *datatype);
/* Bytes that incount elements take packed. */
int obj_pack_size(MPI_Count incount, const obj_datatype_t *datatype, MPI_Count *size);
int obj_pack_external_size(MPI_Count incount, const obj_datatype_t *datatype, MPI_Count *size);

/* Copy callback through accel for device buffers (pack_native.c). */
int obj_pack_accel_copy(void *dst, const void *src, size_t len, void *ctx);
/* Whether ptr is device memory (false without any device component). */
bool obj_pack_is_device(const void *ptr);

#endif
