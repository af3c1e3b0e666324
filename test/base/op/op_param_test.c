/*
 * The parameter op_isa picks the host reduction kernels: from the
 * environment (RAIL_OP_ISA) at registration, and "auto" picks the best set
 * the CPU runs.  Exit 0: pass; 1: fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/rail.h"
#include "base/param.h"
#include "base/op.h"
#include "base/op_impl.h"
#include "test/check.h"

int main(void)
{
    const char *best;

    /* the default, before any parameter: the best set */
    EXPECT(rail_op_isa_set("auto") == MPI_SUCCESS, "rail_op_isa_set(auto)");
    best = rail_op_isa();
    printf("op_param_test: best kernels on this CPU: %s\n", best);

    setenv("RAIL_OP_ISA", "generic", 1);
    EXPECT(rail_op_register_params() == MPI_SUCCESS, "rail_op_register_params");
    EXPECT(strcmp(rail_op_isa(), "generic") == 0, "RAIL_OP_ISA=generic gave %s", rail_op_isa());
    const rail_param_t *p = rail_param_find("op_isa");
    EXPECT(p != NULL && p->type == RAIL_PARAM_STRING, "op_isa is a registered string parameter");

    /* a later value applies at the next registration (the info tool, a
     * second session) */
    EXPECT(rail_param_set("op_isa", "auto", RAIL_PARAM_SRC_API) == MPI_SUCCESS, "set op_isa=auto");
    EXPECT(rail_op_register_params() == MPI_SUCCESS, "rail_op_register_params again");
    EXPECT(strcmp(rail_op_isa(), best) == 0, "op_isa=auto gave %s, want %s", rail_op_isa(), best);

    /* the kernels still work after the switches */
    int a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    EXPECT(rail_op_reduce(RAIL_OP_SUM, RAIL_TK_INT32, a, b, 3) == MPI_SUCCESS && b[2] == 33, "sum");

    return check_report("op_param_test");
}
