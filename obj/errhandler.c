/* Errhandler objects: the predefined ones, user handlers, and attaching a
 * handler to an object.  Raising an error through them is the front end's
 * (mpi/err.c). */
#include "obj/errhandler.h"
#include "obj/err.h"
#include "base/atomic.h"

#include <stdlib.h>

obj_errhandler_t obj_errhandler_fatal = {.kind = OBJ_EH_FATAL, .for_kind = OBJ_EH_FOR_ANY};
obj_errhandler_t obj_errhandler_return = {.kind = OBJ_EH_RETURN, .for_kind = OBJ_EH_FOR_ANY};
obj_errhandler_t obj_errhandler_abort = {.kind = OBJ_EH_ABORT, .for_kind = OBJ_EH_FOR_ANY};
obj_errhandler_t *obj_errhandler_file_null;

/* Registered when the library is loaded: sessions and errhandler calls may
 * name the predefined handlers before MPI_Init. */
__attribute__((constructor)) static void errhandler_load(void)
{
    obj_errhandler_init();
}

int obj_errhandler_init(void)
{
    obj_init_predef(&obj_errhandler_fatal.obj, OBJ_ERRHANDLER, MPI_ERRORS_ARE_FATAL);
    obj_init_predef(&obj_errhandler_return.obj, OBJ_ERRHANDLER, MPI_ERRORS_RETURN);
    obj_init_predef(&obj_errhandler_abort.obj, OBJ_ERRHANDLER, MPI_ERRORS_ABORT);
    if (!obj_errhandler_file_null)
        obj_errhandler_file_null = &obj_errhandler_return;
    return MPI_SUCCESS;
}

static bool is_predef(const obj_errhandler_t *eh)
{
    return eh == &obj_errhandler_fatal || eh == &obj_errhandler_return ||
           eh == &obj_errhandler_abort;
}

void obj_errhandler_retain(obj_errhandler_t *eh)
{
    if (eh && !is_predef(eh))
        rail_atomic_add_fetch(&eh->obj.refcount, 1);
}

void obj_errhandler_release(obj_errhandler_t *eh)
{
    if (eh && !is_predef(eh) && rail_atomic_sub_fetch(&eh->obj.refcount, 1) == 0) {
        obj_fini(&eh->obj);
        free(eh);
    }
}

int obj_errhandler_create(obj_eh_for_t for_kind, void (*fn)(void), obj_errhandler_t **out)
{
    obj_errhandler_t *eh = calloc(1, sizeof(*eh));
    if (!eh)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    obj_init(&eh->obj, OBJ_ERRHANDLER);
    eh->kind = OBJ_EH_USER;
    eh->for_kind = for_kind;
    switch (for_kind) {
    case OBJ_EH_FOR_COMM: eh->fn.comm_fn = (MPI_Comm_errhandler_function *)fn; break;
    case OBJ_EH_FOR_WIN: eh->fn.win_fn = (MPI_Win_errhandler_function *)fn; break;
    case OBJ_EH_FOR_FILE: eh->fn.file_fn = (MPI_File_errhandler_function *)fn; break;
    case OBJ_EH_FOR_SESSION: eh->fn.session_fn = (MPI_Session_errhandler_function *)fn; break;
    case OBJ_EH_FOR_ANY: break;
    }
    *out = eh;
    return MPI_SUCCESS;
}

int obj_errhandler_attach(obj_errhandler_t **slot, obj_errhandler_t *eh, obj_eh_for_t want,
                          const char *what)
{
    if (eh->for_kind != OBJ_EH_FOR_ANY && eh->for_kind != want)
        return obj_errf(MPI_ERR_ARG, "errhandler was not created for a %s", what);
    obj_errhandler_retain(eh);
    /* (one exchange: two threads setting it at once release each handler
     * they replaced once) */
    obj_errhandler_release(rail_atomic_exchange(slot, eh));
    return MPI_SUCCESS;
}
