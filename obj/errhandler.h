/* Errhandlers: what an object calls on an error (raised by mpi/err.c). */
#ifndef OBJ_ERRHANDLER_H
#define OBJ_ERRHANDLER_H

#include "obj/obj.h"

typedef enum {
    OBJ_EH_FATAL,      /* MPI_ERRORS_ARE_FATAL: print, end the job */
    OBJ_EH_ABORT,      /* MPI_ERRORS_ABORT: print, abort the object's processes (the job) */
    OBJ_EH_RETURN,     /* MPI_ERRORS_RETURN */
    OBJ_EH_USER,       /* a user function */
} obj_eh_kind_t;

/* Which objects a user errhandler was made for. */
typedef enum { OBJ_EH_FOR_ANY, OBJ_EH_FOR_COMM, OBJ_EH_FOR_WIN, OBJ_EH_FOR_FILE, OBJ_EH_FOR_SESSION } obj_eh_for_t;

struct MPI_ABI_Errhandler {
    obj_t obj;
    obj_eh_kind_t kind;
    obj_eh_for_t for_kind;
    union {
        MPI_Comm_errhandler_function *comm_fn;
        MPI_Win_errhandler_function *win_fn;
        MPI_File_errhandler_function *file_fn;
        MPI_Session_errhandler_function *session_fn;
    } fn;
};

extern obj_errhandler_t obj_errhandler_fatal, obj_errhandler_return, obj_errhandler_abort;
/* MPI_FILE_NULL's handler: errors of MPI_File_open and of files without
 * one of their own (MPI_ERRORS_RETURN until set). */
extern obj_errhandler_t *obj_errhandler_file_null;

void obj_errhandler_retain(obj_errhandler_t *eh);
void obj_errhandler_release(obj_errhandler_t *eh);
int obj_errhandler_init(void);
/* A user errhandler for objects of for_kind calling fn. */
int obj_errhandler_create(obj_eh_for_t for_kind, void (*fn)(void), obj_errhandler_t **out);
/* Put eh (retained) in an object's slot, releasing the one it replaces;
 * MPI_ERR_ARG when eh was made for another kind of object ("what"). */
int obj_errhandler_attach(obj_errhandler_t **slot, obj_errhandler_t *eh, obj_eh_for_t want,
                          const char *what);

#endif
