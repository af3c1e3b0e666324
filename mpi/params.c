/* Every framework's parameters (and, with them, its MPI_T performance
 * variables), registered in one place so that MPI_Init, MPI_T and the info
 * tool see the same list. */
#include "mpi/mpi_env.h"
#include "obj/obj.h"
#include "obj/datatype.h"
#include "base/param.h"
#include "base/pvar.h"
#include "base/op.h"
#include "base/copy.h"
#include "base/rcache.h"
#include "pml/pml.h"
#include "btl/btl.h"
#include "accel/accel.h"
#include "runtime/rte.h"
#include "coll/coll.h"
#include "osc/osc.h"

#include <time.h>

/* MPI_T timer mpi_process_cpu_time: the CPU time of every thread. */
static uint64_t sample_cpu_ns(const void *arg)
{
    (void)arg;
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static const rail_pvar_t cpu_time_pvar = {
    .name = "mpi_process_cpu_time",
    .desc = "CPU time used by this process (all its threads) while the handle was started, in "
            "seconds",
    .var_class = MPI_T_PVAR_CLASS_TIMER, .level = 1, .flags = RAIL_PVAR_ATOMIC,
    .type = RAIL_PVAR_DOUBLE, .sample = sample_cpu_ns, .scale = 1e-9,
};

static int mpi_register_params(void)
{
    int rc = MPI_SUCCESS;
    RAIL_CHECK(rail_param_register_bool(
        "mpi_show_errors", false,
        "Print every MPI error, also those returned to the caller (MPI_ERRORS_RETURN)",
        RAIL_PARAM_LEVEL_USER, &mpi_env.verbose_errors));
    RAIL_CHECK(rail_param_set_flags("mpi_show_errors", RAIL_PARAM_F_DYNAMIC));
    RAIL_CHECK(rail_param_register_bool(
        "mpi_reduce_char_strict", false,
        "Refuse reductions on MPI_CHAR, as the standard's tables do; by default (an extension, "
        "as Open MPI and MPICH) every arithmetic, logical and bitwise operation reduces it as "
        "signed char.  Read when MPI comes up",
        RAIL_PARAM_LEVEL_USER, &obj_datatype_char_strict));
    RAIL_CHECK(obj_register_pvars());
    RAIL_CHECK(rail_pvar_register(&cpu_time_pvar));
fail:
    return rc;
}

int mpi_params_register_all(void)
{
    int (*const regs[])(void) = {
        mpi_register_params,
        rail_op_register_params,
        rail_copy_register_params,
        rail_rcache_register_params,
        accel_register_params,
        rte_register_params,
        btl_base_register_params,
        pml_register_params,
        coll_register_params,
        osc_register_params,
    };
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(regs); i++) {
        int rc = regs[i]();
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
