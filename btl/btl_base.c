/*
 * btl base: the component table, selection (parameter "btl"), per-peer
 * module choice and progress of every module.
 *
 * Selection: RAIL_BTL (or --param btl=...) is a comma-separated list of
 * component names to use ("self,sm,ofi,tcp", the default; ofi where built), or "^name,..." to
 * use every component but those.  self is always used for the process's own
 * rank unless excluded by name ("^self").  A component named explicitly that
 * cannot run here is reported once, with the reason its init gives (its init
 * runs with btl_verbose raised to at least 1).  For each peer the pml uses
 * the reaching module of highest priority (ties: the earlier in the list).
 */
#include "base/rail.h"
#include "base/log.h"
#include "base/param.h"
#include "base/progress.h"
#include "btl/btl.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

btl_recv_cb_t btl_recv_table[BTL_TAG_MAX];
int btl_verbose;
btl_peer_t *btl_for_peer;
int btl_n_peers;
btl_module_t **btl_modules;
int btl_n_modules;

extern const btl_component_t btl_self_component;
extern const btl_component_t btl_sm_component;
extern const btl_component_t btl_tcp_component;
#ifdef RAIL_HAVE_VERBS
extern const btl_component_t btl_verbs_component;
#endif
#ifdef RAIL_HAVE_OFI
extern const btl_component_t btl_ofi_component;
#define BTL_BASE_DEFAULT "self,sm,ofi,tcp"
#else
#define BTL_BASE_DEFAULT "self,sm,tcp"
#endif

const btl_component_t *const btl_components[] = {
    &btl_self_component,
    &btl_sm_component,
#ifdef RAIL_HAVE_OFI
    &btl_ofi_component,
#endif
    &btl_tcp_component,
#ifdef RAIL_HAVE_VERBS
    &btl_verbs_component,
#endif
    NULL,
};

#define BTL_MAX_MODULES 16

static const char *btl_param;
static btl_module_t *mods[BTL_MAX_MODULES];
static int mod_rank[BTL_MAX_MODULES];    /* order of the module's component in the list */
static int n_mods;
static btl_module_t *progress_mods[BTL_MAX_MODULES];
static int n_progress_mods;
static btl_endpoint_t **mod_eps[BTL_MAX_MODULES];
static btl_proc_t *procs;
static bool self_implicit;             /* self used for the own rank only */
static int base_initialized;

int btl_base_register_params(void)
{
    rail_param_register_string("btl", BTL_BASE_DEFAULT, NULL,
                               "Byte transfer layers to use, comma-separated (\"" BTL_BASE_DEFAULT "\"), "
                               "or \"^name,...\" to use all but those (empty: the default)",
                               RAIL_PARAM_LEVEL_USER, &btl_param);
    rail_param_register_int("btl_verbose", 0, "Verbosity of the btl framework (0: quiet)",
                            RAIL_PARAM_LEVEL_USER, &btl_verbose);
    for (int i = 0; btl_components[i]; i++)
        if (btl_components[i]->register_params)
            btl_components[i]->register_params();
    return MPI_SUCCESS;
}

/* Position of name in the comma-separated list s, or -1. */
static int list_find(const char *s, const char *name)
{
    size_t len = strlen(name);
    int pos = 0;
    while (s && *s) {
        const char *end = strchr(s, ',');
        size_t l = end ? (size_t)(end - s) : strlen(s);
        if (l == len && strncmp(s, name, len) == 0)
            return pos;
        pos++;
        s = end ? end + 1 : NULL;
    }
    return -1;
}

/* "self, sm, tcp, ...": the components built in. */
static const char *btl_known_names(void)
{
    static char buf[128];
    buf[0] = 0;
    for (int i = 0; btl_components[i]; i++)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? ", " : "",
                 btl_components[i]->name);
    return buf;
}

static void warn_unknown_names(const char *list)
{
    const char *s = list;
    while (s && *s) {
        const char *end = strchr(s, ',');
        size_t l = end ? (size_t)(end - s) : strlen(s);
        bool known = l == 0;
        for (int i = 0; btl_components[i] && !known; i++)
            known = strlen(btl_components[i]->name) == l &&
                    strncmp(btl_components[i]->name, s, l) == 0;
        if (!known)
            rail_warn("btl: unknown component \"%.*s\" in btl=\"%s\" (known: %s)",
                      (int)l, s, btl_param, btl_known_names());
        s = end ? end + 1 : NULL;
    }
}

/* Init one component; explicit: named in the parameter, so say why it cannot run. */
static int init_component(const btl_component_t *c, int order, bool explicit)
{
    int n = BTL_MAX_MODULES - n_mods;
    int saved = btl_verbose;
    /* a job of one process needs nothing but self: no reasons then */
    explicit = explicit && (rte_info.size > 1 || strcmp(c->name, "self") == 0);
    if (explicit && btl_verbose < 1)
        btl_verbose = 1;
    int rc = c->init(&mods[n_mods], &n);
    btl_verbose = saved;
    if (rc == MPI_ERR_ARG)
        return rc;   /* a parameter of the component is wrong: said, and fatal */
    if (rc != MPI_SUCCESS || n == 0) {
        if (explicit)
            rail_warn("btl: component \"%s\" was requested (btl=\"%s\") but cannot run here%s",
                      c->name, btl_param, rc != MPI_SUCCESS ? " (its initialization failed)" : "");
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++) {
        mod_rank[n_mods + i] = order;
        RAIL_VERBOSE(btl_verbose, 1, "btl: using %s (priority %d, eager limit %zu, flags 0x%x)",
                     mods[n_mods + i]->name, mods[n_mods + i]->priority,
                     mods[n_mods + i]->eager_limit, mods[n_mods + i]->flags);
    }
    n_mods += n;
    return MPI_SUCCESS;
}

/* The selection in effect (btl_base_init). */
static const char *sel_list = BTL_BASE_DEFAULT;
static bool sel_exclude;

bool btl_base_selected(const char *name)
{
    return (list_find(sel_list, name) >= 0) != sel_exclude;
}

int btl_base_init(void)
{
    if (base_initialized++)
        return MPI_SUCCESS;
    btl_base_register_params();
    /* an empty list (RAIL_BTL= in a script) means the default */
    bool empty = !btl_param || !*btl_param;
    const char *p = empty ? BTL_BASE_DEFAULT : btl_param;
    bool exclude = p[0] == '^';
    const char *list = exclude ? p + 1 : p;
    sel_list = list;
    sel_exclude = exclude;
    warn_unknown_names(list);
    const rail_param_t *rp = rail_param_find("btl");
    bool param_set_by_user = rp && rp->source != RAIL_PARAM_SRC_DEFAULT && !empty;
    for (int i = 0; btl_components[i]; i++) {
        const btl_component_t *c = btl_components[i];
        int pos = list_find(list, c->name);
        bool is_self = strcmp(c->name, "self") == 0;
        if (exclude ? pos >= 0 : pos < 0) {
            if (!(is_self && !exclude))
                continue;
            self_implicit = true;   /* self is always there for our own rank */
            pos = -1;
        }
        bool explicit = !exclude && pos >= 0 && param_set_by_user;
        int rc = init_component(c, pos < 0 ? 1000 + i : pos, explicit);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    btl_modules = mods;
    btl_n_modules = n_mods;
    if (n_mods == 0) {
        rail_error("btl: no transport can run (btl=\"%s\")", p);
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

int btl_base_progress(void)
{
    int n = 0;
    for (int i = 0; i < n_progress_mods; i++)
        n += progress_mods[i]->progress(progress_mods[i]);
    return n;
}

/* Each used module is its own progress callback; self only while it has
 * queued messages. */
extern int btl_self_queued;

static int module_progress_cb(void *arg)
{
    btl_module_t *m = arg;
    return m->progress(m);
}

static int register_progress(btl_module_t *m)
{
    const int *pending = strcmp(m->name, "self") == 0 ? &btl_self_queued : NULL;
    return rail_progress_register_lazy(module_progress_cb, m, 0, pending);
}

static bool sl_prepare(void *ctx)
{
    btl_module_t *m = ctx;
    return m->sleep_prepare ? m->sleep_prepare(m) : true;
}
static void sl_block(void *ctx, int timeout_ms)
{
    btl_module_t *m = ctx;
    m->sleep_block(m, timeout_ms);
}
static void sl_finish(void *ctx)
{
    btl_module_t *m = ctx;
    if (m->sleep_finish)
        m->sleep_finish(m);
}
static void sl_wake(void *ctx)
{
    btl_module_t *m = ctx;
    m->sleep_wake(m);
}

static uint32_t *sl_futex(void *ctx, uint32_t *val)
{
    btl_module_t *m = ctx;
    return m->sleep_word(m, val);
}

static void register_sleeper(btl_module_t *m)
{
    if (m->wait_fd < 0 && !m->sleep_block)
        return;
    rail_progress_sleeper_t s = {
        .fd = m->wait_fd,
        .prepare = (m->sleep_prepare || m->sleep_block) ? sl_prepare : NULL,
        .block = m->sleep_block ? sl_block : NULL,
        .finish = m->sleep_finish ? sl_finish : NULL,
        .wake = m->sleep_wake ? sl_wake : NULL,
        .ctx = m,
        .futex = m->sleep_word ? sl_futex : NULL,
    };
    rail_progress_add_sleeper(&s);
}

/* Choose, per rank, the reaching module of highest priority. */
static int choose_peers(int nprocs)
{
    for (int r = 0; r < nprocs; r++) {
        int best = -1;
        for (int k = 0; k < n_mods; k++) {
            if (!mod_eps[k] || !mod_eps[k][r])
                continue;
            if (self_implicit && strcmp(mods[k]->name, "self") == 0 && r != rte_info.rank)
                continue;
            if (best < 0 || mods[k]->priority > mods[best]->priority ||
                (mods[k]->priority == mods[best]->priority && mod_rank[k] < mod_rank[best]))
                best = k;
        }
        if (best < 0) {
            rail_error("btl: no transport reaches rank %d on host %s from rank %d on host %s "
                       "(btl=\"%s\"; run with RAIL_BTL_VERBOSE=1 for details)",
                       r, rte_hostname_of(r), rte_info.rank, rte_info.hostname,
                       btl_param ? btl_param : "");
            return MPI_ERR_OTHER;
        }
        btl_for_peer[r].btl = mods[best];
        btl_for_peer[r].ep = mod_eps[best][r];
        RAIL_VERBOSE(btl_verbose, 2, "btl: rank %d via %s", r, mods[best]->name);
    }
    return MPI_SUCCESS;
}

int btl_base_add_procs(int nprocs)
{
    int rc = MPI_SUCCESS;
    procs = calloc((size_t)nprocs, sizeof(*procs));
    btl_for_peer = calloc((size_t)nprocs, sizeof(*btl_for_peer));
    RAIL_CHECK_ALLOC(procs);
    RAIL_CHECK_ALLOC(btl_for_peer);
    btl_n_peers = nprocs;
    for (int r = 0; r < nprocs; r++) {
        procs[r].rank = r;
        procs[r].node_id = (uint32_t)rte_node_of(r);
        procs[r].local = procs[r].node_id == rte_info.node_id;
    }
    for (int k = 0; k < n_mods; k++) {
        mod_eps[k] = calloc((size_t)nprocs, sizeof(btl_endpoint_t *));
        RAIL_CHECK_ALLOC(mod_eps[k]);
        rc = mods[k]->add_procs(mods[k], nprocs, procs, mod_eps[k]);
        if (rc != MPI_SUCCESS) {
            rail_warn("btl %s: add_procs failed (error %d); not using it", mods[k]->name, rc);
            free(mod_eps[k]);
            mod_eps[k] = NULL;
        }
    }
    RAIL_CHECK(choose_peers(nprocs));
    /* Progress only the modules some peer uses, the busiest kinds first. */
    for (int k = 0; k < n_mods; k++) {
        bool used = false;
        for (int r = 0; r < nprocs && !used; r++)
            used = btl_for_peer[r].btl == mods[k];
        if (used && mods[k]->progress) {
            progress_mods[n_progress_mods++] = mods[k];
            register_sleeper(mods[k]);
        }
    }
    for (int i = 0; i < n_progress_mods; i++)
        if (strcmp(progress_mods[i]->name, "self") != 0)
            RAIL_CHECK(register_progress(progress_mods[i]));
    for (int i = 0; i < n_progress_mods; i++)
        if (strcmp(progress_mods[i]->name, "self") == 0)
            RAIL_CHECK(register_progress(progress_mods[i]));
    return MPI_SUCCESS;
fail:
    return rc;
}

size_t btl_base_pending(void)
{
    size_t n = 0;
    for (int k = 0; k < n_mods; k++)
        if (mods[k]->pending)
            n += mods[k]->pending(mods[k]);
    return n;
}

int btl_base_finalize(void)
{
    if (base_initialized == 0 || --base_initialized > 0)
        return MPI_SUCCESS;
    for (int i = 0; i < n_progress_mods; i++) {
        rail_progress_unregister(module_progress_cb, progress_mods[i]);
        rail_progress_remove_sleeper(progress_mods[i]);
    }
    for (int k = 0; k < n_mods; k++) {
        if (mod_eps[k] && mods[k]->del_procs)
            mods[k]->del_procs(mods[k], btl_n_peers, procs, mod_eps[k]);
        free(mod_eps[k]);
        mod_eps[k] = NULL;
        if (mods[k]->finalize)
            mods[k]->finalize(mods[k]);
    }
    n_mods = n_progress_mods = 0;
    btl_n_modules = 0;
    free(procs);
    free(btl_for_peer);
    procs = NULL;
    btl_for_peer = NULL;
    btl_n_peers = 0;
    self_implicit = false;
    memset(btl_recv_table, 0, sizeof(btl_recv_table));
    return MPI_SUCCESS;
}
