/* Helpers shared by the point-to-point front end (mpi/p2p_*.c). */
#ifndef MPI_P2P_H
#define MPI_P2P_H

#include "base/rail.h"
#include "mpi/mpi_err.h"
#include "obj/request.h"
#include "mpi/mpi_status.h"
#include "pml/pml.h"

/* The class of a failed receive with a detail message (truncation...). */
int mpi_p2p_status_error(const obj_req_status_t *st);

/* MPI_BYTE as an object. */
obj_datatype_t *mpi_p2p_byte_type(void);

/* Pack count elements of dt at buf into a new host buffer (device memory
 * allowed); *bytes its size.  NULL on allocation failure. */
void *mpi_p2p_pack_tmp(const void *buf, MPI_Count count, obj_datatype_t *dt, size_t *bytes);

#endif
