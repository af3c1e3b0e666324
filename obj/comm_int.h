/*
 * Internals of the communicators (obj/comm*.c, intercomm.c, topo*.c,
 * session.c): internal exchanges, context-id agreement, construction.
 * Not for other layers (they use obj/comm.h).
 */
#ifndef OBJ_COMM_INT_H
#define OBJ_COMM_INT_H

#include "obj/err.h"
#include "obj/comm.h"
#include "obj/group.h"
#include "obj/topo.h"

/* ------------------------------------------------------------ tags
 *
 * Internal messages use negative tags (see comm_xchg.c), in four ranges:
 *   -16 - (seq mod 2^24)            exchanges that every process of a
 *                                   communicator makes in the same order
 *                                   (comm->xchg_seq: split, dup, merge ...)
 *   COMM_TAG_GROUP - (tag mod 2^24) MPI_Comm_create_group, from the user's tag
 *   COMM_TAG_PEER - (tag mod 2^24)  MPI_Intercomm_create's leaders, on the
 *                                   peer communicator, from the user's tag
 *   COMM_TAG_PART - ...             reserved for partitioned communication
 *                                   (pml/pml_part.c)
 * MPI_ANY_TAG is -2: never used.
 */
#define COMM_TAG_SEQ (-16)
#define COMM_TAG_GROUP (-0x02000000)
#define COMM_TAG_PEER (-0x04000000)
#define COMM_TAG_PART (-0x08000000)

static inline int comm_tag_next(obj_comm_t *comm)
{
    return COMM_TAG_SEQ - (int)(comm->xchg_seq++ & 0xffffffu);
}

static inline int comm_tag_user(int base, int tag)
{
    return base - (tag & 0xffffff);
}

/* ------------------------------------------------------------ exchanges (comm_xchg.c) */

typedef struct comm_xchg {
    obj_comm_t *comm;     /* transport */
    unsigned flags;       /* OBJ_P2P_COLL, or 0 on the bootstrap communicator */
    int tag;
    int n, me;            /* participants, my index among them */
    const int *ranks;     /* participant index -> rank in comm (NULL: identity) */
} comm_xchg_t;

/* Every process of the intracommunicator, with the next sequence tag. */
comm_xchg_t comm_xchg_intra(obj_comm_t *comm);
int comm_xchg_send(const comm_xchg_t *x, int idx, const void *buf, size_t bytes);
int comm_xchg_recv(const comm_xchg_t *x, int idx, void *buf, size_t bytes);
int comm_xchg_bcast(const comm_xchg_t *x, int root, void *buf, size_t bytes);
/* all[i*rec .. ] = participant i's `rec` bytes. */
int comm_xchg_allgather(const comm_xchg_t *x, const void *mine, size_t rec, void *all);
int comm_xchg_barrier(const comm_xchg_t *x);
int comm_xchg_sendrecv(obj_comm_t *comm, unsigned flags, int peer, int tag, const void *sbuf,
                       size_t sbytes, void *rbuf, size_t rbytes);
/* One int to / from every participant. */
int comm_xchg_alltoall_counts(const comm_xchg_t *x, const int *send, int *recv);
/* Blocks of elem-byte elements to / from every participant. */
int comm_xchg_alltoallv(const comm_xchg_t *x, const void *sbuf, const int *scounts,
                        const int *sdispls, void *rbuf, const int *rcounts, const int *rdispls,
                        size_t elem);

/* ------------------------------------------------------------ context ids (comm_ctxid.c) */

#define COMM_CTXID_MAX 8192       /* ids 0 .. COMM_CTXID_MAX-1 */
#define COMM_CTXID_WORLD 0
#define COMM_CTXID_SELF 1
#define COMM_CTXID_BOOT 2
#define COMM_CTXID_FIRST_FREE 3

/* Priority classes of agreements (the high bits of comm_agree_t.key). */
#define COMM_KEY(cls, hi, lo) (((uint64_t)(cls) << 62) | ((uint64_t)(hi) << 32) | (uint32_t)(lo))
enum { COMM_KEY_COMM = 0, COMM_KEY_GROUP = 1, COMM_KEY_ICREATE = 2, COMM_KEY_BOOT = 3 };

typedef struct comm_agree {
    comm_xchg_t local;    /* participants of this group (tag included) */
    int root;             /* index of the leader among them */
    bool member;          /* takes the ids (false: only helps the others agree) */
    int nids;             /* 1, or 2 for an intercommunicator (its own + its local_comm's) */
    /* Leader exchange with the other group of an intercommunicator (root only). */
    obj_comm_t *peer_comm;   /* NULL: none */
    unsigned peer_flags;
    int peer_rank, peer_tag;
    /* Priority, identical at every participant (see comm_ctxid.c). */
    uint64_t key;
    uint32_t seq;
} comm_agree_t;

typedef void (*comm_agree_cb_t)(void *arg, int rc, const uint32_t ids[2]);

/* Agree on a.nids context ids free at every participant (blocking). */
int comm_ctxid_agree(const comm_agree_t *a, uint32_t ids[2]);
/* Nonblocking: cb runs once, from the progress engine, when done. */
int comm_ctxid_agree_start(const comm_agree_t *a, comm_agree_cb_t cb, void *arg);
/* Give a context id back (its communicator is gone here). */
void comm_ctxid_release(uint32_t id);
int comm_ctxid_init(void);
void comm_ctxid_fini(void);

/* ------------------------------------------------------------ objects (comm_obj.c) */

/* A new communicator object: refcount 1, errhandler (retained) and session
 * from parent (or fatal / none), nothing else set. */
obj_comm_t *comm_new(const obj_comm_t *parent);
/* Fill an intracommunicator over group (retained) with context id cid and
 * set up pml and coll.  On failure the object is released. */
int comm_setup_intra(obj_comm_t *c, obj_group_t *group, uint32_t cid);
/* Same for an intercommunicator; local_cid is its local_comm's id. */
int comm_setup_inter(obj_comm_t *c, obj_group_t *local, obj_group_t *remote, uint32_t cid,
                     uint32_t local_cid);
/* Take a communicator down now (refcount already 0 or never handed out). */
void comm_destroy(obj_comm_t *c);
/* Merge the user's hints in info into *dst (created when needed): only
 * those the communicator supports (obj/comm.c).  comm_info_copy merges all
 * (another communicator's hints, implementation-set ones included). */
int comm_info_merge(obj_info_t **dst, const obj_info_t *info);
int comm_info_copy(obj_info_t **dst, const obj_info_t *info);
/* Priority key of an agreement among all processes of comm. */
uint64_t comm_key_of(const obj_comm_t *comm);

/* Agreement over all processes of comm (both groups of an intercommunicator),
 * member when `member`, with the next sequence tags. */
void comm_agree_over(obj_comm_t *comm, bool member, comm_agree_t *a);

/* Attach the layers above to a new communicator (c->active from then on),
 * detach them from one that goes (comm_layers.c); the point-to-point
 * operations of the exchanges (NULL before the pml is up). */
int comm_layers_attach(obj_comm_t *c);
void comm_layers_detach(obj_comm_t *c);
const obj_comm_p2p_t *comm_p2p(void);

/* ------------------------------------------------------------ splitting (comm_split.c) */

/* MPI_Comm_create on an intracommunicator (comm_create.c). */
int comm_create_intra(obj_comm_t *comm, obj_group_t *group, obj_comm_t **out);
/* Set one hint of a communicator's info. */
int comm_set_hint(obj_comm_t *c, const char *key, const char *value);

/* Intercommunicator helpers (intercomm.c).  Both groups' records, in group
 * order (local first: all[0 .. size-1] local, then remote). */
int intercomm_allgather(obj_comm_t *inter, const void *mine, size_t rec, void *all);
/* Every process passes a group of its side (the same on a side); each
 * gets the other side's. */
int intercomm_swap_group(obj_comm_t *inter, const obj_group_t *mine, obj_group_t **theirs);

/* Session constructors (intercomm.c): hash of a string tag; the agreement
 * among the members of group (world ranks `world`) on the bootstrap
 * communicator; a new communicator with the given errhandler and hints. */
uint64_t comm_string_hash(const char *s);
void comm_agree_boot(const obj_group_t *group, const int *world, const char *stringtag,
                     comm_agree_t *a);
obj_comm_t *comm_new_for_session(obj_session_t *session, obj_errhandler_t *eh,
                                 const obj_info_t *info);

/* Hardware-guided split colors (comm_hw.c).  *color gets this process's
 * color for the hwloc object type named by `type` (MPI_UNDEFINED when the
 * process is not inside one such object); MPI_ERR_ARG-free: unknown types
 * give MPI_UNDEFINED with *known = false. */
int comm_hw_color(const char *type, int *color, bool *known);
void comm_hw_fini(void);
/* Names of the levels tried by MPI_COMM_TYPE_HW_UNGUIDED, top down. */
extern const char *const comm_hw_levels[];

/* ------------------------------------------------------------ topologies (topo*.c) */

/* Copy of n ints (NULL for n <= 0); *ok = false when out of memory. */
int *topo_dup_ints(const int *src, int n, bool *ok);
/* A communicator of the first n processes of comm_old (NULL at the others). */
int topo_comm_first(obj_comm_t *comm_old, int n, obj_comm_t **out);
/* Attach a Cartesian topology (arrays copied) to c, whose rank gives the
 * coordinates. */
int topo_cart_attach(obj_comm_t *c, int ndims, const int dims[], const int periods[]);

#endif
