/* Session objects (front-end view; the session layer fills in the rest). */
#ifndef MPI_MPI_SESSION_H
#define MPI_MPI_SESSION_H

#include "mpi/mpi_obj.h"

struct MPI_ABI_Session {
    mpi_obj_t obj;
    mpi_errhandler_t *errhandler;
    char name[MPI_MAX_OBJECT_NAME];
};

static inline mpi_errhandler_t *mpi_session_errhandler(mpi_session_t *o) { return o->errhandler; }

#endif
