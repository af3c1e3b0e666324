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

#include <limits.h>
#include <stdint.h>

/* The one function of each operation, inlined into its three procedures
 * (and the checked blocking one) so that, its flags being constant there,
 * the unchecked blocking path folds to the local checks and a tail call of
 * coll_<name> (np 2 bcast of 8 B: 0.05 us, against 0.07-0.09 through a
 * shared function with a stack frame). */
#define MPI_COLL_FRONT static inline __attribute__((always_inline))

/* Run operation `name` with the parenthesised arguments `args`: blocking
 * when request is NULL, else nonblocking or persistent (flags), storing the
 * new request's handle. */
#define MPI_COLL_RUN(name, args, flags, info, request)                                             \
    do {                                                                                           \
        if (!(request))                                                                            \
            return coll_##name args;                                                               \
        obj_request_t *req_;                                                                       \
        int rc_ = coll_i##name(COLL_UNPAREN args, (flags) & ~MPI_COLL_F_CHECK, (info), &req_);     \
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
int mpi_coll_check_op(const obj_op_t *op, const obj_datatype_t *dt);
/* sendbuf and recvbuf must not be the same buffer (MPI_ERR_BUFFER: use
 * MPI_IN_PLACE). */
int mpi_coll_check_alias(const void *sbuf, const void *rbuf, MPI_Count count,
                         const obj_datatype_t *dt);
/* Scan and Exscan: intracommunicators only (MPI_ERR_COMM). */
int mpi_coll_check_intra(const obj_comm_t *comm);
/* A block this process sends to itself: scount x sdt must fit rcount x rdt
 * (MPI_ERR_TRUNCATE). */
int mpi_coll_check_self(MPI_Count scount, const obj_datatype_t *sdt, MPI_Count rcount,
                        const obj_datatype_t *rdt);
/* The block this process sends to itself, at byte offsets soff of sbuf and
 * roff of rbuf: MPI_ERR_BUFFER when both are non-empty and begin at the
 * same byte ("in place" is said with MPI_IN_PLACE).  The bytes the datatypes
 * touch decide, not the pointers: MPI_BOTTOM as both buffers with datatypes
 * of absolute addresses is fine.  Local, so a root that alone finds it
 * returns at once. */
int mpi_coll_check_alias_self(const void *sbuf, MPI_Count soff, MPI_Count scount,
                              const obj_datatype_t *sdt, const void *rbuf, MPI_Count roff,
                              MPI_Count rcount, const obj_datatype_t *rdt);
/* A displacement array that is significant here (MPI_ERR_ARG when NULL). */
int mpi_coll_check_displs(const MPI_Aint *displs, int n, const char *name);

/* Datatype arrays of the *w forms: look up n handles (committed) into a new
 * array of objects (free with free()); NULL when n == 0. */
int mpi_coll_types(const MPI_Datatype types[], int n, const char *name, obj_datatype_t ***out);

/* ------------------------------------------------------------ checked collectives */

/*
 * With the parameter coll_check (coll/coll_base.c), every blocking
 * collective, and every initialization of a persistent one, first agrees
 * with the other processes that all call the same operation with the same
 * root and reduction operation, and that what each sends every other
 * matches what that one receives (mpi/coll_verify.c): mismatches are
 * reported on every process (MPI_ERR_OTHER: another operation;
 * MPI_ERR_ROOT, MPI_ERR_OP; type signatures: MPI_ERR_TRUNCATE where a
 * sender sends more than its receiver takes, MPI_ERR_COUNT less,
 * MPI_ERR_TYPE the same size of other types) before any data moves.  A
 * process whose own arguments fail the front end's checks, or its entry
 * point's (mpi_coll_check_abandon, called by the generated code), takes
 * part with its error, so the others report it too.  Costs 2 ceil(log2 n)
 * rounds of one small message on an intracommunicator, plus one message
 * per pair where the counts differ per pair (v forms, neighbourhoods), and
 * a message per remote process on an intercommunicator.
 *
 * In each operation (MPI_COLL_CHECK): mpi_coll_chk_new, then the
 * signatures this process sends to (to[q]) and expects from (from[q])
 * every peer q, itself included on an intracommunicator (an operation's
 * zero-size pairs stay zero), then mpi_coll_chk_run with the local checks'
 * result.
 */
typedef struct mpi_coll_sig {
    uint64_t bytes;   /* count x size */
    uint64_t hash;    /* of the runs of predefined kinds; 0: compared by size only */
} mpi_coll_sig_t;

typedef struct mpi_coll_chk {
    int n;                        /* peers: the remote group on an intercommunicator */
    int kind, root, op;           /* op: -1 none, INT_MAX a user function */
    mpi_coll_sig_t *to, *from;    /* n each */
} mpi_coll_chk_t;

/* The blocking procedure `proc` (parenthesised parameters and the same
 * names as arguments) of front-end function fn: unchecked, a test and a
 * tail call of fn; checked, fn with MPI_COLL_F_CHECK out of line. */
#define MPI_COLL_BLOCKING(proc, fn, params, args)                                                  \
    static __attribute__((noinline, cold)) int chk_##proc params                                   \
    {                                                                                              \
        return fn(COLL_UNPAREN args, MPI_COLL_F_CHECK, NULL, NULL);                                \
    }                                                                                              \
    int proc params                                                                                \
    {                                                                                              \
        if (__builtin_expect(coll_check, 0))                                                       \
            return chk_##proc args;                                                                \
        return fn(COLL_UNPAREN args, 0, NULL, NULL);                                               \
    }

/* In the flags of a front-end function: run the check.  The blocking
 * procedures pass it (from an out-of-line function, chk_mpii_<name>, so
 * that their unchecked path stays a test and a tail call), and the
 * initializations of persistent collectives (nonlocal, MPI-4.1 6.13: they
 * may wait for the others; their arguments are those of every start)
 * through MPI_COLL_PERSISTENT; it never reaches coll. */
#define MPI_COLL_F_CHECK (1u << 30)
#define MPI_COLL_PERSISTENT (COLL_F_PERSISTENT | (coll_check ? MPI_COLL_F_CHECK : 0u))

/* The root argument of an operation that has none. */
#define MPI_COLL_NO_ROOT INT_MIN

/* Rooted operations: whether this process is the root (MPI_ROOT on an
 * intercommunicator) ... */
static inline bool mpi_coll_is_root(const obj_comm_t *comm, int root)
{
    return comm->is_inter ? root == MPI_ROOT : comm->rank == root;
}
/* ... and the peer that it, as a non-root, sends to or receives from: the
 * root, or -1 where none (an intercommunicator's root, and its group's
 * MPI_PROC_NULL processes). */
static inline int mpi_coll_root_peer(const obj_comm_t *comm, int root)
{
    return comm->is_inter && root < 0 ? -1 : root;
}

/* Where the call is checked: the check, with the local result rc (a
 * variable of the caller, which gets the outcome); the statements after op
 * fill `chk->to` / `chk->from` (run only when rc is MPI_SUCCESS).  The
 * check lives on the heap, so that the caller has no addressable local
 * and keeps its tail call. */
#define MPI_COLL_CHECK(comm, flags, rc, kind, root, op, ...)                                       \
    do {                                                                                           \
        if (!((flags) & MPI_COLL_F_CHECK))                                                         \
            break;                                                                                 \
        int chk_kind_ = (kind) | ((flags) & COLL_F_PERSISTENT ? MPI_COLL_CHK_INIT : 0);            \
        mpi_coll_chk_t *chk = mpi_coll_chk_new((comm), chk_kind_, (root), (op));                  \
        if (!chk) {                                                                                \
            rc = rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;                                          \
            break;                                                                                 \
        }                                                                                          \
        if (rc == MPI_SUCCESS) {                                                                   \
            __VA_ARGS__;                                                                           \
        }                                                                                          \
        rc = mpi_coll_chk_run(chk, (comm), rc);                                                    \
    } while (0)

/* In a kind: the initialization of the persistent form. */
#define MPI_COLL_CHK_INIT (1 << 16)

/* kind COLL_OP_<name> (| MPI_COLL_CHK_INIT); root MPI_COLL_NO_ROOT where
 * the operation has none; op NULL where it has none. */
mpi_coll_chk_t *mpi_coll_chk_new(const obj_comm_t *comm, int kind, int root, const obj_op_t *op);
mpi_coll_sig_t mpi_coll_sig(MPI_Count count, const obj_datatype_t *dt);
/* s[0..n-1] = the signature of count x dt. */
void mpi_coll_chk_fill(mpi_coll_sig_t *s, int n, MPI_Count count, const obj_datatype_t *dt);
/* A rooted operation's signatures: data going to the root (gather,
 * reduce) or from it (bcast, scatter).  The root's side of every pair is
 * rcount x rdt (read at the root only), the other side, of a non-root or
 * of the root's block to itself, ocount x odt (read only where this
 * process sends to or receives from the root: insignificant arguments are
 * never touched). */
void mpi_coll_chk_rooted(mpi_coll_chk_t *c, const obj_comm_t *comm, int root, bool to_root,
                         MPI_Count rcount, const obj_datatype_t *rdt, MPI_Count ocount,
                         const obj_datatype_t *odt);
/* *s += the signature of count x dt, in no particular order (several
 * edges between two processes of a neighbourhood collective). */
void mpi_coll_sig_add(mpi_coll_sig_t *s, MPI_Count count, const obj_datatype_t *dt);
/* Exchange and agree; rc: the local checks' result (returned as it is when
 * an error).  Frees c. */
int mpi_coll_chk_run(mpi_coll_chk_t *c, obj_comm_t *comm, int rc);

#endif
