/* File objects (front-end view; the file layer fills in the rest). */
#ifndef MPI_MPI_FILE_H
#define MPI_MPI_FILE_H

#include "mpi/mpi_obj.h"

struct MPI_ABI_File {
    mpi_obj_t obj;
    mpi_errhandler_t *errhandler;
    char name[MPI_MAX_OBJECT_NAME];
};

static inline mpi_errhandler_t *mpi_file_errhandler(mpi_file_t *o) { return o->errhandler; }

#endif
