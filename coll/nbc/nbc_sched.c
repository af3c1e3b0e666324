/* coll nbc: the schedule engine (see nbc.h). */
#include "coll/nbc/nbc.h"
#include "base/atomic.h"
#include "base/dt.h"
#include "base/list.h"
#include "base/progress.h"
#include "obj/err.h"
#include "pml/pml.h"

#include <stdlib.h>
#include <string.h>

enum { ACT_SEND, ACT_RECV, ACT_COPY, ACT_REDUCE };

typedef struct sched_act {
    uint8_t kind;
    bool exact;                 /* recv: fewer bytes than rcount x rdt is an error */
    int peer;
    const void *src;
    void *dst;
    MPI_Count scount, rcount;
    obj_datatype_t *sdt, *rdt;
} sched_act_t;

typedef struct sched_tmp {
    void *mem;
    bool device;
} sched_tmp_t;

struct coll_sched {
    obj_request_t req;          /* first: the handle points here */
    rail_list_item_t ready_item;
    obj_comm_t *comm;
    int tag;
    sched_act_t *acts;
    int n_acts, cap_acts;
    int *round_end;             /* round r: acts [round_end[r-1], round_end[r]) */
    int n_rounds, cap_rounds;
    int cur;                    /* next round to start */
    int pending;                /* communications in flight (+1 while posting) */
    int error;
    bool has_red;
    coll_red_t red;
    sched_tmp_t *tmps;
    int n_tmps, cap_tmps;
    obj_datatype_t **dts;       /* derived datatypes the schedule holds a reference on */
    int n_dts, cap_dts;
    obj_op_t *op;               /* the reduction's operation, referenced */
    bool comm_held;             /* committed: holds a reference on comm */
};

static rail_list_t ready = RAIL_LIST_INIT(ready);
static int n_ready;   /* schedules on `ready`: the progress callback runs only then */
static int engine_holds;

/* ------------------------------------------------------------ building */

/* Grow an array *p of *cap elements of size sz to hold n + 1. */
static int grow(void **p, int *cap, int n, size_t sz)
{
    if (n < *cap)
        return MPI_SUCCESS;
    int c = *cap ? *cap * 2 : 8;
    void *q = realloc(*p, (size_t)c * sz);
    if (!q)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory building a collective schedule");
    *p = q;
    *cap = c;
    return MPI_SUCCESS;
}

int coll_sched_create(obj_comm_t *comm, coll_sched_t **out)
{
    coll_sched_t *s = calloc(1, sizeof(*s));
    *out = s;
    if (!s)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for a collective schedule");
    s->comm = comm;
    s->tag = coll_tag_next(comm);
    return MPI_SUCCESS;
}

static void sched_destroy(coll_sched_t *s)
{
    for (int i = 0; i < s->n_tmps; i++)
        coll_tmp_free(s->tmps[i].mem, s->tmps[i].device);
    for (int i = 0; i < s->n_dts; i++)
        obj_datatype_release(s->dts[i]);
    obj_op_release(s->op);
    if (s->comm_held)
        obj_comm_release(s->comm);   /* last: may take the communicator down */
    free(s->tmps);
    free(s->dts);
    free(s->acts);
    free(s->round_end);
    s->req.obj.kind = OBJ_FREED;
    free(s);
}

void coll_sched_free(coll_sched_t *s)
{
    if (s)
        sched_destroy(s);
}

/* Hold a reference on a derived datatype an action uses (the user may free
 * it while the operation runs); NULL only when out of memory. */
static obj_datatype_t *keep_dt(coll_sched_t *s, obj_datatype_t *dt)
{
    if (!dt || dt->predefined)
        return dt;
    for (int i = 0; i < s->n_dts; i++)
        if (s->dts[i] == dt)
            return dt;
    if (grow((void **)&s->dts, &s->cap_dts, s->n_dts, sizeof(*s->dts)) != MPI_SUCCESS)
        return NULL;
    obj_datatype_retain(dt);
    s->dts[s->n_dts++] = dt;
    return dt;
}

static int add(coll_sched_t *s, const sched_act_t *a)
{
    int rc = grow((void **)&s->acts, &s->cap_acts, s->n_acts, sizeof(*s->acts));
    if (rc != MPI_SUCCESS)
        return rc;
    sched_act_t *b = &s->acts[s->n_acts];
    *b = *a;
    b->sdt = keep_dt(s, a->sdt);
    b->rdt = keep_dt(s, a->rdt);
    if ((a->sdt && !b->sdt) || (a->rdt && !b->rdt))
        return obj_errf(MPI_ERR_NO_MEM, "out of memory building a collective schedule");
    s->n_acts++;
    return MPI_SUCCESS;
}

int coll_sched_send(coll_sched_t *s, const void *buf, MPI_Count count, obj_datatype_t *dt,
                    int peer)
{
    return add(s, &(sched_act_t){ .kind = ACT_SEND, .peer = peer, .src = buf, .scount = count,
                                  .sdt = dt });
}

int coll_sched_recv(coll_sched_t *s, void *buf, MPI_Count count, obj_datatype_t *dt, int peer)
{
    return add(s, &(sched_act_t){ .kind = ACT_RECV, .peer = peer, .dst = buf, .rcount = count,
                                  .rdt = dt });
}

int coll_sched_recv_all(coll_sched_t *s, void *buf, MPI_Count count, obj_datatype_t *dt,
                        int peer)
{
    return add(s, &(sched_act_t){ .kind = ACT_RECV, .exact = true, .peer = peer, .dst = buf,
                                  .rcount = count, .rdt = dt });
}

int coll_sched_copy(coll_sched_t *s, const void *sbuf, MPI_Count scount, obj_datatype_t *sdt,
                    void *rbuf, MPI_Count rcount, obj_datatype_t *rdt)
{
    if (scount == 0)
        return MPI_SUCCESS;
    return add(s, &(sched_act_t){ .kind = ACT_COPY, .src = sbuf, .scount = scount, .sdt = sdt,
                                  .dst = rbuf, .rcount = rcount, .rdt = rdt });
}

int coll_sched_reduce(coll_sched_t *s, const void *in, void *inout, MPI_Count n)
{
    if (!s->has_red)
        return obj_errf(MPI_ERR_INTERN, "schedule reduction without an operation");
    return add(s, &(sched_act_t){ .kind = ACT_REDUCE, .src = in, .dst = inout, .scount = n });
}

int coll_sched_round(coll_sched_t *s)
{
    int start = s->n_rounds ? s->round_end[s->n_rounds - 1] : 0;
    if (s->n_acts == start)
        return MPI_SUCCESS;
    int rc = grow((void **)&s->round_end, &s->cap_rounds, s->n_rounds, sizeof(int));
    if (rc == MPI_SUCCESS)
        s->round_end[s->n_rounds++] = s->n_acts;
    return rc;
}

int coll_sched_red(coll_sched_t *s, obj_op_t *op, obj_datatype_t *dt, MPI_Count count,
                   const void *b1, const void *b2, coll_red_t **r)
{
    int rc = coll_red_init(&s->red, op, dt, count, b1, b2);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!keep_dt(s, dt))
        return obj_errf(MPI_ERR_NO_MEM, "out of memory building a collective schedule");
    if (!s->op) {
        obj_op_retain(op);
        s->op = op;
    }
    s->has_red = true;
    *r = &s->red;
    return MPI_SUCCESS;
}

static void *keep_tmp(coll_sched_t *s, void *buf, void *mem, bool device)
{
    if (!buf)
        return NULL;
    if (grow((void **)&s->tmps, &s->cap_tmps, s->n_tmps, sizeof(*s->tmps)) != MPI_SUCCESS) {
        coll_tmp_free(mem, device);
        return NULL;
    }
    s->tmps[s->n_tmps++] = (sched_tmp_t){ mem, device };
    return buf;
}

void *coll_sched_red_tmp(coll_sched_t *s, MPI_Count n)
{
    void *mem;
    void *buf = coll_red_tmp(&s->red, n, &mem);
    return keep_tmp(s, buf, mem, s->red.device);
}

void *coll_sched_host_tmp(coll_sched_t *s, size_t len)
{
    void *mem = coll_scratch_get(len);
    return keep_tmp(s, mem, mem, false);
}

/* ------------------------------------------------------------ running */

static void sched_complete(coll_sched_t *s)
{
    obj_req_status_empty(&s->req.status);
    s->req.status.error = s->error;
    obj_request_complete(&s->req);   /* s may be gone after this */
}

/* Completion hook of a send or receive (inside the critical section). */
static void child_done(obj_request_t *child)
{
    coll_sched_t *s = child->cb_arg;
    if (child->status.error != MPI_SUCCESS && s->error == MPI_SUCCESS)
        s->error = child->status.error;
    child->on_complete = NULL;
    child->ops->release(child);
    if (--s->pending == 0) {
        rail_list_append(&ready, &s->ready_item);
        rail_atomic_add_fetch(&n_ready, 1);
    }
}

/* An exact receive's completion: the length check, then child_done. */
typedef struct sched_exact {
    coll_sched_t *s;
    MPI_Count want;
    int peer;
} sched_exact_t;

static void child_done_exact(obj_request_t *child)
{
    sched_exact_t *e = child->cb_arg;
    coll_sched_t *s = e->s;
    if (child->status.error == MPI_SUCCESS && s->error == MPI_SUCCESS)
        s->error = coll_check_length(e->peer, (size_t)child->status.count, (size_t)e->want);
    child->cb_arg = s;
    free(e);
    child_done(child);
}

static int run_local(coll_sched_t *s, const sched_act_t *a)
{
    if (a->kind == ACT_COPY)
        return coll_copy(a->src, a->scount, a->sdt, a->dst, a->rcount, a->rdt);
    return coll_red_apply(&s->red, a->src, a->dst, a->scount);
}

static int post(coll_sched_t *s, const sched_act_t *a)
{
    obj_request_t *r;
    int rc;
    if (a->kind == ACT_SEND)
        rc = pml_send_create(a->src, a->scount, a->sdt, a->peer, s->tag, PML_SEND_STANDARD,
                             s->comm, PML_COLL, &r);
    else
        rc = pml_recv_create(a->dst, a->rcount, a->rdt, a->peer, s->tag, s->comm, PML_COLL, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    r->on_complete = child_done;
    r->cb_arg = s;
    if (a->kind == ACT_RECV && a->exact && a->peer != MPI_PROC_NULL) {
        sched_exact_t *e = malloc(sizeof(*e));
        if (!e) {
            pml_request_free(r);
            return obj_errf(MPI_ERR_NO_MEM, "out of memory starting a collective schedule");
        }
        *e = (sched_exact_t){ s, a->rcount * a->rdt->size, a->peer };
        r->on_complete = child_done_exact;
        r->cb_arg = e;
    }
    s->pending++;
    return pml_start(r);
}

static void note_error(coll_sched_t *s, int rc)
{
    if (rc != MPI_SUCCESS && s->error == MPI_SUCCESS)
        s->error = rc;
}

/* Start rounds until one waits for communication, or complete. */
static void sched_advance(coll_sched_t *s)
{
    while (s->cur < s->n_rounds) {
        int lo = s->cur ? s->round_end[s->cur - 1] : 0, hi = s->round_end[s->cur];
        s->cur++;
        for (int i = lo; i < hi; i++)
            if (s->acts[i].kind == ACT_COPY || s->acts[i].kind == ACT_REDUCE)
                note_error(s, run_local(s, &s->acts[i]));
        s->pending = 1;   /* completions while posting must not end the round */
        for (int i = lo; i < hi; i++)
            if (s->acts[i].kind == ACT_SEND || s->acts[i].kind == ACT_RECV)
                note_error(s, post(s, &s->acts[i]));
        if (--s->pending > 0)
            return;
    }
    sched_complete(s);
}

static int sched_progress(void *arg)
{
    (void)arg;
    int n = 0;
    rail_list_item_t *it;
    while ((it = rail_list_pop_front(&ready)) != NULL) {
        rail_atomic_sub_fetch(&n_ready, 1);
        sched_advance(rail_container_of(it, coll_sched_t, ready_item));
        n++;
    }
    return n;
}

void coll_sched_engine_hold(int delta)
{
    RAIL_CS_ENTER();
    int before = engine_holds;
    engine_holds += delta;
    if (before == 0 && engine_holds > 0)
        rail_progress_register_lazy(sched_progress, NULL, 0, &n_ready);
    else if (before > 0 && engine_holds == 0)
        rail_progress_unregister(sched_progress, NULL);
    RAIL_CS_EXIT();
}

/* ------------------------------------------------------------ the request */

static void sched_release(obj_request_t *req)
{
    sched_destroy((coll_sched_t *)req);
}

static int sched_start(obj_request_t *req)
{
    coll_sched_t *s = (coll_sched_t *)req;
    RAIL_CS_ENTER();
    uint8_t flags = req->flags;
    obj_request_init(req, OBJ_REQ_COLL, req->ops, s->comm);
    req->flags = flags | OBJ_REQ_FLAG_ACTIVE;
    s->cur = 0;
    s->error = MPI_SUCCESS;
    sched_advance(s);
    RAIL_CS_EXIT();
    return MPI_SUCCESS;
}

static const obj_request_ops_t sched_ops = {
    .release = sched_release,
    .cancel = NULL,   /* collectives cannot be cancelled */
    .start = sched_start,
};

int coll_sched_commit(coll_sched_t *s, unsigned flags, obj_request_t **req)
{
    int rc = coll_sched_round(s);
    if (rc != MPI_SUCCESS) {
        sched_destroy(s);
        return rc;
    }
    obj_request_init(&s->req, OBJ_REQ_COLL, &sched_ops, s->comm);
    obj_comm_retain(s->comm);   /* MPI_Comm_free may come before the completion */
    s->comm_held = true;
    s->ready_item.next = s->ready_item.prev = &s->ready_item;
    *req = &s->req;
    if (flags & COLL_F_PERSISTENT) {
        s->req.flags = OBJ_REQ_FLAG_PERSISTENT;
        return MPI_SUCCESS;
    }
    RAIL_CS_ENTER();
    sched_advance(s);
    RAIL_CS_EXIT();
    return MPI_SUCCESS;
}

int coll_sched_wait(obj_request_t *req)
{
    obj_request_wait_complete(req);
    int rc = req->status.error;
    RAIL_CS_ENTER();
    req->ops->release(req);
    RAIL_CS_EXIT();
    return coll_recv_error(rc);
}
