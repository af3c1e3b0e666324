/* Every framework's parameters, registered in one place so that MPI_Init
 * and the info tool see the same list. */
#include "mpi/mpi_env.h"
#include "base/param.h"
#include "mpi/mpit.h"
#include "base/op.h"
#include "base/copy.h"
#include "pml/pml.h"
#include "btl/btl.h"
#include "accel/accel.h"
#include "coll/coll.h"

static int mpi_register_params(void)
{
    int rc = rail_param_register_bool(
        "mpi_show_errors", false,
        "Print every MPI error, also those returned to the caller (MPI_ERRORS_RETURN)",
        RAIL_PARAM_LEVEL_USER, &mpi_env.verbose_errors);
    return rc == MPI_SUCCESS ? mpit_pvar_register() : rc;
}

int mpi_params_register_all(void)
{
    int (*const regs[])(void) = {
        mpi_register_params,
        rail_op_register_params,
        rail_copy_register_params,
        accel_register_params,
        btl_base_register_params,
        pml_register_params,
        coll_register_params,
    };
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(regs); i++) {
        int rc = regs[i]();
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
