/*
 * Context ids: which ids a new communicator gets, agreed by its processes.
 *
 * POOL.  Ids are 0 .. COMM_CTXID_MAX-1 (8192, well below the pml's
 * PML_CONTEXT_COLL_BIT); 0, 1 and 2 are MPI_COMM_WORLD, MPI_COMM_SELF and
 * the hidden bootstrap communicator.  Each process keeps a bitmask of the
 * ids free here (free_mask).  An id is taken when a communicator is made
 * and given back when the last reference to it goes (comm_ctxid_release).
 * Ids are per process: two communicators on disjoint processes may share
 * one (all the communicators of one MPI_Comm_split do).
 *
 * AGREEMENT.  The processes of the new communicator (plus, for
 * MPI_Comm_create / MPI_Comm_split, the other processes of the parent, who
 * only help) compute the AND of masks with a binomial reduce to a leader and
 * a binomial broadcast back, on point-to-point messages (comm_xchg.c tags);
 * for an intercommunicator the two leaders swap their groups' results in
 * between.  Every participant then holds the same result and takes its
 * lowest set bit(s).  This runs as a state machine in the progress engine,
 * so MPI_Comm_idup is truly nonblocking and blocking calls just wait.
 *
 * CONCURRENCY.  Several agreements may run at once in a process (threads
 * under MPI_THREAD_MULTIPLE, pending idups, a blocking dup while an idup
 * waits for a late peer).  An agreement must never take an id that another
 * one takes at the same time, and must never wait for another agreement to
 * finish (that could deadlock: process p's idup on A waits for q, who is
 * inside a blocking dup on B that needs p).  So each ROUND of an agreement
 * contributes a WINDOW: bits that this process reserves for that round only
 * (the `reserved` mask); concurrent rounds reserve disjoint windows, and
 * the AND of windows is free and unreserved everywhere, so the chosen bit
 * can be committed at once.  A round whose AND is empty is repeated.
 *   - Round 0 reserves the lower half of this process's unreserved free
 *     ids (the common case: one round, lowest common id).  Taking only half
 *     leaves ids for other agreements while this one may wait for peers
 *     that have not called yet.
 *   - Later rounds reserve all unreserved free ids.  Every participant has
 *     joined by then (round 0 completed), so a later round always ends
 *     soon.  To exclude livelock between two repeating agreements that
 *     starve each other (p gives all to X, q gives all to Y), a repeating
 *     agreement reserves nothing while a repeating agreement of higher
 *     priority is registered here.  The priority (key, seq) is the same at
 *     every participant: (the parent's context id, its exchange sequence
 *     number) for collective calls on a communicator, the user's tag for
 *     MPI_Comm_create_group, both local communicators' ids for
 *     MPI_Intercomm_create, a hash of the string tag for the session
 *     constructors; the highest repeating agreement anywhere thus gets full
 *     windows everywhere and succeeds.
 *   - A round reports whether each window was all the process's free ids
 *     (FLAG_FULL, ANDed); an empty result with FLAG_FULL everywhere means
 *     the ids are exhausted: MPI_ERR_INTERN, not a retry loop.
 * Everything here runs inside the progress critical section (RAIL_CS_*).
 *
 * Cost: one reduce + broadcast of 1 KiB per creation in the common case;
 * MPI_Comm_free is local.
 */
#include "obj/comm_int.h"
#include "obj/datatype.h"
#include "base/list.h"
#include "base/progress.h"
#include "base/atomic.h"

#include <stdlib.h>
#include <string.h>

#define W (COMM_CTXID_MAX / 32)   /* mask words */
#define MSG_WORDS (W + 1)         /* mask + flags */
#define MSG_BYTES (MSG_WORDS * sizeof(uint32_t))
#define FLAG_FULL 1u
#define MAX_CHILD 32

static int ctxid_progress(void *arg);

static uint32_t free_mask[W];
static uint32_t reserved[W];
static rail_list_t ops = RAIL_LIST_INIT(ops);
static int n_ops;               /* registered agreements (lazy progress indicator) */
static bool in_callback;
static bool initialized;

enum { ST_START, ST_UP, ST_PEER, ST_PARENT, ST_DOWN, ST_DONE };

typedef struct ctxid_op {
    rail_list_item_t item;
    comm_agree_t a;
    int round, state;
    int v;                        /* my index relative to the root */
    int nchild, child[MAX_CHILD]; /* participant indices */
    uint32_t window[W];
    uint32_t acc[MSG_WORDS];
    uint32_t *bufs;               /* (nchild + 1) messages: children, then parent / peer */
    obj_request_t *reqs[MAX_CHILD + 2];
    int nreq;
    uint32_t ids[2];
    int rc;
    int done;                     /* blocking waiter: set last */
    comm_agree_cb_t cb;
    void *cb_arg;
} ctxid_op_t;

/* ------------------------------------------------------------ the pool */

static void set_bit(uint32_t *m, int i) { m[i >> 5] |= 1u << (i & 31); }
static void clear_bit(uint32_t *m, int i) { m[i >> 5] &= ~(1u << (i & 31)); }

int comm_ctxid_init(void)
{
    memset(free_mask, 0xff, sizeof(free_mask));
    memset(reserved, 0, sizeof(reserved));
    for (int i = 0; i < COMM_CTXID_FIRST_FREE; i++)
        clear_bit(free_mask, i);
    rail_list_init(&ops);
    n_ops = 0;
    int rc = rail_progress_register_lazy(ctxid_progress, NULL, 0, &n_ops);
    initialized = rc == MPI_SUCCESS;
    return rc;
}

void comm_ctxid_release(uint32_t id)
{
    if (id < COMM_CTXID_FIRST_FREE || id >= COMM_CTXID_MAX)
        return;
    RAIL_CS_ENTER();
    set_bit(free_mask, (int)id);
    RAIL_CS_EXIT();
}

/* ------------------------------------------------------------ windows */

static bool higher_priority(const ctxid_op_t *x, const ctxid_op_t *y)
{
    return x->a.key < y->a.key || (x->a.key == y->a.key && x->a.seq < y->a.seq);
}

/* A repeating member agreement of higher priority than op is registered. */
static bool outranked(const ctxid_op_t *op)
{
    for (rail_list_item_t *it = rail_list_first(&ops); it; it = rail_list_next(&ops, it)) {
        const ctxid_op_t *o = rail_container_of(it, ctxid_op_t, item);
        if (o != op && o->a.member && o->round > 0 && o->state != ST_DONE &&
            higher_priority(o, op))
            return true;
    }
    return false;
}

/* Reserve this round's window and fill the message to contribute. */
static void take_window(ctxid_op_t *op)
{
    memset(op->window, 0, sizeof(op->window));
    if (!op->a.member) {
        memset(op->acc, 0xff, sizeof(op->acc));
        op->acc[W] = FLAG_FULL;
        return;
    }
    int avail = 0;
    if (op->round == 0 || !outranked(op))
        for (int i = 0; i < W; i++)
            avail += __builtin_popcount(free_mask[i] & ~reserved[i]);
    int take = op->round == 0 ? (avail + 1) / 2 : avail;
    for (int w = 0; w < W && take > 0; w++) {
        uint32_t bits = free_mask[w] & ~reserved[w];
        int n = __builtin_popcount(bits);
        if (n > take) {   /* the lowest `take` of them */
            uint32_t keep = 0;
            for (; take > 0; take--, bits &= bits - 1)
                keep |= bits & -bits;
            bits = keep;
        } else {
            take -= n;
        }
        op->window[w] = bits;
    }
    bool full = true;
    for (int i = 0; i < W; i++) {
        reserved[i] |= op->window[i];
        full = full && op->window[i] == free_mask[i];
    }
    memcpy(op->acc, op->window, sizeof(op->window));
    op->acc[W] = full ? FLAG_FULL : 0;
}

static void drop_window(ctxid_op_t *op)
{
    for (int i = 0; i < W; i++)
        reserved[i] &= ~op->window[i];
    memset(op->window, 0, sizeof(op->window));
}

/* ------------------------------------------------------------ messages */

static int rank_of(const comm_xchg_t *x, int idx)
{
    return x->ranks ? x->ranks[idx] : idx;
}

static int abs_index(const ctxid_op_t *op, int v)
{
    return (v + op->a.root) % op->a.local.n;
}

static uint32_t *slot(ctxid_op_t *op, int i)
{
    return op->bufs + (size_t)i * MSG_WORDS;
}

static int post_recv(ctxid_op_t *op, void *buf, obj_comm_t *comm, unsigned flags, int rank,
                     int tag)
{
    return comm_p2p()->irecv(buf, MSG_BYTES, rank, tag, comm, flags, &op->reqs[op->nreq++]);
}

static int post_send(ctxid_op_t *op, const void *buf, obj_comm_t *comm, unsigned flags, int rank,
                     int tag)
{
    return comm_p2p()->isend(buf, MSG_BYTES, rank, tag, comm, flags, &op->reqs[op->nreq++]);
}

static int post_local(ctxid_op_t *op, bool send, void *buf, int v)
{
    const comm_xchg_t *x = &op->a.local;
    int rank = rank_of(x, abs_index(op, v));
    return send ? post_send(op, buf, x->comm, x->flags, rank, x->tag)
                : post_recv(op, buf, x->comm, x->flags, rank, x->tag);
}

/* All posted requests complete?  Then release them; *rc gets an error. */
static bool collect(ctxid_op_t *op, int *rc)
{
    for (int i = 0; i < op->nreq; i++)
        if (!obj_request_is_complete(op->reqs[i]))
            return false;
    *rc = MPI_SUCCESS;
    for (int i = 0; i < op->nreq; i++) {
        int e = comm_p2p()->wait(op->reqs[i], NULL);
        if (e != MPI_SUCCESS && *rc == MPI_SUCCESS)
            *rc = e;
    }
    op->nreq = 0;
    return true;
}

static void and_into(uint32_t *acc, const uint32_t *m)
{
    for (int i = 0; i < MSG_WORDS; i++)
        acc[i] &= m[i];
}

/* ------------------------------------------------------------ the state machine */

static void finish(ctxid_op_t *op, int rc)
{
    drop_window(op);
    op->rc = rc;
    op->state = ST_DONE;
}

/* A message failed: abandon the requests still pending (their buffers are
 * then leaked, as they may still be written) and end with rc. */
static void fail(ctxid_op_t *op, int rc)
{
    bool pending = false;
    for (int i = 0; i < op->nreq; i++) {
        if (obj_request_is_complete(op->reqs[i])) {
            comm_p2p()->wait(op->reqs[i], NULL);
        } else {
            comm_p2p()->free(op->reqs[i]);
            pending = true;
        }
    }
    op->nreq = 0;
    if (pending)
        op->bufs = NULL;
    finish(op, rc);
}

/* The lowest nids bits of the result, or false. */
static bool pick(ctxid_op_t *op)
{
    int found = 0;
    for (int w = 0; w < W && found < op->a.nids; w++) {
        uint32_t bits = op->acc[w];
        while (bits && found < op->a.nids) {
            int b = __builtin_ctz(bits);
            op->ids[found++] = (uint32_t)(w * 32 + b);
            bits &= bits - 1;
        }
    }
    return found == op->a.nids;
}

static void decide(ctxid_op_t *op)
{
    if (pick(op)) {
        if (op->a.member)
            for (int i = 0; i < op->a.nids; i++)
                clear_bit(free_mask, (int)op->ids[i]);
        finish(op, MPI_SUCCESS);
    } else if (op->acc[W] & FLAG_FULL) {
        finish(op, obj_errf(MPI_ERR_INTERN, "no context id is free at every process of the new "
                            "communicator (%d ids per process; free communicators you no longer "
                            "need)", COMM_CTXID_MAX));
    } else {
        drop_window(op);
        op->round++;
        op->state = ST_START;
    }
}

static int start_round(ctxid_op_t *op)
{
    take_window(op);
    for (int c = 0; c < op->nchild; c++) {
        int rc = post_local(op, false, slot(op, c), op->child[c]);
        if (rc)
            return rc;
    }
    op->state = ST_UP;
    return MPI_SUCCESS;
}

static int send_down(ctxid_op_t *op)
{
    for (int c = 0; c < op->nchild; c++) {
        int rc = post_local(op, true, op->acc, op->child[c]);
        if (rc)
            return rc;
    }
    op->state = ST_DOWN;
    return MPI_SUCCESS;
}

/* Children's contributions are in: pass up, or swap with the peer leader. */
static int after_children(ctxid_op_t *op)
{
    for (int c = 0; c < op->nchild; c++)
        and_into(op->acc, slot(op, c));
    uint32_t *in = slot(op, op->nchild);
    if (op->v != 0) {
        int parent = op->v & (op->v - 1);
        int rc = post_local(op, true, op->acc, parent);
        if (rc == MPI_SUCCESS)
            rc = post_local(op, false, in, parent);
        op->state = ST_PARENT;
        return rc;
    }
    if (op->a.peer_comm) {
        const comm_agree_t *a = &op->a;
        int rc = post_send(op, op->acc, a->peer_comm, a->peer_flags, a->peer_rank, a->peer_tag);
        if (rc == MPI_SUCCESS)
            rc = post_recv(op, in, a->peer_comm, a->peer_flags, a->peer_rank, a->peer_tag);
        op->state = ST_PEER;
        return rc;
    }
    return send_down(op);
}

/* Advance as far as possible; returns whether anything happened. */
static int advance(ctxid_op_t *op)
{
    int progressed = 0, rc = MPI_SUCCESS;
    while (op->state != ST_DONE) {
        if (op->state == ST_START) {
            rc = start_round(op);
        } else {
            if (!collect(op, &rc))
                return progressed;
            if (rc == MPI_SUCCESS) {
                switch (op->state) {
                case ST_UP: rc = after_children(op); break;
                case ST_PEER: and_into(op->acc, slot(op, op->nchild)); rc = send_down(op); break;
                case ST_PARENT:
                    memcpy(op->acc, slot(op, op->nchild), MSG_BYTES);
                    rc = send_down(op);
                    break;
                case ST_DOWN:
                    decide(op);
                    /* An agreement of this process alone (a dup of
                     * MPI_COMM_SELF) that must repeat would repeat here at
                     * once, for ever, inside the critical section, while
                     * the agreements whose windows it waits for need that
                     * section to progress: it repeats in a later call
                     * instead (one ending wakes the waiters). */
                    if (op->state == ST_START && op->a.local.n == 1 && !op->a.peer_comm)
                        return 0;
                    break;
                }
            }
        }
        progressed = 1;
        if (rc != MPI_SUCCESS)
            fail(op, rc);
    }
    return progressed;
}

static void complete(ctxid_op_t *op)
{
    rail_list_remove(&op->item);
    n_ops--;
    obj_comm_release(op->a.local.comm);
    if (op->a.peer_comm)
        obj_comm_release(op->a.peer_comm);
    free(op->bufs);
    op->bufs = NULL;
    if (op->cb) {
        op->cb(op->cb_arg, op->rc, op->ids);
        free(op);
    } else {
        rail_atomic_store_release(&op->done, 1);
        if (RAIL_UNLIKELY(rail_progress_mt))
            rail_progress_wake();
    }
}

static int ctxid_progress(void *arg)
{
    (void)arg;
    if (RAIL_UNLIKELY(rail_list_empty(&ops)) || in_callback)
        return 0;
    in_callback = true;
    int n = 0;
    rail_list_item_t *it, *tmp;
    RAIL_LIST_FOREACH_SAFE(&ops, it, tmp)
    {
        ctxid_op_t *op = rail_container_of(it, ctxid_op_t, item);
        n += advance(op);
        if (op->state == ST_DONE)
            complete(op);
    }
    in_callback = false;
    return n;
}

/* ------------------------------------------------------------ starting */

static void tree_children(ctxid_op_t *op)
{
    int n = op->a.local.n;
    op->v = (op->a.local.me - op->a.root + n) % n;
    op->nchild = 0;
    for (int mask = 1; mask < n && !(op->v & mask); mask <<= 1)
        if (op->v + mask < n)
            op->child[op->nchild++] = op->v + mask;
}

static ctxid_op_t *op_new(const comm_agree_t *a)
{
    ctxid_op_t *op = calloc(1, sizeof(*op));
    if (!op)
        return NULL;
    op->a = *a;
    tree_children(op);
    op->bufs = malloc((size_t)(op->nchild + 1) * MSG_BYTES);
    if (!op->bufs) {
        free(op);
        return NULL;
    }
    obj_comm_retain(a->local.comm);
    if (a->peer_comm)
        obj_comm_retain(a->peer_comm);
    return op;
}

static void op_register(ctxid_op_t *op)
{
    RAIL_CS_ENTER();
    rail_list_append(&ops, &op->item);
    n_ops++;
    RAIL_CS_EXIT();
}

int comm_ctxid_agree_start(const comm_agree_t *a, comm_agree_cb_t cb, void *arg)
{
    ctxid_op_t *op = op_new(a);
    if (!op)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory starting a context id agreement");
    op->cb = cb;
    op->cb_arg = arg;
    op_register(op);
    rail_progress();
    return MPI_SUCCESS;
}

static bool op_done(void *arg)
{
    return rail_atomic_load_acquire(&((ctxid_op_t *)arg)->done) != 0;
}

int comm_ctxid_agree(const comm_agree_t *a, uint32_t ids[2])
{
    ctxid_op_t *op = op_new(a);
    if (!op)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory starting a context id agreement");
    op_register(op);
    rail_progress_wait(op_done, op);
    int rc = op->rc;
    ids[0] = op->ids[0];
    ids[1] = op->ids[1];
    free(op);
    return rc;
}

/* ------------------------------------------------------------ setup */

void comm_ctxid_fini(void)
{
    if (!initialized)
        return;
    rail_progress_unregister(ctxid_progress, NULL);
    initialized = false;
}
