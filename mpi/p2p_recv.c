/* MPI_Recv and friends, Sendrecv(_replace) and their nonblocking forms. */
#include "mpi/p2p.h"

#include <stdlib.h>
#include <string.h>

/* The entry points pass no datatype for MPI_DATATYPE_NULL, count 0 and
 * MPI_PROC_NULL (accepted, as MPICH does: it moves nothing). */
static obj_datatype_t *recv_type(obj_datatype_t *datatype)
{
    return datatype ? datatype : obj_datatype_predef(MPI_BYTE);
}

int mpii_recv(void *buf, MPI_Count count, obj_datatype_t *datatype, int source, int tag,
              obj_comm_t *comm, MPI_Status *status)
{
    datatype = recv_type(datatype);
    obj_req_status_t st;
    int rc = pml_recv(buf, count, datatype, source, tag, comm, 0, &st);
    obj_status_write(status, &st, false);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : mpi_p2p_status_error(&st);
}

int mpii_irecv(void *buf, MPI_Count count, obj_datatype_t *datatype, int source, int tag,
               obj_comm_t *comm, MPI_Request *request)
{
    obj_request_t *req;
    int rc = pml_irecv(buf, count, recv_type(datatype), source, tag, comm, 0, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    *request = (MPI_Request)req;
    return MPI_SUCCESS;
}

int mpii_recv_init(void *buf, MPI_Count count, obj_datatype_t *datatype, int source, int tag,
                   obj_comm_t *comm, MPI_Request *request)
{
    obj_request_t *req;
    int rc = pml_recv_create(buf, count, datatype, source, tag, comm, PML_PERSISTENT, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    *request = (MPI_Request)req;
    return MPI_SUCCESS;
}

int mpii_sendrecv(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype, int dest,
                  int sendtag, void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                  int source, int recvtag, obj_comm_t *comm, MPI_Status *status)
{
    obj_request_t *rreq;
    int rc = pml_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, 0, &rreq);
    if (rc != MPI_SUCCESS)
        return rc;
    int src = pml_send(sendbuf, sendcount, sendtype, dest, sendtag, PML_SEND_STANDARD, comm, 0);
    obj_req_status_t st;
    int rrc = pml_wait(rreq, &st);
    obj_status_write(status, &st, false);
    if (src != MPI_SUCCESS)
        return src;
    return rrc == MPI_SUCCESS ? MPI_SUCCESS : mpi_p2p_status_error(&st);
}

int mpii_sendrecv_replace(void *buf, MPI_Count count, obj_datatype_t *datatype, int dest,
                          int sendtag, int source, int recvtag, obj_comm_t *comm,
                          MPI_Status *status)
{
    size_t bytes;
    void *tmp = mpi_p2p_pack_tmp(buf, count, datatype, &bytes);
    if (!tmp)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for a %lld-byte staging buffer",
                        (long long)(datatype->size * count));
    obj_request_t *rreq;
    int rc = pml_irecv(buf, count, datatype, source, recvtag, comm, 0, &rreq);
    if (rc != MPI_SUCCESS) {
        free(tmp);
        return rc;
    }
    int src = pml_send(tmp, (MPI_Count)bytes, mpi_p2p_byte_type(), dest, sendtag,
                       PML_SEND_STANDARD, comm, 0);
    obj_req_status_t st;
    int rrc = pml_wait(rreq, &st);
    free(tmp);
    obj_status_write(status, &st, false);
    if (src != MPI_SUCCESS)
        return src;
    return rrc == MPI_SUCCESS ? MPI_SUCCESS : mpi_p2p_status_error(&st);
}

/* ------------------------------------------------------------ Isendrecv */

/* A request made of a receive and a send; reports the receive's status. */
typedef struct sendrecv_req {
    obj_request_t req;
    int pending;
    int send_error;
    void *tmp;                 /* Isendrecv_replace: packed send data */
} sendrecv_req_t;

static void sr_release(obj_request_t *req)
{
    req->obj.kind = OBJ_FREED;
    free(req);
}

static const obj_request_ops_t sr_ops = { .release = sr_release };

/* on_complete of a child (inside the critical section). */
static void sr_child_done(obj_request_t *child)
{
    sendrecv_req_t *p = child->cb_arg;
    if (child->kind == OBJ_REQ_RECV) {
        int err = p->req.status.error;
        p->req.status = child->status;
        if (err != MPI_SUCCESS)
            p->req.status.error = err;
    } else if (child->status.error != MPI_SUCCESS) {
        p->req.status.error = child->status.error;
    }
    child->on_complete = NULL;
    child->ops->release(child);
    if (--p->pending == 0) {
        free(p->tmp);
        p->tmp = NULL;
        obj_request_complete(&p->req);
    }
}

static int sendrecv_start(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype,
                          int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
                          obj_datatype_t *recvtype, int source, int recvtag, obj_comm_t *comm,
                          void *tmp, MPI_Request *request)
{
    sendrecv_req_t *p = malloc(sizeof(*p));
    obj_request_t *rreq = NULL, *sreq = NULL;
    int rc;
    if (!p) {
        free(tmp);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for a request");
    }
    obj_request_init(&p->req, OBJ_REQ_MULTI, &sr_ops, comm);
    p->pending = 2;
    p->send_error = MPI_SUCCESS;
    p->tmp = tmp;
    rc = pml_recv_create(recvbuf, recvcount, recvtype, source, recvtag, comm, 0, &rreq);
    if (rc == MPI_SUCCESS)
        rc = pml_send_create(sendbuf, sendcount, sendtype, dest, sendtag, PML_SEND_STANDARD, comm,
                             0, &sreq);
    if (rc != MPI_SUCCESS) {
        if (rreq)
            pml_request_free(rreq);
        free(tmp);
        free(p);
        return rc;
    }
    rreq->on_complete = sr_child_done;
    rreq->cb_arg = p;
    sreq->on_complete = sr_child_done;
    sreq->cb_arg = p;
    *request = (MPI_Request)&p->req;
    RAIL_CS_ENTER();   /* both children start before either can complete the parent */
    pml_start(rreq);
    pml_start(sreq);
    RAIL_CS_EXIT();
    return MPI_SUCCESS;
}

int mpii_isendrecv(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype, int dest,
                   int sendtag, void *recvbuf, MPI_Count recvcount, obj_datatype_t *recvtype,
                   int source, int recvtag, obj_comm_t *comm, MPI_Request *request)
{
    return sendrecv_start(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                          recvtype, source, recvtag, comm, NULL, request);
}

int mpii_isendrecv_replace(void *buf, MPI_Count count, obj_datatype_t *datatype, int dest,
                           int sendtag, int source, int recvtag, obj_comm_t *comm,
                           MPI_Request *request)
{
    size_t bytes;
    void *tmp = mpi_p2p_pack_tmp(buf, count, datatype, &bytes);
    if (!tmp)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for a %lld-byte staging buffer",
                        (long long)(datatype->size * count));
    return sendrecv_start(tmp, (MPI_Count)bytes, mpi_p2p_byte_type(), dest, sendtag, buf, count,
                          datatype, source, recvtag, comm, tmp, request);
}
