/* Checks shared by the collective front end (see coll_api.h). */
#include "mpi/coll_api.h"
#include "obj/op.h"

#include <stdint.h>
#include <stdlib.h>

int mpi_coll_check_op(const obj_op_t *op, const obj_datatype_t *dt)
{
    return obj_op_check_datatype(op, dt);
}

int mpi_coll_check_alias(const void *sbuf, const void *rbuf, MPI_Count count,
                         const obj_datatype_t *dt)
{
    if (sbuf != rbuf || sbuf == MPI_IN_PLACE || count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_BUFFER, "sendbuf and recvbuf are the same buffer (pass MPI_IN_PLACE "
                    "as sendbuf for an operation in place)");
}

int mpi_coll_check_alias_self(const void *sbuf, MPI_Count soff, MPI_Count scount,
                              const obj_datatype_t *sdt, const void *rbuf, MPI_Count roff,
                              MPI_Count rcount, const obj_datatype_t *rdt)
{
    if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE || scount == 0 || sdt->size == 0 ||
        rcount == 0 || rdt->size == 0)
        return MPI_SUCCESS;
    /* The first byte each block touches: equal pointers are no alias when
     * the datatypes place the blocks apart (MPI_BOTTOM with absolute
     * addresses, as mpi4py's alltoallw). */
    uintptr_t s = (uintptr_t)sbuf + (uintptr_t)(soff + sdt->true_lb);
    uintptr_t r = (uintptr_t)rbuf + (uintptr_t)(roff + rdt->true_lb);
    if (s != r)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_BUFFER, "the send and receive buffers alias (this process's own "
                    "block is both, at %p; pass MPI_IN_PLACE for an operation in place)",
                    (void *)s);
}

int mpi_coll_check_intra(const obj_comm_t *comm)
{
    if (!comm->is_inter)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_COMM, "this operation is not defined on intercommunicators");
}

int mpi_coll_check_self(MPI_Count scount, const obj_datatype_t *sdt, MPI_Count rcount,
                        const obj_datatype_t *rdt)
{
    MPI_Count s = scount * sdt->size, r = rcount * rdt->size;
    if (s <= r)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_TRUNCATE, "this process sends itself %lld bytes but receives at most "
                    "%lld bytes from itself (send and receive type signatures differ)",
                    (long long)s, (long long)r);
}

int mpi_coll_check_displs(const MPI_Aint *displs, int n, const char *name)
{
    if (displs || n == 0)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_ARG, "argument '%s' must not be NULL", name);
}

int mpi_coll_types(const MPI_Datatype types[], int n, const char *name, obj_datatype_t ***out)
{
    *out = NULL;
    if (n == 0)
        return MPI_SUCCESS;
    if (!types)
        return obj_errf(MPI_ERR_ARG, "argument '%s' must not be NULL", name);
    obj_datatype_t **a = malloc((size_t)n * sizeof(*a));
    if (!a)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for %d datatypes", n);
    for (int i = 0; i < n; i++) {
        if (types[i] == MPI_DATATYPE_NULL) {
            free(a);
            return obj_errf(MPI_ERR_TYPE, "%s[%d] is MPI_DATATYPE_NULL", name, i);
        }
        int rc = obj_datatype_lookup(types[i], &a[i]);
        if (rc == MPI_SUCCESS && !a[i]->committed)
            rc = obj_errf(MPI_ERR_TYPE, "%s[%d] is not committed", name, i);
        else if (rc != MPI_SUCCESS)
            rc = obj_errf(rc, "invalid datatype in %s[%d]", name, i);
        if (rc != MPI_SUCCESS) {
            free(a);
            return rc;
        }
    }
    *out = a;
    return MPI_SUCCESS;
}
