/* MPI_*_create_errhandler, MPI_*_set/get_errhandler, MPI_*_call_errhandler
 * and MPI_Errhandler_free on the objects of obj/errhandler.c. */
#include "mpi/mpi_err.h"
#include "obj/errhandler.h"
#include "obj/comm.h"
#include "obj/win.h"
#include "obj/file.h"
#include "obj/session.h"
#include "mpi/binding/gen/mpi_impl.h"

static int create(obj_eh_for_t for_kind, void (*fn)(void), MPI_Errhandler *out)
{
    obj_errhandler_t *eh;
    int rc = obj_errhandler_create(for_kind, fn, &eh);
    if (rc == MPI_SUCCESS)
        *out = obj_errhandler_handle(eh);
    return rc;
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
    return obj_errhandler_attach(&comm->errhandler, errhandler, OBJ_EH_FOR_COMM, "communicator");
}

int mpii_comm_get_errhandler(obj_comm_t *comm, MPI_Errhandler *errhandler)
{
    return get(comm->errhandler, errhandler);
}

int mpii_win_set_errhandler(obj_win_t *win, obj_errhandler_t *errhandler)
{
    return obj_errhandler_attach(&win->errhandler, errhandler, OBJ_EH_FOR_WIN, "window");
}

int mpii_win_get_errhandler(obj_win_t *win, MPI_Errhandler *errhandler)
{
    return get(win->errhandler, errhandler);
}

int mpii_session_set_errhandler(obj_session_t *session, obj_errhandler_t *errhandler)
{
    return obj_errhandler_attach(&session->errhandler, errhandler, OBJ_EH_FOR_SESSION, "session");
}

int mpii_session_get_errhandler(obj_session_t *session, MPI_Errhandler *errhandler)
{
    return get(session->errhandler, errhandler);
}

int mpii_file_set_errhandler(obj_file_t *file, obj_errhandler_t *errhandler)
{
    /* MPI_FILE_NULL is a valid target: it sets the default for file errors. */
    obj_errhandler_t **slot = file ? &file->errhandler : &obj_errhandler_file_null;
    return obj_errhandler_attach(slot, errhandler, OBJ_EH_FOR_FILE, "file");
}

int mpii_file_get_errhandler(obj_file_t *file, MPI_Errhandler *errhandler)
{
    return get(file ? file->errhandler : obj_errhandler_file_null, errhandler);
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
