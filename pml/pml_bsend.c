/*
 * Buffered sends.  A Bsend packs the message into the attached buffer and
 * starts a standard send of the packed bytes; the user's operation is
 * complete at once, the space is returned when the internal send completes.
 * No attached buffer, or too little free space, is MPI_ERR_BUFFER; space
 * that earlier buffered sends still hold is waited for first, as long as
 * they complete (pool_wait_release).
 *
 * Buffers: one for the process (MPI_Buffer_attach), one per communicator
 * (MPI_Comm_attach_buffer) and one per session (MPI_Session_attach_buffer);
 * a Bsend uses its communicator's buffer when there is one, else the
 * process's.  (A communicator derived from a session does not fall back to
 * the session's buffer yet.)  MPI_BUFFER_AUTOMATIC makes a buffer that takes
 * memory from malloc as needed.  Each message costs its packed size plus a
 * 32-byte header (within MPI_BSEND_OVERHEAD).  All of this runs inside the
 * progress critical section.
 */
#include "pml/pml_internal.h"
#include "obj/err.h"
#include "accel/accel.h"
#include "base/dt.h"
#include "base/adapt.h"
#include "base/atomic.h"
#include "base/progress.h"

#include <stdlib.h>
#include <string.h>

typedef struct bsend_block {
    struct bsend_block *next;     /* address order (automatic: any order) */
    struct bsend_pool *pool;
    size_t size;                  /* bytes of the block, header included */
    size_t pad;
} bsend_block_t;

#define BSEND_HDR RAIL_ALIGN_UP(sizeof(bsend_block_t), (size_t)16)

typedef struct bsend_flush {
    obj_request_t req;
    struct bsend_flush *next;
} bsend_flush_t;

typedef struct bsend_pool {
    struct bsend_pool *next;      /* in the list of comm / session pools */
    const void *owner;            /* comm or session; NULL for the process */
    char *base;
    size_t size;
    bool automatic;
    int n_blocks;
    bsend_block_t *blocks;
    bsend_flush_t *flushes;
} bsend_pool_t;

static bsend_pool_t *proc_pool;
static bsend_pool_t *comm_pools, *session_pools;

/* The list of a kind of owner's pools (NULL: the process's, which is
 * proc_pool). */
static bsend_pool_t **pool_list(pml_bsend_owner_t kind)
{
    return kind == PML_BSEND_COMM ? &comm_pools : kind == PML_BSEND_SESSION ? &session_pools
                                                                            : NULL;
}

/* ------------------------------------------------------------ pools */

static bsend_pool_t **pool_slot(bsend_pool_t **list, const void *owner)
{
    for (bsend_pool_t **p = list; *p; p = &(*p)->next)
        if ((*p)->owner == owner)
            return p;
    return NULL;
}

static int pool_attach(bsend_pool_t **slot_list, const void *owner, void *buffer, MPI_Count size,
                       const char *what)
{
    int rc = MPI_SUCCESS;
    RAIL_CS_ENTER();
    bool exists = owner ? pool_slot(slot_list, owner) != NULL : proc_pool != NULL;
    if (exists) {
        rc = obj_errf(MPI_ERR_BUFFER, "a buffer is already attached to %s; detach it first",
                      what);
        goto out;
    }
    if (size < 0) {
        rc = obj_errf(MPI_ERR_ARG, "invalid buffer size %lld", (long long)size);
        goto out;
    }
    bsend_pool_t *p = calloc(1, sizeof(*p));
    if (!p) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    p->owner = owner;
    p->automatic = buffer == MPI_BUFFER_AUTOMATIC;
    p->base = p->automatic ? NULL : buffer;
    p->size = p->automatic ? 0 : (size_t)size;
    if (owner) {
        p->next = *slot_list;
        *slot_list = p;
    } else {
        proc_pool = p;
    }
out:
    RAIL_CS_EXIT();
    return rc;
}

typedef struct pool_wait {
    bsend_pool_t *pool;
} pool_wait_t;

static bool pool_empty_cond(void *arg)
{
    pool_wait_t *w = arg;
    return rail_atomic_load_acquire(&w->pool->n_blocks) == 0;
}

static void pool_drain(bsend_pool_t *p)
{
    pool_wait_t w = { p };
    rail_progress_wait(pool_empty_cond, &w);
}

static int pool_detach(bsend_pool_t **slot_list, const void *owner, void *buffer_addr,
                       MPI_Count *size)
{
    RAIL_CS_ENTER();
    bsend_pool_t **slot = owner ? pool_slot(slot_list, owner) : (proc_pool ? &proc_pool : NULL);
    bsend_pool_t *p = slot ? *slot : NULL;
    RAIL_CS_EXIT();
    if (!p) {
        *(void **)buffer_addr = NULL;
        *size = 0;
        return MPI_SUCCESS;
    }
    pool_drain(p);
    RAIL_CS_ENTER();
    slot = owner ? pool_slot(slot_list, owner) : &proc_pool;
    if (slot && *slot == p)
        *slot = p->next;
    if (!owner)
        proc_pool = NULL;
    RAIL_CS_EXIT();
    *(void **)buffer_addr = p->automatic ? MPI_BUFFER_AUTOMATIC : p->base;
    *size = (MPI_Count)p->size;
    free(p);
    return MPI_SUCCESS;
}

/* First-fit allocation of a block of `need` bytes (header included). */
static bsend_block_t *pool_alloc(bsend_pool_t *p, size_t need)
{
    bsend_block_t *b;
    if (p->automatic) {
        b = malloc(need);
        if (!b)
            return NULL;
        b->next = p->blocks;
        p->blocks = b;
    } else {
        uintptr_t start = RAIL_ALIGN_UP((uintptr_t)p->base, (uintptr_t)16);
        uintptr_t end = (uintptr_t)p->base + p->size;
        bsend_block_t **link = &p->blocks;
        for (;;) {
            uintptr_t gap_end = *link ? (uintptr_t)*link : end;
            if (gap_end >= start && gap_end - start >= need)
                break;
            if (!*link)
                return NULL;
            start = RAIL_ALIGN_UP((uintptr_t)*link + (*link)->size, (uintptr_t)16);
            link = &(*link)->next;
        }
        b = (bsend_block_t *)start;
        b->next = *link;
        *link = b;
    }
    b->pool = p;
    b->size = need;
    p->n_blocks++;
    return b;
}

static size_t pool_free_bytes(const bsend_pool_t *p)
{
    size_t used = 0;
    for (const bsend_block_t *b = p->blocks; b; b = b->next)
        used += b->size;
    return p->size > used ? p->size - used : 0;
}

static void flushes_complete(bsend_pool_t *p)
{
    while (p->flushes) {
        bsend_flush_t *f = p->flushes;
        p->flushes = f->next;
        obj_request_complete(&f->req);
    }
}

static void pool_release(bsend_block_t *b)
{
    bsend_pool_t *p = b->pool;
    for (bsend_block_t **l = &p->blocks; *l; l = &(*l)->next) {
        if (*l == b) {
            *l = b->next;
            break;
        }
    }
    if (p->automatic)
        free(b);
    rail_atomic_store_release(&p->n_blocks, p->n_blocks - 1);
    if (p->n_blocks == 0)
        flushes_complete(p);
}

/* ------------------------------------------------------------ sending */

static int pack_copy(void *dst, const void *src, size_t len, void *ctx)
{
    return accel_copy(dst, src, len, NULL);
}

/* The buffer is full of messages still on their way (a program sizes it
 * for the messages it keeps in flight, and may send again before its
 * peer has received them all): wait, outside the critical section, until
 * one of them completes; false when none does within BSEND_STALL_NS (a
 * receiver that waits for the very message to come, say), which leaves
 * the error to the caller. */
#define BSEND_STALL_NS 1000000000ull

typedef struct bsend_wait {
    const bsend_pool_t *pool;
    int blocks;
    uint64_t deadline;
} bsend_wait_t;

static bool bsend_wait_cond(void *arg)
{
    bsend_wait_t *w = arg;
    return rail_atomic_load_acquire(&w->pool->n_blocks) < w->blocks ||
           rail_now_ns() > w->deadline;
}

/* The pool a Bsend on comm uses: the communicator's, else the process's. */
static bsend_pool_t *send_pool(const obj_comm_t *comm)
{
    bsend_pool_t **slot = pool_slot(&comm_pools, comm);
    return slot ? *slot : proc_pool;
}

/* *gone: the pool was detached meanwhile (erroneous; not touched again). */
static bool pool_wait_release(bsend_pool_t *p, const obj_comm_t *comm, bool *gone)
{
    bsend_wait_t w = { p, p->n_blocks, rail_now_ns() + BSEND_STALL_NS };
    if (w.blocks == 0)
        return false;
    RAIL_CS_EXIT();
    rail_progress_wait(bsend_wait_cond, &w);
    RAIL_CS_ENTER();
    *gone = send_pool(comm) != p;
    return !*gone && p->n_blocks < w.blocks;
}

/* on_complete of the internal send (inside the critical section). */
static void bsend_done(obj_request_t *req)
{
    bsend_block_t *b = req->cb_arg;
    req->on_complete = NULL;
    req->ops->release(req);
    pool_release(b);
}

int pml_bsend(const void *buf, MPI_Count count, obj_datatype_t *dt, int dest, int tag,
              obj_comm_t *comm)
{
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t bytes = (size_t)(dt->size * count);
    size_t need = BSEND_HDR + RAIL_ALIGN_UP(bytes, (size_t)16);
    int rc = MPI_SUCCESS;
    RAIL_CS_ENTER();
    bsend_pool_t *p = send_pool(comm);
    if (!p) {
        rc = obj_errf(MPI_ERR_BUFFER,
                      "no buffer attached for buffered sends (MPI_Buffer_attach or "
                      "MPI_Comm_attach_buffer)");
        goto out;
    }
    bsend_block_t *b = pool_alloc(p, need);
    bool gone = false;
    while (!b && need <= p->size && pool_wait_release(p, comm, &gone))
        b = pool_alloc(p, need);
    if (gone) {
        rc = obj_errf(MPI_ERR_BUFFER, "the buffer was detached during a buffered send");
        goto out;
    }
    if (!b) {
        rc = obj_errf(MPI_ERR_BUFFER,
                      "message of %zu bytes does not fit in the attached buffer (%zu of %zu bytes "
                      "free, %zu bytes needed with the header)",
                      bytes, pool_free_bytes(p), p->size, need);
        goto out;
    }
    char *data = (char *)b + BSEND_HDR;
    if (bytes) {
        if (accel_is_device((const char *)buf + dt->true_lb))
            rc = rail_dt_pack_all_cb(dt->layout, count, buf, data, bytes, NULL, pack_copy, NULL);
        else
            rc = rail_dt_pack_all(dt->layout, count, buf, data, bytes, NULL);
    }
    obj_request_t *req = NULL;
    if (rc == MPI_SUCCESS)
        rc = pml_send_create(data, (MPI_Count)bytes, obj_datatype_predef(MPI_BYTE), dest, tag,
                             PML_SEND_STANDARD, comm, 0, &req);
    if (rc != MPI_SUCCESS) {
        pool_release(b);
        goto out;
    }
    req->on_complete = bsend_done;
    req->cb_arg = b;
    req->flags |= OBJ_REQ_FLAG_INTERNAL;
    rc = pml_start(req);
out:
    RAIL_CS_EXIT();
    return rc;
}

/* Persistent buffered sends: each Start is one Bsend. */
typedef struct bsend_preq {
    obj_request_t req;
    const void *buf;
    MPI_Count count;
    obj_datatype_t *dt;
    int dest, tag;
    obj_comm_t *comm;
} bsend_preq_t;

static void preq_release(obj_request_t *req)
{
    req->obj.kind = OBJ_FREED;
    free(req);
}

static int preq_start(obj_request_t *req)
{
    bsend_preq_t *p = (bsend_preq_t *)req;
    req->flags |= OBJ_REQ_FLAG_ACTIVE;
    obj_req_status_empty(&req->status);
    req->complete = 0;
    int rc = pml_bsend(p->buf, p->count, p->dt, p->dest, p->tag, p->comm);
    req->status.error = rc;
    rail_atomic_store_release(&req->complete, 1);
    return rc;
}

static const obj_request_ops_t preq_ops = { .release = preq_release, .start = preq_start };

int pml_bsend_init(const void *buf, MPI_Count count, obj_datatype_t *dt, int dest, int tag,
                   obj_comm_t *comm, obj_request_t **request)
{
    bsend_preq_t *p = malloc(sizeof(*p));
    if (!p)
        return MPI_ERR_NO_MEM;
    obj_request_init(&p->req, OBJ_REQ_SEND, &preq_ops, comm);
    p->req.flags = OBJ_REQ_FLAG_PERSISTENT;
    p->req.complete = 1;
    p->buf = buf;
    p->count = count;
    p->dt = dt;
    p->dest = dest;
    p->tag = tag;
    p->comm = comm;
    *request = &p->req;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ attach / detach / flush */

int pml_bsend_attach(pml_bsend_owner_t kind, const void *owner, void *buffer, MPI_Count size)
{
    static const char *const what[] = {"the process", "the communicator", "the session"};
    return pool_attach(pool_list(kind), owner, buffer, size, what[kind]);
}

int pml_bsend_detach(pml_bsend_owner_t kind, const void *owner, void *buffer_addr,
                     MPI_Count *size)
{
    return pool_detach(pool_list(kind), owner, buffer_addr, size);
}

static bsend_pool_t *pool_of(bsend_pool_t **list, const void *owner)
{
    RAIL_CS_ENTER();
    bsend_pool_t **slot = owner ? pool_slot(list, owner) : NULL;
    bsend_pool_t *p = owner ? (slot ? *slot : NULL) : proc_pool;
    RAIL_CS_EXIT();
    return p;
}

int pml_bsend_flush(pml_bsend_owner_t kind, const void *owner)
{
    bsend_pool_t *p = pool_of(pool_list(kind), owner);
    if (p)
        pool_drain(p);
    return MPI_SUCCESS;
}

static void flush_release(obj_request_t *req)
{
    req->obj.kind = OBJ_FREED;
    free(req);
}

static const obj_request_ops_t flush_ops = { .release = flush_release };

int pml_bsend_iflush(pml_bsend_owner_t kind, const void *owner, obj_request_t **request)
{
    bsend_pool_t *p = pool_of(pool_list(kind), owner);
    bsend_flush_t *f = malloc(sizeof(*f));
    if (!f)
        return MPI_ERR_NO_MEM;
    obj_request_init(&f->req, OBJ_REQ_MULTI, &flush_ops, NULL);
    *request = &f->req;
    RAIL_CS_ENTER();
    if (!p || p->n_blocks == 0) {
        obj_request_complete(&f->req);
    } else {
        f->next = p->flushes;
        p->flushes = f;
    }
    RAIL_CS_EXIT();
    return MPI_SUCCESS;
}
