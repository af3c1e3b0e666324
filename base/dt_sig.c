/*
 * Datatype engine: the type signature (runs of basic elements) and basic
 * element counts of partial data, both read from the description tree.
 */
#include "base/dt_impl.h"
#include <stdlib.h>

/* Copies of old in one element of a non-struct derived type. */
static int64_t dt_reps(const struct rail_dt *dt)
{
    switch (dt->combiner) {
    case RAIL_DT_CONTIGUOUS:
        return dt->count;
    case RAIL_DT_HVECTOR:
    case RAIL_DT_HINDEXED_BLOCK:
        return dt->count * dt->blocklen;
    case RAIL_DT_HINDEXED:
        return dt->old->size ? dt->pre_bytes[dt->count] / dt->old->size : 0;
    default:
        return 1;
    }
}

static void dt_sig_frame(struct rail_dt_sig_frame *f, const struct rail_dt *dt)
{
    if (dt->combiner == RAIL_DT_STRUCT) {
        f->dt = dt;
        f->idx = 0;
        f->child = dt->count ? dt->types[0] : NULL;
        f->left = dt->count ? dt->blocklens[0] : 0;
    } else {
        f->dt = NULL;
        f->child = dt->old;
        f->left = dt_reps(dt);
    }
}

/* Struct frames move to their next entry; false when there is none. */
static bool dt_sig_next_entry(struct rail_dt_sig_frame *f)
{
    if (!f->dt || ++f->idx >= f->dt->count)
        return false;
    f->child = f->dt->types[f->idx];
    f->left = f->dt->blocklens[f->idx];
    return true;
}

int rail_dt_sig_init(struct rail_dt_sig_iter *it, const struct rail_dt *dt, int64_t count)
{
    if (!dt)
        return MPI_ERR_TYPE;
    if (count < 0)
        return MPI_ERR_COUNT;
    it->cap = dt->depth + 1;
    it->stack = it->inline_stack;
    if (it->cap > (int)RAIL_ARRAY_SIZE(it->inline_stack) &&
        !(it->stack = malloc((size_t)it->cap * sizeof(*it->stack))))
        return MPI_ERR_NO_MEM;
    it->stack[0] = (struct rail_dt_sig_frame){NULL, dt, 0, count};
    it->depth = 1;
    it->pend = NULL;
    return MPI_SUCCESS;
}

void rail_dt_sig_fini(struct rail_dt_sig_iter *it)
{
    if (it->stack != it->inline_stack)
        free(it->stack);
    it->stack = NULL;
}

/* Next run, not merged with its neighbours. */
static bool dt_sig_raw(struct rail_dt_sig_iter *it, const struct rail_dt **leaf, int64_t *n)
{
    while (it->depth > 0) {
        struct rail_dt_sig_frame *f = &it->stack[it->depth - 1];
        if (f->left == 0 || f->child->nelem == 0) {
            if (!dt_sig_next_entry(f))
                it->depth--;
            continue;
        }
        if (rail_dt_is_leaf(f->child)) {
            *leaf = f->child;
            *n = f->left;
            f->left = 0;
            return true;
        }
        f->left--;
        dt_sig_frame(&it->stack[it->depth++], f->child);
    }
    return false;
}

bool rail_dt_sig_next(struct rail_dt_sig_iter *it, const struct rail_dt **leaf, int64_t *n)
{
    const struct rail_dt *l;
    int64_t k;
    if (!it->pend && !dt_sig_raw(it, &it->pend, &it->pend_n))
        return false;
    *leaf = it->pend;
    *n = it->pend_n;
    it->pend = NULL;
    while (dt_sig_raw(it, &l, &k)) {
        if (l != *leaf) {
            it->pend = l;
            it->pend_n = k;
            break;
        }
        *n += k;
    }
    return true;
}

static bool dt_sig_prefix(struct rail_dt_sig_iter *a, struct rail_dt_sig_iter *b)
{
    const struct rail_dt *la = NULL, *lb = NULL;
    int64_t na = 0, nb = 0;
    for (;;) {
        if (na == 0 && !rail_dt_sig_next(a, &la, &na))
            return true;
        if (nb == 0 && !rail_dt_sig_next(b, &lb, &nb))
            return false;
        if (la->tk != lb->tk)
            return false;
        int64_t m = RAIL_MIN(na, nb);
        na -= m;
        nb -= m;
    }
}

int rail_dt_sig_match(const struct rail_dt *a, int64_t acount, const struct rail_dt *b,
                      int64_t bcount, bool *match)
{
    struct rail_dt_sig_iter ia, ib;
    int rc = rail_dt_sig_init(&ia, a, acount);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = rail_dt_sig_init(&ib, b, bcount);
    if (rc == MPI_SUCCESS) {
        *match = dt_sig_prefix(&ia, &ib);
        rail_dt_sig_fini(&ib);
    }
    rail_dt_sig_fini(&ia);
    return rc;
}

/* ------------------------------------------------------------- elements */

static int64_t dt_elems_in(const struct rail_dt *dt, int64_t r, bool *exact);

static int64_t dt_elems(const struct rail_dt *dt, int64_t bytes, bool *exact)
{
    if (dt->size == 0) {
        *exact = *exact && bytes == 0;
        return 0;
    }
    int64_t k = bytes / dt->size, r = bytes % dt->size;
    return k * dt->nelem + (r ? dt_elems_in(dt, r, exact) : 0);
}

/* Basic elements in the first r bytes of one element, 0 < r < size. */
static int64_t dt_elems_in(const struct rail_dt *dt, int64_t r, bool *exact)
{
    int64_t i;
    switch (dt->combiner) {
    case RAIL_DT_PREDEFINED:
        *exact = false;
        return 0;
    case RAIL_DT_HINDEXED:
        i = rail_dt_bsearch(dt->pre_bytes, sizeof(int64_t), dt->count, r);
        return dt->pre_bytes[i] / dt->old->size * dt->old->nelem +
               dt_elems(dt->old, r - dt->pre_bytes[i], exact);
    case RAIL_DT_STRUCT:
        i = rail_dt_bsearch(dt->pre_bytes, sizeof(int64_t), dt->count, r);
        return dt->pre_elems[i] + dt_elems(dt->types[i], r - dt->pre_bytes[i], exact);
    default:
        return dt_elems(dt->old, r, exact);
    }
}

int64_t rail_dt_get_elements(const struct rail_dt *dt, int64_t bytes, bool *exact)
{
    bool ex = true;
    int64_t n = dt_elems(dt, bytes, &ex);
    if (exact)
        *exact = ex;
    return n;
}
