/*
 * MPI_Type_create_darray (MPI-4.1 section 5.1.4), built from the engine's
 * constructors as the standard defines it: per dimension, starting with the
 * fastest-varying one (dimension 0 in Fortran order, ndims-1 in C order),
 * the elements this process owns under a cyclic(darg) distribution of gsize
 * elements over psize processes, displaced to their global position and
 * resized to [0, gsize * extent of the previous type).  BLOCK(darg) is
 * cyclic(darg) with darg * psize >= gsize (darg defaults to
 * ceil(gsize / psize)), CYCLIC's default darg is 1, and NONE is BLOCK on a
 * single process.  The process grid is row-major whatever the array order:
 * the last dimension's coordinate varies fastest with the rank.
 */
#include "obj/type_impl.h"

#include <stdlib.h>

typedef struct dim {
    int64_t gsize, darg;  /* darg after defaults */
    int psize, coord;
} dim_t;

/* Replace *t by the result of a constructor applied to it. */
static int swap(struct rail_dt **t, int rc, struct rail_dt *next)
{
    rail_dt_release(*t);
    *t = rc == MPI_SUCCESS ? next : NULL;
    return rc;
}

/* My part of one dimension: blocks of darg elements of prev, every
 * psize-th block starting with block coord; the global last block may be
 * short. */
static int dim_type(const dim_t *d, struct rail_dt *prev, struct rail_dt **out)
{
    int64_t pe = rail_dt_extent(prev);
    int64_t nblocks = (d->gsize + d->darg - 1) / d->darg;
    int64_t mine = nblocks / d->psize + (d->coord < nblocks % d->psize ? 1 : 0);
    struct rail_dt *t = NULL, *a = NULL, *b = NULL;
    int rc;
    if (mine == 0) {
        RAIL_CHECK(rail_dt_create_contiguous(0, prev, &t));
    } else {
        int64_t last = d->coord + (mine - 1) * d->psize;   /* global index of my last block */
        int64_t lastlen = RAIL_MIN(d->darg, d->gsize - last * d->darg);
        int64_t full = lastlen == d->darg ? mine : mine - 1;
        int64_t disp_a = d->coord * d->darg * pe, disp_b = last * d->darg * pe;
        if (full > 0)
            RAIL_CHECK(rail_dt_create_hvector(full, d->darg, d->darg * d->psize * pe, prev, &a));
        if (lastlen < d->darg)
            RAIL_CHECK(rail_dt_create_contiguous(lastlen, prev, &b));
        if (a && b) {
            int64_t bl[2] = {1, 1}, disp[2] = {disp_a, disp_b};
            struct rail_dt *types[2] = {a, b};
            RAIL_CHECK(rail_dt_create_struct(2, bl, disp, types, &t));
        } else {
            RAIL_CHECK(rail_dt_create_hindexed_block(1, 1, a ? &disp_a : &disp_b, a ? a : b, &t));
        }
    }
    struct rail_dt *r = NULL;
    rc = rail_dt_create_resized(t, 0, d->gsize * pe, &r);
    RAIL_CHECK(swap(&t, rc, r));
    *out = t;
fail:
    rail_dt_release(a);
    rail_dt_release(b);
    if (rc != MPI_SUCCESS)
        rail_dt_release(t);
    return rc;
}

static int check_dim(int i, int64_t gsize, int distrib, int darg, int psize, dim_t *d)
{
    if (gsize < 1)
        return obj_errf(MPI_ERR_ARG, "array_of_gsizes[%d] = %lld (must be positive)", i,
                        (long long)gsize);
    if (psize < 1)
        return obj_errf(MPI_ERR_ARG, "array_of_psizes[%d] = %d (must be positive)", i, psize);
    d->gsize = gsize;
    d->psize = psize;
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        if (psize != 1)
            return obj_errf(MPI_ERR_ARG,
                            "array_of_psizes[%d] = %d: a dimension with MPI_DISTRIBUTE_NONE "
                            "must have 1 process", i, psize);
        d->darg = gsize;
        return MPI_SUCCESS;
    case MPI_DISTRIBUTE_BLOCK:
        if (darg == MPI_DISTRIBUTE_DFLT_DARG) {
            d->darg = (gsize + psize - 1) / psize;
            return MPI_SUCCESS;
        }
        if (darg < 1 || (int64_t)darg * psize < gsize)
            return obj_errf(MPI_ERR_ARG,
                            "array_of_dargs[%d] = %d: a block distribution of %lld elements "
                            "over %d processes needs blocks of at least %lld", i, darg,
                            (long long)gsize, psize, (long long)((gsize + psize - 1) / psize));
        d->darg = darg;
        return MPI_SUCCESS;
    case MPI_DISTRIBUTE_CYCLIC:
        if (darg == MPI_DISTRIBUTE_DFLT_DARG) {
            d->darg = 1;
            return MPI_SUCCESS;
        }
        if (darg < 1)
            return obj_errf(MPI_ERR_ARG, "array_of_dargs[%d] = %d (must be positive or "
                            "MPI_DISTRIBUTE_DFLT_DARG)", i, darg);
        d->darg = darg;
        return MPI_SUCCESS;
    default:
        return obj_errf(MPI_ERR_ARG, "array_of_distribs[%d] = %d (MPI_DISTRIBUTE_NONE, _BLOCK "
                        "or _CYCLIC)", i, distrib);
    }
}

static int check_args(int size, int rank, int ndims, const MPI_Count gsizes[],
                      const int distribs[], const int dargs[], const int psizes[], int order,
                      dim_t *dims)
{
    if (size < 1)
        return obj_errf(MPI_ERR_ARG, "invalid size %d (must be positive)", size);
    if (rank < 0 || rank >= size)
        return obj_errf(MPI_ERR_ARG, "invalid rank %d (group of size %d)", rank, size);
    if (!gsizes || !distribs || !dargs || !psizes)
        return obj_errf(MPI_ERR_ARG, "array arguments must not be NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return obj_errf(MPI_ERR_ARG, "invalid order %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
    int64_t procs = 1;
    for (int i = 0; i < ndims; i++) {
        int rc = check_dim(i, gsizes[i], distribs[i], dargs[i], psizes[i], &dims[i]);
        if (rc != MPI_SUCCESS)
            return rc;
        procs *= psizes[i];
        if (procs > size)
            break;
    }
    if (procs != size)
        return obj_errf(MPI_ERR_ARG, "the process grid (product of array_of_psizes) does not "
                        "have %d processes", size);
    /* Row-major process grid. */
    for (int i = ndims - 1, r = rank; i >= 0; i--) {
        dims[i].coord = r % psizes[i];
        r /= psizes[i];
    }
    return MPI_SUCCESS;
}

static struct obj_type_contents *darray_contents(int size, int rank, int ndims,
                                                 const MPI_Count gsizes[], const int distribs[],
                                                 const int dargs[], const int psizes[],
                                                 int order, obj_datatype_t *old)
{
    bool big = obj_type_big(4 * (MPI_Count)ndims + 4) || obj_type_any_big(gsizes, ndims);
    struct obj_type_contents *c = big ? obj_type_contents_new(3 * ndims + 4, 0, ndims, 1)
                                      : obj_type_contents_new(4 * ndims + 4, 0, 0, 1);
    if (!c)
        return NULL;
    int *p = c->ints;
    *p++ = size;
    *p++ = rank;
    *p++ = ndims;
    for (int i = 0; i < ndims; i++) {
        if (big)
            c->counts[i] = gsizes[i];
        else
            p[i] = (int)gsizes[i];
    }
    if (!big)
        p += ndims;
    for (int i = 0; i < ndims; i++) {
        p[i] = distribs[i];
        p[ndims + i] = dargs[i];
        p[2 * ndims + i] = psizes[i];
    }
    p[3 * ndims] = order;
    obj_type_contents_set_type(c, 0, old);
    return c;
}

int obj_type_darray(int size, int rank, int ndims, const MPI_Count gsizes[], const int distribs[],
                    const int dargs[], const int psizes[], int order, obj_datatype_t *old,
                    obj_datatype_t **out)
{
    if (ndims < 1)
        return obj_errf(MPI_ERR_ARG, "invalid ndims %d (must be positive)", ndims);
    dim_t *dims = malloc((size_t)ndims * sizeof(*dims));
    if (!dims)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    struct rail_dt *t = rail_dt_retain(old->layout);
    int rc = check_args(size, rank, ndims, gsizes, distribs, dargs, psizes, order, dims);
    for (int k = 0; rc == MPI_SUCCESS && k < ndims; k++) {
        struct rail_dt *next = NULL;
        int i = order == MPI_ORDER_FORTRAN ? k : ndims - 1 - k;
        rc = dim_type(&dims[i], t, &next);
        rc = swap(&t, rc, next);
        if (rc != MPI_SUCCESS)
            rc = obj_errf(rc, "cannot build dimension %d of the darray type", i);
    }
    free(dims);
    if (rc != MPI_SUCCESS) {
        rail_dt_release(t);
        return rc;
    }
    struct obj_type_contents *c =
        darray_contents(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old);
    if (!c) {
        rail_dt_release(t);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    return obj_type_new(t, MPI_COMBINER_DARRAY, c, out);
}
