/* Request helpers of the front end on handles (mpi/request.c). */
#ifndef MPI_MPI_STATUS_H
#define MPI_MPI_STATUS_H

#include <stdbool.h>
#include <mpi.h>
#include "obj/request.h"

/* Wait for one request, report it and release it (or make a persistent one
 * inactive); *handle becomes MPI_REQUEST_NULL unless persistent. */
int mpi_request_wait_one(MPI_Request *handle, MPI_Status *status);

/* A handle of a request that is already complete (obj_request_new_complete). */
int mpi_request_new_complete(const obj_req_status_t *st, bool persistent, MPI_Request *handle);

#endif
