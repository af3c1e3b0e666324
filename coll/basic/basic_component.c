/* coll basic: the component (every operation in every form, on any
 * communicator). */
#include "coll/basic/coll_basic.h"
#include "coll/nbc/nbc.h"
#include "base/param.h"

static int basic_priority;

static int basic_register_params(void)
{
    return rail_param_register_int("coll_basic_priority", 10,
                                   "Priority of the basic collective component (linear "
                                   "reference algorithms; negative: do not use)",
                                   RAIL_PARAM_LEVEL_TUNER, &basic_priority);
}

extern const coll_component_t coll_basic_component;

/* Each communicator's module keeps the schedule engine's progress callback
 * registered (the nonblocking forms are schedules). */
static void basic_release(coll_module_t *module, obj_comm_t *comm)
{
    (void)module;
    (void)comm;
    coll_sched_engine_hold(-1);
}

static coll_module_t basic_module = {
    .component = &coll_basic_component,
    .fns = {
#define COLL_BASIC_X_FN(name, params, args) .name = coll_basic_##name, .i##name = coll_nbc_i##name,
        COLL_OPS(COLL_BASIC_X_FN)
#undef COLL_BASIC_X_FN
    },
    .release = basic_release,
};

static coll_module_t *basic_comm_query(obj_comm_t *comm, int *priority)
{
    (void)comm;
    coll_sched_engine_hold(1);
    *priority = basic_priority;
    return &basic_module;
}

const coll_component_t coll_basic_component = {
    .name = "basic",
    .register_params = basic_register_params,
    .comm_query = basic_comm_query,
};
