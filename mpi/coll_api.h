/*
 * The collective front end (mpi/coll_*.c): the checks the generated entry
 * points cannot make (they need the semantics of the operation), then the
 * call through the communicator's collective table (coll/coll.h).
 *
 * Every operation has one static function taking (its parameters, flags,
 * info, request) behind its three procedures: MPI_Xxx (request NULL),
 * MPI_Ixxx (flags 0) and MPI_Xxx_init (COLL_F_PERSISTENT, info).
 */
#ifndef MPI_COLL_API_H
#define MPI_COLL_API_H

#include "coll/coll.h"
#include "mpi/mpi_err.h"
#include "mpi/mpi_check.h"
#include "mpi/binding/gen/mpi_impl.h"

/* Run operation `name` with the parenthesised arguments `args`: blocking
 * when request is NULL, else nonblocking or persistent (flags), storing the
 * new request's handle. */
#define MPI_COLL_RUN(name, args, flags, info, request)                                             \
    do {                                                                                           \
        if (!(request))                                                                            \
            return coll_##name args;                                                               \
        mpi_request_t *req_;                                                                       \
        int rc_ = coll_i##name(COLL_UNPAREN args, (flags), (info), &req_);                         \
        if (rc_ == MPI_SUCCESS)                                                                    \
            *(request) = (MPI_Request)req_;                                                        \
        return rc_;                                                                                \
    } while (0)

/* A blocking collective of an intracommunicator that moves no data: it
 * returns at once.  Matching type signatures mean every process sees zero
 * bytes when one does (each looks at the counts significant to it), so all
 * skip the call alike and the communicator's collective sequence stays in
 * step. */
#define MPI_COLL_NOTHING(comm, request, count, dt)                                                 \
    (!(request) && !(comm)->is_inter && (MPI_Count)(count) * (dt)->size == 0)

/* The reduction operation applies to the datatype (MPI_ERR_OP). */
int mpi_coll_check_op(const mpi_op_t *op, const mpi_datatype_t *dt);
/* sendbuf and recvbuf must not be the same buffer (MPI_ERR_BUFFER: use
 * MPI_IN_PLACE). */
int mpi_coll_check_alias(const void *sbuf, const void *rbuf, MPI_Count count,
                         const mpi_datatype_t *dt);
/* Scan and Exscan: intracommunicators only (MPI_ERR_COMM). */
int mpi_coll_check_intra(const mpi_comm_t *comm);
/* A block this process sends to itself: scount x sdt must fit rcount x rdt
 * (MPI_ERR_TRUNCATE). */
int mpi_coll_check_self(MPI_Count scount, const mpi_datatype_t *sdt, MPI_Count rcount,
                        const mpi_datatype_t *rdt);
/* The block this process sends to itself, at byte offsets soff of sbuf and
 * roff of rbuf: MPI_ERR_BUFFER when both are non-empty and the arguments
 * alias (sbuf == rbuf, or the two blocks begin at the same byte: "in
 * place" is said with MPI_IN_PLACE).  Local, so a root that alone finds it
 * returns at once. */
int mpi_coll_check_alias_self(const void *sbuf, MPI_Count soff, MPI_Count scount,
                              const mpi_datatype_t *sdt, const void *rbuf, MPI_Count roff,
                              MPI_Count rcount, const mpi_datatype_t *rdt);
/* A displacement array that is significant here (MPI_ERR_ARG when NULL). */
int mpi_coll_check_displs(const MPI_Aint *displs, int n, const char *name);

/* Datatype arrays of the *w forms: look up n handles (committed) into a new
 * array of objects (free with free()); NULL when n == 0. */
int mpi_coll_types(const MPI_Datatype types[], int n, const char *name, mpi_datatype_t ***out);

#endif
