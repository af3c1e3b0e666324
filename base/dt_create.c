/*
 * Datatype engine: constructors and the bounds rules of MPI-2+.
 *
 * Every derived type is a set of components: reps copies of a type, their
 * origins between lo and hi.  Data bounds come from the copies' true
 * bounds; lb/ub from the sticky markers of resized types when any
 * component has them, else from the components' own lb/ub (a struct then
 * rounds its extent up to the largest alignment of its members).
 */
#include "base/dt_impl.h"
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct rail_dt *) <= sizeof(int64_t), "types[] lives in int64_t slots");

struct dt_bounds {
    bool data, markers, plain;
    int64_t tlb, tub, mlb, mub, plb, pub;
    int64_t size, nelem, ext32, align;
    int depth;
    uint8_t flags;
};

static void dt_bounds_init(struct dt_bounds *b)
{
    memset(b, 0, sizeof(*b));
    b->tlb = b->mlb = b->plb = INT64_MAX;
    b->tub = b->mub = b->pub = INT64_MIN;
    b->align = 1;
}

/* reps copies of old whose origins lie in [lo, hi]. */
static void dt_bounds_add(struct dt_bounds *b, const struct rail_dt *old, int64_t lo, int64_t hi,
                          int64_t reps)
{
    if (reps == 0)
        return;
    b->size += reps * old->size;
    b->nelem += reps * old->nelem;
    b->ext32 += reps * old->ext32_size;
    b->align = RAIL_MAX(b->align, old->align);
    b->depth = RAIL_MAX(b->depth, old->depth);
    b->flags |= old->flags & RAIL_DT_F_NOEXT32;
    if (old->size > 0) {
        b->data = true;
        b->tlb = RAIL_MIN(b->tlb, lo + old->true_lb);
        b->tub = RAIL_MAX(b->tub, hi + old->true_lb + old->true_extent);
    }
    if (old->flags & RAIL_DT_F_MARKERS) {
        b->markers = true;
        b->mlb = RAIL_MIN(b->mlb, lo + old->lb);
        b->mub = RAIL_MAX(b->mub, hi + old->lb + old->extent);
    } else if (old->size > 0) {
        b->plain = true;
        b->plb = RAIL_MIN(b->plb, lo + old->lb);
        b->pub = RAIL_MAX(b->pub, hi + old->lb + old->extent);
    }
}

static void dt_bounds_finish(const struct dt_bounds *b, struct rail_dt *dt, bool pad)
{
    int64_t lb = 0, ub = 0;
    if (b->markers) {
        lb = b->mlb;
        ub = b->mub;
    } else if (b->plain) {
        lb = b->plb;
        ub = b->pub;
        if (pad && (ub - lb) % b->align)
            ub += b->align - (ub - lb) % b->align;
    }
    dt->lb = lb;
    dt->extent = ub - lb;
    dt->true_lb = b->data ? b->tlb : 0;
    dt->true_extent = b->data ? b->tub - b->tlb : 0;
    dt->size = b->size;
    dt->nelem = b->nelem;
    dt->ext32_size = b->ext32;
    dt->align = b->align;
    dt->depth = (uint16_t)RAIL_MIN(b->depth + 1, UINT16_MAX);
    dt->flags = b->flags | (b->markers ? RAIL_DT_F_MARKERS : 0);
}

/* n copies of old, step apart, first at disp. */
static void dt_bounds_add_run(struct dt_bounds *b, const struct rail_dt *old, int64_t disp,
                              int64_t n, int64_t step)
{
    dt_bounds_add(b, old, disp + rail_dt_span_lo(n, step), disp + rail_dt_span_hi(n, step), n);
}

static int dt_check(int64_t count, const struct rail_dt *old)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    return old ? MPI_SUCCESS : MPI_ERR_TYPE;
}

int rail_dt_create_contiguous(int64_t count, struct rail_dt *old, struct rail_dt **out)
{
    int rc = dt_check(count, old);
    if (rc != MPI_SUCCESS)
        return rc;
    struct rail_dt *dt = rail_dt_alloc(RAIL_DT_CONTIGUOUS, 0, false, false);
    if (!dt)
        return MPI_ERR_NO_MEM;
    struct dt_bounds b;
    dt_bounds_init(&b);
    dt_bounds_add_run(&b, old, 0, count, old->extent);
    dt_bounds_finish(&b, dt, false);
    dt->count = count;
    dt->old = rail_dt_retain(old);
    *out = dt;
    return MPI_SUCCESS;
}

int rail_dt_create_hvector(int64_t count, int64_t blocklen, int64_t stride, struct rail_dt *old,
                           struct rail_dt **out)
{
    int rc = dt_check(count, old);
    if (rc != MPI_SUCCESS)
        return rc;
    if (blocklen < 0)
        return MPI_ERR_ARG;
    struct rail_dt *dt = rail_dt_alloc(RAIL_DT_HVECTOR, 0, false, false);
    if (!dt)
        return MPI_ERR_NO_MEM;
    struct dt_bounds b;
    dt_bounds_init(&b);
    if (count > 0 && blocklen > 0) {
        int64_t lo = rail_dt_span_lo(count, stride) + rail_dt_span_lo(blocklen, old->extent);
        int64_t hi = rail_dt_span_hi(count, stride) + rail_dt_span_hi(blocklen, old->extent);
        dt_bounds_add(&b, old, lo, hi, count * blocklen);
    }
    dt_bounds_finish(&b, dt, false);
    dt->count = count;
    dt->blocklen = blocklen;
    dt->stride = stride;
    dt->old = rail_dt_retain(old);
    *out = dt;
    return MPI_SUCCESS;
}

static int dt_check_arrays(int64_t count, const int64_t *blocklens, const int64_t *displs)
{
    if (count > 0 && (!displs || !blocklens))
        return MPI_ERR_ARG;
    for (int64_t i = 0; i < count; i++)
        if (blocklens[i] < 0)
            return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

int rail_dt_create_hindexed(int64_t count, const int64_t blocklens[], const int64_t displs[],
                            struct rail_dt *old, struct rail_dt **out)
{
    int rc = dt_check(count, old);
    if (rc == MPI_SUCCESS)
        rc = dt_check_arrays(count, blocklens, displs);
    if (rc != MPI_SUCCESS)
        return rc;
    struct rail_dt *dt = rail_dt_alloc(RAIL_DT_HINDEXED, count, true, false);
    if (!dt)
        return MPI_ERR_NO_MEM;
    int64_t *bl = (int64_t *)dt->blocklens, *pre = (int64_t *)dt->pre_bytes;
    struct dt_bounds b;
    dt_bounds_init(&b);
    for (int64_t i = 0; i < count; i++) {
        dt_bounds_add_run(&b, old, displs[i], blocklens[i], old->extent);
        bl[i] = blocklens[i];
        pre[i + 1] = pre[i] + blocklens[i] * old->size;
        ((int64_t *)dt->displs)[i] = displs[i];
    }
    dt_bounds_finish(&b, dt, false);
    dt->old = rail_dt_retain(old);
    *out = dt;
    return MPI_SUCCESS;
}

int rail_dt_create_hindexed_block(int64_t count, int64_t blocklen, const int64_t displs[],
                                  struct rail_dt *old, struct rail_dt **out)
{
    int rc = dt_check(count, old);
    if (rc != MPI_SUCCESS)
        return rc;
    if (blocklen < 0 || (count > 0 && !displs))
        return MPI_ERR_ARG;
    struct rail_dt *dt = rail_dt_alloc(RAIL_DT_HINDEXED_BLOCK, count, false, false);
    if (!dt)
        return MPI_ERR_NO_MEM;
    struct dt_bounds b;
    dt_bounds_init(&b);
    for (int64_t i = 0; i < count; i++) {
        dt_bounds_add_run(&b, old, displs[i], blocklen, old->extent);
        ((int64_t *)dt->displs)[i] = displs[i];
    }
    dt_bounds_finish(&b, dt, false);
    dt->blocklen = blocklen;
    dt->old = rail_dt_retain(old);
    *out = dt;
    return MPI_SUCCESS;
}

void rail_dt_finish_struct(struct rail_dt *dt, int64_t *pre_bytes, int64_t *pre_elems)
{
    struct dt_bounds b;
    dt_bounds_init(&b);
    pre_bytes[0] = pre_elems[0] = 0;
    for (int64_t i = 0; i < dt->count; i++) {
        const struct rail_dt *t = dt->types[i];
        dt_bounds_add_run(&b, t, dt->displs[i], dt->blocklens[i], t->extent);
        pre_bytes[i + 1] = pre_bytes[i] + dt->blocklens[i] * t->size;
        pre_elems[i + 1] = pre_elems[i] + dt->blocklens[i] * t->nelem;
    }
    dt_bounds_finish(&b, dt, true);
    dt->pre_bytes = pre_bytes;
    dt->pre_elems = pre_elems;
}

int rail_dt_create_struct(int64_t count, const int64_t blocklens[], const int64_t displs[],
                          struct rail_dt *const types[], struct rail_dt **out)
{
    int rc = count < 0 ? MPI_ERR_COUNT : dt_check_arrays(count, blocklens, displs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count > 0 && !types)
        return MPI_ERR_ARG;
    for (int64_t i = 0; i < count; i++)
        if (!types[i])
            return MPI_ERR_TYPE;
    struct rail_dt *dt = rail_dt_alloc(RAIL_DT_STRUCT, count, true, true);
    if (!dt)
        return MPI_ERR_NO_MEM;
    struct rail_dt **ts = (struct rail_dt **)dt->types;
    for (int64_t i = 0; i < count; i++) {
        ((int64_t *)dt->blocklens)[i] = blocklens[i];
        ((int64_t *)dt->displs)[i] = displs[i];
        ts[i] = rail_dt_retain(types[i]);
    }
    rail_dt_finish_struct(dt, (int64_t *)dt->pre_bytes, (int64_t *)dt->pre_elems);
    *out = dt;
    return MPI_SUCCESS;
}

int rail_dt_create_resized(struct rail_dt *old, int64_t lb, int64_t extent, struct rail_dt **out)
{
    if (!old)
        return MPI_ERR_TYPE;
    struct rail_dt *dt = rail_dt_alloc(RAIL_DT_RESIZED, 0, false, false);
    if (!dt)
        return MPI_ERR_NO_MEM;
    dt->size = old->size;
    dt->nelem = old->nelem;
    dt->ext32_size = old->ext32_size;
    dt->align = old->align;
    dt->true_lb = old->true_lb;
    dt->true_extent = old->true_extent;
    dt->depth = (uint16_t)RAIL_MIN(old->depth + 1, UINT16_MAX);
    dt->flags = (old->flags & RAIL_DT_F_NOEXT32) | RAIL_DT_F_MARKERS;
    dt->lb = lb;
    dt->extent = extent;
    dt->old = rail_dt_retain(old);
    *out = dt;
    return MPI_SUCCESS;
}
