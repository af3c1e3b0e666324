/* Error classes, codes and strings, predefined and user-added. */
#ifndef OBJ_ERRCODE_H
#define OBJ_ERRCODE_H

#include <stdbool.h>

/* Class of an error code (predefined classes map to themselves). */
int obj_errcode_class(int code);
/* "MPI_ERR_RANK", or "user-defined error class N". */
const char *obj_errcode_class_name(int cls);
/* Text of a code into buf (MPI_MAX_ERROR_STRING bytes), its length in *len;
 * MPI_ERR_ARG for an unknown code. */
int obj_errcode_string(int code, char *buf, int *len);
/* Whether code is one of the standard's classes. */
bool obj_errcode_is_predefined(int code);
/* A new class (numbered from MPI_ERR_LASTCODE + 1), or a new code of an
 * existing class (MPI_ERR_ARG when errorclass is none). */
int obj_errcode_add_class(int *errorclass);
int obj_errcode_add_code(int errorclass, int *errorcode);
/* The string of a user-added code or class (MPI_ERR_ARG for another). */
int obj_errcode_set_string(int errorcode, const char *string);
int obj_errcode_remove_string(int errorcode);
/* Remove a user-added class (one without codes left) or code. */
int obj_errcode_remove(int code, bool is_class);
/* Largest code in use (the MPI_LASTUSEDCODE attribute). */
extern int obj_errcode_lastused;

/* From the generated obj/gen/errclass.c (mpi/binding/gen_bindings.py) */
const char *obj_errclass_name(int cls);
const char *obj_errclass_string(int cls);

#endif
