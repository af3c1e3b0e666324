/* The performance-variable registry (see pvar.h). */
#include "base/rail.h"
#include "base/pvar.h"
#include "base/atomic.h"
#include "base/log.h"
#include "base/param.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Entries are allocated one by one and never freed, so a pointer handed
 * out stays valid while the array of them grows. */
static rail_pvar_t **pvars;
static int n_pvars, cap_pvars;
static pthread_mutex_t pvar_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------ checks */

/* Why def cannot be registered, or NULL. */
static const char *malformed(const rail_pvar_t *def)
{
    if (!def->name || !def->name[0] || !def->desc)
        return "no name or no description";
    if (def->var_class < MPI_T_PVAR_CLASS_STATE || def->var_class > MPI_T_PVAR_CLASS_GENERIC)
        return "not an MPI_T_PVAR_CLASS_*";
    if (def->level < 1 || def->level > 9)
        return "level outside 1..9";
    if ((def->counter != NULL) == (def->sample != NULL))
        return "needs exactly one of a counter and a sample function";
    if (def->type != RAIL_PVAR_DOUBLE && def->type != RAIL_PVAR_UNSIGNED)
        return "unknown value type";
    if (def->type == RAIL_PVAR_DOUBLE && !(def->scale > 0))
        return "a double needs a scale above 0";
    if (def->type == RAIL_PVAR_UNSIGNED && def->scale != 0)
        return "an unsigned variable has no scale";
    return NULL;
}

static bool same_definition(const rail_pvar_t *a, const rail_pvar_t *b)
{
    return a->var_class == b->var_class && a->level == b->level && a->flags == b->flags &&
           a->type == b->type && a->counter == b->counter && a->sample == b->sample &&
           a->arg == b->arg && a->scale == b->scale && strcmp(a->desc, b->desc) == 0;
}

/* ------------------------------------------------------------ registration */

static int find_locked(const char *name)
{
    for (int i = 0; i < n_pvars; i++)
        if (strcmp(pvars[i]->name, name) == 0)
            return i;
    return -1;
}

static bool grow_locked(void)
{
    if (n_pvars < cap_pvars)
        return true;
    int ncap = cap_pvars ? 2 * cap_pvars : 64;
    rail_pvar_t **np = realloc(pvars, (size_t)ncap * sizeof(*np));
    if (!np)
        return false;
    pvars = np;
    cap_pvars = ncap;
    return true;
}

/* A copy of def that owns its strings, or NULL. */
static rail_pvar_t *copy_of(const rail_pvar_t *def)
{
    rail_pvar_t *v = malloc(sizeof(*v));
    char *name = strdup(def->name), *desc = strdup(def->desc);
    if (!v || !name || !desc) {
        free(v);
        free(name);
        free(desc);
        return NULL;
    }
    *v = *def;
    v->name = name;
    v->desc = desc;
    return v;
}

static int add_locked(const rail_pvar_t *def)
{
    int i = find_locked(def->name);
    if (i >= 0) {
        if (same_definition(pvars[i], def))
            return MPI_SUCCESS;
        rail_warn("performance variable %s registered again with another definition; the "
                  "first one stays", def->name);
        return MPI_ERR_ARG;
    }
    rail_pvar_t *v = grow_locked() ? copy_of(def) : NULL;
    if (!v)
        return MPI_ERR_NO_MEM;
    pvars[n_pvars++] = v;
    return MPI_SUCCESS;
}

int rail_pvar_register(const rail_pvar_t *def)
{
    const char *why = def ? malformed(def) : "no definition";
    if (why) {
        rail_warn("performance variable %s not registered: %s",
                  def && def->name ? def->name : "(null)", why);
        return MPI_ERR_ARG;
    }
    pthread_mutex_lock(&pvar_lock);
    int rc = add_locked(def);
    pthread_mutex_unlock(&pvar_lock);
    return rc;
}

int rail_pvar_register_counters(const rail_pvar_counter_t *table, size_t n)
{
    int first = MPI_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        rail_pvar_t def = {.name = table[i].name, .desc = table[i].desc,
                           .var_class = MPI_T_PVAR_CLASS_COUNTER,
                           .level = RAIL_PARAM_LEVEL_TUNER,
                           .flags = RAIL_PVAR_CONTINUOUS | RAIL_PVAR_READONLY,
                           .type = RAIL_PVAR_UNSIGNED, .counter = table[i].counter};
        int rc = rail_pvar_register(&def);
        if (first == MPI_SUCCESS)
            first = rc;
    }
    return first;
}

/* ------------------------------------------------------------ lookup */

int rail_pvar_count(void)
{
    pthread_mutex_lock(&pvar_lock);
    int n = n_pvars;
    pthread_mutex_unlock(&pvar_lock);
    return n;
}

const rail_pvar_t *rail_pvar_at(int index)
{
    pthread_mutex_lock(&pvar_lock);
    const rail_pvar_t *v = index >= 0 && index < n_pvars ? pvars[index] : NULL;
    pthread_mutex_unlock(&pvar_lock);
    return v;
}

int rail_pvar_index(const char *name)
{
    if (!name)
        return -1;
    pthread_mutex_lock(&pvar_lock);
    int i = find_locked(name);
    pthread_mutex_unlock(&pvar_lock);
    return i;
}

const rail_pvar_t *rail_pvar_find(const char *name)
{
    return rail_pvar_at(rail_pvar_index(name));
}

/* ------------------------------------------------------------ values */

uint64_t rail_pvar_sample(const rail_pvar_t *v)
{
    if (v->counter)
        return rail_atomic_load_relaxed(v->counter);
    return v->sample(v->arg);
}

void rail_pvar_store(const rail_pvar_t *v, uint64_t raw, void *buf)
{
    if (v->type == RAIL_PVAR_DOUBLE)
        *(double *)buf = (double)raw * v->scale;
    else
        *(unsigned long long *)buf = raw;
}

bool rail_pvar_raw_of(const rail_pvar_t *v, const void *buf, uint64_t *raw)
{
    if (v->type != RAIL_PVAR_DOUBLE) {
        *raw = *(const unsigned long long *)buf;
        return true;
    }
    double d = *(const double *)buf / v->scale;
    if (!(d >= 0 && d < 1.8e19))
        return false;
    *raw = (uint64_t)d;
    return true;
}

const char *rail_pvar_class_name(int var_class)
{
    static const char *names[] = {"state",         "level",        "size",    "percentage",
                                  "highwatermark", "lowwatermark", "counter", "aggregate",
                                  "timer",         "generic"};
    int i = var_class - MPI_T_PVAR_CLASS_STATE;
    return i >= 0 && i < (int)RAIL_ARRAY_SIZE(names) ? names[i] : "?";
}
