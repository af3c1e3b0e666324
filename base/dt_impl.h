/*
 * Internals shared by the base/dt*.c files of the datatype engine (see
 * base/dt.h for the representation).
 */
#ifndef BASE_DT_IMPL_H
#define BASE_DT_IMPL_H

#include "base/dt.h"

/* A basic element: a predefined, non-pair type. */
static inline bool rail_dt_is_leaf(const struct rail_dt *dt)
{
    return dt->combiner == RAIL_DT_PREDEFINED;
}

/* First n..n-1 copies of a step: the lowest / highest offset reached. */
static inline int64_t rail_dt_span_lo(int64_t n, int64_t step)
{
    return n > 0 ? RAIL_MIN((n - 1) * step, 0) : 0;
}
static inline int64_t rail_dt_span_hi(int64_t n, int64_t step)
{
    return n > 0 ? RAIL_MAX((n - 1) * step, 0) : 0;
}

/* Saturating product for block counts. */
static inline int64_t rail_dt_sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return INT64_MAX;
    return r;
}
static inline int64_t rail_dt_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return INT64_MAX;
    return r;
}

/* Largest i < n with pre[i] <= off (pre nondecreasing, pre[0] = 0). */
static inline int64_t rail_dt_bsearch(const int64_t *pre, size_t step, int64_t n, int64_t off)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (*(const int64_t *)((const char *)pre + (size_t)mid * step) <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* dt.c: allocation of a derived type with n entries (arrays inside). */
struct rail_dt *rail_dt_alloc(rail_dt_combiner_t combiner, int64_t n, bool with_blocklens,
                              bool with_types);
void rail_dt_free(struct rail_dt *dt);

/* dt_create.c: bounds and prefix sums of a struct whose count, blocklens,
 * displs and types are set (also used for the static pair types). */
void rail_dt_finish_struct(struct rail_dt *dt, int64_t *pre_bytes, int64_t *pre_elems);

/* dt_commit.c: arena of program nodes, freed as a whole. */
void rail_dt_arena_free(void *arena);

/* dt_ext32.c: external32 size of a basic kind (0: none). */
int64_t rail_dt_ext32_kind_size(rail_typekind_t tk);

#endif
