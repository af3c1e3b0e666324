/* Handles and the predefined-object table (see mpi_obj.h). */
#include "mpi/mpi_obj.h"
#include "mpi/mpi_err.h"

#include "base/atomic.h"
#include "base/pvar.h"

#include <stdio.h>
#include <string.h>

mpi_obj_t *mpi_predef_table[MPI_PREDEF_MAX];

/* Live counters, indexed by kind_index(). */
#define N_KINDS 11
static int live[N_KINDS];

static int kind_index(mpi_obj_kind_t kind);

void mpi_obj_init(mpi_obj_t *obj, mpi_obj_kind_t kind)
{
    obj->kind = kind;
    obj->refcount = 1;
    obj->handle = obj;
    int i = kind_index(kind);
    if (i >= 0)
        rail_atomic_add_fetch(&live[i], 1);
}

void mpi_obj_fini(mpi_obj_t *obj)
{
    mpi_handle_forget(obj);
    int i = kind_index(obj->kind);
    if (i >= 0)
        rail_atomic_sub_fetch(&live[i], 1);
    obj->kind = MPI_OBJ_FREED;
}

int mpi_obj_live(mpi_obj_kind_t kind)
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

int mpi_obj_register_pvars(void)
{
#define LIVE(what, KIND, text)                                                                     \
    {KIND, "mpi_live_" what, text " alive in this process: made by the application or the "       \
                                  "library and not yet freed (predefined ones are not counted)"}
    static const struct {
        mpi_obj_kind_t kind;
        const char *name, *desc;
    } vars[] = {
        LIVE("comm", MPI_OBJ_COMM, "Communicators"),
        LIVE("datatype", MPI_OBJ_DATATYPE, "Derived datatypes"),
        LIVE("group", MPI_OBJ_GROUP, "Groups"),
        LIVE("op", MPI_OBJ_OP, "User-defined reduction operations"),
        LIVE("info", MPI_OBJ_INFO, "Info objects"),
        LIVE("errhandler", MPI_OBJ_ERRHANDLER, "User-defined error handlers"),
        LIVE("request", MPI_OBJ_REQUEST, "Requests"),
        LIVE("message", MPI_OBJ_MESSAGE, "Matched messages (MPI_Mprobe, MPI_Improbe)"),
        LIVE("win", MPI_OBJ_WIN, "RMA windows"),
        LIVE("file", MPI_OBJ_FILE, "Files"),
        LIVE("session", MPI_OBJ_SESSION, "MPI sessions"),
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

void mpi_obj_init_predef(mpi_obj_t *obj, mpi_obj_kind_t kind, const void *handle)
{
    uintptr_t v = (uintptr_t)handle;
    obj->kind = kind;
    obj->refcount = 1;
    obj->handle = (void *)handle;
    if (v < MPI_PREDEF_MAX)
        mpi_predef_table[v] = obj;
}

static const struct {
    mpi_obj_kind_t kind;
    const char *what;
    int errclass;
    uintptr_t null_handle;
    const char *null_name;
} kinds[] = {
    {MPI_OBJ_COMM, "communicator", MPI_ERR_COMM, (uintptr_t)MPI_COMM_NULL, "MPI_COMM_NULL"},
    {MPI_OBJ_DATATYPE, "datatype", MPI_ERR_TYPE, (uintptr_t)MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL"},
    {MPI_OBJ_GROUP, "group", MPI_ERR_GROUP, (uintptr_t)MPI_GROUP_NULL, "MPI_GROUP_NULL"},
    {MPI_OBJ_OP, "operation", MPI_ERR_OP, (uintptr_t)MPI_OP_NULL, "MPI_OP_NULL"},
    {MPI_OBJ_INFO, "info object", MPI_ERR_INFO, (uintptr_t)MPI_INFO_NULL, "MPI_INFO_NULL"},
    {MPI_OBJ_ERRHANDLER, "errhandler", MPI_ERR_ERRHANDLER, (uintptr_t)MPI_ERRHANDLER_NULL, "MPI_ERRHANDLER_NULL"},
    {MPI_OBJ_REQUEST, "request", MPI_ERR_REQUEST, (uintptr_t)MPI_REQUEST_NULL, "MPI_REQUEST_NULL"},
    {MPI_OBJ_MESSAGE, "message", MPI_ERR_REQUEST, (uintptr_t)MPI_MESSAGE_NULL, "MPI_MESSAGE_NULL"},
    {MPI_OBJ_WIN, "window", MPI_ERR_WIN, (uintptr_t)MPI_WIN_NULL, "MPI_WIN_NULL"},
    {MPI_OBJ_FILE, "file", MPI_ERR_FILE, (uintptr_t)MPI_FILE_NULL, "MPI_FILE_NULL"},
    {MPI_OBJ_SESSION, "session", MPI_ERR_SESSION, (uintptr_t)MPI_SESSION_NULL, "MPI_SESSION_NULL"},
};

int mpi_obj_lookup_error(mpi_obj_kind_t kind, const void *h, int allow_null)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(kinds); i++) {
        if (kinds[i].kind != kind)
            continue;
        if ((uintptr_t)h == kinds[i].null_handle)
            return mpi_errf(kinds[i].errclass, "%s where a valid %s is required",
                            kinds[i].null_name, kinds[i].what);
        mpi_obj_t *o = mpi_obj_of_handle(h);
        if (o && o->kind == MPI_OBJ_FREED)
            return mpi_errf(kinds[i].errclass, "%s %p was already freed", kinds[i].what, h);
        return mpi_errf(kinds[i].errclass, "invalid %s handle %p", kinds[i].what, h);
    }
    (void)allow_null;
    return mpi_errf(MPI_ERR_INTERN, "lookup of unknown object kind %#x", (unsigned)kind);
}

static int kind_index(mpi_obj_kind_t kind)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(kinds); i++)
        if (kinds[i].kind == kind)
            return (int)i;
    return -1;
}

RAIL_EXPORT int MPIX_Live_objects(const char *kind, int *count)
{
    static const char *names[] = {"comm", "datatype", "group", "op", "info", "errhandler",
                                  "request", "message", "win", "file", "session"};
    if (!kind || !count)
        return MPI_ERR_ARG;
    int total = 0;
    bool found = false;
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(names); i++) {
        if (strcmp(kind, "all") == 0 || strcmp(kind, names[i]) == 0) {
            total += rail_atomic_load_relaxed(&live[i]);
            found = true;
        }
    }
    if (!found)
        return MPI_ERR_ARG;
    *count = total;
    return MPI_SUCCESS;
}
