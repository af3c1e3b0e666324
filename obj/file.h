/* File objects (front-end view; the file layer fills in the rest). */
#ifndef OBJ_FILE_H
#define OBJ_FILE_H

#include "obj/obj.h"

struct MPI_ABI_File {
    obj_t obj;
    obj_errhandler_t *errhandler;
    char name[MPI_MAX_OBJECT_NAME];
};

static inline obj_errhandler_t *obj_file_errhandler(obj_file_t *o) { return o->errhandler; }

#endif
