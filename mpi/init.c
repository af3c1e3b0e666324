/* The World model: MPI_Init, MPI_Finalize and the environment queries. */
#include "mpi/mpi_err.h"
#include "mpi/mpi_env.h"
#include "obj/comm.h"
#include "obj/attr.h"
#include "obj/info.h"
#include "obj/datatype.h"
#include "obj/op.h"
#include "runtime/rte.h"
#include "accel/accel.h"
#include "pml/pml.h"
#include "coll/coll.h"
#include "osc/osc.h"
#include "base/param.h"
#include "base/atomic.h"
#include "base/log.h"
#include "base/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

mpi_env_t mpi_env;
static int core_refs;
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static struct timespec wtime_epoch;

/* ------------------------------------------------------------ core */

static void save_args(int *argc, char ***argv)
{
    if (!argc || !argv || !*argv || mpi_env.argv)
        return;
    mpi_env.argc = *argc;
    mpi_env.argv = calloc((size_t)*argc + 1, sizeof(char *));
    for (int i = 0; mpi_env.argv && i < *argc; i++)
        mpi_env.argv[i] = strdup((*argv)[i]);
}

static int core_up_locked(int thread_level)
{
    int rc;
    clock_gettime(CLOCK_MONOTONIC, &wtime_epoch);
    RAIL_CHECK(mpi_params_register_all());
    RAIL_CHECK(rte_init());
    mpi_env.rte_up = true;
    if (rte_info.rank == 0)
        rail_param_check_unknown();
    RAIL_CHECK(obj_errhandler_init());
    RAIL_CHECK(accel_init());
    RAIL_CHECK(obj_datatype_predef_init());
    RAIL_CHECK(obj_op_predef_init());
    RAIL_CHECK(obj_info_predef_init(mpi_env.argc, mpi_env.argv, mpi_env.thread_level));
    RAIL_CHECK(pml_init(thread_level));
    RAIL_CHECK(coll_init());
    RAIL_CHECK(osc_init());
    RAIL_CHECK(obj_comm_predef_init());
    mpi_env.core_up = true;
    return MPI_SUCCESS;
fail:
    return rc;
}

int mpi_env_core_up(int thread_level)
{
    pthread_mutex_lock(&env_lock);
    int rc = MPI_SUCCESS;
    if (core_refs == 0)
        rc = core_up_locked(thread_level);
    if (rc == MPI_SUCCESS)
        core_refs++;
    pthread_mutex_unlock(&env_lock);
    return rc;
}

void mpi_env_update_ready(void)
{
    pthread_mutex_lock(&env_lock);
    __atomic_store_n(&mpi_api_ready, (mpi_env.initialized && !mpi_env.finalized) ||
                                          rail_atomic_load_relaxed(&mpi_env.sessions) > 0,
                     __ATOMIC_RELAXED);
    pthread_mutex_unlock(&env_lock);
}

int mpi_env_core_down(void)
{
    pthread_mutex_lock(&env_lock);
    int rc = MPI_SUCCESS;
    if (core_refs > 0 && --core_refs == 0) {
        /* Nobody may still be reading our memory when we tear it down; and
         * what we sent must have left us, as the fence does not progress. */
        pml_quiesce();
        rc = rte_fence(false);
        obj_comm_predef_fini();
        obj_comm_layers_clear();
        osc_finalize();
        pml_finalize();
        accel_finalize();
        rte_finalize();
        mpi_env.core_up = false;
        mpi_env.rte_up = false;
    }
    pthread_mutex_unlock(&env_lock);
    return rc;
}

/* ------------------------------------------------------------ init */

static int clamp_level(int required)
{
    if (required <= MPI_THREAD_SINGLE)
        return MPI_THREAD_SINGLE;
    if (required >= MPI_THREAD_MULTIPLE)
        return MPI_THREAD_MULTIPLE;
    return required;
}

int mpii_init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED &&
        required != MPI_THREAD_SERIALIZED && required != MPI_THREAD_MULTIPLE)
        return obj_errf(MPI_ERR_ARG, "invalid thread level %d", required);
    if (mpi_env.initialized)
        return obj_errf(MPI_ERR_OTHER, mpi_env.finalized ? "MPI cannot be initialized again "
                                                           "after MPI_Finalize"
                                                         : "MPI is already initialized");
    save_args(argc, argv);
    mpi_env.thread_level = clamp_level(required);
    mpi_env.main_thread = pthread_self();
    int rc = mpi_env_core_up(mpi_env.thread_level);
    if (rc) {
        rail_error("MPI_Init failed: %s", "the run-time environment could not be set up");
        return rc;
    }
    /* A session may have brought the core up before, at a lower thread
     * level: then MPI_THREAD_MULTIPLE cannot be provided (no locks). */
    if (mpi_env.thread_level == MPI_THREAD_MULTIPLE && !rail_progress_mt)
        mpi_env.thread_level = MPI_THREAD_SERIALIZED;
    mpi_env.initialized = true;
    mpi_env_update_ready();
    if (provided)
        *provided = mpi_env.thread_level;
    return MPI_SUCCESS;
}

int mpii_init(int *argc, char ***argv)
{
    return mpii_init_thread(argc, argv, MPI_THREAD_SINGLE, NULL);
}

int mpii_finalize(void)
{
    if (!mpi_env.initialized || mpi_env.finalized)
        return obj_errf(MPI_ERR_OTHER, "MPI_Finalize called without a matching MPI_Init");
    /* MPI-4 11.2.2: first the delete callbacks of COMM_SELF's attributes,
     * in reverse order of their setting. */
    int rc = obj_attr_delete_all(OBJ_ATTR_COMM, MPI_COMM_SELF, &obj_comm_self()->attrs);
    if (rc)
        return rc;
    mpi_env.finalized = true;
    rc = mpi_env_core_down();
    mpi_env_update_ready();
    return rc;
}

int mpii_initialized(int *flag)
{
    *flag = mpi_env.initialized;
    return MPI_SUCCESS;
}

int mpii_finalized(int *flag)
{
    *flag = mpi_env.finalized;
    return MPI_SUCCESS;
}

int mpii_query_thread(int *provided)
{
    *provided = mpi_env.thread_level;
    return MPI_SUCCESS;
}

int mpii_is_thread_main(int *flag)
{
    *flag = pthread_equal(pthread_self(), mpi_env.main_thread);
    return MPI_SUCCESS;
}

int mpii_abort(obj_comm_t *comm, int errorcode)
{
    char msg[256];
    snprintf(msg, sizeof(msg),
             "MPI_Abort called by rank %d of a communicator of size %d with error code %d",
             comm->rank, comm->size, errorcode);
    /* Aborting all of the job is what every MPI does: only the job's
     * processes can be ended together by the launcher. */
    rte_abort(errorcode, msg);
}

/* ------------------------------------------------------------ queries */

int mpii_get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int mpii_get_library_version(char *version, int *resultlen)
{
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "Rail MPI %s (MPI %d.%d), built with %s; libpmix %s, hwloc %s%s%s%s%s",
                     PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION, RAIL_BUILD_CC,
                     RAIL_PMIX_VERSION, RAIL_HWLOC_VERSION,
                     RAIL_OFI_VERSION[0] ? ", libfabric " : "", RAIL_OFI_VERSION,
                     RAIL_CUDA_VERSION[0] ? ", CUDA " : "", RAIL_CUDA_VERSION);
    *resultlen = RAIL_MIN(n, MPI_MAX_LIBRARY_VERSION_STRING - 1);
    return MPI_SUCCESS;
}

int mpii_get_processor_name(char *name, int *resultlen)
{
    /* The node name the launcher uses (hosts in network namespaces share
     * one kernel host name); the kernel's otherwise. */
    char host[MPI_MAX_PROCESSOR_NAME];
    if (mpi_env.rte_up && rte_info.hostname[0])
        snprintf(host, sizeof(host), "%s", rte_info.hostname);
    else if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", host);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

double mpii_wtime(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - wtime_epoch.tv_sec) + (double)(t.tv_nsec - wtime_epoch.tv_nsec) * 1e-9;
}

double mpii_wtick(void)
{
    struct timespec r;
    if (clock_getres(CLOCK_MONOTONIC, &r) == 0)
        return (double)r.tv_sec + (double)r.tv_nsec * 1e-9;
    return 1e-9;
}

int mpii_pcontrol(const int level, ...)
{
    /* No profiling layer of our own to steer; tools intercept PMPI. */
    (void)level;
    return MPI_SUCCESS;
}
