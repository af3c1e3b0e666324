/* Probes and matched probes: MPI_(I)probe, MPI_(I)mprobe, MPI_(I)mrecv. */
#include "mpi/p2p.h"
#include "mpi/mpi_check.h"

int mpii_probe(int source, int tag, obj_comm_t *comm, MPI_Status *status)
{
    obj_req_status_t st;
    int rc = pml_probe(source, tag, comm, 0, &st);
    if (rc == MPI_SUCCESS)
        obj_status_write(status, &st, false);
    return rc;
}

int mpii_iprobe(int source, int tag, obj_comm_t *comm, int *flag, MPI_Status *status)
{
    obj_req_status_t st;
    int rc = pml_iprobe(source, tag, comm, 0, flag, &st);
    if (rc == MPI_SUCCESS && *flag)
        obj_status_write(status, &st, false);
    return rc;
}

static MPI_Message message_handle(obj_message_t *msg)
{
    return msg ? (MPI_Message)msg : MPI_MESSAGE_NO_PROC;
}

int mpii_mprobe(int source, int tag, obj_comm_t *comm, MPI_Message *message, MPI_Status *status)
{
    obj_req_status_t st;
    obj_message_t *msg;
    int rc = pml_mprobe(source, tag, comm, 0, &msg, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    *message = message_handle(msg);
    obj_status_write(status, &st, false);
    return MPI_SUCCESS;
}

int mpii_improbe(int source, int tag, obj_comm_t *comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    obj_req_status_t st;
    obj_message_t *msg;
    int rc = pml_improbe(source, tag, comm, 0, flag, &msg, &st);
    if (rc != MPI_SUCCESS || !*flag)
        return rc;
    *message = message_handle(msg);
    obj_status_write(status, &st, false);
    return MPI_SUCCESS;
}

obj_comm_t *mpi_message_comm_of(const MPI_Message *message)
{
    obj_message_t *msg = NULL;
    if (!message || *message == MPI_MESSAGE_NULL || *message == MPI_MESSAGE_NO_PROC ||
        obj_message_lookup(*message, &msg) != MPI_SUCCESS || !msg)
        return NULL;
    return msg->comm;
}

/* The message behind *handle (NULL for MPI_MESSAGE_NO_PROC). */
static int message_take(MPI_Message *handle, obj_message_t **msg)
{
    if (*handle == MPI_MESSAGE_NO_PROC) {
        *msg = NULL;
        return MPI_SUCCESS;
    }
    if (*handle == MPI_MESSAGE_NULL)
        return obj_errf(MPI_ERR_REQUEST, "MPI_MESSAGE_NULL is not a message to receive");
    int rc = obj_message_lookup(*handle, msg);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_SUCCESS;
}

int mpii_imrecv(void *buf, MPI_Count count, obj_datatype_t *datatype, MPI_Message *message,
                MPI_Request *request)
{
    obj_message_t *msg = NULL;
    int rc = message_take(message, &msg);
    if (rc != MPI_SUCCESS)
        return rc;
    obj_request_t *req;
    rc = pml_imrecv(buf, count, datatype, msg, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    *message = MPI_MESSAGE_NULL;
    *request = (MPI_Request)req;
    return MPI_SUCCESS;
}

int mpii_mrecv(void *buf, MPI_Count count, obj_datatype_t *datatype, MPI_Message *message,
               MPI_Status *status)
{
    obj_message_t *msg = NULL;
    int rc = message_take(message, &msg);
    if (rc != MPI_SUCCESS)
        return rc;
    obj_request_t *req;
    rc = pml_imrecv(buf, count, datatype, msg, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    *message = MPI_MESSAGE_NULL;
    obj_req_status_t st;
    rc = pml_wait(req, &st);
    obj_status_write(status, &st, false);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : mpi_p2p_status_error(&st);
}
