/* MPI_T performance variables, sessions and pvar handles, served from the
 * performance-variable registry (base/pvar.h): pvar index i is the
 * registry's variable i.  The variables are registered by the code that
 * owns them (the live-object counts in mpi/obj.c, the process CPU timer in
 * mpi/params.c, the pml's, btl sm's, coll sm's and accel's counters in
 * their components), with their parameters; this file knows none of them.
 *
 * A continuous variable is always running: start/stop answer
 * MPI_T_ERR_PVAR_NO_STARTSTOP; a readonly one cannot be written or reset
 * (MPI_T_ERR_PVAR_NO_WRITE).  A non-continuous variable starts stopped at
 * 0 and accumulates, per handle, while started.
 */
#include "mpi/mpit.h"
#include "base/pvar.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct pvar_session {
    int handles;
} pvar_session_t;

typedef struct pvar_handle {
    uintptr_t session;
    const rail_pvar_t *var;
    bool started;
    uint64_t accum;       /* non-continuous: raw value gathered while started */
    uint64_t mark;        /* sample at the last start or reset */
} pvar_handle_t;

static mpit_table_t sessions, handles;

static bool has(const rail_pvar_t *v, unsigned flag)
{
    return (v->flags & flag) != 0;
}

static MPI_Datatype datatype_of(const rail_pvar_t *v)
{
    return v->type == RAIL_PVAR_DOUBLE ? MPI_DOUBLE : MPI_UNSIGNED_LONG_LONG;
}

/* ------------------------------------------------------------ queries */

static int pvar_get_num(int *num_pvar)
{
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    *num_pvar = rail_pvar_count();
    return MPI_SUCCESS;
}

static int pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                         int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                         int *desc_len, int *bind, int *readonly, int *continuous, int *atomic)
{
    const rail_pvar_t *v = rail_pvar_at(pvar_index);
    if (!v)
        return MPI_T_ERR_INVALID_INDEX;
    mpit_copy_string(v->name, name, name_len);
    mpit_copy_string(v->desc, desc, desc_len);
    if (verbosity)
        *verbosity = mpit_verbosity(v->level);
    if (var_class)
        *var_class = v->var_class;
    if (datatype)
        *datatype = datatype_of(v);
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = has(v, RAIL_PVAR_READONLY);
    if (continuous)
        *continuous = has(v, RAIL_PVAR_CONTINUOUS);
    if (atomic)
        *atomic = has(v, RAIL_PVAR_ATOMIC);
    return MPI_SUCCESS;
}

static int pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    int i = rail_pvar_index(name);
    if (i < 0 || rail_pvar_at(i)->var_class != var_class)
        return MPI_T_ERR_INVALID_NAME;
    *pvar_index = i;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ sessions */

static int session_create(MPI_T_pvar_session *pe_session)
{
    if (!pe_session)
        return MPI_T_ERR_INVALID;
    uintptr_t v;
    int rc;
    if (!mpit_table_new(&sessions, sizeof(pvar_session_t), MPI_T_ERR_OUT_OF_SESSIONS, &v, &rc))
        return rc;
    *pe_session = (MPI_T_pvar_session)v;
    return MPI_SUCCESS;
}

static void free_handles_of(uintptr_t session)
{
    for (int i = 0; i < handles.n; i++) {
        uintptr_t v = mpit_table_handle_at(&handles, i);
        pvar_handle_t *h = v ? mpit_table_get(&handles, v) : NULL;
        if (h && (session == 0 || h->session == session)) {
            mpit_table_remove(&handles, v);
            free(h);
        }
    }
}

static int session_free(MPI_T_pvar_session *pe_session)
{
    if (!pe_session)
        return MPI_T_ERR_INVALID;
    uintptr_t v = (uintptr_t)*pe_session;
    pvar_session_t *s = mpit_table_get(&sessions, v);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    free_handles_of(v);
    mpit_table_remove(&sessions, v);
    free(s);
    *pe_session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

void mpit_pvar_release_all(void)
{
    free_handles_of(0);
    for (int i = 0; i < sessions.n; i++) {
        uintptr_t v = mpit_table_handle_at(&sessions, i);
        if (v) {
            free(mpit_table_get(&sessions, v));
            mpit_table_remove(&sessions, v);
        }
    }
}

/* ------------------------------------------------------------ handles */

static int handle_alloc(MPI_T_pvar_session pe_session, int pvar_index, MPI_T_pvar_handle *handle,
                        int *count)
{
    pvar_session_t *s = mpit_table_get(&sessions, (uintptr_t)pe_session);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    const rail_pvar_t *var = rail_pvar_at(pvar_index);
    if (!var)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    uintptr_t v;
    int rc;
    pvar_handle_t *h = mpit_table_new(&handles, sizeof(*h), MPI_T_ERR_OUT_OF_HANDLES, &v, &rc);
    if (!h)
        return rc;
    *h = (pvar_handle_t){.session = (uintptr_t)pe_session, .var = var};
    s->handles++;
    *handle = (MPI_T_pvar_handle)v;
    *count = 1;
    return MPI_SUCCESS;
}

/* The handle of a session (MPI_T_PVAR_ALL_HANDLES is not one). */
static int lookup(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, pvar_session_t **s,
                  pvar_handle_t **h)
{
    *s = mpit_table_get(&sessions, (uintptr_t)pe_session);
    if (!*s)
        return MPI_T_ERR_INVALID_SESSION;
    *h = mpit_table_get(&handles, (uintptr_t)handle);
    if (!*h || (*h)->session != (uintptr_t)pe_session)
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_SUCCESS;
}

static int handle_free(MPI_T_pvar_session pe_session, MPI_T_pvar_handle *handle)
{
    pvar_session_t *s;
    pvar_handle_t *h;
    if (!handle)
        return MPI_T_ERR_INVALID;
    int rc = lookup(pe_session, *handle, &s, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    mpit_table_remove(&handles, (uintptr_t)*handle);
    free(h);
    s->handles--;
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ values */

static uint64_t raw_value(const pvar_handle_t *h)
{
    if (has(h->var, RAIL_PVAR_CONTINUOUS))
        return rail_pvar_sample(h->var);
    return h->accum + (h->started ? rail_pvar_sample(h->var) - h->mark : 0);
}

/* Set a non-continuous handle's value (write, reset). */
static void set_raw(pvar_handle_t *h, uint64_t raw)
{
    h->accum = raw;
    if (h->started)
        h->mark = rail_pvar_sample(h->var);
}

static int start_stop(pvar_handle_t *h, bool start)
{
    if (has(h->var, RAIL_PVAR_CONTINUOUS))
        return MPI_T_ERR_PVAR_NO_STARTSTOP;
    if (start && !h->started)
        h->mark = rail_pvar_sample(h->var);
    else if (!start && h->started)
        h->accum += rail_pvar_sample(h->var) - h->mark;
    h->started = start;
    return MPI_SUCCESS;
}

enum { OP_STOP, OP_START, OP_RESET };

/* MPI_T_PVAR_ALL_HANDLES: start, stop or reset every handle of the session
 * that can be (continuous ones for start/stop, readonly ones for reset are
 * skipped). */
static void for_all(uintptr_t session, int op)
{
    for (int i = 0; i < handles.n; i++) {
        uintptr_t v = mpit_table_handle_at(&handles, i);
        pvar_handle_t *h = v ? mpit_table_get(&handles, v) : NULL;
        if (!h || h->session != session)
            continue;
        if (op == OP_RESET && !has(h->var, RAIL_PVAR_READONLY))
            set_raw(h, 0);
        else if (op != OP_RESET && !has(h->var, RAIL_PVAR_CONTINUOUS))
            start_stop(h, op == OP_START);
    }
}

static int pvar_control(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, int op)
{
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        if (!mpit_table_get(&sessions, (uintptr_t)pe_session))
            return MPI_T_ERR_INVALID_SESSION;
        for_all((uintptr_t)pe_session, op);
        return MPI_SUCCESS;
    }
    pvar_session_t *s;
    pvar_handle_t *h;
    int rc = lookup(pe_session, handle, &s, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    if (op != OP_RESET)
        return start_stop(h, op == OP_START);
    if (has(h->var, RAIL_PVAR_READONLY))
        return MPI_T_ERR_PVAR_NO_WRITE;
    set_raw(h, 0);
    return MPI_SUCCESS;
}

static int pvar_read(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf, bool reset)
{
    pvar_session_t *s;
    pvar_handle_t *h;
    int rc = lookup(pe_session, handle, &s, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!buf)
        return MPI_T_ERR_INVALID;
    if (reset && has(h->var, RAIL_PVAR_READONLY))
        return MPI_T_ERR_PVAR_NO_WRITE;
    if (reset && !has(h->var, RAIL_PVAR_ATOMIC))
        return MPI_T_ERR_PVAR_NO_ATOMIC;
    rail_pvar_store(h->var, raw_value(h), buf);
    if (reset)
        set_raw(h, 0);
    return MPI_SUCCESS;
}

static int pvar_write(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, const void *buf)
{
    pvar_session_t *s;
    pvar_handle_t *h;
    int rc = lookup(pe_session, handle, &s, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!buf)
        return MPI_T_ERR_INVALID;
    if (has(h->var, RAIL_PVAR_READONLY))
        return MPI_T_ERR_PVAR_NO_WRITE;
    uint64_t raw;
    if (!rail_pvar_raw_of(h->var, buf, &raw))
        return MPI_T_ERR_INVALID;
    set_raw(h, raw);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ entry points */

int mpii_t_pvar_get_num(int *num_pvar)
{
    MPIT_LOCKED(pvar_get_num(num_pvar));
}

int mpii_t_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                         int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                         int *desc_len, int *bind, int *readonly, int *continuous, int *atomic)
{
    MPIT_LOCKED(pvar_get_info(pvar_index, name, name_len, verbosity, var_class, datatype,
                              enumtype, desc, desc_len, bind, readonly, continuous, atomic));
}

int mpii_t_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MPIT_LOCKED(pvar_get_index(name, var_class, pvar_index));
}

int mpii_t_pvar_session_create(MPI_T_pvar_session *pe_session)
{
    MPIT_LOCKED(session_create(pe_session));
}

int mpii_t_pvar_session_free(MPI_T_pvar_session *pe_session)
{
    MPIT_LOCKED(session_free(pe_session));
}

int mpii_t_pvar_handle_alloc(MPI_T_pvar_session pe_session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle;   /* every pvar is bound to no object */
    MPIT_LOCKED(handle_alloc(pe_session, pvar_index, handle, count));
}

int mpii_t_pvar_handle_free(MPI_T_pvar_session pe_session, MPI_T_pvar_handle *handle)
{
    MPIT_LOCKED(handle_free(pe_session, handle));
}

int mpii_t_pvar_start(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    MPIT_LOCKED(pvar_control(pe_session, handle, OP_START));
}

int mpii_t_pvar_stop(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    MPIT_LOCKED(pvar_control(pe_session, handle, OP_STOP));
}

int mpii_t_pvar_reset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    MPIT_LOCKED(pvar_control(pe_session, handle, OP_RESET));
}

int mpii_t_pvar_read(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    MPIT_LOCKED(pvar_read(pe_session, handle, buf, false));
}

int mpii_t_pvar_readreset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    MPIT_LOCKED(pvar_read(pe_session, handle, buf, true));
}

int mpii_t_pvar_write(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, const void *buf)
{
    MPIT_LOCKED(pvar_write(pe_session, handle, buf));
}
