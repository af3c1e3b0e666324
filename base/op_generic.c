/*
 * Reduction kernels for the baseline instruction set of the target (x86-64:
 * SSE2).  Always present; the fallback when the CPU has nothing better.
 */
#define RAIL_OP_TABLE rail_op_table_generic
#define RAIL_OP_ISA_NAME "generic"
#include "base/op_kernels.h"
