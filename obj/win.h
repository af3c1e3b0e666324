/* Win objects (front-end view; the win layer fills in the rest). */
#ifndef OBJ_WIN_H
#define OBJ_WIN_H

#include "obj/obj.h"

struct MPI_ABI_Win {
    obj_t obj;
    obj_errhandler_t *errhandler;
    char name[MPI_MAX_OBJECT_NAME];
};

static inline obj_errhandler_t *obj_win_errhandler(obj_win_t *o) { return o->errhandler; }

#endif
