/*
 * Applying a reduction operation to buffers (obj_op_reduce, see obj/op.h).
 *
 * Predefined operations reduce the basic elements of the datatype with
 * accel_reduce, which runs where the memory is (device buffers on the
 * device).  A contiguous layout is reduced in place; any other layout made
 * of one predefined type is packed into two staging buffers of the same
 * memory kind, reduced there and unpacked.  MPI_COMPLEX4 and MPI_COMPLEX32
 * (pairs of a real kind with no complex kernel) are summed as reals; their
 * product is computed here, on host memory only.
 */
#include "obj/type_impl.h"
#include "obj/op.h"
#include "accel/accel.h"
#include "base/op_types.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ complex pairs */

#define CPROD(name, T)                                                                             \
    static void name(const void *in, void *inout, size_t n)                                       \
    {                                                                                              \
        const T *a = in;                                                                           \
        T *b = inout;                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            T ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];                  \
            b[2 * i] = ar * br - ai * bi;                                                          \
            b[2 * i + 1] = ar * bi + ai * br;                                                      \
        }                                                                                          \
    }
#if RAIL_TK_HAVE_FLOAT16
CPROD(prod_c4, rail_tk_float16_t)
#endif
#if RAIL_TK_HAVE_FLOAT128
CPROD(prod_c32, rail_tk_float128_t)
#endif

/* Types made of two reals (complex without a kernel of its own): the real
 * kind, and the host product kernel. */
static rail_typekind_t complex_pair(const obj_datatype_t *basic, rail_op_kernel_t *prod)
{
    MPI_Datatype h = obj_datatype_handle(basic);
    *prod = NULL;
#if RAIL_TK_HAVE_FLOAT16
    if (h == MPI_COMPLEX4) {
        *prod = prod_c4;
        return RAIL_TK_FLOAT16;
    }
#endif
#if RAIL_TK_HAVE_FLOAT128
    if (h == MPI_COMPLEX32) {
        *prod = prod_c32;
        return RAIL_TK_FLOAT128;
    }
#endif
    (void)h;
    return RAIL_TK_NONE;
}

/* n basic elements, contiguous in both buffers. */
static int reduce_basic(rail_op_t op, const obj_datatype_t *basic, const void *in, void *inout,
                        size_t n)
{
    int rc;
    if (RAIL_LIKELY(basic->kind != RAIL_TK_NONE)) {
        rc = accel_reduce(op, (rail_typekind_t)basic->kind, in, inout, n, NULL);
    } else {
        rail_op_kernel_t prod;
        rail_typekind_t real = complex_pair(basic, &prod);
        if (real == RAIL_TK_NONE)
            rc = MPI_ERR_OP;
        else if (op == RAIL_OP_SUM)
            rc = accel_reduce(op, real, in, inout, 2 * n, NULL);
        else if (op != RAIL_OP_PROD)
            rc = MPI_ERR_OP;
        else if (accel_is_device(in) || accel_is_device(inout))
            return obj_errf(MPI_ERR_UNSUPPORTED_OPERATION,
                            "MPI_PROD on %s is not supported on device memory", basic->name);
        else {
            prod(in, inout, n);
            rc = MPI_SUCCESS;
        }
    }
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "%s on %s failed (%s)", rail_op_name(op), basic->name,
                        rc == MPI_ERR_OP ? "no kernel for this type" : "accelerator error");
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ staged layouts */

/* A staging buffer of the same memory kind as like. */
static void *stage_alloc(size_t bytes, const void *like, bool device)
{
    return device ? accel_alloc_device(bytes, like) : malloc(bytes);
}

static void stage_free(void *p, bool device)
{
    if (device)
        accel_free_device(p);
    else
        free(p);
}

/* Type-to-type copy through accel when either side is on a device. */
static int copy(const struct rail_dt *dst_dt, int64_t dst_count, void *dst,
                const struct rail_dt *src_dt, int64_t src_count, const void *src, bool cb)
{
    return cb ? rail_dt_copy_cb(dst_dt, dst_count, dst, src_dt, src_count, src,
                                obj_pack_accel_copy, NULL)
              : rail_dt_copy(dst_dt, dst_count, dst, src_dt, src_count, src);
}

/* Copy both operands into arrays of n basic elements (laid out as the
 * kernels expect them: a pair type keeps its padding), reduce there, copy
 * the result back. */
static int reduce_staged(rail_op_t op, const obj_datatype_t *dt, const void *in, void *inout,
                         MPI_Count count, size_t n)
{
    const obj_datatype_t *basic = dt->basic;
    size_t bytes = n * (size_t)basic->extent;
    const void *in0 = (const char *)in + dt->true_lb, *io0 = (const char *)inout + dt->true_lb;
    bool din = RAIL_UNLIKELY(accel_any_device_active) && accel_is_device(in0);
    bool dio = RAIL_UNLIKELY(accel_any_device_active) && accel_is_device(io0);
    void *sin = stage_alloc(bytes, in0, din), *sio = stage_alloc(bytes, io0, dio);
    int rc;
    if (!sin || !sio) {
        rc = obj_errf(MPI_ERR_NO_MEM, "no memory to stage %zu bytes for a reduction", bytes);
        goto out;
    }
    rc = copy(basic->layout, (int64_t)n, sin, dt->layout, count, in, din);
    if (rc == MPI_SUCCESS)
        rc = copy(basic->layout, (int64_t)n, sio, dt->layout, count, inout, dio);
    if (rc != MPI_SUCCESS) {
        rc = obj_errf(rc, "cannot stage the buffers of a reduction");
        goto out;
    }
    rc = reduce_basic(op, basic, sin, sio, n);
    if (rc == MPI_SUCCESS &&
        (rc = copy(dt->layout, count, inout, basic->layout, (int64_t)n, sio, dio)) != MPI_SUCCESS)
        rc = obj_errf(rc, "cannot store the result of a reduction");
out:
    if (sin)
        stage_free(sin, din);
    if (sio)
        stage_free(sio, dio);
    return rc;
}

/* ------------------------------------------------------------ user functions */

static int reduce_user(const obj_op_t *op, obj_datatype_t *dt, const void *in, void *inout,
                       MPI_Count count)
{
    MPI_Datatype h = obj_datatype_handle(dt);
    if (op->user_fn_c) {
        MPI_Count len = count;
        op->user_fn_c((void *)(uintptr_t)in, inout, &len, &h);
        return MPI_SUCCESS;
    }
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)inout;
    while (count > 0) {
        int len = (int)RAIL_MIN(count, (MPI_Count)INT_MAX);
        op->user_fn((void *)a, (void *)b, &len, &h);
        a += (uintptr_t)(len * dt->extent);
        b += (uintptr_t)(len * dt->extent);
        count -= len;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ API */

int obj_op_reduce(obj_op_t *op, obj_datatype_t *datatype, const void *inbuf, void *inoutbuf,
                  MPI_Count count)
{
    if (op->op == RAIL_OP_NONE)
        return count > 0 ? reduce_user(op, datatype, inbuf, inoutbuf, count) : MPI_SUCCESS;
    int rc = obj_op_check_datatype(op, datatype);
    if (rc != MPI_SUCCESS || count == 0 || datatype->size == 0)
        return rc;
    const obj_datatype_t *basic = datatype->basic;
    size_t n = (size_t)(count * (datatype->size / basic->size));
    const struct rail_dt *l = datatype->layout;
    /* The basic type itself (a pair type has padding: not "contiguous"). */
    if (RAIL_LIKELY(l == basic->layout))
        return reduce_basic(op->op, basic, (const char *)inbuf + datatype->lb,
                            (char *)inoutbuf + datatype->lb, n);
    if (rail_dt_is_contig(l, count))
        return reduce_basic(op->op, basic, rail_dt_contig_ptr(l, count, inbuf),
                            rail_dt_contig_ptr(l, count, inoutbuf), n);
    return reduce_staged(op->op, datatype, inbuf, inoutbuf, count, n);
}
