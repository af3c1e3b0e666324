/* Raising errors through errhandlers (see mpi_err.h). */
#include "mpi/mpi_err.h"
#include "obj/errhandler.h"
#include "obj/comm.h"
#include "obj/errcode.h"
#include "mpi/mpi_env.h"
#include "obj/win.h"
#include "obj/file.h"
#include "obj/session.h"
#include "runtime/rte.h"
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int mpi_api_ready;

static __thread obj_comm_t *err_comm_hint;

void mpi_err_use_comm(obj_comm_t *comm)
{
    err_comm_hint = comm;
}

RAIL_NORETURN static void die(obj_errhandler_t *eh, int code, const char *fname,
                              const char *what, const char *msg)
{
    int cls = obj_errcode_class(code);
    rail_error("%s: %s (%s)", fname, msg, obj_errcode_class_name(cls));
    rail_error("%s: %s, ending the job", what,
               eh->kind == OBJ_EH_ABORT ? "MPI_ERRORS_ABORT" : "MPI_ERRORS_ARE_FATAL");
    rte_abort(cls > 0 && cls < 256 ? cls : 1, NULL);
}

/* Common part: fatal handlers end the job; RETURN returns; user
 * handlers are called by the kind-specific wrappers. */
static int raise_common(obj_errhandler_t *eh, int code, const char *fname, const char *what,
                        bool *call_user)
{
    char msg[1024];
    obj_err_take(code, msg, sizeof(msg));
    *call_user = false;
    switch (eh->kind) {
    case OBJ_EH_FATAL:
    case OBJ_EH_ABORT:
        die(eh, code, fname, what, msg);
    case OBJ_EH_RETURN:
        if (mpi_env.verbose_errors)
            rail_warn("%s: %s (returned to the caller)", fname, msg);
        return code;
    case OBJ_EH_USER:
        *call_user = true;
        return code;
    }
    return code;
}

int mpi_err_raise_comm(obj_comm_t *comm, int code, const char *fname)
{
    if (!comm)
        return mpi_err_raise_default(code, fname);
    obj_errhandler_t *eh = comm->errhandler ? comm->errhandler : &obj_errhandler_fatal;
    bool user;
    code = raise_common(eh, code, fname, "communicator error", &user);
    if (user) {
        MPI_Comm h = obj_comm_handle(comm);
        eh->fn.comm_fn(&h, &code);
    }
    return code;
}

int mpi_err_raise_default(int code, const char *fname)
{
    obj_comm_t *hint = err_comm_hint;
    err_comm_hint = NULL;
    if (hint && mpi_api_is_ready())
        return mpi_err_raise_comm(hint, code, fname);
    /* MPI-4: errors not tied to an object go to MPI_COMM_SELF's handler;
     * before MPI is ready (or after), the default is ERRORS_ARE_FATAL. */
    if (mpi_api_is_ready() && obj_comm_self())
        return mpi_err_raise_comm(obj_comm_self(), code, fname);
    bool user;
    return raise_common(&obj_errhandler_fatal, code, fname, "error with MPI not initialized",
                        &user);
}

int mpi_err_raise_session(obj_session_t *session, int code, const char *fname)
{
    obj_errhandler_t *eh = session ? obj_session_errhandler(session) : NULL;
    if (!eh)
        return mpi_err_raise_default(code, fname);
    bool user;
    code = raise_common(eh, code, fname, "session error", &user);
    if (user) {
        MPI_Session h = obj_session_handle(session);
        eh->fn.session_fn(&h, &code);
    }
    return code;
}

int mpi_err_raise_win(obj_win_t *win, int code, const char *fname)
{
    obj_errhandler_t *eh = win ? obj_win_errhandler(win) : NULL;
    if (!eh)
        return mpi_err_raise_default(code, fname);
    bool user;
    code = raise_common(eh, code, fname, "window error", &user);
    if (user) {
        MPI_Win h = obj_win_handle(win);
        eh->fn.win_fn(&h, &code);
    }
    return code;
}

int mpi_err_raise_file(obj_file_t *file, int code, const char *fname)
{
    /* MPI_FILE_NULL's handler (default MPI_ERRORS_RETURN) applies to
     * errors on files and to errors of MPI_File_open. */
    obj_errhandler_t *eh = file ? obj_file_errhandler(file) : obj_errhandler_file_null;
    bool user;
    code = raise_common(eh, code, fname, "file error", &user);
    if (user) {
        MPI_File h = file ? obj_file_handle(file) : MPI_FILE_NULL;
        eh->fn.file_fn(&h, &code);
    }
    return code;
}

int mpi_err_unsupported(const char *fname)
{
    return obj_errf(MPI_ERR_UNSUPPORTED_OPERATION,
                    "%s is not implemented in this version of Rail MPI", fname);
}

int mpi_err_not_ready(const char *fname)
{
    const char *when = mpi_env.finalized ? "after MPI_Finalize" : "before MPI_Init";
    rail_error("%s called %s: the MPI library is not initialized (call MPI_Init, "
               "MPI_Init_thread or MPI_Session_init first)", fname, when);
    /* There is no errhandler to call: end the process, as the standard's
     * default handler would. */
    if (mpi_env.rte_up)
        rte_abort(MPI_ERR_OTHER, NULL);
    exit(1);
}
