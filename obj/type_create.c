/*
 * Datatype constructors: contiguous, vector, hvector, indexed, hindexed,
 * indexed_block, hindexed_block, struct, resized, subarray.  Each checks
 * its arguments, builds the engine layout and records its arguments in the
 * encoding of MPI-4.1 section 5.1.13 (type_impl.h says when the
 * large-count one is used).
 */
#include "obj/type_impl.h"

#include <stdlib.h>

static int engine_error(int rc, const char *what)
{
    switch (rc) {
    case MPI_ERR_NO_MEM:
        return obj_errf(rc, "out of memory building %s", what);
    case MPI_ERR_COUNT:
        return obj_errf(rc, "invalid count for %s", what);
    case MPI_ERR_TYPE:
        return obj_errf(rc, "invalid old type for %s", what);
    default:
        return obj_errf(rc, "invalid arguments for %s", what);
    }
}

static int check_count(MPI_Count v, const char *name)
{
    if (v >= 0)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_COUNT, "invalid %s %lld (must be non-negative)", name, (long long)v);
}

static int check_counts(const MPI_Count *a, MPI_Count n, const char *name)
{
    if (n > 0 && !a)
        return obj_errf(MPI_ERR_ARG, "%s must not be NULL", name);
    for (MPI_Count i = 0; i < n; i++)
        if (a[i] < 0)
            return obj_errf(MPI_ERR_COUNT, "invalid %s[%lld] = %lld (must be non-negative)", name,
                            (long long)i, (long long)a[i]);
    return MPI_SUCCESS;
}

static int check_ptr(const void *p, MPI_Count n, const char *name)
{
    if (n > 0 && !p)
        return obj_errf(MPI_ERR_ARG, "%s must not be NULL", name);
    return MPI_SUCCESS;
}

/* count x blocklen x old must have a size and span that fit in MPI_Count. */
static int check_span(MPI_Count count, MPI_Count blocklen, const obj_datatype_t *old)
{
    MPI_Count n, bytes, span;
    MPI_Count unit = RAIL_MAX(old->size, old->extent < 0 ? -old->extent : old->extent);
    if (__builtin_mul_overflow(count, blocklen, &n) || __builtin_mul_overflow(n, old->size, &bytes) ||
        __builtin_mul_overflow(n, unit, &span))
        return obj_errf(MPI_ERR_COUNT, "datatype too large: %lld x %lld elements of %lld bytes",
                        (long long)count, (long long)blocklen, (long long)unit);
    return MPI_SUCCESS;
}

static int finish(int rc, struct rail_dt *layout, int combiner, struct obj_type_contents *c,
                  const char *what, obj_datatype_t **out)
{
    if (rc != MPI_SUCCESS) {
        obj_type_contents_free(c);
        return engine_error(rc, what);
    }
    if (!c) {
        rail_dt_release(layout);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory building %s", what);
    }
    return obj_type_new(layout, combiner, c, out);
}

/* Contents of the constructors taking (count, blocklength, stride): ints
 * for nints leading values and addresses for the rest, or all large. */
static struct obj_type_contents *scalar_contents(const MPI_Count *v, int n, int nints,
                                                 obj_datatype_t *old)
{
    bool big = obj_type_any_big(v, nints);
    struct obj_type_contents *c = big ? obj_type_contents_new(0, 0, n, 1)
                                      : obj_type_contents_new(nints, n - nints, 0, 1);
    if (!c)
        return NULL;
    for (int i = 0; i < n; i++) {
        if (big)
            c->counts[i] = v[i];
        else if (i < nints)
            c->ints[i] = (int)v[i];
        else
            c->aints[i - nints] = (MPI_Aint)v[i];
    }
    obj_type_contents_set_type(c, 0, old);
    return c;
}

int obj_type_contiguous(MPI_Count count, obj_datatype_t *old, obj_datatype_t **out)
{
    int rc = check_count(count, "count");
    if (rc == MPI_SUCCESS)
        rc = check_span(count, 1, old);
    if (rc != MPI_SUCCESS)
        return rc;
    struct rail_dt *t = NULL;
    rc = rail_dt_create_contiguous(count, old->layout, &t);
    MPI_Count v[] = {count};
    return finish(rc, t, MPI_COMBINER_CONTIGUOUS, rc ? NULL : scalar_contents(v, 1, 1, old),
                  "a contiguous type", out);
}

int obj_type_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                    obj_datatype_t *old, bool stride_in_bytes, obj_datatype_t **out)
{
    /* A stride in elements reaches further than the blocks themselves. */
    MPI_Count reach = stride_in_bytes ? blocklength
                                      : RAIL_MAX(blocklength, stride < 0 ? -stride : stride);
    int rc = check_count(count, "count");
    if (rc == MPI_SUCCESS)
        rc = check_count(blocklength, "blocklength");
    if (rc == MPI_SUCCESS)
        rc = check_span(count, reach, old);
    if (rc != MPI_SUCCESS)
        return rc;
    struct rail_dt *t = NULL;
    if (stride_in_bytes)
        rc = rail_dt_create_hvector(count, blocklength, stride, old->layout, &t);
    else
        rc = rail_dt_create_vector(count, blocklength, stride, old->layout, &t);
    MPI_Count v[] = {count, blocklength, stride};
    return finish(rc, t, stride_in_bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR,
                  rc ? NULL : scalar_contents(v, 3, stride_in_bytes ? 2 : 3, old),
                  stride_in_bytes ? "an hvector type" : "a vector type", out);
}

/* Contents of indexed (bytes = false) and hindexed: count, blocklengths and
 * displacements (ints, or addresses for hindexed), or all large. */
static struct obj_type_contents *indexed_contents(MPI_Count count, const MPI_Count *bl,
                                                  const MPI_Count *displs, bool bytes,
                                                  obj_datatype_t *old)
{
    bool big = obj_type_big(count) || obj_type_big(2 * count + 1) || obj_type_any_big(bl, count) ||
               (!bytes && obj_type_any_big(displs, count));
    struct obj_type_contents *c;
    if (big)
        c = obj_type_contents_new(0, 0, 2 * count + 1, 1);
    else
        c = obj_type_contents_new(bytes ? count + 1 : 2 * count + 1, bytes ? count : 0, 0, 1);
    if (!c)
        return NULL;
    if (big) {
        c->counts[0] = count;
        for (MPI_Count i = 0; i < count; i++) {
            c->counts[1 + i] = bl[i];
            c->counts[1 + count + i] = displs[i];
        }
    } else {
        c->ints[0] = (int)count;
        for (MPI_Count i = 0; i < count; i++) {
            c->ints[1 + i] = (int)bl[i];
            if (bytes)
                c->aints[i] = (MPI_Aint)displs[i];
            else
                c->ints[1 + count + i] = (int)displs[i];
        }
    }
    obj_type_contents_set_type(c, 0, old);
    return c;
}

int obj_type_check_blocks(MPI_Count count, const MPI_Count blocklengths[],
                          const MPI_Count displacements[])
{
    int rc = check_count(count, "count");
    if (rc == MPI_SUCCESS)
        rc = check_counts(blocklengths, count, "array_of_blocklengths");
    if (rc == MPI_SUCCESS)
        rc = check_ptr(displacements, count, "array_of_displacements");
    return rc;
}

static int check_indexed(MPI_Count count, const MPI_Count bl[], const MPI_Count displs[],
                         obj_datatype_t *old)
{
    int rc = obj_type_check_blocks(count, bl, displs);
    for (MPI_Count i = 0; rc == MPI_SUCCESS && i < count; i++)
        rc = check_span(1, bl[i], old);
    return rc;
}

int obj_type_indexed(MPI_Count count, const MPI_Count blocklengths[],
                     const MPI_Count displacements[], obj_datatype_t *old,
                     bool displs_in_bytes, obj_datatype_t **out)
{
    int rc = check_indexed(count, blocklengths, displacements, old);
    if (rc != MPI_SUCCESS)
        return rc;
    struct rail_dt *t = NULL;
    if (displs_in_bytes)
        rc = rail_dt_create_hindexed(count, blocklengths, displacements, old->layout, &t);
    else
        rc = rail_dt_create_indexed(count, blocklengths, displacements, old->layout, &t);
    return finish(rc, t, displs_in_bytes ? MPI_COMBINER_HINDEXED : MPI_COMBINER_INDEXED,
                  rc ? NULL
                     : indexed_contents(count, blocklengths, displacements, displs_in_bytes, old),
                  displs_in_bytes ? "an hindexed type" : "an indexed type", out);
}

/* Contents of indexed_block / hindexed_block: count, blocklength, then the
 * displacements (ints or addresses), or all large. */
static struct obj_type_contents *block_contents(MPI_Count count, MPI_Count blocklength,
                                                const MPI_Count *displs, bool bytes,
                                                obj_datatype_t *old)
{
    bool big = obj_type_big(count) || obj_type_big(count + 2) || obj_type_big(blocklength) ||
               (!bytes && obj_type_any_big(displs, count));
    struct obj_type_contents *c;
    if (big)
        c = obj_type_contents_new(0, 0, count + 2, 1);
    else
        c = obj_type_contents_new(bytes ? 2 : count + 2, bytes ? count : 0, 0, 1);
    if (!c)
        return NULL;
    if (big) {
        c->counts[0] = count;
        c->counts[1] = blocklength;
        for (MPI_Count i = 0; i < count; i++)
            c->counts[2 + i] = displs[i];
    } else {
        c->ints[0] = (int)count;
        c->ints[1] = (int)blocklength;
        for (MPI_Count i = 0; i < count; i++) {
            if (bytes)
                c->aints[i] = (MPI_Aint)displs[i];
            else
                c->ints[2 + i] = (int)displs[i];
        }
    }
    obj_type_contents_set_type(c, 0, old);
    return c;
}

static int check_block(MPI_Count count, MPI_Count blocklength, const MPI_Count displs[],
                       obj_datatype_t *old)
{
    int rc = check_count(count, "count");
    if (rc == MPI_SUCCESS)
        rc = check_count(blocklength, "blocklength");
    if (rc == MPI_SUCCESS)
        rc = check_ptr(displs, count, "array_of_displacements");
    if (rc == MPI_SUCCESS)
        rc = check_span(count, blocklength, old);
    return rc;
}

int obj_type_indexed_block(MPI_Count count, MPI_Count blocklength,
                           const MPI_Count displacements[], obj_datatype_t *old,
                           bool displs_in_bytes, obj_datatype_t **out)
{
    int rc = check_block(count, blocklength, displacements, old);
    if (rc != MPI_SUCCESS)
        return rc;
    struct rail_dt *t = NULL;
    if (displs_in_bytes)
        rc = rail_dt_create_hindexed_block(count, blocklength, displacements, old->layout, &t);
    else
        rc = rail_dt_create_indexed_block(count, blocklength, displacements, old->layout, &t);
    return finish(rc, t,
                  displs_in_bytes ? MPI_COMBINER_HINDEXED_BLOCK : MPI_COMBINER_INDEXED_BLOCK,
                  rc ? NULL
                     : block_contents(count, blocklength, displacements, displs_in_bytes, old),
                  displs_in_bytes ? "an hindexed_block type" : "an indexed_block type", out);
}

static struct obj_type_contents *struct_contents(MPI_Count count, const MPI_Count *bl,
                                                 const MPI_Count *displs,
                                                 obj_datatype_t *const *objs)
{
    bool big = obj_type_big(count) || obj_type_big(count + 1) || obj_type_any_big(bl, count);
    struct obj_type_contents *c = big ? obj_type_contents_new(0, 0, 2 * count + 1, count)
                                      : obj_type_contents_new(count + 1, count, 0, count);
    if (!c)
        return NULL;
    if (big)
        c->counts[0] = count;
    else
        c->ints[0] = (int)count;
    for (MPI_Count i = 0; i < count; i++) {
        if (big) {
            c->counts[1 + i] = bl[i];
            c->counts[1 + count + i] = displs[i];
        } else {
            c->ints[1 + i] = (int)bl[i];
            c->aints[i] = (MPI_Aint)displs[i];
        }
        obj_type_contents_set_type(c, i, objs[i]);
    }
    return c;
}

int obj_type_struct(MPI_Count count, const MPI_Count blocklengths[],
                    const MPI_Count displacements[], obj_datatype_t *const types[],
                    obj_datatype_t **out)
{
    int rc = obj_type_check_blocks(count, blocklengths, displacements);
    if (rc == MPI_SUCCESS)
        rc = check_ptr(types, count, "array_of_types");
    for (MPI_Count i = 0; rc == MPI_SUCCESS && i < count; i++)
        rc = check_span(1, blocklengths[i], types[i]);
    if (rc != MPI_SUCCESS)
        return rc;
    struct rail_dt **layouts = malloc((size_t)RAIL_MAX(count, 1) * sizeof(*layouts));
    if (!layouts)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (MPI_Count i = 0; i < count; i++)
        layouts[i] = types[i]->layout;
    struct rail_dt *t = NULL;
    rc = rail_dt_create_struct(count, blocklengths, displacements, layouts, &t);
    free(layouts);
    return finish(rc, t, MPI_COMBINER_STRUCT,
                  rc ? NULL : struct_contents(count, blocklengths, displacements, types),
                  "a struct type", out);
}

int obj_type_resized(obj_datatype_t *old, MPI_Count lb, MPI_Count extent, obj_datatype_t **out)
{
    struct rail_dt *t = NULL;
    int rc = rail_dt_create_resized(old->layout, lb, extent, &t);
    struct obj_type_contents *c = NULL;
    if (rc == MPI_SUCCESS && (c = obj_type_contents_new(0, 2, 0, 1))) {
        c->aints[0] = (MPI_Aint)lb;
        c->aints[1] = (MPI_Aint)extent;
        obj_type_contents_set_type(c, 0, old);
    }
    return finish(rc, t, MPI_COMBINER_RESIZED, c, "a resized type", out);
}

/* ------------------------------------------------------------ subarray */

static int check_order(int order)
{
    if (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_ARG, "invalid order %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
}

static int check_subarray(int ndims, const MPI_Count sizes[], const MPI_Count subsizes[],
                          const MPI_Count starts[], int order)
{
    if (ndims < 1)
        return obj_errf(MPI_ERR_ARG, "invalid ndims %d (must be positive)", ndims);
    if (!sizes || !subsizes || !starts)
        return obj_errf(MPI_ERR_ARG, "array arguments must not be NULL");
    for (int d = 0; d < ndims; d++) {
        if (sizes[d] < 1)
            return obj_errf(MPI_ERR_ARG, "array_of_sizes[%d] = %lld (must be positive)", d,
                            (long long)sizes[d]);
        if (subsizes[d] < 1 || subsizes[d] > sizes[d])
            return obj_errf(MPI_ERR_ARG, "array_of_subsizes[%d] = %lld (must be 1..%lld)", d,
                            (long long)subsizes[d], (long long)sizes[d]);
        if (starts[d] < 0 || starts[d] > sizes[d] - subsizes[d])
            return obj_errf(MPI_ERR_ARG,
                            "array_of_starts[%d] = %lld (must be 0..%lld for a subsize of %lld)",
                            d, (long long)starts[d], (long long)(sizes[d] - subsizes[d]),
                            (long long)subsizes[d]);
    }
    return check_order(order);
}

static struct obj_type_contents *subarray_contents(int ndims, const MPI_Count *sizes,
                                                   const MPI_Count *subsizes,
                                                   const MPI_Count *starts, int order,
                                                   obj_datatype_t *old)
{
    bool big = obj_type_big(3 * (MPI_Count)ndims + 2) || obj_type_any_big(sizes, ndims) ||
               obj_type_any_big(subsizes, ndims) || obj_type_any_big(starts, ndims);
    struct obj_type_contents *c = big ? obj_type_contents_new(2, 0, 3 * ndims, 1)
                                      : obj_type_contents_new(3 * ndims + 2, 0, 0, 1);
    if (!c)
        return NULL;
    c->ints[0] = ndims;
    for (int d = 0; d < ndims; d++) {
        if (big) {
            c->counts[d] = sizes[d];
            c->counts[ndims + d] = subsizes[d];
            c->counts[2 * ndims + d] = starts[d];
        } else {
            c->ints[1 + d] = (int)sizes[d];
            c->ints[1 + ndims + d] = (int)subsizes[d];
            c->ints[1 + 2 * ndims + d] = (int)starts[d];
        }
    }
    c->ints[big ? 1 : 3 * ndims + 1] = order;
    obj_type_contents_set_type(c, 0, old);
    return c;
}

int obj_type_subarray(int ndims, const MPI_Count sizes[], const MPI_Count subsizes[],
                      const MPI_Count starts[], int order, obj_datatype_t *old,
                      obj_datatype_t **out)
{
    int rc = check_subarray(ndims, sizes, subsizes, starts, order);
    MPI_Count total = 1;
    for (int d = 0; rc == MPI_SUCCESS && d < ndims; d++)
        if (__builtin_mul_overflow(total, sizes[d], &total))
            rc = obj_errf(MPI_ERR_ARG, "the array has more than 2^63 elements");
    if (rc == MPI_SUCCESS)
        rc = check_span(total, 1, old);
    if (rc != MPI_SUCCESS)
        return rc;
    struct rail_dt *t = NULL;
    rc = rail_dt_create_subarray(ndims, sizes, subsizes, starts, order == MPI_ORDER_FORTRAN,
                                 old->layout, &t);
    return finish(rc, t, MPI_COMBINER_SUBARRAY,
                  rc ? NULL : subarray_contents(ndims, sizes, subsizes, starts, order, old),
                  "a subarray type", out);
}
