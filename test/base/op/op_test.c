/*
 * Unit test of the reduction kernels (base/op.c) and of base/typekind.c.
 *
 * For every instruction set the CPU runs, every (op, kind) must match a
 * plain scalar reference written here, independently of base/op_kernels.h,
 * on random data (with ties, signed zeros, NaN, infinities and logical
 * values other than 0/1), at counts 0, 1, 7, 67, 1029 and 1000003, at
 * element-aligned and unaligned starting addresses, through rail_op_reduce,
 * rail_op_reduce3 and rail_op_reduce3 with out == b, touching nothing
 * outside the output.  Combinations with no meaning must give NULL and
 * MPI_ERR_OP.  Exit 0: pass; 1: fail (each failure is printed).
 *
 * op_test [seed]  (or RAIL_TEST_SEED=seed): other random data; the seed in
 * use is printed so that a failure can be replayed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <complex.h>
#include <float.h>
#include <stddef.h>
#include "base/rail.h"
#include "base/op.h"
#include "base/op_impl.h"
#include "base/op_types.h"
#include "base/typekind.h"
#include "test/check.h"

/* ------------------------------------------------------------------ kinds */

/* How the test reads each kind; written from the MPI rules, not from the
 * kernel table, so a wrong table entry shows. */
typedef enum cls { C_SINT, C_UINT, C_FLOAT, C_COMPLEX, C_LOGICAL, C_BYTE, C_PAIR } cls_t;

typedef struct kind {
    rail_typekind_t tk;
    cls_t cls;
    size_t size; /* expected element size (0: compiler lacks the type) */
} kind_t;

#if RAIL_TK_HAVE_INT128
typedef unsigned __int128 wu_t; /* widest integer the reference computes in */
typedef __int128 ws_t;
#define SZ_INT128 16
#else
typedef uint64_t wu_t;
typedef int64_t ws_t;
#define SZ_INT128 0
#endif

/* The MPI C pair structs, written out here (not taken from base/op_types.h). */
typedef struct { float v; int i; } t_float_int;
typedef struct { double v; int i; } t_double_int;
typedef struct { long v; int i; } t_long_int;
typedef struct { int v; int i; } t_2int;
typedef struct { short v; int i; } t_short_int;
typedef struct { long double v; int i; } t_long_double_int;
typedef struct { float v; float i; } t_2float;
typedef struct { double v; double i; } t_2double;
typedef struct { int64_t v; int64_t i; } t_2int64;

static const kind_t kinds[] = {
    {RAIL_TK_INT8, C_SINT, 1},
    {RAIL_TK_UINT8, C_UINT, 1},
    {RAIL_TK_INT16, C_SINT, 2},
    {RAIL_TK_UINT16, C_UINT, 2},
    {RAIL_TK_INT32, C_SINT, 4},
    {RAIL_TK_UINT32, C_UINT, 4},
    {RAIL_TK_INT64, C_SINT, 8},
    {RAIL_TK_UINT64, C_UINT, 8},
    {RAIL_TK_INT128, C_SINT, SZ_INT128},
    {RAIL_TK_UINT128, C_UINT, SZ_INT128},
    {RAIL_TK_FLOAT16, C_FLOAT, RAIL_TK_HAVE_FLOAT16 ? 2 : 0},
    {RAIL_TK_FLOAT, C_FLOAT, sizeof(float)},
    {RAIL_TK_DOUBLE, C_FLOAT, sizeof(double)},
    {RAIL_TK_LONG_DOUBLE, C_FLOAT, sizeof(long double)},
    {RAIL_TK_FLOAT128, C_FLOAT, RAIL_TK_HAVE_FLOAT128 ? 16 : 0},
    {RAIL_TK_C_FLOAT_COMPLEX, C_COMPLEX, 2 * sizeof(float)},
    {RAIL_TK_C_DOUBLE_COMPLEX, C_COMPLEX, 2 * sizeof(double)},
    {RAIL_TK_C_LONG_DOUBLE_COMPLEX, C_COMPLEX, 2 * sizeof(long double)},
    {RAIL_TK_BOOL, C_LOGICAL, sizeof(_Bool)},
    {RAIL_TK_LOGICAL1, C_LOGICAL, 1},
    {RAIL_TK_LOGICAL2, C_LOGICAL, 2},
    {RAIL_TK_LOGICAL4, C_LOGICAL, 4},
    {RAIL_TK_LOGICAL8, C_LOGICAL, 8},
    {RAIL_TK_BYTE, C_BYTE, 1},
    {RAIL_TK_FLOAT_INT, C_PAIR, sizeof(t_float_int)},
    {RAIL_TK_DOUBLE_INT, C_PAIR, sizeof(t_double_int)},
    {RAIL_TK_LONG_INT, C_PAIR, sizeof(t_long_int)},
    {RAIL_TK_2INT, C_PAIR, sizeof(t_2int)},
    {RAIL_TK_SHORT_INT, C_PAIR, sizeof(t_short_int)},
    {RAIL_TK_LONG_DOUBLE_INT, C_PAIR, sizeof(t_long_double_int)},
    {RAIL_TK_2FLOAT, C_PAIR, sizeof(t_2float)},
    {RAIL_TK_2DOUBLE, C_PAIR, sizeof(t_2double)},
    {RAIL_TK_2INT64, C_PAIR, sizeof(t_2int64)},
};
#define NKINDS RAIL_ARRAY_SIZE(kinds)

static const kind_t *kind_of(rail_typekind_t tk)
{
    for (size_t k = 0; k < NKINDS; k++)
        if (kinds[k].tk == tk)
            return &kinds[k];
    return NULL;
}

/* The MPI rules (MPI 4.1 section 6.9.2) plus REPLACE/NO_OP on everything. */
static bool op_expected(rail_op_t op, const kind_t *k)
{
    if (k == NULL || k->size == 0)
        return false;
    switch (op) {
    case RAIL_OP_SUM:
    case RAIL_OP_PROD:
        return k->cls == C_SINT || k->cls == C_UINT || k->cls == C_FLOAT || k->cls == C_COMPLEX;
    case RAIL_OP_MAX:
    case RAIL_OP_MIN:
        return k->cls == C_SINT || k->cls == C_UINT || k->cls == C_FLOAT;
    case RAIL_OP_LAND:
    case RAIL_OP_LOR:
    case RAIL_OP_LXOR:
        return k->cls == C_SINT || k->cls == C_UINT || k->cls == C_LOGICAL;
    case RAIL_OP_BAND:
    case RAIL_OP_BOR:
    case RAIL_OP_BXOR:
        return k->cls == C_SINT || k->cls == C_UINT || k->cls == C_BYTE;
    case RAIL_OP_MAXLOC:
    case RAIL_OP_MINLOC:
        return k->cls == C_PAIR;
    case RAIL_OP_REPLACE:
    case RAIL_OP_NO_OP:
        return true;
    default:
        return false;
    }
}

/* -------------------------------------------------------------- reference */

/* Integers of width w (1, 2, 4, 8, 16 bytes) in the widest type. */
static wu_t ld_u(const void *p, size_t w)
{
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    wu_t wide;

    switch (w) {
    case 1: memcpy(&u8, p, 1); return u8;
    case 2: memcpy(&u16, p, 2); return u16;
    case 4: memcpy(&u32, p, 4); return u32;
    case 8: memcpy(&u64, p, 8); return u64;
    default: memcpy(&wide, p, sizeof wide); return wide;
    }
}

static ws_t ld_s(const void *p, size_t w)
{
    int8_t s8;
    int16_t s16;
    int32_t s32;
    int64_t s64;
    ws_t wide;

    switch (w) {
    case 1: memcpy(&s8, p, 1); return s8;
    case 2: memcpy(&s16, p, 2); return s16;
    case 4: memcpy(&s32, p, 4); return s32;
    case 8: memcpy(&s64, p, 8); return s64;
    default: memcpy(&wide, p, sizeof wide); return wide;
    }
}

/* Keep the low w bytes of v (arithmetic modulo 2^(8w)). */
static void st_u(void *p, size_t w, wu_t v)
{
    const uint8_t u8 = (uint8_t)v;
    const uint16_t u16 = (uint16_t)v;
    const uint32_t u32 = (uint32_t)v;
    const uint64_t u64 = (uint64_t)v;

    switch (w) {
    case 1: memcpy(p, &u8, 1); break;
    case 2: memcpy(p, &u16, 2); break;
    case 4: memcpy(p, &u32, 4); break;
    case 8: memcpy(p, &u64, 8); break;
    default: memcpy(p, &v, sizeof v); break;
    }
}

static void ref_int(rail_op_t op, const kind_t *k, const void *pa, const void *pb, void *pr)
{
    const size_t w = k->size;
    const wu_t a = ld_u(pa, w), b = ld_u(pb, w);
    const bool sgn = k->cls == C_SINT;
    const bool a_gt_b = sgn ? ld_s(pa, w) > ld_s(pb, w) : a > b;
    const bool a_lt_b = sgn ? ld_s(pa, w) < ld_s(pb, w) : a < b;
    wu_t r = 0;

    switch (op) {
    case RAIL_OP_SUM: r = a + b; break;
    case RAIL_OP_PROD: r = a * b; break;
    case RAIL_OP_MAX: r = a_gt_b ? a : b; break;
    case RAIL_OP_MIN: r = a_lt_b ? a : b; break;
    case RAIL_OP_LAND: r = a != 0 && b != 0; break;
    case RAIL_OP_LOR: r = a != 0 || b != 0; break;
    case RAIL_OP_LXOR: r = (a != 0) != (b != 0); break;
    case RAIL_OP_BAND: r = a & b; break;
    case RAIL_OP_BOR: r = a | b; break;
    case RAIL_OP_BXOR: r = a ^ b; break;
    default: abort();
    }
    st_u(pr, w, r);
}

/* Real types: one IEEE operation.  MAX/MIN: a if a is strictly larger
 * (smaller), else b, which is b for NaN on either side and for +0 / -0. */
#define REF_REAL(name, T, WIDE)                                                                    \
    static void name(rail_op_t op, const void *pa, const void *pb, void *pr)                       \
    {                                                                                              \
        T a, b, r;                                                                                 \
        memcpy(&a, pa, sizeof a);                                                                  \
        memcpy(&b, pb, sizeof b);                                                                  \
        switch (op) {                                                                              \
        case RAIL_OP_SUM: r = (T)((WIDE)a + (WIDE)b); break;                                       \
        case RAIL_OP_PROD: r = (T)((WIDE)a * (WIDE)b); break;                                      \
        case RAIL_OP_MAX:                                                                          \
            if (__builtin_isnan(a) || __builtin_isnan(b) || !(a > b))                              \
                r = b;                                                                             \
            else                                                                                   \
                r = a;                                                                             \
            break;                                                                                 \
        case RAIL_OP_MIN:                                                                          \
            if (__builtin_isnan(a) || __builtin_isnan(b) || !(a < b))                              \
                r = b;                                                                             \
            else                                                                                   \
                r = a;                                                                             \
            break;                                                                                 \
        default: abort();                                                                          \
        }                                                                                          \
        memcpy(pr, &r, sizeof r);                                                                  \
    }

#if RAIL_TK_HAVE_FLOAT16
/* _Float16: exact in float, then one rounding (as IEEE binary16 would do). */
REF_REAL(ref_f16, rail_tk_float16_t, float)
#endif
REF_REAL(ref_f32, float, float)
REF_REAL(ref_f64, double, double)
REF_REAL(ref_ld, long double, long double)
#if RAIL_TK_HAVE_FLOAT128
REF_REAL(ref_f128, rail_tk_float128_t, rail_tk_float128_t)
#endif

#define REF_COMPLEX(name, R)                                                                       \
    static void name(rail_op_t op, const void *pa, const void *pb, void *pr)                       \
    {                                                                                              \
        R a[2], b[2], r[2];                                                                        \
        memcpy(a, pa, sizeof a);                                                                   \
        memcpy(b, pb, sizeof b);                                                                   \
        if (op == RAIL_OP_SUM) {                                                                   \
            r[0] = a[0] + b[0];                                                                    \
            r[1] = a[1] + b[1];                                                                    \
        } else {                                                                                   \
            R p1 = a[0] * b[0], p2 = a[1] * b[1], p3 = a[0] * b[1], p4 = a[1] * b[0];              \
            r[0] = p1 - p2;                                                                        \
            r[1] = p3 + p4;                                                                        \
        }                                                                                          \
        memcpy(pr, r, sizeof r);                                                                   \
    }
REF_COMPLEX(ref_cf, float)
REF_COMPLEX(ref_cd, double)
REF_COMPLEX(ref_cld, long double)

/* MAXLOC/MINLOC: the strictly better value wins; equal values: b's value
 * and the smaller index; anything else (a NaN on either side) keeps b. */
#define REF_PAIR(name, T)                                                                          \
    static void name(rail_op_t op, const void *pa, const void *pb, void *pr)                       \
    {                                                                                              \
        T a, b, r;                                                                                 \
        memcpy(&a, pa, sizeof a);                                                                  \
        memcpy(&b, pb, sizeof b);                                                                  \
        const bool a_better = op == RAIL_OP_MAXLOC ? a.v > b.v : a.v < b.v;                        \
        r = a_better ? a : b;                                                                      \
        if (!a_better && a.v == b.v)                                                               \
            r.i = a.i < b.i ? a.i : b.i;                                                           \
        memcpy(pr, &r, sizeof r);                                                                  \
    }
REF_PAIR(ref_float_int, t_float_int)
REF_PAIR(ref_double_int, t_double_int)
REF_PAIR(ref_long_int, t_long_int)
REF_PAIR(ref_2int, t_2int)
REF_PAIR(ref_short_int, t_short_int)
REF_PAIR(ref_long_double_int, t_long_double_int)
REF_PAIR(ref_2float, t_2float)
REF_PAIR(ref_2double, t_2double)
REF_PAIR(ref_2int64, t_2int64)

typedef void (*ref_fn_t)(rail_op_t op, const void *a, const void *b, void *r);

static ref_fn_t ref_typed(rail_typekind_t tk)
{
    switch (tk) {
#if RAIL_TK_HAVE_FLOAT16
    case RAIL_TK_FLOAT16: return ref_f16;
#endif
    case RAIL_TK_FLOAT: return ref_f32;
    case RAIL_TK_DOUBLE: return ref_f64;
    case RAIL_TK_LONG_DOUBLE: return ref_ld;
#if RAIL_TK_HAVE_FLOAT128
    case RAIL_TK_FLOAT128: return ref_f128;
#endif
    case RAIL_TK_C_FLOAT_COMPLEX: return ref_cf;
    case RAIL_TK_C_DOUBLE_COMPLEX: return ref_cd;
    case RAIL_TK_C_LONG_DOUBLE_COMPLEX: return ref_cld;
    case RAIL_TK_FLOAT_INT: return ref_float_int;
    case RAIL_TK_DOUBLE_INT: return ref_double_int;
    case RAIL_TK_LONG_INT: return ref_long_int;
    case RAIL_TK_2INT: return ref_2int;
    case RAIL_TK_SHORT_INT: return ref_short_int;
    case RAIL_TK_LONG_DOUBLE_INT: return ref_long_double_int;
    case RAIL_TK_2FLOAT: return ref_2float;
    case RAIL_TK_2DOUBLE: return ref_2double;
    case RAIL_TK_2INT64: return ref_2int64;
    default: return NULL;
    }
}

/* r[i] = a[i] op b[i], element by element. */
static void ref_apply(rail_op_t op, const kind_t *k, const char *a, const char *b, char *r,
                      size_t n)
{
    const size_t w = k->size;
    ref_fn_t typed = ref_typed(k->tk);

    for (size_t i = 0; i < n; i++, a += w, b += w, r += w) {
        if (op == RAIL_OP_REPLACE)
            memcpy(r, a, w);
        else if (op == RAIL_OP_NO_OP)
            memcpy(r, b, w);
        else if (typed)
            typed(op, a, b, r);
        else
            ref_int(op, k, a, b, r); /* integers, logicals, byte */
    }
}

/* ------------------------------------------------------------- comparison */

/* Same value: NaN matches any NaN, a zero must have the same sign; padding
 * bytes (long double, pairs) are ignored. */
#define SAME_REAL(T)                                                                               \
    static bool same_##T(const void *px, const void *py)                                           \
    {                                                                                              \
        T x, y;                                                                                    \
        memcpy(&x, px, sizeof x);                                                                  \
        memcpy(&y, py, sizeof y);                                                                  \
        if (__builtin_isnan(x) || __builtin_isnan(y))                                              \
            return __builtin_isnan(x) && __builtin_isnan(y);                                       \
        return x == y && __builtin_signbit(x) == __builtin_signbit(y);                             \
    }
typedef long double ldouble;
SAME_REAL(float)
SAME_REAL(double)
SAME_REAL(ldouble)
#if RAIL_TK_HAVE_FLOAT16
typedef rail_tk_float16_t float16;
SAME_REAL(float16)
#endif
#if RAIL_TK_HAVE_FLOAT128
typedef rail_tk_float128_t float128;
SAME_REAL(float128)
#endif

#define SAME_PAIR(name, SAMEV)                                                                     \
    static bool same_##name(const void *px, const void *py)                                        \
    {                                                                                              \
        t_##name x, y;                                                                             \
        memcpy(&x, px, sizeof x);                                                                  \
        memcpy(&y, py, sizeof y);                                                                  \
        return SAMEV(&x.v, &y.v) && x.i == y.i;                                                    \
    }
#define SAMEV_INT(x, y) (*(x) == *(y))
SAME_PAIR(float_int, same_float)
SAME_PAIR(double_int, same_double)
SAME_PAIR(long_int, SAMEV_INT)
SAME_PAIR(2int, SAMEV_INT)
SAME_PAIR(short_int, SAMEV_INT)
SAME_PAIR(long_double_int, same_ldouble)
SAME_PAIR(2float, same_float)
SAME_PAIR(2double, same_double)
SAME_PAIR(2int64, SAMEV_INT)

static bool same_elem(const kind_t *k, const void *x, const void *y)
{
    const char *cx = x, *cy = y;

    switch (k->tk) {
#if RAIL_TK_HAVE_FLOAT16
    case RAIL_TK_FLOAT16: return same_float16(x, y);
#endif
    case RAIL_TK_FLOAT: return same_float(x, y);
    case RAIL_TK_DOUBLE: return same_double(x, y);
    case RAIL_TK_LONG_DOUBLE: return same_ldouble(x, y);
#if RAIL_TK_HAVE_FLOAT128
    case RAIL_TK_FLOAT128: return same_float128(x, y);
#endif
    case RAIL_TK_C_FLOAT_COMPLEX: return same_float(cx, cy) && same_float(cx + 4, cy + 4);
    case RAIL_TK_C_DOUBLE_COMPLEX: return same_double(cx, cy) && same_double(cx + 8, cy + 8);
    case RAIL_TK_C_LONG_DOUBLE_COMPLEX:
        return same_ldouble(cx, cy) &&
               same_ldouble(cx + sizeof(long double), cy + sizeof(long double));
    case RAIL_TK_FLOAT_INT: return same_float_int(x, y);
    case RAIL_TK_DOUBLE_INT: return same_double_int(x, y);
    case RAIL_TK_LONG_INT: return same_long_int(x, y);
    case RAIL_TK_2INT: return same_2int(x, y);
    case RAIL_TK_SHORT_INT: return same_short_int(x, y);
    case RAIL_TK_LONG_DOUBLE_INT: return same_long_double_int(x, y);
    case RAIL_TK_2FLOAT: return same_2float(x, y);
    case RAIL_TK_2DOUBLE: return same_2double(x, y);
    case RAIL_TK_2INT64: return same_2int64(x, y);
    default: return memcmp(x, y, k->size) == 0;
    }
}

static void hex(const char *what, const void *p, size_t n)
{
    printf("    %-8s", what);
    for (size_t i = n; i-- > 0;)
        printf("%02x", ((const unsigned char *)p)[i]);
    printf("\n");
}

#if defined(__FMA__) || defined(__FP_FAST_FMA)
/* Built for a CPU with FMA: gcc 12 turns the complex product into
 * vfmaddsub even under -ffp-contract=off, so a part may be rounded once
 * instead of twice.  Accept a result within that difference of the
 * reference: |got - want| <= 2^-(mantissa bits) * (|x1 y1| + |x2 y2|). */
#define REF_CLOSE(name, R, EPS)                                                                    \
    static bool name(const char *pa, const char *pb, const char *pgot, const char *pwant)          \
    {                                                                                              \
        R a[2], b[2], got[2], want[2];                                                             \
        memcpy(a, pa, sizeof a);                                                                   \
        memcpy(b, pb, sizeof b);                                                                   \
        memcpy(got, pgot, sizeof got);                                                             \
        memcpy(want, pwant, sizeof want);                                                          \
        const R bound[2] = {EPS * (fabsl(a[0] * b[0]) + fabsl(a[1] * b[1])),                       \
                            EPS * (fabsl(a[0] * b[1]) + fabsl(a[1] * b[0]))};                      \
        for (int j = 0; j < 2; j++)                                                                \
            if (!(got[j] == want[j] || (isnan(got[j]) && isnan(want[j])) ||                        \
                  fabsl(got[j] - want[j]) <= bound[j]))                                            \
                return false;                                                                      \
        return true;                                                                               \
    }
REF_CLOSE(close_cf, float, FLT_EPSILON)
REF_CLOSE(close_cd, double, DBL_EPSILON)

static bool fused_close(rail_op_t op, const kind_t *k, const char *a, const char *b,
                        const char *got, const char *want)
{
    if (op != RAIL_OP_PROD)
        return false;
    if (k->tk == RAIL_TK_C_FLOAT_COMPLEX)
        return close_cf(a, b, got, want);
    if (k->tk == RAIL_TK_C_DOUBLE_COMPLEX)
        return close_cd(a, b, got, want);
    return false;
}
#else
static bool fused_close(rail_op_t op, const kind_t *k, const char *a, const char *b,
                        const char *got, const char *want)
{
    return false;
}
#endif

/* Index of the first element of got that differs from want, or n. */
static size_t first_diff(rail_op_t op, const kind_t *k, const char *a, const char *b,
                         const char *got, const char *want, size_t n)
{
    const size_t w = k->size;

    if (memcmp(got, want, n * w) == 0)
        return n;
    for (size_t i = 0; i < n; i++)
        if (!same_elem(k, got + i * w, want + i * w) &&
            !fused_close(op, k, a + i * w, b + i * w, got + i * w, want + i * w))
            return i;
    return n;
}

/* ------------------------------------------------------------ random data */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* A double that exercises the float rules: mostly ordinary numbers, some
 * small integers (so ties happen), signed zeros, infinities, NaN. */
static double rnd_real(void)
{
    const uint64_t r = rnd();
    switch (r % 32) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return NAN;
    case 5: return -NAN;
    case 6: return 1e-310 * (double)(r >> 40); /* subnormal double */
    case 7: case 8: case 9: case 10: return (double)((int)(r >> 32) % 5);
    default: return ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 2000.0;
    }
}

static void rnd_elem(const kind_t *k, void *p)
{
    static const uint64_t logical_values[] = {0, 0, 0, 1, 1, 2, 0x80, 0xff, 0x100, 0x8000,
                                              0x10000, 0x80000000u, 0x100000000ull, 1ull << 63};
    char *c = p;

    switch (k->cls) {
    case C_SINT:
    case C_UINT:
    case C_BYTE:
        for (size_t i = 0; i < k->size; i++)
            c[i] = (char)rnd();
        if (rnd() % 16 == 0) /* small values: products that do not overflow */
            st_u(p, k->size, rnd() % 7);
        break;
    case C_LOGICAL:
        if (k->tk == RAIL_TK_BOOL) { /* memory from Fortran or memset: any byte */
            static const uint8_t bytes[] = {0, 0, 1, 1, 2, 0xff};
            c[0] = (char)bytes[rnd() % sizeof bytes];
        } else {
            st_u(p, k->size, logical_values[rnd() % RAIL_ARRAY_SIZE(logical_values)]);
        }
        break;
    case C_FLOAT:
    case C_COMPLEX: {
        const size_t parts = k->cls == C_COMPLEX ? 2 : 1, w = k->size / parts;
        for (size_t i = 0; i < parts; i++, c += w) {
            const double d = rnd_real();
            if (k->tk == RAIL_TK_FLOAT || k->tk == RAIL_TK_C_FLOAT_COMPLEX) {
                float f = (float)d;
                memcpy(c, &f, sizeof f);
            } else if (k->tk == RAIL_TK_DOUBLE || k->tk == RAIL_TK_C_DOUBLE_COMPLEX) {
                memcpy(c, &d, sizeof d);
            } else if (k->tk == RAIL_TK_LONG_DOUBLE || k->tk == RAIL_TK_C_LONG_DOUBLE_COMPLEX) {
                long double l = (long double)d * (1.0L + 0x1p-60L); /* use the extra bits */
                memset(c, 0, w);
                memcpy(c, &l, sizeof l);
            }
#if RAIL_TK_HAVE_FLOAT16
            else if (k->tk == RAIL_TK_FLOAT16) {
                rail_tk_float16_t h = (rail_tk_float16_t)(d / 16);
                memcpy(c, &h, sizeof h);
            }
#endif
#if RAIL_TK_HAVE_FLOAT128
            else if (k->tk == RAIL_TK_FLOAT128) {
                rail_tk_float128_t q = (rail_tk_float128_t)d * (1 + 0x1p-100f128);
                memcpy(c, &q, sizeof q);
            }
#endif
        }
        break;
    }
    case C_PAIR: {
        /* values 0..5 (many ties), sometimes NaN; random indices; the
         * padding gets random bytes too */
        for (size_t i = 0; i < k->size; i++)
            c[i] = (char)rnd();
        const uint64_t r = rnd();
        const double v = r % 16 == 0 ? NAN : (double)(r % 6);
        const int idx = (int)((r >> 8) % 1000);
#define PUT_PAIR(tk_, T, value)                                                                    \
    case tk_: {                                                                                    \
        T e;                                                                                       \
        memcpy(&e, p, sizeof e);                                                                   \
        e.v = (value);                                                                             \
        e.i = idx;                                                                                 \
        memcpy(p, &e, sizeof e);                                                                   \
        break;                                                                                     \
    }
        switch (k->tk) {
            PUT_PAIR(RAIL_TK_FLOAT_INT, t_float_int, (float)v)
            PUT_PAIR(RAIL_TK_DOUBLE_INT, t_double_int, v)
            PUT_PAIR(RAIL_TK_LONG_DOUBLE_INT, t_long_double_int, v)
            PUT_PAIR(RAIL_TK_2FLOAT, t_2float, (float)v)
            PUT_PAIR(RAIL_TK_2DOUBLE, t_2double, v)
            /* integer values: no NaN */
            PUT_PAIR(RAIL_TK_LONG_INT, t_long_int, (long)(r % 6))
            PUT_PAIR(RAIL_TK_2INT, t_2int, (int)(r % 6))
            PUT_PAIR(RAIL_TK_SHORT_INT, t_short_int, (short)(r % 6))
            PUT_PAIR(RAIL_TK_2INT64, t_2int64, (int64_t)(r % 6))
        default: abort();
        }
#undef PUT_PAIR
        break;
    }
    }
}

/* -------------------------------------------------------- the random test */

#define MAXCOUNT 1000003
#define GUARD 64
static const size_t counts[] = {0, 1, 7, 67, 1029, MAXCOUNT};

typedef struct buf {
    char *base; /* GUARD bytes, off bytes, data, GUARD bytes: allocated once */
    char *data;
    size_t len;
    char guard; /* a different byte per buffer, so copying a guard shows */
} buf_t;

static buf_t buf_a, buf_b, buf_out;

static void buf_alloc(buf_t *b, char guard)
{
    b->guard = guard;
    b->base = malloc(GUARD + 32 + MAXCOUNT * 32 + GUARD);
    CHECK(b->base != NULL, "out of memory");
    memset(b->base, 0, GUARD + 32 + MAXCOUNT * 32 + GUARD); /* fault the pages in once */
}

/* Place len bytes of data off bytes past the leading guard. */
static void buf_place(buf_t *b, size_t off, size_t len)
{
    b->data = b->base + GUARD + off;
    b->len = len;
    memset(b->base, b->guard, GUARD + off);
    memset(b->data + len, b->guard, GUARD);
}

static bool buf_guards_ok(const buf_t *b)
{
    for (const char *p = b->base; p < b->data; p++)
        if (*p != b->guard)
            return false;
    for (size_t i = 0; i < GUARD; i++)
        if (b->data[b->len + i] != b->guard)
            return false;
    return true;
}

typedef struct pool {
    char *a, *b, *want; /* MAXCOUNT elements each */
} pool_t;

enum variant { V_REDUCE, V_REDUCE3, V_REDUCE3_ALIAS };
static const char *const variant_name[] = {"reduce", "reduce3", "reduce3(out==b)"};

/* One run: returns false (after printing) on failure. */
static bool run_case(rail_op_t op, const kind_t *k, const pool_t *p, size_t n, size_t off_a,
                     size_t off_b, enum variant v)
{
    const size_t len = n * k->size;
    buf_t a = buf_a, b = buf_b, out = buf_out;
    bool ok = true;
    int rc;

    buf_place(&a, off_a, len);
    buf_place(&b, off_b, len);
    buf_place(&out, off_b, len);
    memcpy(a.data, p->a, len);
    memcpy(b.data, p->b, len);
    memset(out.data, 0xee, len);

    if (v == V_REDUCE)
        rc = rail_op_reduce(op, k->tk, a.data, b.data, n);
    else if (v == V_REDUCE3)
        rc = rail_op_reduce3(op, k->tk, a.data, b.data, out.data, n);
    else
        rc = rail_op_reduce3(op, k->tk, a.data, b.data, b.data, n);

    const char *result = v == V_REDUCE3 ? out.data : b.data;
    const size_t d = first_diff(op, k, p->a, p->b, result, p->want, n);
    const char *where = rail_op_isa();
#define CASE_FAIL(...)                                                                             \
    do {                                                                                           \
        FAIL("%s %s [%s] %s, count %zu, offsets a+%zu b+%zu:", rail_op_name(op),                   \
             rail_typekind_name(k->tk), where, variant_name[v], n, off_a, off_b);                  \
        printf("    " __VA_ARGS__);                                                                \
        printf("\n");                                                                              \
        ok = false;                                                                                \
    } while (0)
    if (rc != MPI_SUCCESS)
        CASE_FAIL("returned %d", rc);
    else if (d < n) {
        CASE_FAIL("element %zu differs", d);
        hex("a", p->a + d * k->size, k->size);
        hex("b", p->b + d * k->size, k->size);
        hex("want", p->want + d * k->size, k->size);
        hex("got", result + d * k->size, k->size);
    }
    if (memcmp(a.data, p->a, len) != 0)
        CASE_FAIL("input a was modified");
    if (v == V_REDUCE3 && memcmp(b.data, p->b, len) != 0)
        CASE_FAIL("input b was modified");
    if (!buf_guards_ok(&a) || !buf_guards_ok(&b) || !buf_guards_ok(&out))
        CASE_FAIL("wrote outside the buffer");
#undef CASE_FAIL
    return ok;
}

/* Every op of kind k on the pool's data, with each kernel set in isas[]. */
static void test_random(const kind_t *k, const pool_t *p, const char *const *isas, size_t nisas)
{
    /* element-aligned, one element off (vector-misaligned), odd bytes */
    const size_t offs[][2] = {{0, 0}, {k->size, 0}, {1, 3}};
    const size_t noffs = RAIL_ARRAY_SIZE(offs); /* pairs too: the kernels take any address */

    for (rail_op_t op = RAIL_OP_SUM; op < RAIL_OP_COUNT; op++) {
        if (!op_expected(op, k))
            continue;
        ref_apply(op, k, p->a, p->b, p->want, MAXCOUNT);
        for (size_t s = 0; s < nisas; s++) {
            bool ok = rail_op_isa_set(isas[s]) == MPI_SUCCESS;
            for (size_t c = 0; ok && c < RAIL_ARRAY_SIZE(counts); c++) {
                /* the large count (memory bound) once, at the worst offsets;
                 * out == b is the same kernel as rail_op_reduce */
                const bool large = counts[c] == MAXCOUNT;
                for (size_t o = large ? noffs - 1 : 0; ok && o < noffs; o++)
                    for (int v = V_REDUCE; ok && v <= (large ? V_REDUCE3 : V_REDUCE3_ALIAS); v++)
                        ok = run_case(op, k, p, counts[c], offs[o][0], offs[o][1], v);
            }
        }
    }
}

/* ------------------------------------------------------ the written cases */

static void test_table(void)
{
    for (int op = -1; op <= RAIL_OP_COUNT; op++) {
        for (int tk = -1; tk <= RAIL_TK_COUNT; tk++) {
            const char *opn = rail_op_name((rail_op_t)op);
            const char *tkn = rail_typekind_name((rail_typekind_t)tk);
            const bool want = op_expected((rail_op_t)op, kind_of((rail_typekind_t)tk));
            const rail_op_kernel_t kern = rail_op_kernel((rail_op_t)op, (rail_typekind_t)tk);
            char b1[64] = {0}, b2[64] = {0};
            EXPECT((kern != NULL) == want, "rail_op_kernel(%s, %s) is %s", opn, tkn,
                   kern ? "a kernel" : "NULL");
            const int rc_want = want ? MPI_SUCCESS : MPI_ERR_OP;
            int rc = rail_op_reduce((rail_op_t)op, (rail_typekind_t)tk, NULL, NULL, 0);
            EXPECT(rc == rc_want, "rail_op_reduce(%s, %s, count 0) returned %d, want %d", opn, tkn,
                   rc, rc_want);
            rc = rail_op_reduce3((rail_op_t)op, (rail_typekind_t)tk, b1, b2, b1 + 32, 0);
            EXPECT(rc == rc_want, "rail_op_reduce3(%s, %s, count 0) returned %d, want %d", opn, tkn,
                   rc, rc_want);
            rc = rail_op_reduce3((rail_op_t)op, (rail_typekind_t)tk, b1, b2, b2, 0);
            EXPECT(rc == rc_want, "rail_op_reduce3(%s, %s, out==b, count 0) returned %d, want %d",
                   opn, tkn, rc, rc_want);
        }
    }
}

static void test_names(void)
{
    for (int op = 0; op < RAIL_OP_COUNT; op++) {
        const char *n = rail_op_name((rail_op_t)op);
        EXPECT(n != NULL && strcmp(n, "invalid") != 0, "rail_op_name(%d) is %s", op,
               n ? n : "NULL");
        for (int o2 = 0; o2 < op; o2++)
            EXPECT(strcmp(n, rail_op_name((rail_op_t)o2)) != 0, "ops %d and %d share the name %s",
                   op, o2, n);
    }
    EXPECT(strcmp(rail_op_name(RAIL_OP_SUM), "sum") == 0, "rail_op_name(SUM)");
    EXPECT(strcmp(rail_op_name(RAIL_OP_COUNT), "invalid") == 0, "rail_op_name(COUNT)");
    EXPECT(strcmp(rail_op_name((rail_op_t)-1), "invalid") == 0, "rail_op_name(-1)");
}

static void test_typekind(void)
{
    EXPECT(NKINDS == RAIL_TK_COUNT - 1, "the test lists %zu kinds, typekind.h has %d", NKINDS,
           RAIL_TK_COUNT - 1);
    for (size_t k = 0; k < NKINDS; k++) {
        const kind_t *kd = &kinds[k];
        const size_t size = rail_typekind_size(kd->tk), align = rail_typekind_align(kd->tk);
        const char *name = rail_typekind_name(kd->tk);
        EXPECT(size == kd->size, "rail_typekind_size(%s) = %zu, want %zu", name, size, kd->size);
        if (size == 0) {
            check_skip_part("kind %s: not supported by this compiler", name);
            continue;
        }
        EXPECT(align != 0 && (align & (align - 1)) == 0 && size % align == 0,
               "rail_typekind_align(%s) = %zu (size %zu)", name, align, size);
        EXPECT(name != NULL && strcmp(name, "invalid") != 0 && strcmp(name, "none") != 0,
               "rail_typekind_name(%d)", (int)kd->tk);
        for (size_t j = 0; j < k; j++)
            EXPECT(strcmp(name, rail_typekind_name(kinds[j].tk)) != 0, "kinds %s share a name",
                   name);
    }
    /* alignments of the C types the kinds stand for */
    EXPECT(rail_typekind_align(RAIL_TK_DOUBLE) == _Alignof(double), "align double");
    EXPECT(rail_typekind_align(RAIL_TK_LONG_DOUBLE) == _Alignof(long double), "align long double");
    EXPECT(rail_typekind_align(RAIL_TK_DOUBLE_INT) == _Alignof(t_double_int), "align double_int");
    EXPECT(rail_typekind_align(RAIL_TK_SHORT_INT) == _Alignof(t_short_int), "align short_int");
    EXPECT(rail_typekind_align(RAIL_TK_LONG_DOUBLE_INT) == _Alignof(t_long_double_int),
           "align long_double_int");
    EXPECT(rail_typekind_align(RAIL_TK_C_LONG_DOUBLE_COMPLEX) == _Alignof(long double _Complex),
           "align c_long_double_complex");
    EXPECT(rail_typekind_size(RAIL_TK_NONE) == 0 && rail_typekind_size(RAIL_TK_COUNT) == 0 &&
               rail_typekind_size((rail_typekind_t)-1) == 0,
           "size of NONE / out of range");
    EXPECT(strcmp(rail_typekind_name(RAIL_TK_NONE), "none") == 0, "name of NONE");
    EXPECT(strcmp(rail_typekind_name(RAIL_TK_COUNT), "invalid") == 0, "name of COUNT");
    EXPECT(strcmp(rail_typekind_name(RAIL_TK_INT32), "int32") == 0, "name of INT32");
    EXPECT(strcmp(rail_typekind_name(RAIL_TK_2INT), "2int") == 0, "name of 2INT");
}

/* Hand-picked values: wrap-around, logicals that are neither 0 nor 1,
 * MINLOC/MAXLOC ties in both operand orders, NaN in MAX/MIN. */
static void test_written(void)
{
    { /* integer overflow wraps */
        int32_t a[2] = {INT32_MAX, INT32_MIN}, b[2] = {1, -1};
        rail_op_reduce(RAIL_OP_SUM, RAIL_TK_INT32, a, b, 2);
        EXPECT(b[0] == INT32_MIN && b[1] == INT32_MAX, "int32 sum wraps: %d %d", b[0], b[1]);
        int8_t c = -128, d = -1;
        rail_op_reduce(RAIL_OP_PROD, RAIL_TK_INT8, &c, &d, 1);
        EXPECT(d == -128, "int8 prod -128 * -1 = %d", d);
        uint16_t e = 65535, f = 65535;
        rail_op_reduce(RAIL_OP_PROD, RAIL_TK_UINT16, &e, &f, 1);
        EXPECT(f == 1, "uint16 prod 65535 * 65535 = %u", f);
        int64_t g = INT64_MIN, h = -1;
        rail_op_reduce(RAIL_OP_PROD, RAIL_TK_INT64, &g, &h, 1);
        EXPECT(h == INT64_MIN, "int64 prod INT64_MIN * -1");
        uint32_t m = 0x80000000u, n = 5;
        rail_op_reduce(RAIL_OP_MAX, RAIL_TK_UINT32, &m, &n, 1);
        EXPECT(n == 0x80000000u, "uint32 max compares unsigned");
        int32_t s = (int32_t)0x80000000u, t = 5;
        rail_op_reduce(RAIL_OP_MAX, RAIL_TK_INT32, &s, &t, 1);
        EXPECT(t == 5, "int32 max compares signed");
    }
    { /* logicals: nonzero is true, result 1/0 of the element's width */
        uint16_t a[4] = {0x100, 0x100, 0, 2}, b[4] = {0x200, 0, 0, 0x8000};
        uint16_t land[4], lor[4], lxor[4];
        memcpy(land, b, sizeof b);
        memcpy(lor, b, sizeof b);
        memcpy(lxor, b, sizeof b);
        rail_op_reduce(RAIL_OP_LAND, RAIL_TK_LOGICAL2, a, land, 4);
        rail_op_reduce(RAIL_OP_LOR, RAIL_TK_LOGICAL2, a, lor, 4);
        rail_op_reduce(RAIL_OP_LXOR, RAIL_TK_LOGICAL2, a, lxor, 4);
        EXPECT(land[0] == 1 && land[1] == 0 && land[2] == 0 && land[3] == 1,
               "logical2 land %x %x %x %x", land[0], land[1], land[2], land[3]);
        EXPECT(lor[0] == 1 && lor[1] == 1 && lor[2] == 0 && lor[3] == 1, "logical2 lor");
        EXPECT(lxor[0] == 0 && lxor[1] == 1 && lxor[2] == 0 && lxor[3] == 0, "logical2 lxor");
        uint8_t ba[3] = {2, 0xff, 0}, bb[3] = {0xff, 0, 0x80};
        rail_op_reduce(RAIL_OP_LXOR, RAIL_TK_BOOL, ba, bb, 3);
        EXPECT(bb[0] == 0 && bb[1] == 1 && bb[2] == 1, "bool lxor on bytes 2/0xff: %u %u %u", bb[0],
               bb[1], bb[2]);
        int32_t ia = -7, ib = 1 << 30;
        rail_op_reduce(RAIL_OP_LAND, RAIL_TK_INT32, &ia, &ib, 1);
        EXPECT(ib == 1, "int32 land of -7 and 2^30 = %d", ib);
        uint64_t la = 1ull << 40, lb = 0;
        rail_op_reduce(RAIL_OP_LOR, RAIL_TK_LOGICAL8, &la, &lb, 1);
        EXPECT(lb == 1, "logical8 lor of 2^40 and 0");
    }
    { /* MINLOC/MAXLOC: ties keep the smaller index whichever operand holds it */
        rail_tk_2int_t in = {5, 7}, io = {5, 3};
        rail_op_reduce(RAIL_OP_MAXLOC, RAIL_TK_2INT, &in, &io, 1);
        EXPECT(io.v == 5 && io.i == 3, "2int maxloc tie (in idx 7, inout idx 3) -> idx %d", io.i);
        in = (rail_tk_2int_t){5, 2}, io = (rail_tk_2int_t){5, 3};
        rail_op_reduce(RAIL_OP_MINLOC, RAIL_TK_2INT, &in, &io, 1);
        EXPECT(io.v == 5 && io.i == 2, "2int minloc tie (in idx 2, inout idx 3) -> idx %d", io.i);
        in = (rail_tk_2int_t){9, 8}, io = (rail_tk_2int_t){5, 3};
        rail_op_reduce(RAIL_OP_MAXLOC, RAIL_TK_2INT, &in, &io, 1);
        EXPECT(io.v == 9 && io.i == 8, "2int maxloc picks the larger value");
        in = (rail_tk_2int_t){9, 8}, io = (rail_tk_2int_t){5, 3};
        rail_op_reduce(RAIL_OP_MINLOC, RAIL_TK_2INT, &in, &io, 1);
        EXPECT(io.v == 5 && io.i == 3, "2int minloc picks the smaller value");
        rail_tk_double_int_t da = {-0.0, 4}, db = {0.0, 9}, dout;
        rail_op_reduce3(RAIL_OP_MINLOC, RAIL_TK_DOUBLE_INT, &da, &db, &dout, 1);
        EXPECT(dout.v == 0.0 && dout.i == 4, "double_int minloc -0 vs +0 is a tie -> idx %d",
               dout.i);
        rail_tk_2float_t fa = {1.5f, 10.0f}, fb = {1.5f, 2.0f};
        rail_op_reduce(RAIL_OP_MAXLOC, RAIL_TK_2FLOAT, &fa, &fb, 1);
        EXPECT(fb.v == 1.5f && fb.i == 2.0f, "2float maxloc tie -> idx %g", fb.i);
        rail_tk_float_int_t na = {NAN, 6}, nb = {1e30f, 1};
        rail_op_reduce(RAIL_OP_MAXLOC, RAIL_TK_FLOAT_INT, &na, &nb, 1);
        EXPECT(nb.v == 1e30f && nb.i == 1, "float_int maxloc: an incoming NaN does not win");
        rail_tk_long_double_int_t la = {3.0L, 1}, lb = {3.0L, 0};
        rail_op_reduce(RAIL_OP_MINLOC, RAIL_TK_LONG_DOUBLE_INT, &la, &lb, 1);
        EXPECT(lb.v == 3.0L && lb.i == 0, "long_double_int minloc tie");
    }
    { /* MAX/MIN: b unless a is strictly better, so NaN in b stays, NaN in a is dropped */
        double a[4] = {NAN, 1.0, -INFINITY, 0.0}, b[4] = {1.0, NAN, NAN, -0.0};
        double mx[4], mn[4];
        rail_op_reduce3(RAIL_OP_MAX, RAIL_TK_DOUBLE, a, b, mx, 4);
        rail_op_reduce3(RAIL_OP_MIN, RAIL_TK_DOUBLE, a, b, mn, 4);
        EXPECT(mx[0] == 1.0 && isnan(mx[1]) && isnan(mx[2]) && mx[3] == 0.0 && signbit(mx[3]),
               "double max with NaN / signed zero");
        EXPECT(mn[0] == 1.0 && isnan(mn[1]) && isnan(mn[2]) && mn[3] == 0.0 && signbit(mn[3]),
               "double min with NaN / signed zero");
        float fa[9] = {NAN, 1, 2, 3, 4, 5, 6, 7, -1}, fb[9] = {0, 0, 0, 0, 0, 0, 0, 0, NAN};
        rail_op_reduce(RAIL_OP_MIN, RAIL_TK_FLOAT, fa, fb, 9);
        EXPECT(fb[0] == 0 && fb[1] == 0 && isnan(fb[8]), "float min with NaN (vector and tail)");
    }
    { /* reduce3: out distinct, out == b; REPLACE and NO_OP */
        double a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, out[3] = {0};
        const rail_typekind_t d = RAIL_TK_DOUBLE;
        EXPECT(rail_op_reduce3(RAIL_OP_SUM, d, a, b, out, 3) == MPI_SUCCESS && out[2] == 33 &&
                   b[2] == 30,
               "reduce3 sum");
        EXPECT(rail_op_reduce3(RAIL_OP_PROD, d, a, b, b, 3) == MPI_SUCCESS && b[0] == 10 &&
                   b[2] == 90,
               "reduce3 prod out==b");
        EXPECT(rail_op_reduce3(RAIL_OP_REPLACE, d, a, b, out, 3) == MPI_SUCCESS && out[1] == 2,
               "reduce3 replace");
        EXPECT(rail_op_reduce3(RAIL_OP_NO_OP, d, a, b, out, 3) == MPI_SUCCESS && out[1] == 40,
               "reduce3 no_op");
        EXPECT(rail_op_reduce(RAIL_OP_REPLACE, d, a, a, 3) == MPI_SUCCESS && a[1] == 2,
               "replace in place");
        EXPECT(rail_op_reduce(RAIL_OP_NO_OP, d, a, b, 3) == MPI_SUCCESS && b[1] == 40, "no_op");
    }
    { /* complex product, textbook formula */
        double _Complex a = 1.0 + 2.0 * I, b = 3.0 - 1.0 * I;
        rail_op_reduce(RAIL_OP_PROD, RAIL_TK_C_DOUBLE_COMPLEX, &a, &b, 1);
        EXPECT(creal(b) == 5.0 && cimag(b) == 5.0, "complex prod (1+2i)(3-i) = %g%+gi", creal(b),
               cimag(b));
    }
}

static void test_isa_choice(void)
{
    EXPECT(rail_op_isa_set("auto") == MPI_SUCCESS, "rail_op_isa_set(auto)");
    EXPECT(rail_op_isa_set("no-such-isa") == MPI_ERR_ARG, "rail_op_isa_set of an unknown name");
    EXPECT(rail_op_isa_set("generic") == MPI_SUCCESS && strcmp(rail_op_isa(), "generic") == 0,
           "rail_op_isa_set(generic)");
}

int main(int argc, char **argv)
{
    static const char *const isas[] = {"generic", "avx2"};
    const char *seed_arg = argc > 1 ? argv[1] : getenv("RAIL_TEST_SEED");
    const uint64_t seed = seed_arg ? strtoull(seed_arg, NULL, 0) : 0x5eed0f0a11ull;
    pool_t pool;

    check_output = stdout; /* a failure and the lines that detail it, in order */
    printf("op_test: seed %#llx, default kernels: %s\n", (unsigned long long)seed,
           rail_op_isa());
    test_names();
    test_typekind();
    test_isa_choice();

    buf_alloc(&buf_a, 0x5a);
    buf_alloc(&buf_b, 0x3c);
    buf_alloc(&buf_out, 0x71);
    pool.a = malloc(MAXCOUNT * 32);
    pool.b = malloc(MAXCOUNT * 32);
    pool.want = malloc(MAXCOUNT * 32);
    CHECK(pool.a && pool.b && pool.want, "out of memory");
    /* the kernel sets this CPU runs */
    const char *isas_ok[RAIL_ARRAY_SIZE(isas)];
    size_t nisas = 0;
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(isas); i++) {
        if (rail_op_isa_set(isas[i]) != MPI_SUCCESS) {
            check_skip_part("kernels %s: this CPU lacks the instructions", isas[i]);
            continue;
        }
        isas_ok[nisas++] = isas[i];
        test_table();
        test_written();
    }
    rng_state = seed ? seed : 1; /* xorshift never leaves 0 */
    for (size_t k = 0; k < NKINDS; k++) {
        const kind_t *kd = &kinds[k];
        if (kd->size == 0)
            continue;
        for (size_t e = 0; e < MAXCOUNT; e++) {
            rnd_elem(kd, pool.a + e * kd->size);
            rnd_elem(kd, pool.b + e * kd->size);
            if (rnd() % 8 == 0) /* equal operands: ties, x op x */
                memcpy(pool.b + e * kd->size, pool.a + e * kd->size, kd->size);
        }
        test_random(kd, &pool, isas_ok, nisas);
    }
    for (size_t i = 0; i < nisas; i++)
        printf("tested kernels: %s\n", isas_ok[i]);
    free(pool.a);
    free(pool.b);
    free(pool.want);
    free(buf_a.base);
    free(buf_b.base);
    free(buf_out.base);
    return check_report("op_test");
}
