/*
 * Error details.
 *
 * Internal functions of every layer above the btls return an MPI error
 * class (MPI_SUCCESS == 0).  The code that detects an error records a
 * message for the user with obj_errf() and returns the class; the front
 * end's entry point hands the class to the errhandler of the object the
 * call was made on (mpi/mpi_err.h), which prints the message.  The message
 * is thread-local and consumed by the next raise.
 */
#ifndef OBJ_ERR_H
#define OBJ_ERR_H

#include <stddef.h>

/* Record a detail message for the coming error; returns code. */
int obj_errf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copy the message recorded for code into buf and forget it; the code's
 * generic text when none was recorded for it. */
void obj_err_take(int code, char *buf, size_t len);

#endif
