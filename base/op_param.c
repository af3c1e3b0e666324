/*
 * The parameter of the host reduction kernels.  Kept apart from base/op.c
 * so that librail_op (the kernels) depends on nothing; this file is part of
 * librail_core with the parameter registry.
 */
#include "base/rail.h"
#include "base/log.h"
#include "base/param.h"
#include "base/op_impl.h"

static const char *op_isa_setting = "auto";

/* Registers op_isa and applies it; also called by the info tool (again:
 * the value is kept).  A set the CPU cannot run is refused with a warning,
 * not silently: the best one it can run is used instead. */
int rail_op_register_params(void)
{
    int rc = rail_param_register_string(
        "op_isa", "auto", "auto|generic|avx2",
        "Instruction set of the host reduction kernels: auto (the best this CPU runs), "
        "generic (the baseline of the target, e.g. SSE2), avx2 (AVX2 + F16C)",
        RAIL_PARAM_LEVEL_DEV, &op_isa_setting);

    if (rc != MPI_SUCCESS)
        return rc;
    if (rail_op_isa_set(op_isa_setting) != MPI_SUCCESS) {
        rail_op_isa_set("auto");
        rail_warn("op_isa=%s: this CPU cannot run those reduction kernels; using %s",
                  op_isa_setting, rail_op_isa());
    }
    return MPI_SUCCESS;
}
