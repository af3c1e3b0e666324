/*
 * Communicators (front-end view).  The struct grows with the layers below it
 * (pml matching state, coll tables); the fields here are what argument checks
 * and the environment need.
 *
 * LIFETIME.  A communicator is reference counted (obj.refcount).  The user's
 * handle holds one reference; MPI_Comm_free drops it after running the
 * attribute delete callbacks.  Anything that must outlive a user's free
 * (a pending request, a nonblocking collective schedule) takes its own with
 * obj_comm_retain and drops it with obj_comm_release.  The last release
 * takes the communicator down: coll_comm_release, pml_comm_destroy, and the
 * context id goes back to the pool (mpi/comm_ctxid.c).  Predefined
 * communicators are never taken down by a release.
 *
 * INTERCOMMUNICATORS have is_inter set, group = local group, remote_group =
 * the other one, rank = rank in the local group, remote_size = size of the
 * remote group; point-to-point ranks name members of the remote group.  Each
 * has a hidden intracommunicator over its local group (local_comm, its own
 * context id) for operations within the local group (context-id agreement,
 * the local part of intercommunicator collectives).
 */
#ifndef OBJ_COMM_H
#define OBJ_COMM_H

#include "obj/obj.h"
#include "obj/group.h"

struct obj_topo;

enum {
    OBJ_COMM_F_PREDEF = 1 << 0,     /* MPI_COMM_WORLD / MPI_COMM_SELF */
    OBJ_COMM_F_INTERNAL = 1 << 1,   /* never seen by the user (local_comm, bootstrap) */
};

struct MPI_ABI_Comm {
    obj_t obj;
    int rank;                 /* my rank in the local group */
    int size;                 /* size of the local group */
    int remote_size;          /* intercommunicator: size of the remote group, else == size */
    int is_inter;
    uint32_t context_id;
    obj_group_t *group;
    obj_group_t *remote_group;
    obj_errhandler_t *errhandler;
    struct obj_attr_list *attrs;
    obj_info_t *info;         /* hints the user set (NULL: none) */
    char name[MPI_MAX_OBJECT_NAME];
    struct pml_comm *pml;     /* point-to-point state (pml/pml.h) */
    struct coll_comm *coll;   /* collective function table (coll/coll.h) */
    /* Communicator layer (mpi/comm*.c, intercomm.c, topo*.c). */
    struct obj_topo *topo;    /* process topology (obj/topo.h), NULL if none */
    obj_comm_t *local_comm;   /* intercommunicator: intracommunicator of the local group */
    obj_session_t *session;   /* session it derives from, NULL in the World model */
    uint32_t xchg_seq;        /* internal exchanges on this communicator (comm_xchg.c) */
    struct part_seq *part_seq; /* partitioned initializations per peer and tag (p2p_part.c) */
    unsigned flags;           /* MPI_COMM_F_* */
    bool active;              /* pml and coll are set up (comm_obj.c) */
};

static inline int obj_comm_size_of(const obj_comm_t *c) { return c->size; }
static inline int obj_comm_rank_of(const obj_comm_t *c) { return c->rank; }
/* Size of the group that rank arguments of point-to-point calls refer to. */
static inline int obj_comm_peer_size_of(const obj_comm_t *c) { return c->remote_size; }
static inline int obj_comm_is_inter(const obj_comm_t *c) { return c->is_inter; }

/* Largest valid tag (value of the MPI_TAG_UB attribute). */
#define OBJ_TAG_UB 0x7fffffff

/* References for layers that must keep a communicator alive (see above). */
void obj_comm_retain(obj_comm_t *comm);
void obj_comm_release(obj_comm_t *comm);

/* The hidden world-wide communicator used to bootstrap communicators made
 * without a parent (MPI_Comm_create_from_group); NULL when MPI is down. */
obj_comm_t *obj_comm_bootstrap(void);

#endif
