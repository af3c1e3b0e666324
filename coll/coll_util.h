/*
 * Helpers shared by the collective components: buffers of any memory type,
 * all-to-all block lists, batches of point-to-point requests, reductions.
 *
 * REDUCTIONS.  coll_red_init checks (op, datatype) with
 * obj_op_check_datatype (obj/op.h: a predefined operation takes the
 * predefined types of its classes, and derived types made of one such type
 * only, dt->basic; anything else is MPI_ERR_OP) and describes the
 * temporaries an algorithm reduces in:
 *   - predefined op: dense arrays of the basic type (rdt = dt->basic, in
 *     its native layout: the MINLOC/MAXLOC pairs as the C structs the
 *     kernels read), `factor` basic elements per user element; user buffers
 *     are converted with type-to-type copies; accel_reduce(op, kind) does
 *     the arithmetic where the temporaries live;
 *   - user op (MPI_Op_create / _c): temporaries in the user datatype's
 *     layout; the user function is called on them (obj_op_reduce: pieces of
 *     at most INT_MAX elements for MPI_User_function).  It is host code, so
 *     these temporaries are host memory; device operands are staged there
 *     (bytes move, the reduction runs where the user's code can run).
 * With a predefined op, when a user buffer is device memory, temporaries
 * are device memory of the same device (accel_alloc_device) and
 * accel_reduce runs there: device data are never reduced on a host copy.
 * apply(in, inout) computes inout = in op inout (MPI's operand order), so a
 * rank-ordered reduction x0 op x1 op ... op x(n-1) is built from the top:
 * acc = x(n-1); acc = x(i) op acc for i = n-2 .. 0.
 */
#ifndef COLL_COLL_UTIL_H
#define COLL_COLL_UTIL_H

#include "coll/coll.h"
#include "obj/err.h"
#include "base/typekind.h"
#include "base/op.h"
#include "obj/topo.h"
#include "accel/accel.h"

/* ------------------------------------------------------------ datatypes */

/* MPI_BYTE. */
obj_datatype_t *coll_byte_type(void);

/* Address of element i of a buffer of dt (i * extent bytes further). */
static inline void *coll_elem(const void *buf, const obj_datatype_t *dt, MPI_Count i)
{
    return (char *)buf + i * dt->extent;
}

/* ------------------------------------------------------------ buffers */

/* Whether count elements of dt at buf are device (or managed) memory. */
bool coll_is_device_any(const void *buf, MPI_Count count, const obj_datatype_t *dt);
static inline bool coll_is_device(const void *buf, MPI_Count count, const obj_datatype_t *dt)
{
    /* no device component active (the common case): inline, no call */
    return RAIL_UNLIKELY(accel_any_device_active) && coll_is_device_any(buf, count, dt);
}

/* Local type-to-type copy, on any memory (MPI_ERR_TRUNCATE with a message
 * when the source holds more than the destination). */
int coll_copy(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
              MPI_Count rcount, obj_datatype_t *rdt);
/* The same where the caller knows whether either buffer is device memory
 * (dev): no memory-type lookups, which where a device component is active
 * cost a small operation more than its copy (a small allreduce made six). */
int coll_copy_as(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                 MPI_Count rcount, obj_datatype_t *rdt, bool dev);

/* A temporary of count elements of dt (span true_extent + (count-1) *
 * extent), on the device of `like` when device is set.  Returns the buffer
 * address to use with dt (true_lb taken into account); *mem gets what to
 * free with coll_tmp_free.  NULL with *mem NULL when out of memory. */
void *coll_tmp_alloc(obj_datatype_t *dt, MPI_Count count, bool device, const void *like,
                     void **mem);
void coll_tmp_free(void *mem, bool device);

/* Host temporaries of n bytes (64-byte aligned) from a cache of buffers
 * kept between calls, so that large ones do not fault in on every call
 * (coll_scratch.c); coll_tmp_alloc takes its host memory here.  Give them
 * back with coll_scratch_put (NULL: nothing). */
void *coll_scratch_get(size_t n);
void coll_scratch_put(void *p);
/* Free the cached buffers (the last communicator with collectives went). */
void coll_scratch_drop(void);
int coll_scratch_register_pvars(void);
extern size_t coll_scratch_max;

/* ------------------------------------------------------------ blocks */

/* The blocks of an all-to-all pattern: block i (of peer i: the remote group
 * of an intercommunicator) is counts[i] elements of dts[i] at buf +
 * displs[i] (bytes). */
typedef struct coll_blocks {
    const void *buf;
    const MPI_Count *counts;
    const MPI_Aint *displs;
    obj_datatype_t *const *dts;
    void *mem;                      /* what coll_blocks_make allocated */
} coll_blocks_t;

/* Blocks of the vector forms: counts[i] (counts NULL: count) elements of dt
 * at displs[i] * extent (displs NULL: i * stride * extent). */
int coll_blocks_make(coll_blocks_t *b, const void *buf, int n, MPI_Count count,
                     const MPI_Count *counts, const MPI_Aint *displs, MPI_Aint stride,
                     obj_datatype_t *dt);
void coll_blocks_free(coll_blocks_t *b);
static inline void *coll_block(const coll_blocks_t *b, int i)
{
    return (char *)b->buf + b->displs[i];
}

/* ------------------------------------------------------------ neighbourhoods */

/* The topology of a communicator, or MPI_ERR_TOPOLOGY with a message. */
int coll_topo(const obj_comm_t *comm, const obj_topo_t **t);

/* Which send block to post k-th.  With one tag per call, messages between
 * two processes match in the order they are posted; on a Cartesian
 * topology a peer can be both the -1 and the +1 neighbour of a dimension
 * (periodic, size 1 or 2), and what we send to our +1 neighbour belongs in
 * its -1 block: so in each dimension the send to +1 is posted first, the
 * receive from -1 first. */
static inline int coll_nbr_send_block(const obj_topo_t *t, int k)
{
    return t->kind == MPI_CART ? k ^ 1 : k;
}

/* ------------------------------------------------------------ requests */

/* A batch of pml requests posted together and waited for together. */
typedef struct coll_reqs {
    int n, cap;
    unsigned send_flags;   /* pml flags of the sends besides PML_COLL (0 after init) */
    bool check;            /* some receive wants its whole length (want) */
    obj_request_t **r;
    size_t *want;          /* per request: bytes a receive wants, or SIZE_MAX */
    obj_request_t *inl[16];
    size_t want_inl[16];
} coll_reqs_t;

void coll_reqs_init(coll_reqs_t *b);
int coll_reqs_isend(coll_reqs_t *b, const void *buf, MPI_Count count, obj_datatype_t *dt, int peer,
                    int tag, obj_comm_t *comm);
int coll_reqs_irecv(coll_reqs_t *b, void *buf, MPI_Count count, obj_datatype_t *dt, int peer,
                    int tag, obj_comm_t *comm);
/* ... a receive whose message must fill it (coll_reqs_wait reports a
 * shorter one as MPI_ERR_COUNT: type signatures that differ) */
int coll_reqs_irecv_all(coll_reqs_t *b, void *buf, MPI_Count count, obj_datatype_t *dt, int peer,
                        int tag, obj_comm_t *comm);
/* Wait for all and forget them (send_flags stay); the first error (rc: one of the caller's
 * that happened while posting, waited past so nothing is left behind). */
int coll_reqs_wait(coll_reqs_t *b, int rc);

/* Blocking send / receive in the collective context. */
int coll_send(const void *buf, MPI_Count count, obj_datatype_t *dt, int peer, int tag,
              obj_comm_t *comm);
int coll_recv(void *buf, MPI_Count count, obj_datatype_t *dt, int peer, int tag, obj_comm_t *comm);
/* A receiver's check of the bytes it got from peer (-1: the root) against
 * its own arguments: MPI_ERR_TRUNCATE (more), MPI_ERR_COUNT (less: the
 * type signatures differ, erroneous), or success. */
int coll_check_length(int peer, size_t got, size_t mine);
/* rc (a variable of the caller) keeps its first error; call always runs:
 * an algorithm that must still make every send and receive after an error
 * (counts that differ between processes, erroneous: no other process may
 * wait for ever). */
#define COLL_KEEP(call)                                                                            \
    do {                                                                                           \
        int keep_rc_ = (call);                                                                     \
        if (rc == MPI_SUCCESS)                                                                     \
            rc = keep_rc_;                                                                         \
    } while (0)
/* coll_recv that also wants the whole count: a shorter message is
 * MPI_ERR_COUNT (coll_check_length). */
int coll_recv_all(void *buf, MPI_Count count, obj_datatype_t *dt, int peer, int tag,
                  obj_comm_t *comm);

/* The class of a failed collective receive, with a message. */
int coll_recv_error(int rc);

/* ------------------------------------------------------------ reductions */

typedef struct coll_red {
    obj_op_t *op;
    rail_op_t rop;                  /* RAIL_OP_NONE: user function */
    obj_datatype_t *udt;            /* the user's datatype ... */
    MPI_Count count;                /* ... and element count */
    obj_datatype_t *rdt;            /* element type of the temporaries */
    MPI_Count factor;               /* rdt elements per udt element */
    bool device;                    /* temporaries in device memory */
    const void *like;               /* a device buffer, for allocations */
} coll_red_t;

/* b1, b2: the user buffers involved (NULL / MPI_IN_PLACE ignored), for the
 * memory type.  MPI_ERR_OP when op does not apply to dt. */
int coll_red_init(coll_red_t *r, obj_op_t *op, obj_datatype_t *dt, MPI_Count count,
                  const void *b1, const void *b2);
/* A temporary for n user elements (rdt elements: n * factor). */
void *coll_red_tmp(const coll_red_t *r, MPI_Count n, void **mem);
void coll_red_tmp_free(const coll_red_t *r, void *mem);
/* tmp (n * factor rdt elements) <-> user buffer (n udt elements). */
int coll_red_load(const coll_red_t *r, void *tmp, const void *ubuf, MPI_Count n);
int coll_red_store(const coll_red_t *r, void *ubuf, const void *tmp, MPI_Count n);
/* inout = in op inout on temporaries of n user elements. */
int coll_red_apply(const coll_red_t *r, const void *in, void *inout, MPI_Count n);
/* Element i (in user elements) of a temporary. */
static inline void *coll_red_at(const coll_red_t *r, void *tmp, MPI_Count i)
{
    return (char *)tmp + i * r->factor * r->rdt->extent;
}

#endif
