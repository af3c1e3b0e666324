/*
 * coll nbc: the component.  Offers every operation in every form through
 * schedules: the nonblocking and persistent forms (coll_nbc_i<name>, which
 * coll basic offers too), and the blocking forms as "start the schedule and
 * wait", at a priority below basic's, so that RAIL_COLL=nbc runs everything
 * through the schedule engine, to check it against basic's direct code.
 */
#include "coll/nbc/nbc.h"
#include "base/param.h"

static int nbc_priority;

static int nbc_register_params(void)
{
    return rail_param_register_int("coll_nbc_priority", 5,
                                   "Priority of the nbc collective component (schedules for "
                                   "the nonblocking and persistent collectives, and blocking "
                                   "ones run as schedules; negative: do not use)",
                                   RAIL_PARAM_LEVEL_TUNER, &nbc_priority);
}

#define COLL_NBC_X_FNS(name, params, args)                                                         \
    int coll_nbc_i##name(COLL_UNPAREN params, unsigned flags, obj_info_t *info,                    \
                         obj_request_t **req, coll_module_t *module)                               \
    {                                                                                              \
        coll_sched_t *s;                                                                           \
        (void)info;                                                                                \
        (void)module;                                                                              \
        int rc = coll_sched_create(comm, &s);                                                      \
        if (rc == MPI_SUCCESS)                                                                     \
            rc = coll_nbc_build_##name(s, COLL_UNPAREN args);                                      \
        if (rc != MPI_SUCCESS) {                                                                   \
            coll_sched_free(s);                                                                    \
            return rc;                                                                             \
        }                                                                                          \
        return coll_sched_commit(s, flags, req);                                                   \
    }                                                                                              \
    static int nbc_##name(COLL_UNPAREN params, coll_module_t *module)                              \
    {                                                                                              \
        obj_request_t *req;                                                                        \
        int rc = coll_nbc_i##name(COLL_UNPAREN args, 0, NULL, &req, module);                            \
        return rc == MPI_SUCCESS ? coll_sched_wait(req) : rc;                                      \
    }
COLL_OPS(COLL_NBC_X_FNS)
#undef COLL_NBC_X_FNS

extern const coll_component_t coll_nbc_component;

/* Each communicator's module keeps the schedule engine's progress callback
 * registered. */
static void nbc_release(coll_module_t *module, obj_comm_t *comm)
{
    (void)module;
    (void)comm;
    coll_sched_engine_hold(-1);
}

static coll_module_t nbc_module = {
    .component = &coll_nbc_component,
    .fns = {
#define COLL_NBC_X_TABLE(name, params, args) .name = nbc_##name, .i##name = coll_nbc_i##name,
        COLL_OPS(COLL_NBC_X_TABLE)
#undef COLL_NBC_X_TABLE
    },
    .release = nbc_release,
};

static coll_module_t *nbc_comm_query(obj_comm_t *comm, int *priority)
{
    (void)comm;
    coll_sched_engine_hold(1);
    *priority = nbc_priority;
    return &nbc_module;
}

const coll_component_t coll_nbc_component = {
    .name = "nbc",
    .register_params = nbc_register_params,
    .comm_query = nbc_comm_query,
};
