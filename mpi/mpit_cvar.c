/* MPI_T control variables: the parameter registry, cvar i = parameter i.
 *
 *   parameter type        datatype                 count  enumtype
 *   int                   MPI_INT                  1      -
 *   bool                  MPI_INT (0/1)            1      "bool"
 *   size (size_t)         MPI_UNSIGNED_LONG_LONG   1      -
 *   double                MPI_DOUBLE               1      -
 *   string with choices   MPI_INT (choice index)   1      the choices
 *   string                MPI_CHAR                 MPIT_STRING_MAX (NUL-terminated)
 *
 * Verbosity comes from the level (1-3 user, 4-6 tuner, 7-9 developer),
 * desc is the help text, every cvar is bound to no object.  Most parameters
 * are read when the library comes up (MPI_Init, the first session), so they
 * are writable only while it is down: before MPI_Init, or between MPI_T_init
 * and MPI_Init in a tool; while MPI runs their scope is MPI_T_SCOPE_CONSTANT
 * and a write is MPI_T_ERR_CVAR_SET_NOT_NOW.  The exceptions, read at every
 * use, are marked RAIL_PARAM_F_DYNAMIC where they are registered: writable
 * at any time, for the operations and waits that start after the write.
 * Scope of a writable one: LOCAL for mpi_show_errors, the *_verbose and
 * the progress_* parameters (they only change what this process prints or
 * how its waits behave), ALL_EQ for the rest (a job must agree on them).
 *
 * A write goes through rail_param_set: the value is checked like one from
 * the environment, stored in the framework's variable and shown with origin
 * "MPI_T" by railinfo.  MPI_Init re-registers every parameter and keeps the
 * current value, so a write before it wins over the environment and files.
 */
#include "mpi/mpit.h"
#include "mpi/mpi_env.h"
#include "base/param.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPIT_STRING_MAX 4096

typedef struct cvar_handle {
    int index;     /* of the parameter */
    int count;
} cvar_handle_t;

static mpit_table_t cvar_handles;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Parameters read at every use (RAIL_PARAM_F_DYNAMIC, set where each is
 * registered) are writable at any time.  test/mpit/mpit_cvar_dynamic.c
 * writes each after MPI_Init and checks its effect. */
static bool is_dynamic(const rail_param_t *p)
{
    return (p->flags & RAIL_PARAM_F_DYNAMIC) != 0;
}

static int scope_of(const rail_param_t *p)
{
    if (mpi_env.core_up && !is_dynamic(p))
        return MPI_T_SCOPE_CONSTANT;   /* read at start-up: fixed while MPI runs */
    if (strcmp(p->name, "mpi_show_errors") == 0 || ends_with(p->name, "_verbose") ||
        strncmp(p->name, "progress_", 9) == 0)
        return MPI_T_SCOPE_LOCAL;   /* what this process prints, how its waits behave */
    return MPI_T_SCOPE_ALL_EQ;
}

static bool is_text(const rail_param_t *p)
{
    return p->type == RAIL_PARAM_STRING && !p->choices;
}

static MPI_Datatype datatype_of(const rail_param_t *p)
{
    switch (p->type) {
    case RAIL_PARAM_SIZE: return MPI_UNSIGNED_LONG_LONG;
    case RAIL_PARAM_DOUBLE: return MPI_DOUBLE;
    case RAIL_PARAM_STRING: return p->choices ? MPI_INT : MPI_CHAR;
    case RAIL_PARAM_INT:
    case RAIL_PARAM_BOOL: break;
    }
    return MPI_INT;
}

/* ------------------------------------------------------------ queries */

static int cvar_get_num(int *num_cvar)
{
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = rail_param_count();
    return MPI_SUCCESS;
}

static int cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    const rail_param_t *p = rail_param_at(cvar_index);
    if (!p)
        return MPI_T_ERR_INVALID_INDEX;
    mpit_copy_string(p->name, name, name_len);
    mpit_copy_string(p->help, desc, desc_len);
    if (verbosity)
        *verbosity = mpit_verbosity(p->level);
    if (datatype)
        *datatype = datatype_of(p);
    if (enumtype)
        *enumtype = mpit_enum_of_param(cvar_index);
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = scope_of(p);
    return MPI_SUCCESS;
}

static int cvar_get_index(const char *name, int *cvar_index)
{
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    int i = rail_param_index(name);
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *cvar_index = i;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ handles */

static int handle_alloc(int cvar_index, MPI_T_cvar_handle *handle, int *count)
{
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    const rail_param_t *p = rail_param_at(cvar_index);
    if (!p)
        return MPI_T_ERR_INVALID_INDEX;
    uintptr_t v;
    int rc;
    cvar_handle_t *h = mpit_table_new(&cvar_handles, sizeof(*h), MPI_T_ERR_OUT_OF_HANDLES, &v, &rc);
    if (!h)
        return rc;
    *h = (cvar_handle_t){cvar_index, is_text(p) ? MPIT_STRING_MAX : 1};
    *handle = (MPI_T_cvar_handle)v;
    *count = h->count;
    return MPI_SUCCESS;
}

static int handle_free(MPI_T_cvar_handle *handle)
{
    if (!handle)
        return MPI_T_ERR_INVALID;
    cvar_handle_t *h = mpit_table_get(&cvar_handles, (uintptr_t)*handle);
    if (!h)
        return MPI_T_ERR_INVALID_HANDLE;
    mpit_table_remove(&cvar_handles, (uintptr_t)*handle);
    free(h);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

void mpit_cvar_release_all(void)
{
    for (int i = 0; i < cvar_handles.n; i++) {
        uintptr_t v = mpit_table_handle_at(&cvar_handles, i);
        if (v) {
            free(mpit_table_get(&cvar_handles, v));
            mpit_table_remove(&cvar_handles, v);
        }
    }
}

/* ------------------------------------------------------------ read, write */

/* The parameter behind a cvar handle, for a read or write of buf. */
static int cvar_target(MPI_T_cvar_handle handle, const void *buf, cvar_handle_t **h,
                       const rail_param_t **p)
{
    *h = mpit_table_get(&cvar_handles, (uintptr_t)handle);
    if (!*h)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    *p = rail_param_at((*h)->index);
    return MPI_SUCCESS;
}

static int cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    cvar_handle_t *h;
    const rail_param_t *p;
    int rc = cvar_target(handle, buf, &h, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    switch (p->type) {
    case RAIL_PARAM_INT: *(int *)buf = *(const int *)p->storage; break;
    case RAIL_PARAM_BOOL: *(int *)buf = *(const bool *)p->storage ? 1 : 0; break;
    case RAIL_PARAM_SIZE:
        *(unsigned long long *)buf = (unsigned long long)*(const size_t *)p->storage;
        break;
    case RAIL_PARAM_DOUBLE: *(double *)buf = *(const double *)p->storage; break;
    case RAIL_PARAM_STRING: {
        const char *s = *(const char *const *)p->storage;
        if (p->choices) {
            /* The registry keeps a string with choices within them. */
            *(int *)buf = mpit_choice_find(p->choices, s);
        } else {
            int len = h->count;
            mpit_copy_string(s, buf, &len);
        }
        break;
    }
    }
    return MPI_SUCCESS;
}

/* The value in buf as the registry's text; false when out of range. */
static bool value_text(const rail_param_t *p, const cvar_handle_t *h, const void *buf, char *text,
                       size_t len)
{
    switch (p->type) {
    case RAIL_PARAM_INT: snprintf(text, len, "%d", *(const int *)buf); return true;
    case RAIL_PARAM_BOOL: {
        int v = *(const int *)buf;
        snprintf(text, len, "%s", v ? "true" : "false");
        return v == 0 || v == 1;
    }
    case RAIL_PARAM_SIZE: {
        unsigned long long v = *(const unsigned long long *)buf;
        snprintf(text, len, "%llu", v);
        return v <= SIZE_MAX;
    }
    case RAIL_PARAM_DOUBLE: snprintf(text, len, "%.17g", *(const double *)buf); return true;
    case RAIL_PARAM_STRING: {
        if (p->choices) {
            const char *s;
            int n;
            if (!mpit_choice_at(p->choices, *(const int *)buf, &s, &n) || (size_t)n >= len)
                return false;
            memcpy(text, s, (size_t)n);
            text[n] = '\0';
            return true;
        }
        size_t n = strnlen(buf, (size_t)h->count);
        if (n == (size_t)h->count || n >= len)
            return false;   /* not NUL-terminated within count */
        memcpy(text, buf, n + 1);
        return true;
    }
    }
    return false;
}

static int cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    cvar_handle_t *h;
    const rail_param_t *p;
    int rc = cvar_target(handle, buf, &h, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mpi_env.core_up && !is_dynamic(p))
        return MPI_T_ERR_CVAR_SET_NOT_NOW;
    char *text = malloc(MPIT_STRING_MAX);
    if (!text)
        return MPI_T_ERR_MEMORY;
    rc = MPI_T_ERR_INVALID;
    if (value_text(p, h, buf, text, MPIT_STRING_MAX) &&
        rail_param_set(p->name, text, RAIL_PARAM_SRC_API) == MPI_SUCCESS)
        rc = MPI_SUCCESS;
    free(text);
    return rc;
}

/* ------------------------------------------------------------ entry points */

int mpii_t_cvar_get_num(int *num_cvar)
{
    MPIT_LOCKED(cvar_get_num(num_cvar));
}

int mpii_t_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    MPIT_LOCKED(cvar_get_info(cvar_index, name, name_len, verbosity, datatype, enumtype, desc,
                              desc_len, bind, scope));
}

int mpii_t_cvar_get_index(const char *name, int *cvar_index)
{
    MPIT_LOCKED(cvar_get_index(name, cvar_index));
}

int mpii_t_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    (void)obj_handle;   /* every cvar is bound to no object */
    MPIT_LOCKED(handle_alloc(cvar_index, handle, count));
}

int mpii_t_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MPIT_LOCKED(handle_free(handle));
}

int mpii_t_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    MPIT_LOCKED(cvar_read(handle, buf));
}

int mpii_t_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    MPIT_LOCKED(cvar_write(handle, buf));
}
