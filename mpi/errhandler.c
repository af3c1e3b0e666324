/* Errhandlers: the predefined ones and user handlers on communicators,
 * windows, files and sessions. */
#include "mpi/mpi_err.h"
#include "obj/errhandler.h"
#include "obj/comm.h"
#include "obj/win.h"
#include "obj/file.h"
#include "obj/session.h"
#include "mpi/mpi_env.h"
#include "base/atomic.h"

#include <stdlib.h>

obj_errhandler_t obj_errhandler_fatal = {.kind = OBJ_EH_FATAL, .for_kind = OBJ_EH_FOR_ANY};
obj_errhandler_t obj_errhandler_return = {.kind = OBJ_EH_RETURN, .for_kind = OBJ_EH_FOR_ANY};
obj_errhandler_t obj_errhandler_abort = {.kind = OBJ_EH_ABORT, .for_kind = OBJ_EH_FOR_ANY};

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
    if (!mpi_env.file_null_errhandler)
        mpi_env.file_null_errhandler = &obj_errhandler_return;
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

static int create(obj_eh_for_t for_kind, void (*fn)(void), MPI_Errhandler *out)
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
    *out = obj_errhandler_handle(eh);
    return MPI_SUCCESS;
}

int mpii_comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(OBJ_EH_FOR_COMM, (void (*)(void))fn, errhandler);
}

int mpii_win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(OBJ_EH_FOR_WIN, (void (*)(void))fn, errhandler);
}

int mpii_file_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(OBJ_EH_FOR_FILE, (void (*)(void))fn, errhandler);
}

int mpii_session_create_errhandler(MPI_Session_errhandler_function *fn,
                                   MPI_Errhandler *errhandler)
{
    return create(OBJ_EH_FOR_SESSION, (void (*)(void))fn, errhandler);
}

int mpii_errhandler_free(MPI_Errhandler *errhandler)
{
    obj_errhandler_t *eh = NULL;
    int rc = obj_errhandler_lookup(*errhandler, &eh);
    if (rc)
        return rc;
    obj_errhandler_release(eh);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

/* Attach eh to an object slot, checking it was made for that kind. */
static int attach(obj_errhandler_t **slot, obj_errhandler_t *eh, obj_eh_for_t want,
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

static int get(obj_errhandler_t *eh, MPI_Errhandler *out)
{
    if (!eh)
        eh = &obj_errhandler_fatal;
    obj_errhandler_retain(eh);
    *out = obj_errhandler_handle(eh);
    return MPI_SUCCESS;
}

int mpii_comm_set_errhandler(obj_comm_t *comm, obj_errhandler_t *errhandler)
{
    return attach(&comm->errhandler, errhandler, OBJ_EH_FOR_COMM, "communicator");
}

int mpii_comm_get_errhandler(obj_comm_t *comm, MPI_Errhandler *errhandler)
{
    return get(comm->errhandler, errhandler);
}

int mpii_win_set_errhandler(obj_win_t *win, obj_errhandler_t *errhandler)
{
    return attach(&win->errhandler, errhandler, OBJ_EH_FOR_WIN, "window");
}

int mpii_win_get_errhandler(obj_win_t *win, MPI_Errhandler *errhandler)
{
    return get(win->errhandler, errhandler);
}

int mpii_session_set_errhandler(obj_session_t *session, obj_errhandler_t *errhandler)
{
    return attach(&session->errhandler, errhandler, OBJ_EH_FOR_SESSION, "session");
}

int mpii_session_get_errhandler(obj_session_t *session, MPI_Errhandler *errhandler)
{
    return get(session->errhandler, errhandler);
}

int mpii_file_set_errhandler(obj_file_t *file, obj_errhandler_t *errhandler)
{
    /* MPI_FILE_NULL is a valid target: it sets the default for file errors. */
    obj_errhandler_t **slot = file ? &file->errhandler : &mpi_env.file_null_errhandler;
    return attach(slot, errhandler, OBJ_EH_FOR_FILE, "file");
}

int mpii_file_get_errhandler(obj_file_t *file, MPI_Errhandler *errhandler)
{
    return get(file ? file->errhandler : mpi_env.file_null_errhandler, errhandler);
}

/* MPI_*_call_errhandler: raise errorcode on the object as an MPI call would. */
int mpii_comm_call_errhandler(obj_comm_t *comm, int errorcode)
{
    mpi_err_raise_comm(comm, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}

int mpii_win_call_errhandler(obj_win_t *win, int errorcode)
{
    mpi_err_raise_win(win, errorcode, "MPI_Win_call_errhandler");
    return MPI_SUCCESS;
}

int mpii_file_call_errhandler(obj_file_t *file, int errorcode)
{
    mpi_err_raise_file(file, errorcode, "MPI_File_call_errhandler");
    return MPI_SUCCESS;
}

int mpii_session_call_errhandler(obj_session_t *session, int errorcode)
{
    mpi_err_raise_session(session, errorcode, "MPI_Session_call_errhandler");
    return MPI_SUCCESS;
}
