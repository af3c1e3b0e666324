/*
 * Errors at the API boundary.
 *
 * Internal functions return an MPI error class with a detail message
 * recorded by obj_errf() (obj/err.h).  The generated entry point hands the
 * class to the errhandler of the object the call was made on, which prints
 * "MPI_Send: invalid rank 7 (communicator of size 4)" (ERRORS_ARE_FATAL,
 * ERRORS_ABORT), calls the user's handler, or returns (ERRORS_RETURN).
 */
#ifndef MPI_MPI_ERR_H
#define MPI_MPI_ERR_H

#include <mpi.h>
#include "obj/obj.h"
#include "obj/err.h"

/* Invoke the errhandler attached to an object (or the default one when the
 * object is NULL, i.e. the handle itself was invalid: MPI_COMM_SELF's, as
 * MPI-4 prescribes for errors not tied to an object).  fname is the API
 * function's name.  Returns the error code for the caller to return when
 * the handler returns. */
int mpi_err_raise_comm(obj_comm_t *comm, int code, const char *fname);
int mpi_err_raise_win(obj_win_t *win, int code, const char *fname);
int mpi_err_raise_file(obj_file_t *file, int code, const char *fname);
int mpi_err_raise_session(obj_session_t *session, int code, const char *fname);
int mpi_err_raise_default(int code, const char *fname);

/* Errors that the generated entry point raises on the default handler but
 * that belong to a communicator known only to the implementation (the
 * request's, in MPI_Wait and friends): call before returning the error. */
void mpi_err_use_comm(obj_comm_t *comm);

/* The API function fname has no implementation yet. */
int mpi_err_unsupported(const char *fname);

/*
 * Library state for the generated entry points.  mpi_api_ready is nonzero
 * between MPI_Init (or the first MPI_Session_init) and MPI_Finalize (or the
 * last session's finalize); functions that need MPI call
 * mpi_err_not_ready(fname) otherwise, which prints a clear message and ends
 * the process, as there is no errhandler to call yet.
 */
extern volatile int mpi_api_ready;
/* (threads read it while another's session init or finalize sets it) */
#define mpi_api_is_ready() __atomic_load_n(&mpi_api_ready, __ATOMIC_RELAXED)
int mpi_err_not_ready(const char *fname);

#endif
