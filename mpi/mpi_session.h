/*
 * Sessions (MPI-4 chapter 11).  A session holds a reference on the library
 * core (mpi_env_core_up/down), so sessions and the World model coexist;
 * the process sets it offers are "mpi://WORLD" and "mpi://SELF".
 */
#ifndef MPI_MPI_SESSION_H
#define MPI_MPI_SESSION_H

#include "mpi/mpi_obj.h"

struct MPI_ABI_Session {
    mpi_obj_t obj;
    mpi_errhandler_t *errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    mpi_info_t *info;         /* the hints given to MPI_Session_init (NULL: none) */
    int thread_level;         /* provided thread support */
};

static inline mpi_errhandler_t *mpi_session_errhandler(mpi_session_t *o) { return o->errhandler; }

#endif
