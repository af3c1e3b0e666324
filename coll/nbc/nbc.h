/*
 * coll nbc: schedules, the engine of nonblocking and persistent collectives.
 *
 * A schedule is a list of rounds; a round is a list of actions: local ones
 * (copy between typed buffers, reduce two temporaries) and communications
 * (send, receive in the communicator's collective context, with the tag
 * the schedule took at creation).  When a round starts, its local actions
 * run in order, then all its sends and receives are posted; the round ends
 * when they have all completed, and the next one starts.  So data received
 * in round k are combined or forwarded in round k+1.
 *
 * The schedule is the request (obj_request_t first, kind OBJ_REQ_COLL).
 * Its sends and receives are pml requests whose completion hook counts
 * them down; a schedule whose round is done is put on a ready list, which
 * the progress callback (registered while an nbc module exists) drains by
 * starting the next round - never from inside the pml's own callbacks.  All
 * of this runs inside the progress critical section.  Waiting for a
 * schedule is rail_progress_wait on its request: the sleeping wait, no
 * spinning here.
 *
 * Persistent (COLL_F_PERSISTENT): the schedule is built once by the *_init
 * call, starts inactive, and each MPI_Start runs it again from round 0 with
 * the same tag, buffers and temporaries; MPI_Request_free releases it.
 *
 * Lifetime: temporaries and copies of derived datatypes (so that the user
 * may free a datatype while the operation is pending) belong to the
 * schedule; the reduction's user function pointers are copied.
 */
#ifndef COLL_NBC_NBC_H
#define COLL_NBC_NBC_H

#include "coll/coll.h"
#include "coll/coll_util.h"

typedef struct coll_sched coll_sched_t;

/* A new, empty schedule for one collective call on comm: takes the call's
 * tag (coll_tag_next). */
int coll_sched_create(obj_comm_t *comm, coll_sched_t **s);
/* Free a schedule that was not committed (building failed). */
void coll_sched_free(coll_sched_t *s);

/* Actions of the current round.  peer: a rank of the communicator's peer
 * group (the remote group of an intercommunicator). */
int coll_sched_send(coll_sched_t *s, const void *buf, MPI_Count count, obj_datatype_t *dt,
                    int peer);
int coll_sched_recv(coll_sched_t *s, void *buf, MPI_Count count, obj_datatype_t *dt, int peer);
/* A receive that must fill count x dt: a shorter message (the sender's type
 * signature differs, erroneous) ends the schedule with MPI_ERR_COUNT. */
int coll_sched_recv_all(coll_sched_t *s, void *buf, MPI_Count count, obj_datatype_t *dt,
                        int peer);
int coll_sched_copy(coll_sched_t *s, const void *sbuf, MPI_Count scount, obj_datatype_t *sdt,
                    void *rbuf, MPI_Count rcount, obj_datatype_t *rdt);
/* inout = in op inout on temporaries of n elements (the schedule's
 * reduction, set up with coll_sched_red). */
int coll_sched_reduce(coll_sched_t *s, const void *in, void *inout, MPI_Count n);
/* End the current round (an empty round is dropped). */
int coll_sched_round(coll_sched_t *s);

/* The schedule's reduction (coll_red_init, see coll_util.h). */
int coll_sched_red(coll_sched_t *s, obj_op_t *op, obj_datatype_t *dt, MPI_Count count,
                   const void *b1, const void *b2, coll_red_t **r);
/* A reduction temporary of n user elements, freed with the schedule. */
void *coll_sched_red_tmp(coll_sched_t *s, MPI_Count n);
/* A host temporary of len bytes, freed with the schedule. */
void *coll_sched_host_tmp(coll_sched_t *s, size_t len);

/* Close the last round and hand the schedule over as a request: started
 * now, or inactive and persistent with COLL_F_PERSISTENT.  On failure the
 * schedule is freed. */
int coll_sched_commit(coll_sched_t *s, unsigned flags, obj_request_t **req);

/* Wait for a nonpersistent schedule request, release it, return its error. */
int coll_sched_wait(obj_request_t *req);

/* Progress callback registration, held by every nbc module. */
void coll_sched_engine_hold(int delta);

/* ------------------------------------------------------------ algorithms */

/* Schedule builders (nbc_build*.c): append one operation's actions to s.
 * Same parameters as COLL_OPS. */
#define COLL_NBC_X_BUILD(name, params, args)                                                       \
    int coll_nbc_build_##name(coll_sched_t *s, COLL_UNPAREN params);
COLL_OPS(COLL_NBC_X_BUILD)
#undef COLL_NBC_X_BUILD

/* The nonblocking / persistent form of every operation: build its linear
 * schedule (the algorithms of coll basic) and commit it.  Both basic and
 * nbc put these in their tables. */
#define COLL_NBC_X_IFN(name, params, args)                                                         \
    int coll_nbc_i##name(COLL_UNPAREN params, unsigned flags, obj_info_t *info,                    \
                         obj_request_t **req, coll_module_t *module);
COLL_OPS(COLL_NBC_X_IFN)
#undef COLL_NBC_X_IFN

#endif
