/*
 * Communicators: the object, its references, the layers above that keep
 * state per communicator, and the constructors the front end calls
 * (obj/comm_*.c, intercomm.c, topo*.c, session.c).
 *
 * LIFETIME.  A communicator is reference counted (obj.refcount).  The user's
 * handle holds one reference; MPI_Comm_free drops it after running the
 * attribute delete callbacks.  Anything that must outlive a user's free
 * (a pending request, a nonblocking collective schedule) takes its own with
 * obj_comm_retain and drops it with obj_comm_release.  The last release
 * takes the communicator down: the layers above detach (coll, then pml),
 * and the context id goes back to the pool (obj/comm_ctxid.c).  Predefined
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
#include "obj/request.h"

struct obj_topo;

enum {
    OBJ_COMM_F_PREDEF = 1 << 0,     /* MPI_COMM_WORLD / MPI_COMM_SELF */
    OBJ_COMM_F_INTERNAL = 1 << 1,   /* never seen by the user (local_comm, bootstrap) */
    OBJ_COMM_F_BOOT = 1 << 2,       /* the bootstrap communicator: point-to-point only */
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
    /* State of the layers above (obj_comm_layer_t), opaque here. */
    struct pml_comm *pml;     /* point-to-point state */
    struct coll_comm *coll;   /* collective function table */
    /* Communicator layer (obj/comm*.c, intercomm.c, topo*.c). */
    struct obj_topo *topo;    /* process topology (obj/topo.h), NULL if none */
    obj_comm_t *local_comm;   /* intercommunicator: intracommunicator of the local group */
    obj_session_t *session;   /* session it derives from, NULL in the World model */
    uint32_t xchg_seq;        /* internal exchanges on this communicator (comm_xchg.c) */
    unsigned flags;           /* OBJ_COMM_F_* */
    bool active;              /* the layers above are attached (comm_layers.c) */
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
/* MPI_COMM_WORLD's and MPI_COMM_SELF's objects; NULL when MPI is down. */
obj_comm_t *obj_comm_world(void);
obj_comm_t *obj_comm_self(void);
/* The predefined communicators, once the layers above are registered
 * (MPI_Init, the first session); taken down at the last finalize. */
int obj_comm_predef_init(void);
void obj_comm_predef_fini(void);

/* ------------------------------------------------------------ layers above
 *
 * The pml and the collective framework keep state per communicator.  Each
 * registers a layer when it comes up (pml_init, coll_init): attach runs for
 * every communicator the object layer makes, in the order the layers were
 * added, and detach before the communicator goes, in reverse order; a
 * communicator whose flags meet skip_flags is not handed to that layer.
 * attach records a detail message (obj_errf) when it fails.  attach may run
 * inside the progress engine (completion of MPI_Comm_idup): it must not
 * communicate or wait. */
typedef struct obj_comm_layer {
    const char *name;
    unsigned skip_flags;
    int (*attach)(obj_comm_t *c);
    void (*detach)(obj_comm_t *c);
} obj_comm_layer_t;

int obj_comm_layer_add(const obj_comm_layer_t *layer);
/* Forget the layers and the point-to-point operations (the library is down). */
void obj_comm_layers_clear(void);

/* Point-to-point messages for the object layer's own exchanges (context-id
 * agreement, split, intercommunicator construction): bytes between
 * processes of a communicator, in its collective context when flags has
 * OBJ_P2P_COLL (private tags) or its point-to-point context otherwise.
 * wait completes and releases a request (its status in *st, if not NULL)
 * and returns its error; free lets one complete on its own.  The pml hands these over at its init. */
#define OBJ_P2P_COLL 1u
typedef struct obj_comm_p2p {
    int (*isend)(const void *buf, size_t bytes, int dst, int tag, obj_comm_t *comm,
                 unsigned flags, obj_request_t **req);
    int (*irecv)(void *buf, size_t bytes, int src, int tag, obj_comm_t *comm, unsigned flags,
                 obj_request_t **req);
    int (*wait)(obj_request_t *req, obj_req_status_t *st);
    void (*free)(obj_request_t *req);
} obj_comm_p2p_t;

void obj_comm_set_p2p(const obj_comm_p2p_t *p2p);

/* ------------------------------------------------------------ the front end's calls
 *
 * What MPI_Comm_* and MPI_Intercomm_* do once their arguments are checked
 * and their handles looked up.  Each is collective like the MPI call; the
 * new communicator inherits the parent's errhandler; *out is NULL where
 * the call gives MPI_COMM_NULL. */
int obj_comm_dup(obj_comm_t *comm, const obj_info_t *info, bool with_info, obj_comm_t **out);
/* The new communicator exists at once (*out); it may be used when *req
 * completes (the context id is agreed in the progress engine). */
int obj_comm_idup(obj_comm_t *comm, const obj_info_t *info, bool with_info, obj_comm_t **out,
                  obj_request_t **req);
/* On an intra- or intercommunicator. */
int obj_comm_create(obj_comm_t *comm, obj_group_t *group, obj_comm_t **out);
/* Collective over group's members only (an intracommunicator). */
int obj_comm_create_group(obj_comm_t *comm, obj_group_t *group, int tag, obj_comm_t **out);
/* By (color, key) (MPI_UNDEFINED: no communicator), on an intra- or an
 * intercommunicator; an invalid color still takes part (MPI_ERR_ARG). */
int obj_comm_split(obj_comm_t *comm, int color, int key, obj_comm_t **out);
int obj_comm_split_type(obj_comm_t *comm, int split_type, int key, const obj_info_t *info,
                        obj_comm_t **out);
int obj_intercomm_create(obj_comm_t *local_comm, int local_leader, obj_comm_t *peer_comm,
                         int remote_leader, int tag, obj_comm_t **out);
int obj_intercomm_create_from_groups(obj_group_t *local_group, int local_leader,
                                     obj_group_t *remote_group, int remote_leader,
                                     const char *stringtag, const obj_info_t *info,
                                     obj_errhandler_t *eh, obj_comm_t **out);
int obj_intercomm_merge(obj_comm_t *inter, int high, obj_comm_t **out);
/* The user's free (MPI_ERR_COMM for a predefined communicator): the
 * attributes' delete callbacks, then the handle's reference. */
int obj_comm_free(obj_comm_t *comm);
/* Every process of comm arrives, then the user's free. */
int obj_comm_disconnect(obj_comm_t *comm);
/* MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL. */
int obj_comm_compare(const obj_comm_t *a, const obj_comm_t *b);
/* Hints not named in info keep their values (MPI-4.1 7.4.4). */
int obj_comm_set_info(obj_comm_t *comm, const obj_info_t *info);
/* A new info with the hints in use: the supported ones (with their
 * defaults where not set) and those the implementation set. */
int obj_comm_get_info(const obj_comm_t *comm, obj_info_t **out);
/* MPI_Get_hw_resource_info: this process's place in hwloc's levels. */
int obj_comm_hw_resource_info(obj_info_t **out);

#endif
