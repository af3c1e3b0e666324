/*
 * pml: point-to-point messaging (matching, protocols, requests).
 *
 * Used by the MPI front end (mpi/p2p_*.c) and by collective components.
 * Ranks are ranks of the communicator (of its remote group for an
 * intercommunicator); counts are element counts of a committed datatype.
 *
 * CONTEXTS.  Every communicator has two matching contexts: its point-to-point
 * context (comm->context_id) and its collective context
 * PML_COLL_CONTEXT(comm->context_id) = context_id | PML_CONTEXT_COLL_BIT.
 * Collectives pass PML_COLL in `flags` and never match user messages; their
 * tags are private (any int >= 0; the MPI tag rules do not apply).  Context
 * ids must be below PML_CONTEXT_COLL_BIT.
 *
 * PROTOCOLS (per peer, with the btl chosen for it: see btl_base.c)
 *   eager     bytes <= the btl's eager_limit (and the peer's credits allow):
 *             header + data in one btl send; a standard send completes at
 *             once; a synchronous one when the receiver's ACK arrives.
 *             Not contiguous device messages above pml_device_eager_max
 *             (0) to a process of the node that can open them by IPC:
 *             they take the rendezvous below at any size (one copy by the
 *             receiver instead of a staged copy at each end; a peer that
 *             answers one with a CTS gets small ones eager again), except
 *             from MPI_Send (PML_EAGER_DEVICE: buffered like host ones).
 *   rendezvous larger: an RTS describes the send buffer (btl registration and
 *             iovecs); on match the receiver pulls the data with btl get
 *             (CMA on sm: a single copy) and answers FIN.  When get cannot be
 *             used (btl without get, device memory a btl cannot reach, too
 *             many iovecs) the receiver answers CTS and the sender streams
 *             the data in fragments through btl send (pipelined, staging
 *             device data through host memory with accel_copy).  For host
 *             buffers the sender offers get from pml_rndv_get_min bytes;
 *             between pml_rndv_adapt_min and that it offers get and lets
 *             the receiver choose (PML_HF_CHOOSE) by the time each
 *             protocol took before from that peer (pml_rndv.c): get,
 *             pipeline, or (AVX2) pipeline whose fragments the btl writes
 *             with non-temporal stores (CTS_STREAM, BTL_PAYLOAD_STREAM).
 *
 * FLOW CONTROL.  Each peer may have at most C eager messages in flight
 * towards us that we have not matched yet, C = min(pml_eager_credits (128),
 * pml_eager_credit_bytes (1 MiB) / its btl's eager limit), at least 2;
 * credits come back in batches (CREDIT messages) as receives match them.
 * A sender without credits uses the rendezvous protocol, whose unexpected
 * record is a small header and whose data stay in the sender's buffer.  So
 * memory held for unexpected messages is at most about
 *     peers x max(pml_eager_credit_bytes, 2 x eager_limit)
 * (sm: 64 x 16 KiB = 1 MiB per peer; tcp: 16 x 64 KiB = 1 MiB per peer)
 * plus one record of ~200 bytes (up to ~4 KiB for a noncontiguous send's
 * descriptor) per pending rendezvous send, which the sender's own
 * outstanding requests bound.
 *
 * THREADS.  Every entry point runs inside the progress critical section
 * (base/progress.h: one recursive lock, taken only under
 * MPI_THREAD_MULTIPLE), and btl callbacks run inside rail_progress, which
 * holds it; btls therefore need no locks of their own.  Waits poll request
 * flags outside the lock.
 */
#ifndef PML_PML_H
#define PML_PML_H

#include "base/rail.h"
#include "obj/comm.h"
#include "obj/datatype.h"
#include "obj/request.h"

#define PML_CONTEXT_COLL_BIT 0x80000000u
#define PML_COLL_CONTEXT(cid) ((uint32_t)(cid) | PML_CONTEXT_COLL_BIT)

typedef enum pml_send_mode {
    PML_SEND_STANDARD = 0,
    PML_SEND_BUFFERED,   /* not a protocol: buffered sends are pml_bsend.c's */
    PML_SEND_SYNC,
    PML_SEND_READY,
} pml_send_mode_t;

enum {
    PML_COLL = OBJ_P2P_COLL,  /* use the communicator's collective context */
    PML_PERSISTENT = 1 << 1,  /* *_init: create an inactive persistent request */
    /* Sends: a rendezvous message from a host buffer goes by the btl's
     * single-copy get (CMA on sm) whatever pml_rndv_get_min says.  For a
     * caller with many transfers in flight on an oversubscribed node: the
     * receiver copies alone, while the pipeline needs both ends running. */
    PML_SINGLE_COPY = 1 << 2,
    /* Sends: a device message that fits the eager limit goes eager (staged)
     * rather than by IPC (pml_device_eager_max), so the send completes
     * without the receiver.  MPI_Send passes it: the peers buffer small
     * messages from device memory as from host memory, and programs that
     * send before they receive rely on that (erroneous, but common). */
    PML_EAGER_DEVICE = 1 << 3,
};

/* ------------------------------------------------------------ setup */

int pml_register_params(void);
/* After rte_init and accel_init: btls up, modex exchanged, peers wired. */
int pml_init(int thread_level);
int pml_finalize(void);
/* Progress until nothing this process accepted to send is still queued in
 * it (pml queues and btl queues): call before a fence that does not
 * progress, or a peer still receiving waits for those bytes forever. */
void pml_quiesce(void);
int pml_comm_create(obj_comm_t *comm);
int pml_comm_destroy(obj_comm_t *comm);

/* ------------------------------------------------------------ requests */

/* Create a send / receive request without starting it (nonpersistent
 * ones are started with pml_start before anybody else sees them; callers
 * may set req->on_complete in between). */
int pml_send_create(const void *buf, MPI_Count count, obj_datatype_t *dt, int dst, int tag,
                    pml_send_mode_t mode, obj_comm_t *comm, unsigned flags, obj_request_t **req);
int pml_recv_create(void *buf, MPI_Count count, obj_datatype_t *dt, int src, int tag,
                    obj_comm_t *comm, unsigned flags, obj_request_t **req);
int pml_start(obj_request_t *req);

/* Nonblocking: create + start.  dst/src MPI_PROC_NULL gives a request that
 * is complete at once. */
int pml_isend(const void *buf, MPI_Count count, obj_datatype_t *dt, int dst, int tag,
              pml_send_mode_t mode, obj_comm_t *comm, unsigned flags, obj_request_t **req);
int pml_irecv(void *buf, MPI_Count count, obj_datatype_t *dt, int src, int tag, obj_comm_t *comm,
              unsigned flags, obj_request_t **req);

/* Blocking; errors (truncation) come back as the return value and in st. */
int pml_send(const void *buf, MPI_Count count, obj_datatype_t *dt, int dst, int tag,
             pml_send_mode_t mode, obj_comm_t *comm, unsigned flags);
int pml_recv(void *buf, MPI_Count count, obj_datatype_t *dt, int src, int tag, obj_comm_t *comm,
             unsigned flags, obj_req_status_t *st);

/* Probes.  *msg gets the dequeued message (improbe/mprobe) or NULL for
 * MPI_PROC_NULL sources (the front end uses MPI_MESSAGE_NO_PROC). */
int pml_iprobe(int src, int tag, obj_comm_t *comm, unsigned flags, int *flag,
               obj_req_status_t *st);
int pml_probe(int src, int tag, obj_comm_t *comm, unsigned flags, obj_req_status_t *st);
int pml_improbe(int src, int tag, obj_comm_t *comm, unsigned flags, int *flag,
                obj_message_t **msg, obj_req_status_t *st);
int pml_mprobe(int src, int tag, obj_comm_t *comm, unsigned flags, obj_message_t **msg,
               obj_req_status_t *st);
/* Receive a matched message; msg is consumed. */
int pml_imrecv(void *buf, MPI_Count count, obj_datatype_t *dt, obj_message_t *msg,
               obj_request_t **req);

/* Wait for an internal (or any) request, report its status (st may be
 * NULL) and release it; returns the request's error. */
int pml_wait(obj_request_t *req, obj_req_status_t *st);
int pml_waitall(int n, obj_request_t **reqs);
/* Release a request the caller no longer needs (completes in background). */
void pml_request_free(obj_request_t *req);

/* ------------------------------------------------------------ buffered sends (pml_bsend.c) */

/* The buffers of buffered sends: the process's (owner NULL), a
 * communicator's, a session's.  A Bsend on a communicator uses its
 * buffer, else the process's. */
typedef enum { PML_BSEND_PROC, PML_BSEND_COMM, PML_BSEND_SESSION } pml_bsend_owner_t;

/* MPI_Buffer_attach and friends (MPI_BUFFER_AUTOMATIC: memory as needed;
 * MPI_ERR_BUFFER when one is attached already); detach waits for the
 * messages in it to leave and gives its address and size (NULL and 0
 * without one). */
int pml_bsend_attach(pml_bsend_owner_t kind, const void *owner, void *buffer, MPI_Count size);
int pml_bsend_detach(pml_bsend_owner_t kind, const void *owner, void *buffer_addr,
                     MPI_Count *size);
/* Wait until the messages in the buffer have left; or a request that
 * completes then. */
int pml_bsend_flush(pml_bsend_owner_t kind, const void *owner);
int pml_bsend_iflush(pml_bsend_owner_t kind, const void *owner, obj_request_t **req);
/* A buffered send: packed into the buffer and started; complete for the
 * caller at once (MPI_ERR_BUFFER when it does not fit). */
int pml_bsend(const void *buf, MPI_Count count, obj_datatype_t *dt, int dest, int tag,
              obj_comm_t *comm);
/* A persistent buffered send: each start is one pml_bsend. */
int pml_bsend_init(const void *buf, MPI_Count count, obj_datatype_t *dt, int dest, int tag,
                   obj_comm_t *comm, obj_request_t **req);

/* ------------------------------------------------------------ partitioned (pml_part.c) */

/* MPI_Psend_init / MPI_Precv_init: an inactive persistent request for
 * partitions x count elements (MPI_Start starts it, as any persistent
 * request); the k-th initialization for a peer and tag on one side meets
 * the k-th on the other. */
int pml_part_init(void *buf, int partitions, MPI_Count count, obj_datatype_t *dt, int peer,
                  int tag, obj_comm_t *comm, bool send, obj_request_t **req);
/* MPI_ERR_REQUEST unless req is a started partitioned request of that
 * direction (what: the MPI function, for the message). */
int pml_part_check(obj_request_t *req, bool send, const char *what);
/* MPI_ERR_ARG unless partition is one of req's. */
int pml_part_check_partition(const obj_request_t *req, int partition);
/* Mark a partition of a send ready (MPI_ERR_ARG when it already is); the
 * message leaves when the last one is.  Threads may mark at once. */
int pml_part_ready(obj_request_t *req, int partition);
/* Whether a receive's partitions have arrived (all at once, when the
 * message has). */
bool pml_part_arrived(obj_request_t *req);


/* Bytes of count elements (count * size) */
static inline MPI_Count pml_bytes_of(const obj_datatype_t *dt, MPI_Count count)
{
    return dt->size * count;
}

/* Parameters readable by others (tests, coll). */
extern int pml_eager_credits;
extern int pml_verbose;

#endif
