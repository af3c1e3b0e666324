/* Win objects (front-end view; the win layer fills in the rest). */
#ifndef MPI_MPI_WIN_H
#define MPI_MPI_WIN_H

#include "mpi/mpi_obj.h"

struct MPI_ABI_Win {
    mpi_obj_t obj;
    mpi_errhandler_t *errhandler;
    char name[MPI_MAX_OBJECT_NAME];
};

static inline mpi_errhandler_t *mpi_win_errhandler(mpi_win_t *o) { return o->errhandler; }

#endif
