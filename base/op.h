/*
 * Reduction kernels for the predefined operations on host memory.
 *
 * inout[i] = in[i] op inout[i] for i < count, the MPI order of operands
 * (matters for MINLOC/MAXLOC ties: the smaller index wins).  The loops are
 * written so the compiler vectorises them.  The accel components use these
 * for host and fake-device memory; the cuda component has device versions
 * of the same table, which must follow the same semantics:
 *  - integer SUM/PROD wrap modulo 2^bits;
 *  - floating SUM/PROD are one IEEE operation in the element type (_Float16
 *    computed in float, rounded once); complex PROD is the plain formula;
 *  - MAX is a > b ? a : b and MIN a < b ? a : b, a = in, b = inout: with a
 *    NaN or equal values (+0/-0) the result is b (MPI leaves NaN undefined);
 *  - logical ops read nonzero as true and write 1/0 in the element's width;
 *  - MAXLOC/MINLOC: a strictly better value wins; equal values keep the
 *    smaller index.
 * Kernels are chosen by instruction set at first use (parameter op_isa).
 */
#ifndef BASE_OP_H
#define BASE_OP_H

#include <stddef.h>
#include "base/typekind.h"

typedef enum rail_op {
    RAIL_OP_NONE = 0,
    RAIL_OP_SUM, RAIL_OP_PROD, RAIL_OP_MAX, RAIL_OP_MIN,
    RAIL_OP_LAND, RAIL_OP_LOR, RAIL_OP_LXOR,
    RAIL_OP_BAND, RAIL_OP_BOR, RAIL_OP_BXOR,
    RAIL_OP_MAXLOC, RAIL_OP_MINLOC,
    RAIL_OP_REPLACE,  /* inout = in (MPI_REPLACE, one-sided accumulate) */
    RAIL_OP_NO_OP,    /* inout unchanged */
    RAIL_OP_COUNT
} rail_op_t;

typedef void (*rail_op_kernel_t)(const void *in, void *inout, size_t count);

/* The kernel for op on kind, or NULL when the combination has no meaning
 * (e.g. BAND on double, MAXLOC on int32).  Constant time (table). */
rail_op_kernel_t rail_op_kernel(rail_op_t op, rail_typekind_t tk);

/* inout = in op inout; MPI_ERR_OP when the combination has no kernel. */
int rail_op_reduce(rail_op_t op, rail_typekind_t tk, const void *in, void *inout, size_t count);

/* Three-buffer form used by collectives to save a copy:
 * out[i] = a[i] op b[i] (out may alias b, not a). */
int rail_op_reduce3(rail_op_t op, rail_typekind_t tk, const void *a, const void *b, void *out,
                    size_t count);

const char *rail_op_name(rail_op_t op);

/* Parameters of the kernels (op_isa: which instruction set). */
int rail_op_register_params(void);

#endif
