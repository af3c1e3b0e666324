/*
 * Reduction kernels compiled for AVX2 + F16C (x86-64-v3 less FMA: no
 * contraction, so every result matches the generic table bit for bit).
 * The instruction set is chosen per function here rather than by a -m flag,
 * so the build needs nothing special; base/op.c uses this table only when
 * the CPU (and OS) support it.  Twice the generic speed on data in cache.
 */
#include "base/op_impl.h"
#include "base/op_types.h"

#if RAIL_OP_HAVE_AVX2

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <immintrin.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,f16c")
#endif

#if RAIL_TK_HAVE_FLOAT16
/*
 * _Float16 eight at a time through F16C conversions (gcc 12 does not
 * vectorise _Float16 itself): widen to float, one float operation, round
 * back once in the current rounding mode, exactly what the scalar code does.
 * The last n % 8 elements take the scalar expression.  vmaxps(a, b) is
 * exactly a > b ? a : b (b when unordered or equal), vminps likewise.
 */
typedef rail_tk_float16_t opk_f16_t __attribute__((aligned(1)));

static inline __attribute__((always_inline)) void
opk_f16c_run(const void *a_, const void *b_, void *out_, size_t n, __m256 (*vop)(__m256, __m256),
             rail_tk_float16_t (*sop)(rail_tk_float16_t, rail_tk_float16_t))
{
    const char *pa = a_, *pb = b_;
    char *out = out_;
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        const __m256 a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(pa + 2 * i)));
        const __m256 b = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(pb + 2 * i)));
        _mm_storeu_si128((__m128i *)(out + 2 * i),
                         _mm256_cvtps_ph(vop(a, b), _MM_FROUND_CUR_DIRECTION));
    }
    for (; i < n; i++)
        ((opk_f16_t *)out)[i] = sop(((const opk_f16_t *)pa)[i], ((const opk_f16_t *)pb)[i]);
}

#define OPK_F16C_KERNEL(op, VEXPR, EXPR)                                                           \
    static inline __m256 opk_v_##op##_f16(__m256 a, __m256 b)                                      \
    {                                                                                              \
        return VEXPR;                                                                              \
    }                                                                                              \
    static inline rail_tk_float16_t opk_s_##op##_f16(rail_tk_float16_t a, rail_tk_float16_t b)     \
    {                                                                                              \
        return EXPR;                                                                               \
    }                                                                                              \
    static void k2_##op##_f16(const void *in, void *inout, size_t n)                               \
    {                                                                                              \
        opk_f16c_run(in, inout, inout, n, opk_v_##op##_f16, opk_s_##op##_f16);                     \
    }                                                                                              \
    static void k3_##op##_f16(const void *a, const void *b, void *out, size_t n)                   \
    {                                                                                              \
        opk_f16c_run(a, b, out, n, opk_v_##op##_f16, opk_s_##op##_f16);                            \
    }
#define OPK_F16_KERNELS                                                                            \
    OPK_F16C_KERNEL(sum, _mm256_add_ps(a, b), a + b)                                               \
    OPK_F16C_KERNEL(prod, _mm256_mul_ps(a, b), a * b)                                              \
    OPK_F16C_KERNEL(max, _mm256_max_ps(a, b), a > b ? a : b)                                       \
    OPK_F16C_KERNEL(min, _mm256_min_ps(a, b), a < b ? a : b)
#endif /* RAIL_TK_HAVE_FLOAT16 */

#define RAIL_OP_TABLE rail_op_table_avx2
#define RAIL_OP_ISA_NAME "avx2"
#include "base/op_kernels.h"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif /* RAIL_OP_HAVE_AVX2 */
