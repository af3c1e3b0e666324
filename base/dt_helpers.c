/*
 * Datatype engine: constructors in units of the old type's extent, and
 * subarray, expressed with the byte-displacement constructors.
 */
#include "base/dt_impl.h"
#include <stdlib.h>

int rail_dt_create_vector(int64_t count, int64_t blocklen, int64_t stride, struct rail_dt *old,
                          struct rail_dt **out)
{
    if (!old)
        return MPI_ERR_TYPE;
    return rail_dt_create_hvector(count, blocklen, stride * old->extent, old, out);
}

/* displs[i] * extent in a new array (NULL with *rc set on failure). */
static int64_t *dt_scale_displs(int64_t count, const int64_t *displs, int64_t extent, int *rc)
{
    *rc = MPI_SUCCESS;
    if (count < 0 || (count > 0 && !displs)) {
        *rc = count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG;
        return NULL;
    }
    int64_t *bytes = malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    if (!bytes) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int64_t i = 0; i < count; i++)
        bytes[i] = displs[i] * extent;
    return bytes;
}

int rail_dt_create_indexed(int64_t count, const int64_t blocklens[], const int64_t displs[],
                           struct rail_dt *old, struct rail_dt **out)
{
    int rc;
    if (!old)
        return MPI_ERR_TYPE;
    int64_t *bytes = dt_scale_displs(count, displs, old->extent, &rc);
    if (!bytes)
        return rc;
    rc = rail_dt_create_hindexed(count, blocklens, bytes, old, out);
    free(bytes);
    return rc;
}

int rail_dt_create_indexed_block(int64_t count, int64_t blocklen, const int64_t displs[],
                                 struct rail_dt *old, struct rail_dt **out)
{
    int rc;
    if (!old)
        return MPI_ERR_TYPE;
    int64_t *bytes = dt_scale_displs(count, displs, old->extent, &rc);
    if (!bytes)
        return rc;
    rc = rail_dt_create_hindexed_block(count, blocklen, bytes, old, out);
    free(bytes);
    return rc;
}

static int dt_subarray_check(int ndims, const int64_t *sizes, const int64_t *subsizes,
                             const int64_t *starts)
{
    if (ndims < 1 || !sizes || !subsizes || !starts)
        return MPI_ERR_ARG;
    for (int d = 0; d < ndims; d++)
        if (sizes[d] < 1 || subsizes[d] < 1 || subsizes[d] > sizes[d] || starts[d] < 0 ||
            starts[d] > sizes[d] - subsizes[d])
            return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

/* Replace *t by next, made from it (the old reference is dropped). */
static int dt_swap(struct rail_dt **t, int rc, struct rail_dt *next)
{
    rail_dt_release(*t);
    *t = rc == MPI_SUCCESS ? next : NULL;
    return rc;
}

int rail_dt_create_subarray(int ndims, const int64_t sizes[], const int64_t subsizes[],
                            const int64_t starts[], bool fortran_order, struct rail_dt *old,
                            struct rail_dt **out)
{
    int rc = old ? dt_subarray_check(ndims, sizes, subsizes, starts) : MPI_ERR_TYPE;
    struct rail_dt *t = NULL, *next = NULL;
    if (rc != MPI_SUCCESS)
        return rc;
    /* dim(k): k-th dimension from the fastest-varying one. */
#define DIM(k) (fortran_order ? (k) : ndims - 1 - (k))
    int64_t stride = old->extent, offset = starts[DIM(0)] * stride;
    RAIL_CHECK(rail_dt_create_contiguous(subsizes[DIM(0)], old, &t));
    for (int k = 1; k < ndims; k++) {
        stride *= sizes[DIM(k - 1)];
        offset += starts[DIM(k)] * stride;
        rc = rail_dt_create_hvector(subsizes[DIM(k)], 1, stride, t, &next);
        RAIL_CHECK(dt_swap(&t, rc, next));
    }
    int64_t total = stride * sizes[DIM(ndims - 1)];
#undef DIM
    rc = rail_dt_create_hindexed_block(1, 1, &offset, t, &next);
    RAIL_CHECK(dt_swap(&t, rc, next));
    rc = rail_dt_create_resized(t, 0, total, &next);
    RAIL_CHECK(dt_swap(&t, rc, next));
    *out = t;
    return MPI_SUCCESS;
fail:
    rail_dt_release(t);
    return rc;
}
