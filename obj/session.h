/*
 * Sessions (MPI-4 chapter 11).  A session holds a reference on the library
 * core (mpi_env_core_up/down), so sessions and the World model coexist;
 * the process sets it offers are "mpi://WORLD" and "mpi://SELF".
 */
#ifndef OBJ_SESSION_H
#define OBJ_SESSION_H

#include "obj/obj.h"

struct MPI_ABI_Session {
    obj_t obj;
    obj_errhandler_t *errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    obj_info_t *info;         /* the hints given to MPI_Session_init (NULL: none) */
    int thread_level;         /* provided thread support */
};

static inline obj_errhandler_t *obj_session_errhandler(obj_session_t *o) { return o->errhandler; }

#endif
