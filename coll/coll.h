/*
 * coll: the collective framework.
 *
 * COMPONENTS AND MODULES.  A component is compiled in and listed in
 * coll_components[].  For each new communicator (coll_comm_select, called
 * by the object layer after the pml's set-up, see coll_init) every component allowed
 * by the parameter `coll` is asked comm_query(comm, &priority); it returns
 * a module (a table of functions, NULL where it does not offer an
 * operation) or NULL when it cannot serve this communicator.  Each
 * operation is then served by the module of highest priority that offers
 * it (ties: the earlier component in `coll`), so a communicator may use
 * tuned for bcast, sm for barrier and basic for the rest.  An operation no
 * module offers answers MPI_ERR_UNSUPPORTED_OPERATION naming itself.
 * Components: han (55, hierarchical: a node's communicator, then one
 * process per node), sm (50, one node's shared memory), tuned (30, point-to-point
 * algorithms chosen by size), basic (10, everything: the reference) and nbc
 * (5, everything through the schedule engine); coll/README.md.
 * Selection must come out the same on every process of a communicator
 * (parameters are the same everywhere; a component that looks at anything
 * else must agree with its peers).
 *
 * OPERATIONS.  COLL_OPS is the one list of the collective operations, with
 * their parameters (the big-count binding of MPI-4.1 with objects in place
 * of handles, communicator last).  It generates the table (coll_fns_t), the
 * names (coll_op_name, railinfo), the selection loop and the dispatchers
 * below.  Each operation has two entries: `name`, the blocking form, and
 * `iname`, the nonblocking form, which with COLL_F_PERSISTENT creates the
 * inactive persistent request of MPI_<Name>_init instead (started by
 * MPI_Start, restartable; freed by MPI_Request_free).
 *
 * ARGUMENTS follow mpi/binding/README.md: MPI_IN_PLACE is passed as is;
 * arguments that are not significant at this process are NULL (root-only
 * arguments at a non-root, the send side with MPI_IN_PLACE, everything at
 * an intercommunicator process that passes root == MPI_PROC_NULL).
 * Alltoallw and neighbor_alltoallw take arrays of datatype objects (the
 * front end looks the handles up).  Neighbourhood operations take the
 * big-count arrays (MPI_Count counts, MPI_Aint displacements).  Buffers may
 * be device memory (accel): move them with the pml, reduce them with
 * accel_reduce, copy them with rail_dt_copy_cb + accel_copy.
 *
 * TAGS.  Collectives run in the communicator's collective context (pml
 * flag PML_COLL), where tags are private.  Every collective call on a
 * communicator - blocking, nonblocking, or the *_init of a persistent one -
 * takes the next number of the communicator's sequence with coll_tag_next()
 * (processes call collectives in the same order, so they agree), and all
 * its messages use that tag.  Concurrent collectives on a communicator thus
 * never match each other's messages, nor point-to-point ones.  A persistent
 * request keeps the tag of its *_init for every start; messages of two
 * starts never mix, because a start begins after the previous one completed
 * locally and the pml keeps messages of one (source, tag) in order.  Within
 * one call, an algorithm that sends a peer several messages must receive
 * them in the order they were sent.  Tags wrap after 2^31 calls.
 *
 * ERRORS: every function returns MPI_SUCCESS or an MPI error class after
 * setting a detail message with obj_errf (mpi/mpi_err.h).
 */
#ifndef COLL_COLL_H
#define COLL_COLL_H

#include "base/rail.h"
#include "obj/comm.h"
#include "obj/datatype.h"
#include "obj/op.h"
#include "obj/request.h"

typedef struct coll_module coll_module_t;

#define COLL_UNPAREN(...) __VA_ARGS__

/* X(name, (parameters), (arguments)) for every collective operation. */
#define COLL_OPS(X)                                                                                \
    X(barrier, (obj_comm_t *comm), (comm))                                                         \
    X(bcast, (void *buf, MPI_Count count, obj_datatype_t *dt, int root, obj_comm_t *comm),         \
      (buf, count, dt, root, comm))                                                                \
    X(gather,                                                                                      \
      (const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,     \
       obj_datatype_t *rdt, int root, obj_comm_t *comm),                                           \
      (sbuf, scount, sdt, rbuf, rcount, rdt, root, comm))                                          \
    X(gatherv,                                                                                     \
      (const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,                       \
       const MPI_Count rcounts[], const MPI_Aint displs[], obj_datatype_t *rdt, int root,         \
       obj_comm_t *comm),                                                                          \
      (sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm))                                 \
    X(scatter,                                                                                     \
      (const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,     \
       obj_datatype_t *rdt, int root, obj_comm_t *comm),                                           \
      (sbuf, scount, sdt, rbuf, rcount, rdt, root, comm))                                          \
    X(scatterv,                                                                                    \
      (const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[], obj_datatype_t *sdt, \
       void *rbuf, MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm),            \
      (sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm))                                 \
    X(allgather,                                                                                   \
      (const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,     \
       obj_datatype_t *rdt, obj_comm_t *comm),                                                     \
      (sbuf, scount, sdt, rbuf, rcount, rdt, comm))                                                \
    X(allgatherv,                                                                                  \
      (const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,                       \
       const MPI_Count rcounts[], const MPI_Aint displs[], obj_datatype_t *rdt, obj_comm_t *comm), \
      (sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm))                                       \
    X(alltoall,                                                                                    \
      (const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,     \
       obj_datatype_t *rdt, obj_comm_t *comm),                                                     \
      (sbuf, scount, sdt, rbuf, rcount, rdt, comm))                                                \
    X(alltoallv,                                                                                   \
      (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], obj_datatype_t *sdt, \
       void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], obj_datatype_t *rdt,      \
       obj_comm_t *comm),                                                                          \
      (sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm))                            \
    X(alltoallw,                                                                                   \
      (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],                     \
       obj_datatype_t *const sdts[], void *rbuf, const MPI_Count rcounts[],                       \
       const MPI_Aint rdispls[], obj_datatype_t *const rdts[], obj_comm_t *comm),                 \
      (sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm))                          \
    X(reduce,                                                                                      \
      (const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt, obj_op_t *op, int root, \
       obj_comm_t *comm),                                                                          \
      (sbuf, rbuf, count, dt, op, root, comm))                                                     \
    X(allreduce,                                                                                   \
      (const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt, obj_op_t *op,           \
       obj_comm_t *comm),                                                                          \
      (sbuf, rbuf, count, dt, op, comm))                                                           \
    X(reduce_scatter,                                                                              \
      (const void *sbuf, void *rbuf, const MPI_Count rcounts[], obj_datatype_t *dt, obj_op_t *op, \
       obj_comm_t *comm),                                                                          \
      (sbuf, rbuf, rcounts, dt, op, comm))                                                         \
    X(reduce_scatter_block,                                                                        \
      (const void *sbuf, void *rbuf, MPI_Count rcount, obj_datatype_t *dt, obj_op_t *op,          \
       obj_comm_t *comm),                                                                          \
      (sbuf, rbuf, rcount, dt, op, comm))                                                          \
    X(scan,                                                                                        \
      (const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt, obj_op_t *op,           \
       obj_comm_t *comm),                                                                          \
      (sbuf, rbuf, count, dt, op, comm))                                                           \
    X(exscan,                                                                                      \
      (const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt, obj_op_t *op,           \
       obj_comm_t *comm),                                                                          \
      (sbuf, rbuf, count, dt, op, comm))                                                           \
    X(neighbor_allgather,                                                                          \
      (const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,     \
       obj_datatype_t *rdt, obj_comm_t *comm),                                                     \
      (sbuf, scount, sdt, rbuf, rcount, rdt, comm))                                                \
    X(neighbor_allgatherv,                                                                         \
      (const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,                       \
       const MPI_Count rcounts[], const MPI_Aint displs[], obj_datatype_t *rdt, obj_comm_t *comm), \
      (sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm))                                       \
    X(neighbor_alltoall,                                                                           \
      (const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,     \
       obj_datatype_t *rdt, obj_comm_t *comm),                                                     \
      (sbuf, scount, sdt, rbuf, rcount, rdt, comm))                                                \
    X(neighbor_alltoallv,                                                                          \
      (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], obj_datatype_t *sdt, \
       void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], obj_datatype_t *rdt,      \
       obj_comm_t *comm),                                                                          \
      (sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm))                            \
    X(neighbor_alltoallw,                                                                          \
      (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],                     \
       obj_datatype_t *const sdts[], void *rbuf, const MPI_Count rcounts[],                       \
       const MPI_Aint rdispls[], obj_datatype_t *const rdts[], obj_comm_t *comm),                 \
      (sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm))

/* Flags of the nonblocking entries. */
enum {
    COLL_F_PERSISTENT = 1 << 0,   /* MPI_<Name>_init: create inactive, restartable */
};

/* Function types: coll_<name>_fn_t (blocking) and coll_i<name>_fn_t
 * (nonblocking / persistent: *req receives the request, kind OBJ_REQ_COLL,
 * started unless COLL_F_PERSISTENT; info is the *_init's info or NULL). */
#define COLL_X_FNTYPES(name, params, args)                                                         \
    typedef int (*coll_##name##_fn_t)(COLL_UNPAREN params, coll_module_t *module);                \
    typedef int (*coll_i##name##_fn_t)(COLL_UNPAREN params, unsigned flags, obj_info_t *info,     \
                                       obj_request_t **req, coll_module_t *module);
COLL_OPS(COLL_X_FNTYPES)
#undef COLL_X_FNTYPES

/* A table of functions (NULL: not offered). */
typedef struct coll_fns {
#define COLL_X_FIELDS(name, params, args)                                                          \
    coll_##name##_fn_t name;                                                                       \
    coll_i##name##_fn_t i##name;
    COLL_OPS(COLL_X_FIELDS)
#undef COLL_X_FIELDS
} coll_fns_t;

/* Operation numbers: COLL_OP_<name> (blocking), COLL_OP_I<name>... are
 * 2*k and 2*k+1 in the order of COLL_OPS. */
enum coll_op_index {
#define COLL_X_ENUM(name, params, args) COLL_OP_##name, COLL_OP_i##name,
    COLL_OPS(COLL_X_ENUM)
#undef COLL_X_ENUM
    COLL_OP_COUNT
};

/* "bcast", "ibcast", ...; NULL outside 0..COLL_OP_COUNT-1. */
const char *coll_op_name(int op);

/* ------------------------------------------------------------ components */

struct coll_module {
    const struct coll_component *component;   /* set by comm_query */
    coll_fns_t fns;
    /* Called by coll_comm_release (NULL: nothing to do); frees the module. */
    void (*release)(coll_module_t *module, obj_comm_t *comm);
};

typedef struct coll_component {
    const char *name;
    /* Register the component's parameters (priority included). */
    int (*register_params)(void);
    /* A module for comm and its priority (>= 0), or NULL (not for this
     * communicator; errors are reported as NULL with a verbose line). */
    coll_module_t *(*comm_query)(obj_comm_t *comm, int *priority);
} coll_component_t;

/* Compiled-in components, NULL-terminated (railinfo lists them). */
extern const coll_component_t *const coll_components[];

/* Per-communicator state (comm->coll). */
struct coll_comm {
    coll_fns_t fns;                         /* the chosen function of each operation */
    coll_module_t *mods[COLL_OP_COUNT];     /* ... and its module */
    coll_module_t **modules;                /* every module queried successfully */
    int n_modules;
    uint32_t seq;                           /* coll_tag_next */
};

/* ------------------------------------------------------------ setup */

/* Parameters: coll (components to use, "a,b" or "^a,b"), coll_verbose, and
 * each component's own (coll_<component>_priority, ...).  Called from
 * mpi/params.c. */
int coll_register_params(void);
/* Choose the functions of a new communicator (after pml_comm_create), and
 * undo it before pml_comm_destroy. */
int coll_comm_select(obj_comm_t *comm);
void coll_comm_release(obj_comm_t *comm);
/* Hand coll_comm_select / coll_comm_release to the object layer, which
 * calls them for every communicator it makes and takes down (but the
 * bootstrap communicator); at MPI_Init, after pml_init. */
int coll_init(void);

extern int coll_verbose;
/* coll_check: blocking collectives and persistent initializations agree
 * on their arguments first (mpi/coll_api.h). */
extern bool coll_check;

/* The next module below `module` on comm (selection order: priority, then
 * the order in `coll`) that offers operation op (COLL_OP_<name>), or NULL.
 * A module that cannot serve one call (a user operation, device buffers)
 * hands it on, for instance
 *     coll_module_t *m = coll_next_module(comm, COLL_OP_allreduce, module);
 *     return m->fns.allreduce(sbuf, rbuf, count, dt, op, comm, m);
 * The decision must be the same on every process of the call.  Every
 * module that offers an operation stays attached to the communicator
 * (released by coll_comm_release), chosen for something or not. */
coll_module_t *coll_next_module(obj_comm_t *comm, int op, const coll_module_t *module);

/* Tag of a new collective call on comm (see TAGS above). */
static inline int coll_tag_next(obj_comm_t *comm)
{
    return (int)(comm->coll->seq++ & 0x7fffffffu);
}

/* ------------------------------------------------------------ entry points */

/*
 * Blocking internal entry points, for the front end and for other layers
 * (communicator creation agrees on context ids with coll_allreduce).  Each
 * dispatches through comm->coll:
 *     int coll_barrier(obj_comm_t *comm);
 *     int coll_bcast(void *buf, MPI_Count count, obj_datatype_t *dt, int root,
 *                    obj_comm_t *comm);
 *     int coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
 *                        obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm);
 *     int coll_allgather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt,
 *                        void *rbuf, MPI_Count rcount, obj_datatype_t *rdt,
 *                        obj_comm_t *comm);
 *     ... one per COLL_OPS entry, same parameters.
 * Nonblocking / persistent: coll_i<name>(<parameters>, unsigned flags,
 * obj_info_t *info, obj_request_t **req).
 */
#define COLL_X_DISPATCH(name, params, args)                                                        \
    int coll_##name params;                                                                        \
    int coll_i##name(COLL_UNPAREN params, unsigned flags, obj_info_t *info, obj_request_t **req);
COLL_OPS(COLL_X_DISPATCH)
#undef COLL_X_DISPATCH

#endif
