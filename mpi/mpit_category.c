/* MPI_T categories, derived from the names of the variables.
 *
 * A name's first word is its framework or layer: "btl_tcp_sndbuf" -> "btl",
 * "mpi_show_errors" -> "mpi", "progress_mode" -> "progress", "btl" -> "btl".
 * Each becomes a top-level category.  When the second word is a component of
 * that framework (btl, coll and accel components, from their tables), the
 * variable goes into the subcategory "<framework>_<component>" ("btl_tcp",
 * "coll_tuned", "accel_fake"), a child of the framework's category.  So
 * every cvar and pvar is in exactly one category, the most specific.
 *
 * Parameters and performance variables can be registered after
 * MPI_T_init_thread (a framework that registers more at MPI_Init): the
 * categories follow both registries incrementally (sync), only ever
 * appending, so indices stay valid;
 * MPI_T_category_changed counts the updates.
 */
#include "mpi/mpit.h"
#include "base/param.h"
#include "base/pvar.h"
#include "btl/btl.h"
#include "coll/coll.h"
#include "accel/accel.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct int_vec {
    int *v;
    int n, cap;
} int_vec_t;

typedef struct category {
    char *name;
    char *desc;
    int parent;            /* -1 for a framework */
    int_vec_t cvars, pvars, subs;
} category_t;

static category_t *cats;
static int n_cats, cap_cats;
static int params_seen;    /* parameters placed so far */
static int pvars_seen;     /* performance variables placed so far */
static int update_number;
static bool out_of_memory; /* a placement failed: categories incomplete */

static const struct {
    const char *name;
    const char *desc;
} frameworks[] = {
    {"mpi", "The MPI front end: environment, errors, MPI objects"},
    {"op", "Reduction kernels of the predefined operations"},
    {"accel", "Accelerator (GPU) memory support: the accel framework"},
    {"btl", "Byte transfer layers: the btl framework (self, shared memory, TCP)"},
    {"pml", "Point-to-point messaging: matching, eager and rendezvous protocols"},
    {"progress", "The progress engine: polling, yielding and sleeping in waits"},
    {"coll", "Collective operations: the coll framework and its components"},
};

static bool vec_push(int_vec_t *a, int x)
{
    if (a->n == a->cap) {
        int ncap = a->cap ? 2 * a->cap : 8;
        int *nv = realloc(a->v, (size_t)ncap * sizeof(*nv));
        if (!nv)
            return false;
        a->v = nv;
        a->cap = ncap;
    }
    a->v[a->n++] = x;
    return true;
}

static int find(const char *name, size_t len)
{
    for (int i = 0; i < n_cats; i++)
        if (strlen(cats[i].name) == len && strncmp(cats[i].name, name, len) == 0)
            return i;
    return -1;
}

static char *describe(const char *name, int parent)
{
    char buf[256];
    if (parent >= 0) {
        snprintf(buf, sizeof(buf), "The %s component of the %s framework",
                 name + strlen(cats[parent].name) + 1, cats[parent].name);
        return strdup(buf);
    }
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(frameworks); i++)
        if (strcmp(frameworks[i].name, name) == 0)
            return strdup(frameworks[i].desc);
    snprintf(buf, sizeof(buf), "Variables whose names start with %s_", name);
    return strdup(buf);
}

/* The category called name[0..len), made (under parent) if new; -1 when out
 * of memory. */
static int find_or_add(const char *name, size_t len, int parent)
{
    int i = find(name, len);
    if (i >= 0)
        return i;
    if (n_cats == cap_cats) {
        int ncap = cap_cats ? 2 * cap_cats : 16;
        category_t *nc = realloc(cats, (size_t)ncap * sizeof(*nc));
        if (!nc)
            return -1;
        cats = nc;
        cap_cats = ncap;
    }
    category_t *c = &cats[n_cats];
    *c = (category_t){.name = strndup(name, len), .parent = parent};
    c->desc = c->name ? describe(c->name, parent) : NULL;
    if (!c->name || !c->desc || (parent >= 0 && !vec_push(&cats[parent].subs, n_cats))) {
        free(c->name);
        free(c->desc);
        return -1;
    }
    return n_cats++;
}

static bool is_component(const char *fw, size_t fw_len, const char *comp, size_t len)
{
#define FW_IS(s) (fw_len == strlen(s) && strncmp(fw, s, fw_len) == 0)
#define COMP_IS(s) (strlen(s) == len && strncmp(comp, s, len) == 0)
    if (FW_IS("btl")) {
        for (int i = 0; btl_components[i]; i++)
            if (COMP_IS(btl_components[i]->name))
                return true;
    } else if (FW_IS("coll")) {
        for (int i = 0; coll_components[i]; i++)
            if (COMP_IS(coll_components[i]->name))
                return true;
    } else if (FW_IS("accel")) {
        for (int i = 0; i < accel_component_count(); i++)
            if (COMP_IS(accel_component_name(i)))
                return true;
    }
    return false;
#undef FW_IS
#undef COMP_IS
}

/* The category of a variable name, made if new; -1 when out of memory. */
static int category_of(const char *name)
{
    const char *us = strchr(name, '_');
    size_t fw_len = us ? (size_t)(us - name) : strlen(name);
    int top = find_or_add(name, fw_len, -1);
    if (top < 0 || !us)
        return top;
    const char *comp = us + 1;
    const char *us2 = strchr(comp, '_');
    size_t comp_len = us2 ? (size_t)(us2 - comp) : strlen(comp);
    if (!is_component(name, fw_len, comp, comp_len))
        return top;
    return find_or_add(name, fw_len + 1 + comp_len, top);
}

static void place(const char *name, bool pvar, int index)
{
    int c = category_of(name);
    if (c < 0 || !vec_push(pvar ? &cats[c].pvars : &cats[c].cvars, index))
        out_of_memory = true;
}

/* Bring the categories up to date with the registries. */
static void sync(void)
{
    int n = rail_param_count(), np = rail_pvar_count();
    bool changed = n > params_seen || np > pvars_seen;
    for (; params_seen < n; params_seen++)
        place(rail_param_at(params_seen)->name, false, params_seen);
    for (; pvars_seen < np; pvars_seen++)
        place(rail_pvar_at(pvars_seen)->name, true, pvars_seen);
    if (changed)
        update_number++;
}

/* ------------------------------------------------------------ queries */

static int category_get_num(int *num_cat)
{
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    sync();
    *num_cat = n_cats;
    return out_of_memory ? MPI_T_ERR_MEMORY : MPI_SUCCESS;
}

static const category_t *category_at(int cat_index)
{
    sync();
    return cat_index >= 0 && cat_index < n_cats ? &cats[cat_index] : NULL;
}

static int category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    const category_t *c = category_at(cat_index);
    if (!c)
        return MPI_T_ERR_INVALID_INDEX;
    mpit_copy_string(c->name, name, name_len);
    mpit_copy_string(c->desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = c->cvars.n;
    if (num_pvars)
        *num_pvars = c->pvars.n;
    if (num_categories)
        *num_categories = c->subs.n;
    return MPI_SUCCESS;
}

static int category_get_index(const char *name, int *cat_index)
{
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    sync();
    int i = find(name, strlen(name));
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *cat_index = i;
    return MPI_SUCCESS;
}

enum { LIST_CVARS, LIST_PVARS, LIST_SUBS, LIST_EVENTS };

static int category_list(int cat_index, int len, int indices[], int what)
{
    const category_t *c = category_at(cat_index);
    if (!c)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    static const int_vec_t no_events;
    const int_vec_t *v = what == LIST_CVARS ? &c->cvars
                         : what == LIST_PVARS ? &c->pvars
                         : what == LIST_SUBS  ? &c->subs
                                              : &no_events;
    int n = RAIL_MIN(len, v->n);
    if (n > 0)
        memcpy(indices, v->v, (size_t)n * sizeof(int));
    return MPI_SUCCESS;
}

static int category_get_num_events(int cat_index, int *num_events)
{
    if (!category_at(cat_index))
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;   /* no event types (mpit_event.c) */
    return MPI_SUCCESS;
}

static int category_changed(int *number)
{
    if (!number)
        return MPI_T_ERR_INVALID;
    sync();
    *number = update_number;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ entry points */

int mpii_t_category_get_num(int *num_cat)
{
    MPIT_LOCKED(category_get_num(num_cat));
}

int mpii_t_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    MPIT_LOCKED(category_get_info(cat_index, name, name_len, desc, desc_len, num_cvars, num_pvars,
                                  num_categories));
}

int mpii_t_category_get_index(const char *name, int *cat_index)
{
    MPIT_LOCKED(category_get_index(name, cat_index));
}

int mpii_t_category_get_cvars(int cat_index, int len, int indices[])
{
    MPIT_LOCKED(category_list(cat_index, len, indices, LIST_CVARS));
}

int mpii_t_category_get_pvars(int cat_index, int len, int indices[])
{
    MPIT_LOCKED(category_list(cat_index, len, indices, LIST_PVARS));
}

int mpii_t_category_get_categories(int cat_index, int len, int indices[])
{
    MPIT_LOCKED(category_list(cat_index, len, indices, LIST_SUBS));
}

int mpii_t_category_get_events(int cat_index, int len, int indices[])
{
    MPIT_LOCKED(category_list(cat_index, len, indices, LIST_EVENTS));
}

int mpii_t_category_get_num_events(int cat_index, int *num_events)
{
    MPIT_LOCKED(category_get_num_events(cat_index, num_events));
}

int mpii_t_category_changed(int *update_number)
{
    MPIT_LOCKED(category_changed(update_number));
}
