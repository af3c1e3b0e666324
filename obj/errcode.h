/* Error classes, codes and strings, predefined and user-added. */
#ifndef OBJ_ERRCODE_H
#define OBJ_ERRCODE_H

/* Class of an error code (predefined classes map to themselves). */
int obj_errcode_class(int code);
/* "MPI_ERR_RANK", or "user-defined error class N". */
const char *obj_errcode_class_name(int cls);
/* Text of a code into buf (MPI_MAX_ERROR_STRING bytes), its length in *len;
 * MPI_ERR_ARG for an unknown code. */
int obj_errcode_string(int code, char *buf, int *len);
/* Largest code in use (the MPI_LASTUSEDCODE attribute). */
extern int obj_errcode_lastused;

/* From the generated mpi/binding/gen/mpi_errclass.c */
const char *obj_errclass_name(int cls);
const char *obj_errclass_string(int cls);

#endif
