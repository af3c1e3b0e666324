/* MPI_Send and friends: the send modes, blocking, nonblocking, persistent. */
#include "mpi/p2p.h"
#include "accel/accel.h"
#include "base/dt.h"

#include <stdlib.h>

int mpi_p2p_status_error(const obj_req_status_t *st)
{
    if (st->error == MPI_ERR_TRUNCATE)
        return obj_errf(MPI_ERR_TRUNCATE,
                        "message of %lld bytes from rank %d (tag %d) truncated to %lld-byte "
                        "receive buffer",
                        (long long)st->msg_len, st->source, st->tag, (long long)st->count);
    return st->error;
}

obj_datatype_t *mpi_p2p_byte_type(void)
{
    obj_datatype_t *dt = NULL;
    obj_datatype_lookup(MPI_BYTE, &dt);
    return dt;
}

static int pack_copy(void *dst, const void *src, size_t len, void *ctx)
{
    return accel_copy(dst, src, len, NULL);
}

void *mpi_p2p_pack_tmp(const void *buf, MPI_Count count, obj_datatype_t *dt, size_t *bytes)
{
    size_t n = (size_t)(dt->size * count);
    void *tmp = malloc(n ? n : 1);
    if (!tmp)
        return NULL;
    *bytes = n;
    if (n == 0)
        return tmp;
    if (accel_is_device((const char *)buf + dt->true_lb))
        rail_dt_pack_all_cb(dt->layout, count, buf, tmp, n, NULL, pack_copy, NULL);
    else
        rail_dt_pack_all(dt->layout, count, buf, tmp, n, NULL);
    return tmp;
}

static int send_err(int rc)
{
    return rc;
}

int mpii_send(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
              obj_comm_t *comm)
{
    /* a small device message buffered as a host one (PML_EAGER_DEVICE) */
    return send_err(pml_send(buf, count, datatype, dest, tag, PML_SEND_STANDARD, comm,
                             PML_EAGER_DEVICE));
}

int mpii_ssend(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
               obj_comm_t *comm)
{
    return send_err(pml_send(buf, count, datatype, dest, tag, PML_SEND_SYNC, comm, 0));
}

int mpii_rsend(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
               obj_comm_t *comm)
{
    return send_err(pml_send(buf, count, datatype, dest, tag, PML_SEND_READY, comm, 0));
}

static int isend_mode(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest,
                      int tag, pml_send_mode_t mode, obj_comm_t *comm, MPI_Request *request)
{
    obj_request_t *req;
    int rc = pml_isend(buf, count, datatype, dest, tag, mode, comm, 0, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    *request = (MPI_Request)req;
    return MPI_SUCCESS;
}

int mpii_isend(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
               obj_comm_t *comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, PML_SEND_STANDARD, comm, request);
}

int mpii_issend(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
                obj_comm_t *comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, PML_SEND_SYNC, comm, request);
}

int mpii_irsend(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
                obj_comm_t *comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, PML_SEND_READY, comm, request);
}

static int send_init_mode(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest,
                          int tag, pml_send_mode_t mode, obj_comm_t *comm, MPI_Request *request)
{
    obj_request_t *req;
    int rc = pml_send_create(buf, count, datatype, dest, tag, mode, comm, PML_PERSISTENT, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    *request = (MPI_Request)req;
    return MPI_SUCCESS;
}

int mpii_send_init(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
                   obj_comm_t *comm, MPI_Request *request)
{
    return send_init_mode(buf, count, datatype, dest, tag, PML_SEND_STANDARD, comm, request);
}

int mpii_ssend_init(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
                    obj_comm_t *comm, MPI_Request *request)
{
    return send_init_mode(buf, count, datatype, dest, tag, PML_SEND_SYNC, comm, request);
}

int mpii_rsend_init(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
                    obj_comm_t *comm, MPI_Request *request)
{
    return send_init_mode(buf, count, datatype, dest, tag, PML_SEND_READY, comm, request);
}
