/*
 * The C type behind each rail_typekind_t: one definition shared by
 * base/typekind.c (size, alignment) and the reduction kernels (base/op_*),
 * so the two cannot disagree about a layout.
 *
 * Kinds the compiler cannot represent have RAIL_TK_HAVE_* 0 and are left out
 * of RAIL_TK_FOREACH: typekind reports size 0 for them and the op table has
 * no kernels for them.
 */
#ifndef BASE_OP_TYPES_H
#define BASE_OP_TYPES_H

#include <stdint.h>
#include <stdbool.h>

#if defined(__SIZEOF_INT128__)
#define RAIL_TK_HAVE_INT128 1
typedef __int128 rail_tk_int128_t;
typedef unsigned __int128 rail_tk_uint128_t;
#else
#define RAIL_TK_HAVE_INT128 0
#endif

/* _Float16: gcc >= 12 and clang >= 15 on x86-64 (SSE2), aarch64. */
#if defined(__FLT16_MAX__)
#define RAIL_TK_HAVE_FLOAT16 1
typedef _Float16 rail_tk_float16_t;
#else
#define RAIL_TK_HAVE_FLOAT16 0
#endif

/* IEEE binary128.  _Float128 is the TS 18661-3 / C23 spelling (x86-64:
 * __float128; aarch64: the same type as long double). */
#if defined(__FLT128_MAX__)
#define RAIL_TK_HAVE_FLOAT128 1
typedef _Float128 rail_tk_float128_t;
#else
#define RAIL_TK_HAVE_FLOAT128 0
#endif

/* Value-index pairs for MINLOC/MAXLOC, laid out as the MPI C structs. */
#define RAIL_TK_PAIR(name, V, I)                                                                   \
    typedef struct rail_tk_##name {                                                                \
        V v;                                                                                       \
        I i;                                                                                       \
    } rail_tk_##name##_t

RAIL_TK_PAIR(float_int, float, int);
RAIL_TK_PAIR(double_int, double, int);
RAIL_TK_PAIR(long_int, long, int);
RAIL_TK_PAIR(2int, int, int);
RAIL_TK_PAIR(short_int, short, int);
RAIL_TK_PAIR(long_double_int, long double, int);
RAIL_TK_PAIR(2float, float, float);
RAIL_TK_PAIR(2double, double, double);
RAIL_TK_PAIR(2int64, int64_t, int64_t);

#if RAIL_TK_HAVE_INT128
#define RAIL_TK_X_INT128(X) X(INT128, rail_tk_int128_t) X(UINT128, rail_tk_uint128_t)
#else
#define RAIL_TK_X_INT128(X)
#endif
#if RAIL_TK_HAVE_FLOAT16
#define RAIL_TK_X_FLOAT16(X) X(FLOAT16, rail_tk_float16_t)
#else
#define RAIL_TK_X_FLOAT16(X)
#endif
#if RAIL_TK_HAVE_FLOAT128
#define RAIL_TK_X_FLOAT128(X) X(FLOAT128, rail_tk_float128_t)
#else
#define RAIL_TK_X_FLOAT128(X)
#endif

/* X(KIND, C type) for every kind this compiler supports, KIND being the
 * rail_typekind_t name without RAIL_TK_. */
#define RAIL_TK_FOREACH(X)                                                                         \
    X(INT8, int8_t) X(UINT8, uint8_t) X(INT16, int16_t) X(UINT16, uint16_t)                        \
    X(INT32, int32_t) X(UINT32, uint32_t) X(INT64, int64_t) X(UINT64, uint64_t)                    \
    RAIL_TK_X_INT128(X)                                                                            \
    RAIL_TK_X_FLOAT16(X)                                                                           \
    X(FLOAT, float) X(DOUBLE, double) X(LONG_DOUBLE, long double)                                  \
    RAIL_TK_X_FLOAT128(X)                                                                          \
    X(C_FLOAT_COMPLEX, float _Complex) X(C_DOUBLE_COMPLEX, double _Complex)                        \
    X(C_LONG_DOUBLE_COMPLEX, long double _Complex)                                                 \
    X(BOOL, _Bool)                                                                                 \
    X(LOGICAL1, uint8_t) X(LOGICAL2, uint16_t) X(LOGICAL4, uint32_t) X(LOGICAL8, uint64_t)         \
    X(BYTE, unsigned char)                                                                         \
    X(FLOAT_INT, rail_tk_float_int_t) X(DOUBLE_INT, rail_tk_double_int_t)                          \
    X(LONG_INT, rail_tk_long_int_t) X(2INT, rail_tk_2int_t) X(SHORT_INT, rail_tk_short_int_t)      \
    X(LONG_DOUBLE_INT, rail_tk_long_double_int_t)                                                  \
    X(2FLOAT, rail_tk_2float_t) X(2DOUBLE, rail_tk_2double_t) X(2INT64, rail_tk_2int64_t)

#endif
