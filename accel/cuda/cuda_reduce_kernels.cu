/*
 * Device reduction kernels: inout[i] = in[i] op inout[i], the same operand
 * order and the same element rules as the host kernels of base/op.h (MINLOC /
 * MAXLOC ties keep the smaller index; logical results are 0 or 1).  One
 * kernel per (op, kind) of cuda_reduce_table.h, each a grid-stride loop, so
 * any grid covers any count.  Each also has an n-input form,
 * rail_reduce_n_<op>_<kind>: out[j][i] = in[k-1][i] op (... op (in[1][i] op
 * in[0][i])) for each of m outputs, the same as copying in[0] to out and
 * reducing in[1] .. in[k-1] into it one by one, but reading every input and
 * writing each output once (an output may be an input: one thread reads
 * element i of every input before it writes element i of any output).  rail_copy_many makes up to ACCEL_CUDA_COPY_MAX copies in one
 * launch (accel_copy_many).  Compiled by nvcc into a fatbin that is embedded
 * in the library and loaded with cuModuleLoadData (accel/cuda/cuda_reduce.c).
 */
#include <cuda_fp16.h>
#include <stdint.h>
#include <stddef.h>

#include "accel/cuda/cuda_reduce_table.h"

/* Element types, named after the kinds. */
typedef int8_t rk_int8;
typedef uint8_t rk_uint8;
typedef int16_t rk_int16;
typedef uint16_t rk_uint16;
typedef int32_t rk_int32;
typedef uint32_t rk_uint32;
typedef int64_t rk_int64;
typedef uint64_t rk_uint64;
typedef __half rk_float16;
typedef float rk_float;
typedef double rk_double;
typedef float2 rk_c_float_complex;
typedef double2 rk_c_double_complex;
typedef bool rk_c_bool;
struct rk_logical1 { int8_t v; };       /* distinct from the integers: other rules */
struct rk_logical2 { int16_t v; };
struct rk_logical4 { int32_t v; };
struct rk_logical8 { int64_t v; };
struct rk_byte { uint8_t v; };
template <typename V, typename I> struct rk_pair { V v; I i; };
typedef rk_pair<float, int> rk_float_int;
typedef rk_pair<double, int> rk_double_int;
typedef rk_pair<long, int> rk_long_int;
typedef rk_pair<int, int> rk_2int;
typedef rk_pair<short, int> rk_short_int;
typedef rk_pair<float, float> rk_2float;
typedef rk_pair<double, double> rk_2double;
typedef rk_pair<int64_t, int64_t> rk_2int64;

/* ---------------------------------------------------------------- arithmetic */

template <typename T> __device__ __forceinline__ T rk_op_sum(T a, T b) { return (T)(a + b); }
template <typename T> __device__ __forceinline__ T rk_op_prod(T a, T b) { return (T)(a * b); }
template <typename T> __device__ __forceinline__ T rk_op_max(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ T rk_op_min(T a, T b) { return a < b ? a : b; }

/* Half precision: computed in float and rounded once, which for one
 * operation gives the correctly rounded half result, as on the host. */
template <> __device__ __forceinline__ __half rk_op_sum(__half a, __half b)
{
    return __float2half(__half2float(a) + __half2float(b));
}
template <> __device__ __forceinline__ __half rk_op_prod(__half a, __half b)
{
    return __float2half(__half2float(a) * __half2float(b));
}
template <> __device__ __forceinline__ __half rk_op_max(__half a, __half b)
{
    return __half2float(a) > __half2float(b) ? a : b;
}
template <> __device__ __forceinline__ __half rk_op_min(__half a, __half b)
{
    return __half2float(a) < __half2float(b) ? a : b;
}

/* Complex: (re, im) pairs; the textbook product (no Annex G inf/nan recovery). */
template <> __device__ __forceinline__ float2 rk_op_sum(float2 a, float2 b)
{
    return make_float2(a.x + b.x, a.y + b.y);
}
template <> __device__ __forceinline__ float2 rk_op_prod(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
template <> __device__ __forceinline__ double2 rk_op_sum(double2 a, double2 b)
{
    return make_double2(a.x + b.x, a.y + b.y);
}
template <> __device__ __forceinline__ double2 rk_op_prod(double2 a, double2 b)
{
    return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* ---------------------------------------------------------------- logical, bitwise */

template <typename T> __device__ __forceinline__ T rk_op_land(T a, T b) { return (T)(a && b); }
template <typename T> __device__ __forceinline__ T rk_op_lor(T a, T b) { return (T)(a || b); }
template <typename T> __device__ __forceinline__ T rk_op_lxor(T a, T b) { return (T)(!a != !b); }
template <typename T> __device__ __forceinline__ T rk_op_band(T a, T b) { return (T)(a & b); }
template <typename T> __device__ __forceinline__ T rk_op_bor(T a, T b) { return (T)(a | b); }
template <typename T> __device__ __forceinline__ T rk_op_bxor(T a, T b) { return (T)(a ^ b); }

/* Wrapped kinds (Fortran logicals, bytes): apply the op to the value. */
#define RK_WRAPPED(W, op)                                                                          \
    template <> __device__ __forceinline__ W rk_op_##op(W a, W b)                                  \
    {                                                                                              \
        W r;                                                                                       \
        r.v = rk_op_##op(a.v, b.v);                                                                \
        return r;                                                                                  \
    }
#define RK_LOGICAL_OPS(W) RK_WRAPPED(W, land) RK_WRAPPED(W, lor) RK_WRAPPED(W, lxor)
RK_LOGICAL_OPS(rk_logical1)
RK_LOGICAL_OPS(rk_logical2)
RK_LOGICAL_OPS(rk_logical4)
RK_LOGICAL_OPS(rk_logical8)
RK_WRAPPED(rk_byte, band)
RK_WRAPPED(rk_byte, bor)
RK_WRAPPED(rk_byte, bxor)

/* ---------------------------------------------------------------- pairs, replace */

/* MAXLOC / MINLOC: the better value wins; on a tie the smaller index. */
template <typename T> __device__ __forceinline__ T rk_op_maxloc(T a, T b)
{
    if (a.v > b.v)
        return a;
    if (a.v == b.v && a.i < b.i)
        b.i = a.i;
    return b;
}
template <typename T> __device__ __forceinline__ T rk_op_minloc(T a, T b)
{
    if (a.v < b.v)
        return a;
    if (a.v == b.v && a.i < b.i)
        b.i = a.i;
    return b;
}
template <typename T> __device__ __forceinline__ T rk_op_replace(T a, T b) { return a; }

/* ---------------------------------------------------------------- kernels */

#define RK_KERNEL(OP, op, TK, tk)                                                                  \
    extern "C" __global__ void rail_reduce_##op##_##tk(const rk_##tk *__restrict__ in,             \
                                                       rk_##tk *__restrict__ inout, size_t n)      \
    {                                                                                              \
        size_t stride = (size_t)gridDim.x * blockDim.x;                                            \
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)         \
            inout[i] = rk_op_##op(in[i], inout[i]);                                                \
    }

ACCEL_CUDA_REDUCE_LIST(RK_KERNEL)

/* Up to ACCEL_CUDA_REDUCE_MAX_IN inputs and ACCEL_CUDA_REDUCE_MAX_OUT
 * outputs, passed by value. */
struct rk_inputs {
    const void *p[ACCEL_CUDA_REDUCE_MAX_IN];
};
struct rk_outputs {
    void *p[ACCEL_CUDA_REDUCE_MAX_OUT];
};

static_assert(ACCEL_CUDA_REDUCE_MAX_IN == 8, "rail_reduce_n_* take 1 to 8 inputs");

/* The n-input fold with K known when compiled: every input pointer is read
 * from the argument at a constant index (a dynamically indexed by-value
 * argument is copied to each thread's stack first: 64 bytes of local
 * memory per thread; on an H100 a reduce_scatter through that form took 4x
 * as long as the same fold by the two-input kernel), and the K loads of
 * an element are all issued before
 * the first operation.  The outputs (m of them, read from the
 * __grid_constant__ argument where the launch put it) may be inputs: each
 * element is read before it is written, by the same thread. */
template <typename T, int K, typename F>
__device__ __forceinline__ void rk_fold_n(const rk_inputs &in, const rk_outputs &out, int m,
                                          size_t n, F op)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        T v[K];
#pragma unroll
        for (int j = 0; j < K; j++)
            v[j] = ((const T *)in.p[j])[i];
        T acc = v[0];
#pragma unroll
        for (int j = 1; j < K; j++)
            acc = op(v[j], acc);
        ((T *)out.p[0])[i] = acc;
        for (int j = 1; j < m; j++)
            ((T *)out.p[j])[i] = acc;
    }
}

#define RK_FOLD_CASE(K, tk, F)                                                                     \
    case K:                                                                                        \
        rk_fold_n<rk_##tk, K>(in, out, m, n, F());                                                    \
        break;

#define RK_KERNEL_N(OP, op, TK, tk)                                                                \
    struct rk_fn_##op##_##tk {                                                                     \
        __device__ __forceinline__ rk_##tk operator()(rk_##tk a, rk_##tk b) const                  \
        {                                                                                          \
            return rk_op_##op(a, b);                                                               \
        }                                                                                          \
    };                                                                                             \
    extern "C" __global__ void rail_reduce_n_##op##_##tk(                                          \
        rk_inputs in, int k, const __grid_constant__ rk_outputs out, int m, size_t n)              \
    {                                                                                              \
        switch (k) {                                                                               \
            RK_FOLD_CASE(1, tk, rk_fn_##op##_##tk)                                                 \
            RK_FOLD_CASE(2, tk, rk_fn_##op##_##tk)                                                 \
            RK_FOLD_CASE(3, tk, rk_fn_##op##_##tk)                                                 \
            RK_FOLD_CASE(4, tk, rk_fn_##op##_##tk)                                                 \
            RK_FOLD_CASE(5, tk, rk_fn_##op##_##tk)                                                 \
            RK_FOLD_CASE(6, tk, rk_fn_##op##_##tk)                                                 \
            RK_FOLD_CASE(7, tk, rk_fn_##op##_##tk)                                                 \
            RK_FOLD_CASE(8, tk, rk_fn_##op##_##tk)                                                 \
        }                                                                                          \
    }

ACCEL_CUDA_REDUCE_LIST(RK_KERNEL_N)

/* ---------------------------------------------------------------- copies */

/* Up to ACCEL_CUDA_COPY_MAX copies, passed by value.  The kernel indexes
 * them by blockIdx.y: __grid_constant__ lets it read them where the
 * launch put them instead of copying the whole argument to each thread's
 * stack first (see rk_fold_n). */
struct rk_copies {
    unsigned long long dst[ACCEL_CUDA_COPY_MAX];
    unsigned long long src[ACCEL_CUDA_COPY_MAX];
    unsigned long long len[ACCEL_CUDA_COPY_MAX];
};

/* The words of V that fit in len bytes, four loads in flight per thread;
 * returns the bytes done. */
template <typename V>
__device__ __forceinline__ size_t rk_copy_words(char *d, const char *s, size_t len, size_t t,
                                                size_t stride)
{
    size_t nv = len / sizeof(V), k = t;
    V *dv = (V *)d;
    const V *sv = (const V *)s;
    for (; k + 3 * stride < nv; k += 4 * stride) {
        V a0 = sv[k], a1 = sv[k + stride], a2 = sv[k + 2 * stride], a3 = sv[k + 3 * stride];
        dv[k] = a0;
        dv[k + stride] = a1;
        dv[k + 2 * stride] = a2;
        dv[k + 3 * stride] = a3;
    }
    for (; k < nv; k += stride)
        dv[k] = sv[k];
    return nv * sizeof(V);
}

/* Copy blockIdx.y of c (n copies): the widest words both addresses allow,
 * the tail in bytes. */
extern "C" __global__ void rail_copy_many(const __grid_constant__ rk_copies c, int n)
{
    int i = blockIdx.y;
    if (i >= n)
        return;
    char *d = (char *)c.dst[i];
    const char *s = (const char *)c.src[i];
    size_t len = c.len[i];
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    uintptr_t a = (uintptr_t)d | (uintptr_t)s;
    size_t done = a % 16 == 0  ? rk_copy_words<uint4>(d, s, len, t, stride)
                  : a % 8 == 0 ? rk_copy_words<uint2>(d, s, len, t, stride)
                  : a % 4 == 0 ? rk_copy_words<unsigned>(d, s, len, t, stride)
                               : 0;
    for (size_t k = done + t; k < len; k += stride)
        d[k] = s[k];
}
