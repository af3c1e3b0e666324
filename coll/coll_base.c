/*
 * The collective framework: parameters, per-communicator selection, and the
 * dispatchers (coll_<name>, coll_i<name>) generated from COLL_OPS.
 */
#include "coll/coll.h"
#include "coll/coll_util.h"
#include "base/atomic.h"
#include "base/log.h"
#include "base/param.h"
#include "obj/err.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const coll_component_t coll_basic_component, coll_nbc_component;
extern const coll_component_t coll_tuned_component;
extern const coll_component_t coll_sm_component, coll_han_component;

const coll_component_t *const coll_components[] = {
    &coll_basic_component,
    &coll_nbc_component,
    &coll_tuned_component,
    &coll_sm_component,
    &coll_han_component,
    NULL,
};

int coll_verbose;
bool coll_check;
static int coll_comms;   /* communicators with collectives: the last empties the scratch cache */
static const char *coll_param;
static char coll_default[128];

static const char *const op_names[COLL_OP_COUNT] = {
#define COLL_X_NAME(name, params, args) #name, "i" #name,
    COLL_OPS(COLL_X_NAME)
#undef COLL_X_NAME
};

const char *coll_op_name(int op)
{
    return op >= 0 && op < COLL_OP_COUNT ? op_names[op] : NULL;
}

/* ------------------------------------------------------------ parameters */

int coll_register_params(void)
{
    coll_default[0] = '\0';
    for (int i = 0; coll_components[i]; i++) {
        if (i)
            strncat(coll_default, ",", sizeof(coll_default) - strlen(coll_default) - 1);
        strncat(coll_default, coll_components[i]->name,
                sizeof(coll_default) - strlen(coll_default) - 1);
    }
    rail_param_register_string("coll", coll_default, NULL,
                               "Collective components to use, comma-separated (\"basic,nbc\"), "
                               "or \"^name,...\" to use all but those; each operation is served "
                               "by the component of highest priority that offers it (empty: "
                               "the default)",
                               RAIL_PARAM_LEVEL_USER, &coll_param);
    rail_param_register_int("coll_verbose", 0,
                            "Verbosity of the coll framework (0: quiet; 1: modules chosen for "
                            "each communicator; 2: the component of every operation)",
                            RAIL_PARAM_LEVEL_USER, &coll_verbose);
    rail_param_register_bool("coll_check", false,
                             "Check every blocking collective before it moves data, and every "
                             "persistent one at its initialization: all processes call the "
                             "same operation with the same root and reduction operation, and "
                             "what each sends another matches what that one receives; a "
                             "mismatch is reported on every process (MPI_ERR_OTHER, "
                             "MPI_ERR_ROOT, MPI_ERR_OP, MPI_ERR_TRUNCATE, MPI_ERR_COUNT, "
                             "MPI_ERR_TYPE) instead of a hang or wrong data. Costs 2 log2(n) "
                             "rounds of small messages per call (more for the v forms); set it "
                             "the same on every process",
                             RAIL_PARAM_LEVEL_USER, &coll_check);
    rail_param_set_flags("coll_verbose", RAIL_PARAM_F_DYNAMIC);
    rail_param_set_flags("coll_check", RAIL_PARAM_F_DYNAMIC);
    rail_param_register_size("coll_scratch_max", (size_t)64 << 20,
                             "Bytes of host temporaries the collectives keep between calls "
                             "(tuned's algorithms, nbc's schedules, basic, han), so that "
                             "large ones do not fault in again on every call (0: none kept). "
                             "Principle: the four 16 MiB temporaries of the largest reduction "
                             "of the benchmark grid at np 4 (nbc's linear reduction)",
                             RAIL_PARAM_LEVEL_TUNER, &coll_scratch_max);
    int prc = coll_scratch_register_pvars();
    if (prc != MPI_SUCCESS)
        return prc;
    for (int i = 0; coll_components[i]; i++) {
        if (coll_components[i]->register_params) {
            int rc = coll_components[i]->register_params();
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

/* Position of name in the comma-separated list s, or -1. */
static int list_find(const char *s, const char *name)
{
    size_t len = strlen(name);
    for (int pos = 0; s && *s; pos++) {
        const char *end = strchr(s, ',');
        size_t l = end ? (size_t)(end - s) : strlen(s);
        if (l == len && strncmp(s, name, len) == 0)
            return pos;
        s = end ? end + 1 : NULL;
    }
    return -1;
}

/* Names in the list that are no component (rank 0 says so, once). */
static void warn_unknown_names(const char *list)
{
    static bool warned;
    if (warned || rte_info.rank != 0)
        return;
    warned = true;
    for (const char *s = list; s && *s;) {
        const char *end = strchr(s, ',');
        size_t l = end ? (size_t)(end - s) : strlen(s);
        bool known = l == 0;
        for (int i = 0; coll_components[i] && !known; i++)
            known = strlen(coll_components[i]->name) == l &&
                    strncmp(coll_components[i]->name, s, l) == 0;
        if (!known)
            rail_warn("coll: unknown component \"%.*s\" in coll=\"%s\" (known: %s)", (int)l, s,
                      coll_param, coll_default);
        s = end ? end + 1 : NULL;
    }
}

/* ------------------------------------------------------------ selection */

typedef struct cand {
    coll_module_t *m;
    int prio, order;
} cand_t;

static int cand_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    return x->order - y->order;
}

/* Query every allowed component; cands sorted by priority, then order. */
static int query_all(obj_comm_t *comm, cand_t *cands, int *n)
{
    /* an empty list (RAIL_COLL= in a script) means the default */
    bool empty = !coll_param || !*coll_param;
    const char *p = empty ? coll_default : coll_param;
    bool exclude = p[0] == '^';
    const char *list = exclude ? p + 1 : p;
    warn_unknown_names(list);
    const rail_param_t *rp = rail_param_find("coll");
    bool user_list = rp && rp->source != RAIL_PARAM_SRC_DEFAULT && !exclude && !empty;
    *n = 0;
    for (int i = 0; coll_components[i]; i++) {
        const coll_component_t *c = coll_components[i];
        int pos = list_find(list, c->name);
        if (exclude ? pos >= 0 : pos < 0)
            continue;
        int prio = -1;
        coll_module_t *m = c->comm_query(comm, &prio);
        if (!m) {
            if (user_list)   /* named by the user: say once that it cannot serve */
                rail_warn_once(c->name, "coll: component \"%s\" (coll=\"%s\") cannot serve "
                               "communicator %s; see coll_verbose for why", c->name, p,
                               comm->name[0] ? comm->name : "(unnamed)");
            continue;
        }
        if (prio < 0) {
            if (m->release)
                m->release(m, comm);
            continue;
        }
        cands[(*n)++] = (cand_t){ m, prio, exclude ? i : pos };
    }
    qsort(cands, (size_t)*n, sizeof(cands[0]), cand_cmp);
    return MPI_SUCCESS;
}

static void choose(struct coll_comm *c, cand_t *cands, int n)
{
#define COLL_X_CHOOSE(name, params, args)                                                          \
    for (int i = 0; i < n; i++)                                                                    \
        if (cands[i].m->fns.name) {                                                                \
            c->fns.name = cands[i].m->fns.name;                                                    \
            c->mods[COLL_OP_##name] = cands[i].m;                                                  \
            break;                                                                                 \
        }                                                                                          \
    for (int i = 0; i < n; i++)                                                                    \
        if (cands[i].m->fns.i##name) {                                                             \
            c->fns.i##name = cands[i].m->fns.i##name;                                              \
            c->mods[COLL_OP_i##name] = cands[i].m;                                                 \
            break;                                                                                 \
        }
    COLL_OPS(COLL_X_CHOOSE)
#undef COLL_X_CHOOSE
}

static void report(obj_comm_t *comm, struct coll_comm *c, cand_t *cands, int n)
{
    char line[512];
    size_t len = 0;
    line[0] = '\0';
    for (int i = 0; i < n && len < sizeof(line); i++)
        len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s (priority %d)",
                                i ? ", " : "", cands[i].m->component->name, cands[i].prio);
    rail_info("coll: communicator %s (context %u, %s of size %d): %s",
              comm->name[0] ? comm->name : "(unnamed)", comm->context_id,
              comm->is_inter ? "intercommunicator" : "intracommunicator", comm->size,
              n ? line : "no component");
    if (coll_verbose < 2)
        return;
    for (int op = 0; op < COLL_OP_COUNT; op++)
        rail_info("coll:   %-24s %s", op_names[op],
                  c->mods[op] ? c->mods[op]->component->name : "(none: unsupported)");
}

/* Whether a table offers operation op (COLL_OP_<name>). */
static bool fns_offer(const coll_fns_t *f, int op)
{
    switch (op) {
#define COLL_X_OFFER(name, params, args)                                                           \
    case COLL_OP_##name:                                                                           \
        return f->name != NULL;                                                                    \
    case COLL_OP_i##name:                                                                          \
        return f->i##name != NULL;
        COLL_OPS(COLL_X_OFFER)
#undef COLL_X_OFFER
    }
    return false;
}

coll_module_t *coll_next_module(obj_comm_t *comm, int op, const coll_module_t *module)
{
    struct coll_comm *c = comm->coll;
    bool below = false;
    for (int i = 0; c && i < c->n_modules; i++) {
        if (below && fns_offer(&c->modules[i]->fns, op))
            return c->modules[i];
        below = below || c->modules[i] == module;
    }
    return NULL;
}

int coll_comm_select(obj_comm_t *comm)
{
    int n_comp = 0, n = 0, rc;
    while (coll_components[n_comp])
        n_comp++;
    cand_t *cands = calloc((size_t)n_comp + 1, sizeof(*cands));
    struct coll_comm *c = calloc(1, sizeof(*c));
    if (!cands || !c) {
        free(cands);
        free(c);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory selecting collective components");
    }
    rc = query_all(comm, cands, &n);
    if (rc != MPI_SUCCESS)
        goto fail;
    choose(c, cands, n);
    c->modules = calloc((size_t)n + 1, sizeof(*c->modules));
    if (!c->modules) {
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory selecting collective components");
        goto fail;
    }
    /* Keep the modules that offer something, in selection order (those not
     * chosen may still take calls handed on by coll_next_module); release
     * the others. */
    for (int i = 0; i < n; i++) {
        bool offers = false;
        for (int op = 0; op < COLL_OP_COUNT && !offers; op++)
            offers = fns_offer(&cands[i].m->fns, op);
        if (offers)
            c->modules[c->n_modules++] = cands[i].m;
        else if (cands[i].m->release)
            cands[i].m->release(cands[i].m, comm);
    }
    comm->coll = c;
    rail_atomic_add_fetch(&coll_comms, 1);
    if (coll_verbose >= 1)
        report(comm, c, cands, n);
    free(cands);
    return MPI_SUCCESS;
fail:
    for (int i = 0; i < n; i++)
        if (cands[i].m->release)
            cands[i].m->release(cands[i].m, comm);
    free(cands);
    free(c->modules);
    free(c);
    return rc;
}

void coll_comm_release(obj_comm_t *comm)
{
    struct coll_comm *c = comm->coll;
    if (!c)
        return;
    for (int i = 0; i < c->n_modules; i++)
        if (c->modules[i]->release)
            c->modules[i]->release(c->modules[i], comm);
    free(c->modules);
    free(c);
    comm->coll = NULL;
    if (rail_atomic_sub_fetch(&coll_comms, 1) == 0)
        coll_scratch_drop();
}

/* ------------------------------------------------------------ dispatch */

static int missing(obj_comm_t *comm, int op)
{
    if (!comm->coll)
        return obj_errf(MPI_ERR_INTERN, "collectives are not set up on communicator %s",
                        comm->name[0] ? comm->name : "(unnamed)");
    return obj_errf(MPI_ERR_UNSUPPORTED_OPERATION,
                    "no collective component offers %s on this communicator (coll=\"%s\")",
                    op_names[op], coll_param && *coll_param ? coll_param : coll_default);
}

#define COLL_X_DISPATCH_DEF(name, params, args)                                                    \
    int coll_##name params                                                                         \
    {                                                                                              \
        struct coll_comm *c = comm->coll;                                                          \
        if (RAIL_UNLIKELY(!c || !c->fns.name))                                                     \
            return missing(comm, COLL_OP_##name);                                                  \
        return c->fns.name(COLL_UNPAREN args, c->mods[COLL_OP_##name]);                            \
    }                                                                                              \
    int coll_i##name(COLL_UNPAREN params, unsigned flags, obj_info_t *info, obj_request_t **req)   \
    {                                                                                              \
        struct coll_comm *c = comm->coll;                                                          \
        if (RAIL_UNLIKELY(!c || !c->fns.i##name))                                                  \
            return missing(comm, COLL_OP_i##name);                                                 \
        return c->fns.i##name(COLL_UNPAREN args, flags, info, req, c->mods[COLL_OP_i##name]);      \
    }
COLL_OPS(COLL_X_DISPATCH_DEF)
#undef COLL_X_DISPATCH_DEF

static const obj_comm_layer_t coll_layer = {
    .name = "collective", .skip_flags = OBJ_COMM_F_BOOT,
    .attach = coll_comm_select, .detach = coll_comm_release,
};

int coll_init(void)
{
    return obj_comm_layer_add(&coll_layer);
}
