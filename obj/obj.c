/* Handles and the predefined-object table (see obj/obj.h). */
#include "obj/obj.h"
#include "obj/err.h"

#include "base/atomic.h"
#include "base/pvar.h"

#include <stdio.h>
#include <string.h>

obj_t *obj_predef_table[OBJ_PREDEF_MAX];

/* Live counters, indexed by kind_index(). */
#define N_KINDS 11
static int live[N_KINDS];

static int kind_index(obj_kind_t kind);

void obj_init(obj_t *obj, obj_kind_t kind)
{
    obj->kind = kind;
    obj->refcount = 1;
    obj->handle = obj;
    int i = kind_index(kind);
    if (i >= 0)
        rail_atomic_add_fetch(&live[i], 1);
}

void obj_fini(obj_t *obj)
{
    obj_handle_forget(obj);
    int i = kind_index(obj->kind);
    if (i >= 0)
        rail_atomic_sub_fetch(&live[i], 1);
    obj->kind = OBJ_FREED;
}

int obj_live(obj_kind_t kind)
{
    int i = kind_index(kind);
    return i >= 0 ? rail_atomic_load_relaxed(&live[i]) : 0;
}

/* MPI_T: the live objects of each kind, mpi_live_<kind>. */
static uint64_t sample_live(const void *arg)
{
    int n = rail_atomic_load_relaxed((const int *)arg);
    return n > 0 ? (uint64_t)n : 0;
}

int obj_register_pvars(void)
{
#define LIVE(what, KIND, text)                                                                     \
    {KIND, "mpi_live_" what, text " alive in this process: made by the application or the "       \
                                  "library and not yet freed (predefined ones are not counted)"}
    static const struct {
        obj_kind_t kind;
        const char *name, *desc;
    } vars[] = {
        LIVE("comm", OBJ_COMM, "Communicators"),
        LIVE("datatype", OBJ_DATATYPE, "Derived datatypes"),
        LIVE("group", OBJ_GROUP, "Groups"),
        LIVE("op", OBJ_OP, "User-defined reduction operations"),
        LIVE("info", OBJ_INFO, "Info objects"),
        LIVE("errhandler", OBJ_ERRHANDLER, "User-defined error handlers"),
        LIVE("request", OBJ_REQUEST, "Requests"),
        LIVE("message", OBJ_MESSAGE, "Matched messages (MPI_Mprobe, MPI_Improbe)"),
        LIVE("win", OBJ_WIN, "RMA windows"),
        LIVE("file", OBJ_FILE, "Files"),
        LIVE("session", OBJ_SESSION, "MPI sessions"),
    };
#undef LIVE
    int rc = MPI_SUCCESS;
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(vars) && rc == MPI_SUCCESS; i++) {
        rail_pvar_t def = {.name = vars[i].name, .desc = vars[i].desc,
                           .var_class = MPI_T_PVAR_CLASS_LEVEL, .level = 2,
                           .flags = RAIL_PVAR_CONTINUOUS | RAIL_PVAR_READONLY,
                           .type = RAIL_PVAR_UNSIGNED, .sample = sample_live,
                           .arg = &live[kind_index(vars[i].kind)]};
        rc = rail_pvar_register(&def);
    }
    return rc;
}

void obj_init_predef(obj_t *obj, obj_kind_t kind, const void *handle)
{
    uintptr_t v = (uintptr_t)handle;
    obj->kind = kind;
    obj->refcount = 1;
    obj->handle = (void *)handle;
    if (v < OBJ_PREDEF_MAX)
        obj_predef_table[v] = obj;
}

static const struct {
    obj_kind_t kind;
    const char *what;
    int errclass;
    uintptr_t null_handle;
    const char *null_name;
} kinds[] = {
    {OBJ_COMM, "communicator", MPI_ERR_COMM, (uintptr_t)MPI_COMM_NULL, "MPI_COMM_NULL"},
    {OBJ_DATATYPE, "datatype", MPI_ERR_TYPE, (uintptr_t)MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL"},
    {OBJ_GROUP, "group", MPI_ERR_GROUP, (uintptr_t)MPI_GROUP_NULL, "MPI_GROUP_NULL"},
    {OBJ_OP, "operation", MPI_ERR_OP, (uintptr_t)MPI_OP_NULL, "MPI_OP_NULL"},
    {OBJ_INFO, "info object", MPI_ERR_INFO, (uintptr_t)MPI_INFO_NULL, "MPI_INFO_NULL"},
    {OBJ_ERRHANDLER, "errhandler", MPI_ERR_ERRHANDLER, (uintptr_t)MPI_ERRHANDLER_NULL, "MPI_ERRHANDLER_NULL"},
    {OBJ_REQUEST, "request", MPI_ERR_REQUEST, (uintptr_t)MPI_REQUEST_NULL, "MPI_REQUEST_NULL"},
    {OBJ_MESSAGE, "message", MPI_ERR_REQUEST, (uintptr_t)MPI_MESSAGE_NULL, "MPI_MESSAGE_NULL"},
    {OBJ_WIN, "window", MPI_ERR_WIN, (uintptr_t)MPI_WIN_NULL, "MPI_WIN_NULL"},
    {OBJ_FILE, "file", MPI_ERR_FILE, (uintptr_t)MPI_FILE_NULL, "MPI_FILE_NULL"},
    {OBJ_SESSION, "session", MPI_ERR_SESSION, (uintptr_t)MPI_SESSION_NULL, "MPI_SESSION_NULL"},
};

int obj_lookup_error(obj_kind_t kind, const void *h, int allow_null)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(kinds); i++) {
        if (kinds[i].kind != kind)
            continue;
        if ((uintptr_t)h == kinds[i].null_handle)
            return obj_errf(kinds[i].errclass, "%s where a valid %s is required",
                            kinds[i].null_name, kinds[i].what);
        obj_t *o = obj_of_handle(h);
        if (o && o->kind == OBJ_FREED)
            return obj_errf(kinds[i].errclass, "%s %p was already freed", kinds[i].what, h);
        return obj_errf(kinds[i].errclass, "invalid %s handle %p", kinds[i].what, h);
    }
    (void)allow_null;
    return obj_errf(MPI_ERR_INTERN, "lookup of unknown object kind %#x", (unsigned)kind);
}

static int kind_index(obj_kind_t kind)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(kinds); i++)
        if (kinds[i].kind == kind)
            return (int)i;
    return -1;
}
