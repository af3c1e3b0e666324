/* Errhandlers (front-end view). */
#ifndef MPI_MPI_ERRHANDLER_H
#define MPI_MPI_ERRHANDLER_H

#include "mpi/mpi_obj.h"

typedef enum {
    MPI_EH_FATAL,      /* MPI_ERRORS_ARE_FATAL: print, end the job */
    MPI_EH_ABORT,      /* MPI_ERRORS_ABORT: print, abort the object's processes (the job) */
    MPI_EH_RETURN,     /* MPI_ERRORS_RETURN */
    MPI_EH_USER,       /* a user function */
} mpi_eh_kind_t;

/* Which objects a user errhandler was made for. */
typedef enum { MPI_EH_FOR_ANY, MPI_EH_FOR_COMM, MPI_EH_FOR_WIN, MPI_EH_FOR_FILE, MPI_EH_FOR_SESSION } mpi_eh_for_t;

struct MPI_ABI_Errhandler {
    mpi_obj_t obj;
    mpi_eh_kind_t kind;
    mpi_eh_for_t for_kind;
    union {
        MPI_Comm_errhandler_function *comm_fn;
        MPI_Win_errhandler_function *win_fn;
        MPI_File_errhandler_function *file_fn;
        MPI_Session_errhandler_function *session_fn;
    } fn;
};

extern mpi_errhandler_t mpi_errhandler_fatal, mpi_errhandler_return, mpi_errhandler_abort;

void mpi_errhandler_retain(mpi_errhandler_t *eh);
void mpi_errhandler_release(mpi_errhandler_t *eh);
int mpi_errhandler_init(void);

#endif
