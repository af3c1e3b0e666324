/* MPI_Bsend, MPI_Ibsend, MPI_Bsend_init and the buffers they use
 * (MPI_Buffer_attach ... MPI_Session_iflush_buffer), on the buffered sends
 * of pml/pml_bsend.c. */
#include "mpi/p2p.h"

int mpii_bsend(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
               obj_comm_t *comm)
{
    return pml_bsend(buf, count, datatype, dest, tag, comm);
}

int mpii_ibsend(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
                obj_comm_t *comm, MPI_Request *request)
{
    int rc = pml_bsend(buf, count, datatype, dest, tag, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    obj_req_status_t st;
    obj_req_status_empty(&st);
    return mpi_request_new_complete(&st, false, request);
}

int mpii_bsend_init(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
                    obj_comm_t *comm, MPI_Request *request)
{
    obj_request_t *req;
    int rc = pml_bsend_init(buf, count, datatype, dest, tag, comm, &req);
    if (rc == MPI_SUCCESS)
        *request = obj_request_handle(req);
    return rc;
}

/* ------------------------------------------------------------ attach / detach */

int mpii_buffer_attach(void *buffer, MPI_Count size)
{
    return pml_bsend_attach(PML_BSEND_PROC, NULL, buffer, size);
}

int mpii_buffer_detach(void *buffer_addr, MPI_Count *size)
{
    return pml_bsend_detach(PML_BSEND_PROC, NULL, buffer_addr, size);
}

int mpii_comm_attach_buffer(obj_comm_t *comm, void *buffer, MPI_Count size)
{
    return pml_bsend_attach(PML_BSEND_COMM, comm, buffer, size);
}

int mpii_comm_detach_buffer(obj_comm_t *comm, void *buffer_addr, MPI_Count *size)
{
    return pml_bsend_detach(PML_BSEND_COMM, comm, buffer_addr, size);
}

int mpii_session_attach_buffer(obj_session_t *session, void *buffer, MPI_Count size)
{
    return pml_bsend_attach(PML_BSEND_SESSION, session, buffer, size);
}

int mpii_session_detach_buffer(obj_session_t *session, void *buffer_addr, MPI_Count *size)
{
    return pml_bsend_detach(PML_BSEND_SESSION, session, buffer_addr, size);
}

/* ------------------------------------------------------------ flush */

static int iflush(pml_bsend_owner_t kind, const void *owner, MPI_Request *request)
{
    obj_request_t *req;
    int rc = pml_bsend_iflush(kind, owner, &req);
    if (rc == MPI_SUCCESS)
        *request = obj_request_handle(req);
    return rc;
}

int mpii_buffer_flush(void)
{
    return pml_bsend_flush(PML_BSEND_PROC, NULL);
}

int mpii_buffer_iflush(MPI_Request *request)
{
    return iflush(PML_BSEND_PROC, NULL, request);
}

int mpii_comm_flush_buffer(obj_comm_t *comm)
{
    return pml_bsend_flush(PML_BSEND_COMM, comm);
}

int mpii_comm_iflush_buffer(obj_comm_t *comm, MPI_Request *request)
{
    return iflush(PML_BSEND_COMM, comm, request);
}

int mpii_session_flush_buffer(obj_session_t *session)
{
    return pml_bsend_flush(PML_BSEND_SESSION, session);
}

int mpii_session_iflush_buffer(obj_session_t *session, MPI_Request *request)
{
    return iflush(PML_BSEND_SESSION, session, request);
}
