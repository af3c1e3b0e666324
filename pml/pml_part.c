/*
 * Partitioned point-to-point (MPI-4.1 section 4): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready(_range, _list), MPI_Parrived.
 *
 * A partitioned request wraps one internal persistent pml request for the
 * whole buffer (partitions x count elements):
 *   receive: MPI_Start starts the internal receive at once; a partition
 *            has arrived when the whole message has (MPI_Parrived may say
 *            so late, never early);
 *   send:    MPI_Start arms it; the internal send starts when the last
 *            partition is marked ready, so the data of every partition is
 *            final by then.
 * The internal requests live in the communicator's collective context
 * with negative tags (part_tag, in the range obj/comm_int.h reserves):
 * no user receive (MPI_ANY_TAG included) and no collective can match them.  Partitioned operations
 * match in the order of their initialization calls (MPI-4.1 4.2.1), so the
 * tag holds k, the number of earlier initializations on this side for the
 * same communicator, peer and user tag: the k-th MPI_Psend_init to a
 * process meets its k-th MPI_Precv_init from this one, however the two
 * sides order their MPI_Start and MPI_Pready calls.  Limit: user tags
 * that differ by a multiple of 2^16 share a lane, and so do the k-th and
 * (k + 2^14)-th initializations of a (peer, tag) while both are in use.
 *
 * The internal request completes the partitioned one through its
 * on_complete hook; pml_req_start clears the hook, so it is set again
 * after every start (inside the critical section, so no completion can
 * slip between the two).
 */
#include "pml/pml_internal.h"
#include "obj/err.h"
#include "base/atomic.h"
#include "base/progress.h"

#include <stdlib.h>
#include <string.h>

/* The tag of the k-th initialization for a peer and user tag: below
 * -2^27, 2^16 user tags x 2^14 initializations. */
#define PART_TAG_BASE (-0x08000000)

static int part_tag(int tag, uint32_t k)
{
    return PART_TAG_BASE - (int)(((uint32_t)tag & 0xffffu) << 14 | (k & 0x3fffu));
}

typedef struct part_req {
    obj_request_t req;     /* first: the handle points here */
    obj_request_t *inner;  /* persistent pml request for the whole buffer */
    bool send;
    int partitions;
    int nready;            /* send: partitions marked ready since MPI_Start */
    int user_tag;
    uint8_t *ready;        /* send: per partition */
} part_req_t;

static void part_inner_done(obj_request_t *inner);

/* Initializations so far per (peer, user tag, direction) of a
 * communicator: a short list, partitioned requests are few and long-lived. */
typedef struct part_seq {
    struct part_seq *next;
    int peer, tag;
    bool send;
    uint32_t n;
} part_seq_t;

static int part_seq_next(obj_comm_t *comm, int peer, int tag, bool send, uint32_t *k)
{
    int rc = MPI_SUCCESS;
    RAIL_CS_ENTER();
    struct pml_comm *pc = comm->pml;
    part_seq_t *e = pc->part_seq;
    while (e && (e->peer != peer || e->tag != tag || e->send != send))
        e = e->next;
    if (!e && (e = calloc(1, sizeof(*e)))) {
        *e = (part_seq_t){.next = pc->part_seq, .peer = peer, .tag = tag, .send = send};
        pc->part_seq = e;
    }
    if (e)
        *k = e->n++;
    else
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    RAIL_CS_EXIT();
    return rc;
}

void pml_part_seq_free(struct pml_comm *pc)
{
    for (part_seq_t *e = pc->part_seq, *next; e; e = next) {
        next = e->next;
        free(e);
    }
    pc->part_seq = NULL;
}

static void part_release(obj_request_t *req)
{
    part_req_t *p = (part_req_t *)req;
    obj_request_t *in = p->inner;
    if (in) {
        in->on_complete = NULL;
        if ((in->flags & OBJ_REQ_FLAG_ACTIVE) && !obj_request_is_complete(in))
            in->flags |= OBJ_REQ_FLAG_FREED;   /* the pml releases it when done */
        else
            in->ops->release(in);
    }
    free(p->ready);
    p->req.obj.kind = OBJ_FREED;
    free(p);
}

/* Start the internal request and hook its completion to p. */
static int part_start_inner(part_req_t *p)
{
    obj_request_t *in = p->inner;
    RAIL_CS_ENTER();
    int rc = in->ops->start(in);
    if (rc == MPI_SUCCESS) {
        in->flags |= OBJ_REQ_FLAG_INTERNAL;
        in->cb_arg = p;
        if (obj_request_is_complete(in))
            part_inner_done(in);
        else
            in->on_complete = part_inner_done;
    }
    RAIL_CS_EXIT();
    return rc;
}

static void part_inner_done(obj_request_t *in)
{
    part_req_t *p = in->cb_arg;
    in->on_complete = NULL;
    in->flags &= (uint8_t)~OBJ_REQ_FLAG_ACTIVE;
    rail_atomic_store_release(&in->complete, 1);
    p->req.status = in->status;
    if (p->req.status.source != MPI_PROC_NULL)
        p->req.status.tag = p->user_tag;
    obj_request_complete(&p->req);
}

static int part_start(obj_request_t *req)
{
    part_req_t *p = (part_req_t *)req;
    uint8_t flags = req->flags;
    obj_request_init(req, OBJ_REQ_PART, req->ops, req->comm);
    req->flags = flags | OBJ_REQ_FLAG_ACTIVE;
    p->nready = 0;
    if (p->send) {
        memset(p->ready, 0, (size_t)p->partitions);
        return p->partitions == 0 ? part_start_inner(p) : MPI_SUCCESS;
    }
    return part_start_inner(p);
}

static const obj_request_ops_t part_ops = {
    .release = part_release,
    .start = part_start,
};

int pml_part_init(void *buf, int partitions, MPI_Count count, obj_datatype_t *dt, int peer,
                  int tag, obj_comm_t *comm, bool send, obj_request_t **request)
{
    if (partitions < 0)
        return obj_errf(MPI_ERR_ARG, "partitions must not be negative (%d)", partitions);
    if (count > 0 && partitions > 0 && count > (MPI_Count)(INT64_MAX / 2) / partitions)
        return obj_errf(MPI_ERR_COUNT, "partitions x count is too large");
    part_req_t *p = calloc(1, sizeof(*p));
    if (!p || (send && !(p->ready = calloc((size_t)partitions + 1, 1)))) {
        free(p);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    MPI_Count total = (MPI_Count)partitions * count;
    uint32_t k = 0;
    int rc = peer == MPI_PROC_NULL ? MPI_SUCCESS : part_seq_next(comm, peer, tag, send, &k);
    if (rc != MPI_SUCCESS) {
        free(p->ready);
        free(p);
        return rc;
    }
    int itag = part_tag(tag, k);
    unsigned flags = PML_COLL | PML_PERSISTENT;
    rc = send ? pml_send_create(buf, total, dt, peer, itag, PML_SEND_STANDARD, comm, flags,
                                &p->inner)
              : pml_recv_create(buf, total, dt, peer, itag, comm, flags, &p->inner);
    if (rc != MPI_SUCCESS) {
        free(p->ready);
        free(p);
        return obj_errf(rc, "cannot create the partitioned request");
    }
    p->inner->flags |= OBJ_REQ_FLAG_INTERNAL;
    p->send = send;
    p->partitions = partitions;
    p->user_tag = tag;
    obj_request_init(&p->req, OBJ_REQ_PART, &part_ops, comm);
    p->req.flags = OBJ_REQ_FLAG_PERSISTENT;
    p->req.complete = 1;   /* inactive */
    *request = &p->req;
    return MPI_SUCCESS;
}

int pml_part_check(obj_request_t *req, bool send, const char *what)
{
    if (!req || req->kind != OBJ_REQ_PART)
        return obj_errf(MPI_ERR_REQUEST, "%s needs a partitioned request", what);
    part_req_t *p = (part_req_t *)req;
    if (p->send != send)
        return obj_errf(MPI_ERR_REQUEST, "%s needs a partitioned %s request", what,
                        send ? "send" : "receive");
    if (!(req->flags & OBJ_REQ_FLAG_ACTIVE))
        return obj_errf(MPI_ERR_REQUEST, "%s on a partitioned request that is not started",
                        what);
    return MPI_SUCCESS;
}

int pml_part_check_partition(const obj_request_t *req, int partition)
{
    const part_req_t *p = (const part_req_t *)req;
    if (partition < 0 || partition >= p->partitions)
        return obj_errf(MPI_ERR_ARG, "partition %d is not in [0, %d)", partition, p->partitions);
    return MPI_SUCCESS;
}

/* Threads may mark partitions of one request at once (the point of
 * partitioned communication): the marks are counted inside the critical
 * section, which MPI_THREAD_MULTIPLE makes real. */
int pml_part_ready(obj_request_t *req, int partition)
{
    part_req_t *p = (part_req_t *)req;
    int rc = pml_part_check_partition(req, partition);
    if (rc != MPI_SUCCESS)
        return rc;
    RAIL_CS_ENTER();
    if (p->ready[partition]) {
        rc = obj_errf(MPI_ERR_ARG, "partition %d is already marked ready", partition);
    } else {
        p->ready[partition] = 1;
        if (++p->nready == p->partitions)
            rc = part_start_inner(p);
    }
    RAIL_CS_EXIT();
    return rc;
}

bool pml_part_arrived(obj_request_t *req)
{
    if (!rail_atomic_load_acquire(&req->complete))
        rail_progress();
    return rail_atomic_load_acquire(&req->complete) != 0;
}
