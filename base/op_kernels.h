/*
 * Template of the reduction kernels.  Each base/op_<isa>.c includes this file
 * once, after defining RAIL_OP_TABLE (the name of the table to define) and
 * RAIL_OP_ISA_NAME; the file is compiled for that instruction set and
 * vectorised (-O3, see base/Makefile.op.inc), so every kernel here is a
 * plain counted loop over restrict-qualified pointers.
 *
 * Operands: a is `in` (the incoming contribution), b is `inout`; the result
 * replaces b.  Semantics (the cuda kernels must match them):
 *  - integer SUM/PROD wrap modulo 2^bits (computed in unsigned arithmetic;
 *    signed and unsigned kinds share one kernel);
 *  - floating SUM/PROD are one IEEE operation in the element type (_Float16
 *    is computed in float and rounded once: the correctly rounded result);
 *    complex PROD is (ar*br - ai*bi) + i(ar*bi + ai*br), no Annex G
 *    inf/NaN recovery, each product rounded (-ffp-contract=off; but gcc 12
 *    still emits vfmaddsub for it when the whole build targets FMA, e.g.
 *    CFLAGS=-march=native: then a part may differ by an ulp);
 *  - floating MAX is a > b ? a : b and MIN a < b ? a : b (one vmaxps /
 *    vminps, exactly): when either operand is NaN, or they are equal (+0 and
 *    -0), the result is b.  So a NaN already in inout stays and a NaN coming
 *    in is dropped; with NaN in the data the result depends on the order of
 *    reduction (MPI does not define it; the cuda kernels do the same);
 *  - logical ops read any nonzero element as true and write 1 or 0 in the
 *    element's own width (bool: true/false);
 *  - MAXLOC/MINLOC: a wins if a.v > b.v (MINLOC: <); equal values keep b's
 *    value with the smaller index; otherwise (NaN included) b stays.
 */
#ifndef RAIL_OP_TABLE
#error "define RAIL_OP_TABLE and RAIL_OP_ISA_NAME before including base/op_kernels.h"
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "base/op_impl.h"
#include "base/op_types.h"

/*
 * One kernel pair: k2_NAME (b = a op b in place) and k3_NAME (out = a op b).
 * Elements are accessed through a copy of T with alignment 1: MPI lets a
 * buffer start at any byte, so the compiler must not assume (and peel for)
 * alignment; x86 vector loads cost the same either way.
 */
#define OPK_KERNEL(name, T, EXPR)                                                                  \
    typedef T opk_##name##_t __attribute__((aligned(1)));                                          \
    static void k2_##name(const void *restrict in_, void *restrict inout_, size_t n)               \
    {                                                                                              \
        const opk_##name##_t *in = in_;                                                            \
        opk_##name##_t *inout = inout_;                                                            \
        for (size_t i = 0; i < n; i++) {                                                           \
            const T a = in[i], b = inout[i];                                                       \
            inout[i] = (EXPR);                                                                     \
        }                                                                                          \
    }                                                                                              \
    static void k3_##name(const void *restrict a_, const void *restrict b_, void *restrict out_,   \
                          size_t n)                                                                \
    {                                                                                              \
        const opk_##name##_t *pa = a_, *pb = b_;                                                   \
        opk_##name##_t *out = out_;                                                                \
        for (size_t i = 0; i < n; i++) {                                                           \
            const T a = pa[i], b = pb[i];                                                          \
            out[i] = (EXPR);                                                                       \
        }                                                                                          \
    }

/* Integer classes by width.  W is the type the arithmetic is done in:
 * unsigned, and at least unsigned int so that promotion never makes a
 * uint16 product a signed (overflowing) int. */
#define OPK_UINT_KERNELS(s, T, W)                                                                  \
    OPK_KERNEL(sum_##s, T, (W)a + (W)b)                                                            \
    OPK_KERNEL(prod_##s, T, (W)a * (W)b)                                                           \
    OPK_KERNEL(band_##s, T, a & b)                                                                 \
    OPK_KERNEL(bor_##s, T, a | b)                                                                  \
    OPK_KERNEL(bxor_##s, T, a ^ b)                                                                 \
    OPK_KERNEL(land_##s, T, (a != 0) & (b != 0))                                                   \
    OPK_KERNEL(lor_##s, T, (a != 0) | (b != 0))                                                    \
    OPK_KERNEL(lxor_##s, T, (a != 0) ^ (b != 0))                                                   \
    OPK_KERNEL(max_##s, T, a > b ? a : b)                                                          \
    OPK_KERNEL(min_##s, T, a < b ? a : b)

#define OPK_SINT_KERNELS(s, T)                                                                     \
    OPK_KERNEL(max_##s, T, a > b ? a : b)                                                          \
    OPK_KERNEL(min_##s, T, a < b ? a : b)

OPK_UINT_KERNELS(u8, uint8_t, unsigned)
OPK_UINT_KERNELS(u16, uint16_t, unsigned)
OPK_UINT_KERNELS(u32, uint32_t, uint32_t)
OPK_UINT_KERNELS(u64, uint64_t, uint64_t)
OPK_SINT_KERNELS(i8, int8_t)
OPK_SINT_KERNELS(i16, int16_t)
OPK_SINT_KERNELS(i32, int32_t)
OPK_SINT_KERNELS(i64, int64_t)
#if RAIL_TK_HAVE_INT128
OPK_UINT_KERNELS(u128, rail_tk_uint128_t, rail_tk_uint128_t)
OPK_SINT_KERNELS(i128, rail_tk_int128_t)
#endif

/* Real floating point (see the NaN rule above). */
#define OPK_FLOAT_KERNELS(s, T)                                                                    \
    OPK_KERNEL(sum_##s, T, a + b)                                                                  \
    OPK_KERNEL(prod_##s, T, a * b)                                                                 \
    OPK_KERNEL(max_##s, T, a > b ? a : b)                                                          \
    OPK_KERNEL(min_##s, T, a < b ? a : b)

OPK_FLOAT_KERNELS(f32, float)
OPK_FLOAT_KERNELS(f64, double)
OPK_FLOAT_KERNELS(ld, long double)
#if RAIL_TK_HAVE_FLOAT16 && !defined(OPK_F16_KERNELS)
OPK_FLOAT_KERNELS(f16, rail_tk_float16_t)
#elif RAIL_TK_HAVE_FLOAT16
OPK_F16_KERNELS /* the including file has faster ones */
#endif
#if RAIL_TK_HAVE_FLOAT128
OPK_FLOAT_KERNELS(f128, rail_tk_float128_t)
#endif

/* Complex: the textbook product, which vectorises (and is what cuCmul does). */
#define OPK_CMUL(a, b)                                                                             \
    __builtin_complex(__real__(a) * __real__(b) - __imag__(a) * __imag__(b),                       \
                      __real__(a) * __imag__(b) + __imag__(a) * __real__(b))
#define OPK_COMPLEX_KERNELS(s, T)                                                                  \
    OPK_KERNEL(sum_##s, T, a + b)                                                                  \
    OPK_KERNEL(prod_##s, T, OPK_CMUL(a, b))

OPK_COMPLEX_KERNELS(cf, float _Complex)
OPK_COMPLEX_KERNELS(cd, double _Complex)
OPK_COMPLEX_KERNELS(cld, long double _Complex)

/* MAXLOC/MINLOC on struct { V v; I i; }: a wins when a.v CMP b.v; on equal
 * values b's value with the smaller index; otherwise b. */
#define OPK_LOC(name, P, CMP)                                                                      \
    static inline P opk_##name(P a, P b)                                                           \
    {                                                                                              \
        P r = b;                                                                                   \
        if (a.v CMP b.v)                                                                           \
            r = a;                                                                                 \
        else if (a.v == b.v && a.i < b.i)                                                          \
            r.i = a.i;                                                                             \
        return r;                                                                                  \
    }                                                                                              \
    OPK_KERNEL(name, P, opk_##name(a, b))
#define OPK_PAIR_KERNELS(s)                                                                        \
    OPK_LOC(maxloc_##s, rail_tk_##s##_t, >)                                                        \
    OPK_LOC(minloc_##s, rail_tk_##s##_t, <)

OPK_PAIR_KERNELS(float_int)
OPK_PAIR_KERNELS(double_int)
OPK_PAIR_KERNELS(long_int)
OPK_PAIR_KERNELS(2int)
OPK_PAIR_KERNELS(short_int)
OPK_PAIR_KERNELS(long_double_int)
OPK_PAIR_KERNELS(2float)
OPK_PAIR_KERNELS(2double)
OPK_PAIR_KERNELS(2int64)

/* REPLACE (b = a) and NO_OP (b unchanged) for every kind: copies.  in and
 * inout may be the same buffer for REPLACE, hence memmove. */
#define OPK_COPY_KERNELS(kind, T)                                                                  \
    static void k2_replace_##kind(const void *in, void *inout, size_t n)                           \
    {                                                                                              \
        if (n)                                                                                     \
            memmove(inout, in, n * sizeof(T));                                                     \
    }                                                                                              \
    static void k3_replace_##kind(const void *a, const void *b, void *out, size_t n)               \
    {                                                                                              \
        if (n)                                                                                     \
            memcpy(out, a, n * sizeof(T));                                                         \
    }                                                                                              \
    static void k3_no_op_##kind(const void *a, const void *b, void *out, size_t n)                 \
    {                                                                                              \
        if (n)                                                                                     \
            memcpy(out, b, n * sizeof(T));                                                         \
    }
RAIL_TK_FOREACH(OPK_COPY_KERNELS)

static void k2_no_op(const void *in, void *inout, size_t n)
{
}

/*
 * The table.  OPK_E(P, KIND, fn) puts P_fn (P: k2 or k3) at RAIL_TK_KIND;
 * the row macros list which kinds an op has and which kernel serves each.
 */
#define OPK_E(P, kind, fn) [RAIL_TK_##kind] = P##_##fn,

#if RAIL_TK_HAVE_INT128
#define OPK_ROW_INT128_SHARED(P, op) OPK_E(P, INT128, op##_u128) OPK_E(P, UINT128, op##_u128)
#define OPK_ROW_INT128_SIGNED(P, op) OPK_E(P, INT128, op##_i128) OPK_E(P, UINT128, op##_u128)
#else
#define OPK_ROW_INT128_SHARED(P, op)
#define OPK_ROW_INT128_SIGNED(P, op)
#endif
#if RAIL_TK_HAVE_FLOAT16
#define OPK_ROW_FLOAT16(P, op) OPK_E(P, FLOAT16, op##_f16)
#else
#define OPK_ROW_FLOAT16(P, op)
#endif
#if RAIL_TK_HAVE_FLOAT128
#define OPK_ROW_FLOAT128(P, op) OPK_E(P, FLOAT128, op##_f128)
#else
#define OPK_ROW_FLOAT128(P, op)
#endif

/* Integers whose signed and unsigned kinds share a kernel (same bits). */
#define OPK_ROW_INT_SHARED(P, op)                                                                  \
    OPK_E(P, INT8, op##_u8) OPK_E(P, UINT8, op##_u8)                                               \
    OPK_E(P, INT16, op##_u16) OPK_E(P, UINT16, op##_u16)                                           \
    OPK_E(P, INT32, op##_u32) OPK_E(P, UINT32, op##_u32)                                           \
    OPK_E(P, INT64, op##_u64) OPK_E(P, UINT64, op##_u64)                                           \
    OPK_ROW_INT128_SHARED(P, op)
/* Integers compared by value, where the sign matters. */
#define OPK_ROW_INT_SIGNED(P, op)                                                                  \
    OPK_E(P, INT8, op##_i8) OPK_E(P, UINT8, op##_u8)                                               \
    OPK_E(P, INT16, op##_i16) OPK_E(P, UINT16, op##_u16)                                           \
    OPK_E(P, INT32, op##_i32) OPK_E(P, UINT32, op##_u32)                                           \
    OPK_E(P, INT64, op##_i64) OPK_E(P, UINT64, op##_u64)                                           \
    OPK_ROW_INT128_SIGNED(P, op)
#define OPK_ROW_FLOAT(P, op)                                                                       \
    OPK_ROW_FLOAT16(P, op)                                                                         \
    OPK_E(P, FLOAT, op##_f32) OPK_E(P, DOUBLE, op##_f64) OPK_E(P, LONG_DOUBLE, op##_ld)            \
    OPK_ROW_FLOAT128(P, op)
#define OPK_ROW_COMPLEX(P, op)                                                                     \
    OPK_E(P, C_FLOAT_COMPLEX, op##_cf) OPK_E(P, C_DOUBLE_COMPLEX, op##_cd)                         \
    OPK_E(P, C_LONG_DOUBLE_COMPLEX, op##_cld)
/* bool and Fortran LOGICAL: the unsigned kernel of their width. */
#define OPK_ROW_LOGICAL(P, op)                                                                     \
    OPK_E(P, BOOL, op##_u8) OPK_E(P, LOGICAL1, op##_u8) OPK_E(P, LOGICAL2, op##_u16)               \
    OPK_E(P, LOGICAL4, op##_u32) OPK_E(P, LOGICAL8, op##_u64)
#define OPK_ROW_PAIR(P, op)                                                                        \
    OPK_E(P, FLOAT_INT, op##_float_int) OPK_E(P, DOUBLE_INT, op##_double_int)                      \
    OPK_E(P, LONG_INT, op##_long_int) OPK_E(P, 2INT, op##_2int)                                    \
    OPK_E(P, SHORT_INT, op##_short_int) OPK_E(P, LONG_DOUBLE_INT, op##_long_double_int)            \
    OPK_E(P, 2FLOAT, op##_2float) OPK_E(P, 2DOUBLE, op##_2double) OPK_E(P, 2INT64, op##_2int64)

/* REPLACE and NO_OP: every kind (X macros over RAIL_TK_FOREACH). */
#define OPK_E_REPLACE_k2(kind, T) [RAIL_TK_##kind] = k2_replace_##kind,
#define OPK_E_REPLACE_k3(kind, T) [RAIL_TK_##kind] = k3_replace_##kind,
#define OPK_E_NO_OP_k2(kind, T) [RAIL_TK_##kind] = k2_no_op,
#define OPK_E_NO_OP_k3(kind, T) [RAIL_TK_##kind] = k3_no_op_##kind,

#define OPK_ROWS(P)                                                                                \
    [RAIL_OP_SUM] = {OPK_ROW_INT_SHARED(P, sum) OPK_ROW_FLOAT(P, sum) OPK_ROW_COMPLEX(P, sum)},    \
    [RAIL_OP_PROD] = {OPK_ROW_INT_SHARED(P, prod) OPK_ROW_FLOAT(P, prod)                           \
                          OPK_ROW_COMPLEX(P, prod)},                                               \
    [RAIL_OP_MAX] = {OPK_ROW_INT_SIGNED(P, max) OPK_ROW_FLOAT(P, max)},                            \
    [RAIL_OP_MIN] = {OPK_ROW_INT_SIGNED(P, min) OPK_ROW_FLOAT(P, min)},                            \
    [RAIL_OP_LAND] = {OPK_ROW_INT_SHARED(P, land) OPK_ROW_LOGICAL(P, land)},                       \
    [RAIL_OP_LOR] = {OPK_ROW_INT_SHARED(P, lor) OPK_ROW_LOGICAL(P, lor)},                          \
    [RAIL_OP_LXOR] = {OPK_ROW_INT_SHARED(P, lxor) OPK_ROW_LOGICAL(P, lxor)},                       \
    [RAIL_OP_BAND] = {OPK_ROW_INT_SHARED(P, band) OPK_E(P, BYTE, band_u8)},                        \
    [RAIL_OP_BOR] = {OPK_ROW_INT_SHARED(P, bor) OPK_E(P, BYTE, bor_u8)},                           \
    [RAIL_OP_BXOR] = {OPK_ROW_INT_SHARED(P, bxor) OPK_E(P, BYTE, bxor_u8)},                        \
    [RAIL_OP_MAXLOC] = {OPK_ROW_PAIR(P, maxloc)},                                                  \
    [RAIL_OP_MINLOC] = {OPK_ROW_PAIR(P, minloc)},                                                  \
    [RAIL_OP_REPLACE] = {RAIL_TK_FOREACH(OPK_E_REPLACE_##P)},                                      \
    [RAIL_OP_NO_OP] = {RAIL_TK_FOREACH(OPK_E_NO_OP_##P)},

const rail_op_table_t RAIL_OP_TABLE = {
    .isa = RAIL_OP_ISA_NAME,
    .k2 = {OPK_ROWS(k2)},
    .k3 = {OPK_ROWS(k3)},
};
