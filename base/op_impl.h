/*
 * Inside the reduction kernels: the tables of kernels, one per instruction
 * set the kernels were compiled for, and the choice among them.
 *
 * base/op_kernels.h generates every kernel from a few macros; each of
 * base/op_generic.c and base/op_avx2.c includes it once to build its table.
 * base/op.c picks the best table the CPU supports on first use.
 */
#ifndef BASE_OP_IMPL_H
#define BASE_OP_IMPL_H

#include <stddef.h>
#include "base/op.h"

/* out[i] = a[i] op b[i]; a, b and out do not overlap (rail_op_reduce3 sends
 * out == b to the two-buffer kernel). */
typedef void (*rail_op_kernel3_t)(const void *a, const void *b, void *out, size_t count);

typedef struct rail_op_table {
    const char *isa;                                      /* "generic", "avx2" */
    rail_op_kernel_t k2[RAIL_OP_COUNT][RAIL_TK_COUNT];    /* NULL: no meaning */
    rail_op_kernel3_t k3[RAIL_OP_COUNT][RAIL_TK_COUNT];   /* NULL exactly where k2 is */
} rail_op_table_t;

/* Baseline of the target (x86-64: SSE2). */
extern const rail_op_table_t rail_op_table_generic;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RAIL_OP_HAVE_AVX2 1
/* AVX2 + F16C (x86-64-v3 without FMA, so results match the generic table). */
extern const rail_op_table_t rail_op_table_avx2;
#else
#define RAIL_OP_HAVE_AVX2 0
#endif

/* Name of the table in use ("avx2", "generic"). */
const char *rail_op_isa(void);

/* Use the named table: "auto" (the best this CPU runs, the default),
 * "generic" or "avx2".  MPI_ERR_ARG when the name is unknown or the CPU
 * lacks the instructions.  For the parameter op_isa and for tests; call it
 * before reductions start, not concurrently with them. */
int rail_op_isa_set(const char *name);

/* Register the parameter op_isa (auto|generic|avx2) and apply it
 * (base/op_param.c, in librail_core). */
int rail_op_register_params(void);

#endif
