/*
 * Argument checks of the generated MPI entry points (mpi/binding/gen/).
 *
 * Each check returns MPI_SUCCESS or an error class after recording a detail
 * message with obj_errf(); the entry point hands the class to the right
 * errhandler, which prefixes the procedure name:
 *     MPI_Send: invalid rank 7 (communicator of size 4)
 * The success path of each check is one or two compares; the message is
 * built only on the error path.  Hand-written code may use these too.
 */
#ifndef MPI_MPI_CHECK_H
#define MPI_MPI_CHECK_H

#include <limits.h>
#include <stdlib.h>
#include "base/rail.h"
#include "mpi/mpi_err.h"
#include "obj/comm.h"
#include "obj/datatype.h"

/* The communicator of the message *message names (errh=@message: errors of
 * MPI_Mrecv / MPI_Imrecv go to its errhandler), or NULL (the default
 * handler) for no message, MPI_MESSAGE_NULL, MPI_MESSAGE_NO_PROC or an
 * invalid handle. */
obj_comm_t *mpi_message_comm_of(const MPI_Message *message);

/* ------------------------------------------------------------ pointers and counts */

/* A blocking collective (or a persistent initialization) `name` ("bcast",
 * "bcast_init") whose arguments failed the entry point's checks with rc on
 * comm (NULL: the communicator itself was bad): with coll_check it still
 * takes part in the check with its error (mpi/coll_verify.c), so that the
 * others report it; otherwise nothing. */
void mpi_coll_check_abandon(obj_comm_t *comm, const char *name, int rc);

static inline int mpi_check_ptr(const void *p, const char *name)
{
    if (RAIL_LIKELY(p != NULL))
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_ARG, "argument '%s' must not be NULL", name);
}

/* A count of elements or bytes: MPI_ERR_COUNT when negative. */
static inline int mpi_check_count(MPI_Count count, const char *name)
{
    if (RAIL_LIKELY(count >= 0))
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_COUNT, "invalid count %lld in argument '%s' (must be non-negative)",
                    (long long)count, name);
}

/* Any other non-negative argument (array lengths): MPI_ERR_ARG. */
static inline int mpi_check_nonneg(MPI_Count value, const char *name)
{
    if (RAIL_LIKELY(value >= 0))
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_ARG, "invalid value %lld for argument '%s' (must be non-negative)",
                    (long long)value, name);
}

#define MPI_CHECK_COUNTS_FN(suffix, T)                                                             \
    static inline int mpi_check_counts_##suffix(const T *a, MPI_Count n, const char *name)       \
    {                                                                                              \
        if (n > 0 && RAIL_UNLIKELY(a == NULL))                                                     \
            return obj_errf(MPI_ERR_ARG, "argument '%s' must not be NULL", name);                \
        for (MPI_Count i = 0; i < n; i++)                                                          \
            if (RAIL_UNLIKELY(a[i] < 0))                                                           \
                return obj_errf(MPI_ERR_COUNT, "invalid count %lld in %s[%lld] (must be non-negative)", \
                                (long long)a[i], name, (long long)i);                            \
        return MPI_SUCCESS;                                                                        \
    }
MPI_CHECK_COUNTS_FN(int, int)
MPI_CHECK_COUNTS_FN(count, MPI_Count)
MPI_CHECK_COUNTS_FN(aint, MPI_Aint)
#undef MPI_CHECK_COUNTS_FN

/* ------------------------------------------------------------ datatypes */

static inline int mpi_check_committed(const obj_datatype_t *dt)
{
    if (RAIL_LIKELY(obj_datatype_is_committed(dt)))
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_TYPE, "datatype is not committed");
}

/* ------------------------------------------------------------ ranks and tags */

/* Point-to-point destination: a rank of the peer group (the remote group of
 * an intercommunicator) or MPI_PROC_NULL. */
static inline int mpi_check_rank_error(const obj_comm_t *c, int rank)
{
    if (obj_comm_is_inter(c))
        return obj_errf(MPI_ERR_RANK, "invalid rank %d (remote group of size %d)", rank,
                        obj_comm_peer_size_of(c));
    return obj_errf(MPI_ERR_RANK, "invalid rank %d (communicator of size %d)", rank,
                    obj_comm_size_of(c));
}

static inline int mpi_check_dest(const obj_comm_t *c, int dest)
{
    if (RAIL_LIKELY((unsigned)dest < (unsigned)obj_comm_peer_size_of(c) || dest == MPI_PROC_NULL))
        return MPI_SUCCESS;
    return mpi_check_rank_error(c, dest);
}

/* Receive source: like a destination, or MPI_ANY_SOURCE. */
static inline int mpi_check_source(const obj_comm_t *c, int source)
{
    if (RAIL_LIKELY((unsigned)source < (unsigned)obj_comm_peer_size_of(c) ||
                    source == MPI_ANY_SOURCE || source == MPI_PROC_NULL))
        return MPI_SUCCESS;
    return mpi_check_rank_error(c, source);
}

/* Root of a collective: a rank of the communicator; on an intercommunicator
 * MPI_ROOT, MPI_PROC_NULL or a rank of the remote group. */
static inline int mpi_check_root(const obj_comm_t *c, int root)
{
    if (!obj_comm_is_inter(c)) {
        if (RAIL_LIKELY((unsigned)root < (unsigned)obj_comm_size_of(c)))
            return MPI_SUCCESS;
        return obj_errf(MPI_ERR_ROOT, "invalid root %d (communicator of size %d)", root,
                        obj_comm_size_of(c));
    }
    if (RAIL_LIKELY(root == MPI_ROOT || root == MPI_PROC_NULL ||
                    (unsigned)root < (unsigned)obj_comm_peer_size_of(c)))
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_ROOT,
                    "invalid root %d (intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank of "
                    "the remote group of size %d)", root, obj_comm_peer_size_of(c));
}

/* Whether this process is the root (the one passing MPI_ROOT on an intercommunicator). */
static inline int mpi_check_is_root(const obj_comm_t *c, int root)
{
    return obj_comm_is_inter(c) ? root == MPI_ROOT : root == obj_comm_rank_of(c);
}

/* RMA target: the window's group is checked by the implementation. */
static inline int mpi_check_target_rank(int rank)
{
    if (RAIL_LIKELY(rank >= 0 || rank == MPI_PROC_NULL))
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_RANK, "invalid target rank %d", rank);
}

static inline int mpi_check_send_tag(int tag)
{
    if (RAIL_LIKELY(tag >= 0 && tag <= OBJ_TAG_UB))
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_TAG, "invalid tag %d (must be between 0 and %d)", tag, OBJ_TAG_UB);
}

static inline int mpi_check_recv_tag(int tag)
{
    if (RAIL_LIKELY((tag >= 0 && tag <= OBJ_TAG_UB) || tag == MPI_ANY_TAG))
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_TAG, "invalid tag %d (must be MPI_ANY_TAG or between 0 and %d)", tag,
                    OBJ_TAG_UB);
}

/* ------------------------------------------------------------ buffers */

/* MPI_BOTTOM is NULL in the standard ABI, so a NULL buffer is legal with a
 * derived datatype (absolute addresses); with a predefined one it is not. */
static inline int mpi_check_buf_null(const void *buf, MPI_Count count, const obj_datatype_t *dt,
                                     const char *name)
{
    if (buf == NULL && count > 0 && obj_datatype_is_predefined(dt))
        return obj_errf(MPI_ERR_BUFFER, "argument '%s' is NULL but count is %lld", name,
                        (long long)count);
    return MPI_SUCCESS;
}

static inline int mpi_check_inplace_refused(const char *name)
{
    return obj_errf(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed for argument '%s'", name);
}

/* A buffer for which MPI_IN_PLACE is not allowed (NULL and MPI_IN_PLACE are
 * 0 and 1, so the success path is one compare). */
static inline int mpi_check_buf(const void *buf, MPI_Count count, const obj_datatype_t *dt,
                                const char *name)
{
    if (RAIL_LIKELY((uintptr_t)buf > (uintptr_t)MPI_IN_PLACE))
        return MPI_SUCCESS;
    if (buf == MPI_IN_PLACE)
        return mpi_check_inplace_refused(name);
    return mpi_check_buf_null(buf, count, dt, name);
}

static inline int mpi_check_not_inplace(const void *buf, const char *name)
{
    if (RAIL_LIKELY(buf != MPI_IN_PLACE))
        return MPI_SUCCESS;
    return mpi_check_inplace_refused(name);
}

/* MPI_IN_PLACE allowed on intracommunicators. */
static inline int mpi_check_inplace(const obj_comm_t *c, const void *buf, const char *name)
{
    if (RAIL_LIKELY(buf != MPI_IN_PLACE || !obj_comm_is_inter(c)))
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator "
                    "(argument '%s')", name);
}

/* MPI_IN_PLACE allowed at the root of an intracommunicator collective. */
static inline int mpi_check_inplace_root(const obj_comm_t *c, int is_root, const void *buf,
                                         const char *name)
{
    if (RAIL_LIKELY(buf != MPI_IN_PLACE))
        return MPI_SUCCESS;
    if (obj_comm_is_inter(c))
        return mpi_check_inplace(c, buf, name);
    if (!is_root)
        return obj_errf(MPI_ERR_BUFFER, "MPI_IN_PLACE is only allowed at the root (argument '%s')",
                        name);
    return MPI_SUCCESS;
}

static inline int mpi_check_buf_inplace(const obj_comm_t *c, const void *buf, MPI_Count count,
                                        const obj_datatype_t *dt, const char *name)
{
    if (RAIL_LIKELY((uintptr_t)buf > (uintptr_t)MPI_IN_PLACE))
        return MPI_SUCCESS;
    if (buf == MPI_IN_PLACE)
        return mpi_check_inplace(c, buf, name);
    return mpi_check_buf_null(buf, count, dt, name);
}

static inline int mpi_check_buf_inplace_root(const obj_comm_t *c, int is_root, const void *buf,
                                             MPI_Count count, const obj_datatype_t *dt,
                                             const char *name)
{
    if (RAIL_LIKELY((uintptr_t)buf > (uintptr_t)MPI_IN_PLACE))
        return MPI_SUCCESS;
    if (buf == MPI_IN_PLACE)
        return mpi_check_inplace_root(c, is_root, buf, name);
    return mpi_check_buf_null(buf, count, dt, name);
}

/* ------------------------------------------------------------ int <-> big-count conversions */

/* Copy an input array of the int binding into an array of the big-count
 * types: `stack` (nstack elements, the caller's) when it fits, else a new
 * one the caller frees (*out != stack); NULL when n <= 0.  The bindings
 * pass MPI_CONV_STACK elements of their stack: a v-collective of a small
 * communicator converts without malloc and free (~190 instructions of a
 * 1500-instruction small MPI_Reduce_scatter). */
#define MPI_CONV_STACK 32
#define MPI_CONV_FN(from, F, to, T)                                                                \
    static inline int mpi_conv_##from##_to_##to##_buf(const F *a, MPI_Count n, T *stack,          \
                                                       MPI_Count nstack, T **out)                  \
    {                                                                                              \
        *out = NULL;                                                                               \
        if (n <= 0)                                                                                \
            return MPI_SUCCESS;                                                                    \
        if (RAIL_UNLIKELY(a == NULL))                                                              \
            return obj_errf(MPI_ERR_ARG, "array argument must not be NULL");                      \
        T *b = n <= nstack ? stack : (T *)malloc((size_t)n * sizeof(T));                           \
        if (RAIL_UNLIKELY(b == NULL))                                                              \
            return obj_errf(MPI_ERR_NO_MEM, "out of memory converting an array of %lld elements", \
                            (long long)n);                                                         \
        for (MPI_Count i = 0; i < n; i++)                                                          \
            b[i] = (T)a[i];                                                                        \
        *out = b;                                                                                  \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    static inline int mpi_conv_##from##_to_##to(const F *a, MPI_Count n, T **out)                 \
    {                                                                                              \
        return mpi_conv_##from##_to_##to##_buf(a, n, NULL, 0, out);                                \
    }
MPI_CONV_FN(int, int, count, MPI_Count)
MPI_CONV_FN(int, int, aint, MPI_Aint)
MPI_CONV_FN(aint, MPI_Aint, count, MPI_Count)
#undef MPI_CONV_FN

/* An output of the big-count implementation returned through the int
 * binding: a value that does not fit becomes MPI_UNDEFINED, as the standard
 * prescribes for counts and sizes. */
static inline int mpi_narrow_int(MPI_Count v)
{
    return (v > INT_MAX || v < INT_MIN) ? MPI_UNDEFINED : (int)v;
}

static inline MPI_Aint mpi_narrow_aint(MPI_Count v)
{
    return (v > INTPTR_MAX || v < INTPTR_MIN) ? MPI_UNDEFINED : (MPI_Aint)v;
}

#endif
