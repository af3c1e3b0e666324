/* Statuses and request helpers of the front end (mpi/request*.c). */
#ifndef MPI_MPI_STATUS_H
#define MPI_MPI_STATUS_H

#include <stdbool.h>
#include <mpi.h>
#include "obj/request.h"

/* Copy an internal status out to the user's (MPI_STATUS_IGNORE allowed);
 * MPI_ERROR is written only when with_error (the multi-request calls). */
void mpi_status_write(MPI_Status *dst, const obj_req_status_t *src, bool with_error);
void mpi_status_read(const MPI_Status *src, obj_req_status_t *dst);
/* Hidden fields of MPI_Status (count in bytes, cancelled flag). */
MPI_Count mpi_status_get_bytes(const MPI_Status *st);
void mpi_status_set_bytes(MPI_Status *st, MPI_Count bytes);
int mpi_status_get_cancelled_flag(const MPI_Status *st);
void mpi_status_set_cancelled_flag(MPI_Status *st, int flag);

/* Wait for one request, report it and release it (or make a persistent one
 * inactive); *handle becomes MPI_REQUEST_NULL unless persistent. */
int mpi_request_wait_one(MPI_Request *handle, MPI_Status *status);
/* The request's error with a detail message for the errhandler. */
int mpi_request_error(obj_request_t *req);

/* A request that is already complete with the given status (PROC_NULL
 * operations, Buffer_iflush with nothing to flush). */
int mpi_request_new_complete(const obj_req_status_t *st, bool persistent, MPI_Request *handle);

#endif
