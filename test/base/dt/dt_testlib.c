/*
 * Shared helpers of the datatype engine tests (see dt_testlib.h).
 */
#include "dt_testlib.h"
#include <string.h>
#include <time.h>

bool t_leaf_ext32_safe;
static uint64_t t_state = 0x9E3779B97F4A7C15ull;

void t_seed(uint64_t seed)
{
    t_state = seed ? seed : 1;
}

uint64_t t_rand(void)
{
    t_state ^= t_state >> 12;
    t_state ^= t_state << 25;
    t_state ^= t_state >> 27;
    return t_state * 2685821657736338717ull;
}

int64_t t_range(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(t_rand() % (uint64_t)(hi - lo + 1));
}

uint64_t t_seed_from_args(int argc, char **argv)
{
    const char *env = getenv("RAIL_TEST_SEED");
    uint64_t seed = (uint64_t)time(NULL);
    if (argc > 1)
        seed = strtoull(argv[1], NULL, 0);
    else if (env)
        seed = strtoull(env, NULL, 0);
    printf("seed %llu (rerun: %s %llu)\n", (unsigned long long)seed, argv[0],
           (unsigned long long)seed);
    t_seed(seed);
    return seed;
}

void t_fill_random(void *p, size_t n)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        c[i] = (unsigned char)(t_rand() >> 56);
}

/* ------------------------------------------------------------- reference */

static void t_walk1(const struct rail_dt *dt, uintptr_t base, t_emit_fn emit, void *arg);

static void t_walk_n(const struct rail_dt *t, int64_t n, uintptr_t base, t_emit_fn emit,
                     void *arg)
{
    for (int64_t j = 0; j < n; j++)
        t_walk1(t, base + (uintptr_t)(j * t->extent), emit, arg);
}

static void t_walk1(const struct rail_dt *dt, uintptr_t base, t_emit_fn emit, void *arg)
{
    switch (dt->combiner) {
    case RAIL_DT_PREDEFINED:
        emit(base, dt, arg);
        break;
    case RAIL_DT_CONTIGUOUS:
        t_walk_n(dt->old, dt->count, base, emit, arg);
        break;
    case RAIL_DT_HVECTOR:
        for (int64_t i = 0; i < dt->count; i++)
            t_walk_n(dt->old, dt->blocklen, base + (uintptr_t)(i * dt->stride), emit, arg);
        break;
    case RAIL_DT_HINDEXED:
        for (int64_t i = 0; i < dt->count; i++)
            t_walk_n(dt->old, dt->blocklens[i], base + (uintptr_t)dt->displs[i], emit, arg);
        break;
    case RAIL_DT_HINDEXED_BLOCK:
        for (int64_t i = 0; i < dt->count; i++)
            t_walk_n(dt->old, dt->blocklen, base + (uintptr_t)dt->displs[i], emit, arg);
        break;
    case RAIL_DT_STRUCT:
        for (int64_t i = 0; i < dt->count; i++)
            t_walk_n(dt->types[i], dt->blocklens[i], base + (uintptr_t)dt->displs[i], emit, arg);
        break;
    case RAIL_DT_RESIZED:
        t_walk1(dt->old, base, emit, arg);
        break;
    }
}

void t_ref_walk(const struct rail_dt *dt, int64_t count, uintptr_t buf, t_emit_fn emit, void *arg)
{
    t_walk_n(dt, count, buf, emit, arg);
}

struct t_cursor {
    unsigned char *p;
    bool unpack;
    size_t left;
};

static void t_emit_copy(uintptr_t addr, const struct rail_dt *leaf, void *arg)
{
    struct t_cursor *c = arg;
    size_t n = RAIL_MIN((size_t)leaf->size, c->left);
    if (c->unpack)
        memcpy((void *)addr, c->p, n);
    else
        memcpy(c->p, (const void *)addr, n);
    c->p += n;
    c->left -= n;
}

size_t t_ref_pack(const struct rail_dt *dt, int64_t count, const void *buf, void *out)
{
    struct t_cursor c = {out, false, SIZE_MAX};
    t_ref_walk(dt, count, (uintptr_t)buf, t_emit_copy, &c);
    return (size_t)(c.p - (unsigned char *)out);
}

size_t t_ref_unpack_n(const struct rail_dt *dt, int64_t count, void *buf, const void *in,
                      size_t n)
{
    struct t_cursor c = {(unsigned char *)in, true, n};
    t_ref_walk(dt, count, (uintptr_t)buf, t_emit_copy, &c);
    return (size_t)(c.p - (const unsigned char *)in);
}

size_t t_ref_unpack(const struct rail_dt *dt, int64_t count, void *buf, const void *in)
{
    return t_ref_unpack_n(dt, count, buf, in, SIZE_MAX);
}

struct t_bounds {
    bool any;
    int64_t lo, hi, n;
};

static void t_emit_bounds(uintptr_t addr, const struct rail_dt *leaf, void *arg)
{
    struct t_bounds *b = arg;
    int64_t a = (int64_t)addr;
    if (!b->any || a < b->lo)
        b->lo = a;
    if (!b->any || a + leaf->size > b->hi)
        b->hi = a + leaf->size;
    b->any = true;
    b->n++;
}

bool t_ref_bounds(const struct rail_dt *dt, int64_t count, int64_t *lo, int64_t *hi)
{
    struct t_bounds b = {0};
    t_ref_walk(dt, count, 0, t_emit_bounds, &b);
    *lo = b.lo;
    *hi = b.hi;
    return b.any;
}

int64_t t_ref_nelem(const struct rail_dt *dt)
{
    struct t_bounds b = {0};
    t_ref_walk(dt, 1, 0, t_emit_bounds, &b);
    return b.n;
}

struct t_spans {
    int64_t (*s)[2];
    size_t n;
};

static void t_emit_span(uintptr_t addr, const struct rail_dt *leaf, void *arg)
{
    struct t_spans *sp = arg;
    sp->s[sp->n][0] = (int64_t)addr;
    sp->s[sp->n][1] = (int64_t)addr + leaf->size;
    sp->n++;
}

static int t_cmp_span(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return (x > y) - (x < y);
}

bool t_ref_disjoint(const struct rail_dt *dt, int64_t count)
{
    struct t_spans sp = {malloc((size_t)(count * dt->nelem + 1) * sizeof(*sp.s)), 0};
    t_ref_walk(dt, count, 0, t_emit_span, &sp);
    qsort(sp.s, sp.n, sizeof(*sp.s), t_cmp_span);
    bool ok = true;
    for (size_t i = 1; i < sp.n && ok; i++)
        ok = sp.s[i][0] >= sp.s[i - 1][1];
    free(sp.s);
    return ok;
}

void t_buf_alloc(struct t_buf *b, const struct rail_dt *dt, int64_t count)
{
    int64_t lo = 0, hi = 0;
    t_ref_bounds(dt, count, &lo, &hi);
    b->len = (size_t)(hi - lo) + 64;
    b->mem = malloc(b->len);
    t_fill_random(b->mem, b->len);
    b->buf = b->mem + 32 - lo;
}

void t_buf_free(struct t_buf *b)
{
    free(b->mem);
    b->mem = NULL;
}

/* ------------------------------------------------------------ random types */

struct rail_dt *t_rand_leaf(void)
{
    static const rail_typekind_t all[] = {
        RAIL_TK_INT8, RAIL_TK_INT16, RAIL_TK_INT32, RAIL_TK_INT64, RAIL_TK_DOUBLE,
        RAIL_TK_FLOAT, RAIL_TK_BYTE, RAIL_TK_C_DOUBLE_COMPLEX, RAIL_TK_LONG_DOUBLE,
        RAIL_TK_DOUBLE_INT, RAIL_TK_SHORT_INT, RAIL_TK_2INT, RAIL_TK_LONG_DOUBLE_INT,
        RAIL_TK_FLOAT_INT, RAIL_TK_BOOL, RAIL_TK_UINT128, RAIL_TK_LOGICAL2,
    };
    static const rail_typekind_t safe[] = {
        RAIL_TK_INT8, RAIL_TK_INT16, RAIL_TK_INT32, RAIL_TK_INT64, RAIL_TK_DOUBLE,
        RAIL_TK_FLOAT, RAIL_TK_BYTE, RAIL_TK_C_DOUBLE_COMPLEX, RAIL_TK_DOUBLE_INT,
        RAIL_TK_SHORT_INT, RAIL_TK_2INT, RAIL_TK_FLOAT_INT, RAIL_TK_BOOL, RAIL_TK_UINT128,
        RAIL_TK_LOGICAL2, RAIL_TK_C_FLOAT_COMPLEX,
    };
    if (t_leaf_ext32_safe)
        return rail_dt_predefined(safe[t_rand() % RAIL_ARRAY_SIZE(safe)]);
    return rail_dt_predefined(all[t_rand() % RAIL_ARRAY_SIZE(all)]);
}

static int64_t *t_rand_displs(int64_t n, int64_t span)
{
    int64_t *d = malloc((size_t)(n + 1) * sizeof(*d));
    int64_t pos = t_range(-span, span);
    for (int64_t i = 0; i < n; i++) {
        /* mostly increasing runs (mergeable), sometimes jumps back */
        d[i] = pos;
        pos += t_range(0, 3) == 0 ? t_range(-span, span) : t_range(0, span / 4 + 1);
    }
    return d;
}

/* A count: sometimes 0, mostly small, sometimes large enough that the
 * compiler keeps loops instead of flattening. */
static int64_t t_rand_count(void)
{
    int64_t r = t_range(0, 19);
    return r == 0 ? 0 : r < 15 ? t_range(1, 4) : t_range(5, 40);
}

static int64_t *t_rand_lens(int64_t n)
{
    int64_t *l = malloc((size_t)(n + 1) * sizeof(*l));
    for (int64_t i = 0; i < n; i++)
        l[i] = t_range(0, 19) == 0 ? 0 : t_range(1, 3);
    return l;
}

static struct rail_dt *t_make(int kind, int depth, int64_t max_size)
{
    struct rail_dt *old = t_rand_type(depth - 1, max_size), *dt = NULL, *ts[4];
    int64_t n = t_rand_count(), bl = t_range(0, 19) ? t_range(1, 3) : 0;
    int64_t ext = RAIL_MAX(old->extent, 1);
    int64_t *d = t_rand_displs(RAIL_MAX(n, 4), 3 * ext + 16), *l = t_rand_lens(RAIL_MAX(n, 4));
    switch (kind) {
    case 0: rail_dt_create_contiguous(t_rand_count(), old, &dt); break;
    case 1: rail_dt_create_hvector(n, bl, t_range(-3, 3) * ext + t_range(-2, 2), old, &dt); break;
    case 2: rail_dt_create_hindexed(n, l, d, old, &dt); break;
    case 3: rail_dt_create_hindexed_block(n, bl, d, old, &dt); break;
    case 4:
        for (int i = 0; i < 4; i++)
            ts[i] = i ? t_rand_type(depth - 1, max_size) : old;
        rail_dt_create_struct(t_range(1, 4), l, d, ts, &dt);
        for (int i = 1; i < 4; i++)
            rail_dt_release(ts[i]);
        break;
    case 5: rail_dt_create_resized(old, t_range(-16, 16), t_range(0, 2 * ext + 16), &dt); break;
    case 6: rail_dt_create_vector(n, bl, t_range(-3, 3), old, &dt); break;
    default: rail_dt_create_hvector(t_rand_count(), 1, ext, old, &dt); break; /* tiles */
    }
    rail_dt_release(old);
    free(d);
    free(l);
    return dt;
}

struct rail_dt *t_rand_type(int depth, int64_t max_size)
{
    if (depth <= 0 || t_range(0, 7) == 0)
        return t_rand_leaf();
    for (int tries = 0; tries < 8; tries++) {
        struct rail_dt *dt = t_make((int)t_range(0, 7), depth, max_size);
        if (dt && dt->size <= max_size && dt->nelem <= max_size)
            return dt;
        rail_dt_release(dt);
    }
    return t_rand_leaf();
}
