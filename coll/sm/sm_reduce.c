/*
 * coll sm: reduce and allreduce with predefined operations.
 *
 * Inputs are converted to dense arrays of the datatype's basic type
 * (coll_red_t: rdt, `factor` basic elements per user element) as they are
 * copied into the segment, and combined with the host kernels of base/op
 * in rank order, x0 op (x1 op (... op x(n-1))), the order coll basic
 * uses, so every process gets the same bits and the results equal basic's.
 * Data go in rounds of E user elements (one buffer); round k uses buffer
 * coll_sm_round_buf(k) of every area (the same place everywhere; a
 * single round packed tight).
 *
 * FLAT (up to coll_sm_reduce_flat_max bytes; on two processes at any
 * size, coll_sm_reduce_pair_flat), one step per round:
 *   everyone: copy my input into my buffer, post step k + 1
 *   allreduce, everyone / reduce, the root: wait for everyone's step
 *   k + 1, combine all inputs into my result (a private scratch buffer
 *   first where the result is not a dense host array apart from my input).
 *   A reduce sender writes round k >= nbuf after the root's step
 *   k - nbuf + 2 (the root posts j + 1 only once round j - 1 is done).
 *   Steps count from 2 instead when step 1 was the announcement.
 *   Two processes: an allreduce's each reads the other's whole input, the
 *   same bytes that cross between the cores with slices (half the input,
 *   then half the result), with one wait per round instead of two and no
 *   result copied through the segment; a reduce's sender only copies.
 * SLICE (larger), two steps per round, each process reducing 1/n:
 *   copy my input into my buffer (but for slice `me` when the input is a
 *   dense host array: only I read it, from where it is), post 2k + 1;
 *   wait for everyone's 2k + 1;
 *   combine slice `me` of all inputs into the tail of my buffer, post
 *   2k + 2; allreduce, everyone / reduce, the root: wait for everyone's
 *   2k + 2 and copy every slice out.
 *   Every process waits for everyone's 2k + 1 in each round, and posts it
 *   only after finishing round k - 1: so nobody writes a buffer of round
 *   k + 2 before all readers of round k are done.
 *
 * SINGLE COPY (contiguous datatype of a basic type without padding, when
 * every process can read the others' memory; always from
 * coll_sm_single_copy_min bytes): no copies into the segment; see
 * sm_cma_run.  Three steps for any size (two for reduce).
 *
 * CHOSEN BY TIME (the same, from coll_sm_adapt_agree_min bytes when the
 * node is not oversubscribed): rank 0 picks single copy or the slices by
 * the time each took before (base/adapt.c) and announces it in step 1, which
 * is single copy's first step (sm_red_announce); the slices then use steps
 * from 2 (step0).
 *
 * DEVICE BUFFERS.  A process whose buffers are device memory sets bit 0 of
 * its meta word and copies nothing; after everyone's first step, all
 * processes see the same bits, and if any is set they all hand the call to
 * the next module (which reduces on the device).  Flat reduce senders wait
 * for everyone's first step for this.  An allreduce or reduce of
 * coll_sm_device_ipc_reduce_min bytes (every size by default) whose
 * buffers are all on devices is reduced device to device here instead,
 * from the others' buffers opened by IPC (a reduce into the root's result,
 * opened by everyone), when everyone can open them (sm_device.c; steps 2,
 * 3, FINAL).  A small one learns that every process has device buffers
 * from the slots (coll_sm_small_reduce) and goes on into these steps.
 */
#include "coll/sm/coll_sm.h"
#include "coll/sm/sm_decide.h"
#include "coll/sm/sm_device.h"
#include "coll/sm/sm_slots.h"
#include "accel/accel.h"
#include "obj/err.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of a flat round's result folded into the scratch buffer and
 * copied back at a time when in place. */
#define SM_RED_INPLACE_PIECE 4096

typedef struct sm_red {
    coll_red_t r;
    rail_typekind_t kind;
    size_t ue;                     /* bytes of one user element in the segment */
    MPI_Count E;                   /* user elements per round */
    size_t acc_off;                /* slice: where a buffer's partial result goes */
    size_t span;                   /* bytes of a buffer used when there is one round, else 0 */
    bool flat;
    int root;                      /* -1: allreduce */
    bool dev;                      /* my buffers are device memory */
    bool cma;                      /* single copy (see SINGLE COPY above) */
    int stop;                      /* COLL_SM_RED_STOP*: inputs differ (coll_sm_red_first) */
    uint32_t step0;                /* 1: step 1 was the announcement (sm_red_announce) */
    const void *mine;              /* my input */
    const char *src;               /* ... as a dense host array of the reduction's type, or NULL */
    void *rbuf;                    /* NULL where the result is not wanted */
    char *rdst;                    /* rbuf as such an array apart from src (flat), or NULL */
    bool rsame;                    /* ... or at src exactly (in place) */
} sm_red_t;


int coll_sm_fold_own(rail_op_t rop, rail_typekind_t kind, int n, const char *x, size_t stride,
                     size_t len, void *out, int own, const void *xown)
{
    if (len == 0)
        return MPI_SUCCESS;
#define SM_X(i) ((i) == own ? (const char *)xown : x + (size_t)(i) * stride)
    int rc = rail_op_reduce3(rop, kind, SM_X(n - 2), SM_X(n - 1), out, len);
    for (int i = n - 3; i >= 0 && rc == MPI_SUCCESS; i--)
        rc = rail_op_reduce(rop, kind, SM_X(i), out, len);
#undef SM_X
    return rc == MPI_SUCCESS ? rc : obj_errf(rc, "coll sm: reduction kernel failed");
}

int coll_sm_fold_ptrs(rail_op_t rop, rail_typekind_t kind, int n, const char *const *x,
                      size_t len, void *out)
{
    if (len == 0)
        return MPI_SUCCESS;
    int rc = rail_op_reduce3(rop, kind, x[n - 2], x[n - 1], out, len);
    for (int i = n - 3; i >= 0 && rc == MPI_SUCCESS; i--)
        rc = rail_op_reduce(rop, kind, x[i], out, len);
    return rc == MPI_SUCCESS ? rc : obj_errf(rc, "coll sm: reduction kernel failed");
}

/* Round sizes; false when one user element does not fit a buffer. */
static bool sm_red_plan(coll_sm_module_t *m, sm_red_t *c, MPI_Count count)
{
    size_t C = m->chunk, n = (size_t)m->n;
    c->ue = (size_t)(c->r.factor * c->r.rdt->extent);
    if (c->ue == 0)
        return false;
    c->flat = (size_t)count * c->ue <= coll_sm_params.reduce_flat_max ||
              (n == 2 && coll_sm_params.reduce_pair_flat);
    c->span = 0;
    if (c->flat) {
        c->E = (MPI_Count)(C / c->ue);
        if (c->E >= count)
            c->span = (size_t)count * c->ue;
        return c->E > 0;
    }
    /* E elements of input, then a slice of ceil(E / n) at a 64-byte boundary */
    size_t e = (C - 64) / c->ue * n / (n + 1);
    while (e > 0 && RAIL_ALIGN_UP(e * c->ue, (size_t)64) + (e + n - 1) / n * c->ue > C)
        e--;
    c->E = (MPI_Count)e;
    c->acc_off = RAIL_ALIGN_UP(e * c->ue, (size_t)64);
    if (e > 0 && c->E >= count) {   /* one round: packed tight, placed by coll_sm_round_buf */
        c->acc_off = RAIL_ALIGN_UP((size_t)count * c->ue, (size_t)64);
        c->span = c->acc_off + ((size_t)count + n - 1) / n * c->ue;
    }
    return e > 0;
}

/* A reduction's meta word (coll_sm_red_meta): counts that differ between
 * processes are erroneous, and reported, not hung on, as in the slots.
 * Every path waits for everyone's first step before it reads anyone's
 * data, and then every process reads the same words: all stop there, or
 * none does. */
int coll_sm_red_first(coll_sm_module_t *m, int set, uint64_t bytes, bool *handoff, int *stop)
{
    uint64_t mine = coll_sm_red_meta(m, bytes);
    bool dev = false;
    int rc = MPI_SUCCESS;
    *stop = COLL_SM_RED_GO;
    for (int j = 0; j < m->n; j++) {
        uint64_t w = coll_sm_ctl(m, j)->meta[set];
        dev = dev || (w & 1);
        if (RAIL_LIKELY((w ^ mine) >> COLL_SM_RED_BYTES_SHIFT == 0) || j == m->me)
            continue;
        /* a process that took the slots for this call has begun one more
         * small operation (MISMATCHED SIZES, sm_small.c) */
        if ((w ^ mine) >> COLL_SM_RED_SMALL_SHIFT)
            *stop = COLL_SM_RED_STOP_SLOTS;
        else if (*stop == COLL_SM_RED_GO)
            *stop = COLL_SM_RED_STOP;
        if (rc == MPI_SUCCESS)
            rc = coll_check_length(j, (size_t)coll_sm_red_meta_bytes(w),
                                   (size_t)(bytes & COLL_SM_RED_BYTES_MASK));
    }
    *handoff = dev || *stop != COLL_SM_RED_GO;
    return rc;
}

void coll_sm_red_stop(coll_sm_module_t *m, uint64_t s, int stop)
{
    if (stop == COLL_SM_RED_STOP_SLOTS)
        coll_sm_small_pass(m);
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
}

static uint64_t sm_red_bytes(const sm_red_t *c)
{
    return (uint64_t)(c->r.count * c->r.udt->size);
}

/* Round k's buffer in rank r's area (every rank's at the same place). */
static char *sm_red_buf(coll_sm_module_t *m, const sm_red_t *c, int r, int set, uint64_t s,
                        MPI_Count k)
{
    return coll_sm_round_buf(m, r, set, s, (size_t)k, c->span ? c->span : COLL_SM_MULTI_ROUND);
}

/* Round k's first step: my input (m_u user elements) into my buffer,
 * except elements [skip_lo, skip_hi) that only I read (my slice, taken
 * from c->src), post `step`, and wait for everyone's when `all`.  Round 0
 * also carries the device bit and the sizes: everyone waits for everyone,
 * and *handoff is set when any process has device buffers or the inputs
 * differ (coll_sm_red_first). */
static int sm_put_input(coll_sm_module_t *m, sm_red_t *c, uint64_t s, MPI_Count k,
                        MPI_Count m_u, MPI_Count skip_lo, MPI_Count skip_hi, uint32_t step,
                        bool all, bool *handoff)
{
    int set = coll_sm_set(m, s), rc = MPI_SUCCESS;
    if (k == 0 && c->step0 == 0) {
        coll_sm_claim_set(m, s);
        coll_sm_ctl(m, m->me)->meta[set] =
            (c->dev ? 1u : 0u) | coll_sm_red_meta(m, sm_red_bytes(c));
    }
    char *buf = sm_red_buf(m, c, m->me, set, s, k);
    MPI_Count e0 = k * c->E;
    if (!c->dev && skip_lo > 0)
        rc = coll_red_load(&c->r, buf, coll_elem(c->mine, c->r.udt, e0), skip_lo);
    if (!c->dev && rc == MPI_SUCCESS && skip_hi < m_u)
        rc = coll_red_load(&c->r, coll_red_at(&c->r, buf, skip_hi),
                           coll_elem(c->mine, c->r.udt, e0 + skip_hi), m_u - skip_hi);
    coll_sm_post(m, COLL_SM_V(s, step));
    if (k == 0 || all) {
        coll_sm_wait_all(m, COLL_SM_V(s, step));
        if (k == 0) {   /* (c->step0: the announcement was step 1) */
            int r2 = c->step0 ? MPI_SUCCESS
                              : coll_sm_red_first(m, set, sm_red_bytes(c), handoff, &c->stop);
            rc = SM_KEEP(rc, r2);
        }
    }
    return rc;
}

static int sm_flat_round(coll_sm_module_t *m, sm_red_t *c, uint64_t s, MPI_Count k,
                         MPI_Count m_u, bool *handoff)
{
    bool want = c->rbuf != NULL;
    if (k >= m->nbuf && !want)
        coll_sm_wait(m, c->root, COLL_SM_V(s, k - m->nbuf + 2 + c->step0));
    int rc = sm_put_input(m, c, s, k, m_u, m_u, m_u, (uint32_t)(k + 1) + c->step0, want, handoff);
    if (*handoff || !want)
        return rc;
    /* its own input from c->src when it can (see sm_small.c: reading back
     * its own buffer after the others read it costs a transfer per line) */
    size_t eb = (size_t)(c->r.factor * c->r.rdt->extent);
    const char *x = sm_red_buf(m, c, 0, coll_sm_set(m, s), s, k);
    size_t rs = coll_sm_rank_stride(m), N = (size_t)(m_u * c->r.factor);
    if (c->rsame) {
        /* in place: piece by piece through the scratch buffer, so that the
         * copy back finds both sides still in the first-level cache (a
         * round's whole result copied back cost np 2 a third more time) */
        size_t esz = (size_t)c->r.rdt->size, P = RAIL_MAX(SM_RED_INPLACE_PIECE / esz, (size_t)1);
        char *res = (char *)c->src + (size_t)(k * c->E) * eb;
        int r2 = MPI_SUCCESS;
        for (size_t a = 0; a < N && r2 == MPI_SUCCESS; a += P) {
            size_t len = RAIL_MIN(P, N - a);
            r2 = coll_sm_fold_own(c->r.rop, c->kind, m->n, x + a * esz, rs, len, m->scratch,
                                  m->me, res + a * esz);
            if (r2 == MPI_SUCCESS)
                memcpy(res + a * esz, m->scratch, len * esz);
        }
        return SM_KEEP(rc, r2);
    }
    char *out = c->rdst ? c->rdst + (size_t)(k * c->E) * eb : m->scratch;
    rc = SM_KEEP(rc, coll_sm_fold_own(c->r.rop, c->kind, m->n, x, rs, N, out,
                                      c->src ? m->me : -1,
                                      c->src ? c->src + (size_t)(k * c->E) * eb : NULL));
    if (c->rdst)
        return rc;
    return SM_KEEP(rc, coll_red_store(&c->r, coll_elem(c->rbuf, c->r.udt, k * c->E), m->scratch,
                                      m_u));
}

static int sm_slice_round(coll_sm_module_t *m, sm_red_t *c, uint64_t s, MPI_Count k,
                          MPI_Count m_u, bool *handoff)
{
    int set = coll_sm_set(m, s), n = m->n, me = m->me;
    /* rank r's buffer of this round: b0 + r * rs */
    char *b0 = sm_red_buf(m, c, 0, set, s, k);
    size_t rs = coll_sm_rank_stride(m);
    MPI_Count lo = me * m_u / n, hi = (me + 1) * m_u / n;
    /* nobody else reads my slice of my input: it stays where it is */
    bool own = c->src != NULL;
    uint32_t step = (uint32_t)(2 * k + 1) + c->step0;
    int rc = sm_put_input(m, c, s, k, m_u, own ? lo : m_u, own ? hi : m_u, step, true, handoff);
    if (*handoff)
        return rc;
    size_t eb = (size_t)(c->r.factor * c->r.rdt->extent);
    rc = SM_KEEP(rc, coll_sm_fold_own(c->r.rop, c->kind, n, b0 + lo * eb, rs,
                                      (size_t)((hi - lo) * c->r.factor),
                                      b0 + me * rs + c->acc_off, own ? me : -1,
                                      own ? c->src + (size_t)(k * c->E + lo) * eb : NULL));
    /* my slice of the result while its lines are still mine alone: read
     * back after the others read them, they cost a transfer each */
    if (c->rbuf && hi > lo)
        rc = SM_KEEP(rc, coll_red_store(&c->r, coll_elem(c->rbuf, c->r.udt, k * c->E + lo),
                                        b0 + me * rs + c->acc_off, hi - lo));
    coll_sm_post(m, COLL_SM_V(s, step + 1));
    if (!c->rbuf)
        return rc;
    coll_sm_wait_all(m, COLL_SM_V(s, step + 1));
    for (int j = 0; j < n; j++) {
        MPI_Count l = j * m_u / n, h = (j + 1) * m_u / n;
        if (h > l && j != me)
            rc = SM_KEEP(rc, coll_red_store(&c->r, coll_elem(c->rbuf, c->r.udt, k * c->E + l),
                                            b0 + j * rs + c->acc_off, h - l));
    }
    return rc;
}

/* ------------------------------------------------------------ single copy */

/* Bytes [off, off + bytes) of process i's input: where it is (mine, at
 * own), or read into tmp. */
static int sm_cma_input(coll_sm_module_t *m, const char *own, int set, int i, size_t off,
                        size_t bytes, char *tmp, const char **x)
{
    if (i == m->me) {
        *x = own + off;
        return MPI_SUCCESS;
    }
    *x = tmp;
    const coll_sm_ctl_t *ci = coll_sm_ctl(m, i);
    return coll_sm_cma_read(ci->pid, ci->addr[set] + off, tmp, bytes);
}

int coll_sm_cma_fold(coll_sm_module_t *m, rail_op_t rop, rail_typekind_t kind, int set,
                     const char *own, size_t a, size_t len, size_t esz, char *out, char *t1,
                     char *t2)
{
    size_t off = a * esz, bytes = len * esz;
    int n = m->n;
    const char *x, *y;
    int rc = sm_cma_input(m, own, set, n - 1, off, bytes, t1, &y);
    if (rc == MPI_SUCCESS && n == 1)
        memmove(out, y, bytes);
    if (rc != MPI_SUCCESS || n == 1)
        return rc;
    rc = sm_cma_input(m, own, set, n - 2, off, bytes, t2, &x);
    if (rc == MPI_SUCCESS)
        rc = rail_op_reduce3(rop, kind, x, y, out, len);
    for (int i = n - 3; i >= 0 && rc == MPI_SUCCESS; i--) {
        rc = sm_cma_input(m, own, set, i, off, bytes, t1, &x);
        if (rc == MPI_SUCCESS)
            rc = rail_op_reduce(rop, kind, x, out, len);
    }
    return rc;
}

char *coll_sm_cma_bufs(coll_sm_module_t *m)
{
    if (!m->cma_buf)
        m->cma_buf = malloc(3 * COLL_SM_CMA_PIECE);
    return m->cma_buf;
}

/* Every process reduces its slice of the whole vector reading the others'
 * buffers directly (process_vm_readv), and puts it in its own result
 * buffer (allreduce) or the root's (process_vm_writev); allreduce then
 * reads the other slices from their owners' result buffers.  Steps: 1 the
 * addresses are published (with the device bit), 2 the slices are done;
 * allreduce waits for everyone's FINAL before returning (its result
 * buffer is read until then). */
/* Step 1 of a single-copy reduction, and of one whose path rank 0 chose by
 * time: publish the device bit, `path` (rank 0's counts: bit 1 of its meta
 * word), the buffer addresses; wait for everyone's.  Returns rank 0's
 * path; *handoff when some process has device buffers. */
static int sm_red_announce(coll_sm_module_t *m, sm_red_t *c, uint64_t s, int path,
                           bool *handoff, int *rc)
{
    int set = coll_sm_set(m, s);
    coll_sm_ctl_t *my = coll_sm_ctl(m, m->me);
    obj_datatype_t *dt = c->r.udt;
    coll_sm_claim_set(m, s);
    my->meta[set] =
        (c->dev ? 1u : 0u) | (uint64_t)path << 1 | coll_sm_red_meta(m, sm_red_bytes(c));
    my->addr[set] = (uint64_t)(uintptr_t)rail_dt_contig_ptr(dt->layout, c->r.count, c->mine);
    my->raddr[set] =
        c->rbuf ? (uint64_t)(uintptr_t)rail_dt_contig_ptr(dt->layout, c->r.count, c->rbuf) : 0;
    coll_sm_post(m, COLL_SM_V(s, 1));
    coll_sm_wait_all(m, COLL_SM_V(s, 1));
    *rc = coll_sm_red_first(m, set, sm_red_bytes(c), handoff, &c->stop);
    return (int)((coll_sm_ctl(m, 0)->meta[set] >> 1) & 1);
}

static int sm_cma_run(coll_sm_module_t *m, sm_red_t *c, uint64_t s, bool *handoff)
{
    int set = coll_sm_set(m, s), n = m->n, me = m->me, rc = MPI_SUCCESS;
    coll_sm_ctl_t *my = coll_sm_ctl(m, me);
    size_t esz = (size_t)c->r.rdt->size, N = (size_t)(c->r.count * c->r.factor);
    if (c->step0 == 0)
        sm_red_announce(m, c, s, COLL_SM_PATH_CMA, handoff, &rc);
    if (*handoff)
        return rc;
    int dst = c->root < 0 ? me : c->root;
    const coll_sm_ctl_t *cd = coll_sm_ctl(m, dst);
    if (!coll_sm_cma_bufs(m))
        return obj_errf(MPI_ERR_NO_MEM, "coll sm: out of memory for single-copy buffers");
    char *acc = m->cma_buf, *t1 = acc + COLL_SM_CMA_PIECE, *t2 = t1 + COLL_SM_CMA_PIECE;
    const char *own = rail_dt_contig_ptr(c->r.udt->layout, c->r.count, c->mine);
    size_t P = COLL_SM_CMA_PIECE / esz, lo = me * N / n, hi = (me + 1) * N / n;
    /* my part of the result goes straight into my result buffer, unless
     * that is my input (in place): it is read until the last fold */
    bool direct = dst == me && cd->raddr[set] != my->addr[set];
    for (size_t a = lo; a < hi && rc == MPI_SUCCESS; a += P) {
        size_t len = RAIL_MIN(P, hi - a);
        char *res = (char *)(uintptr_t)cd->raddr[set] + a * esz;
        rc = coll_sm_cma_fold(m, c->r.rop, c->kind, set, own, a, len, esz, direct ? res : acc,
                              t1, t2);
        if (rc == MPI_SUCCESS && dst == me && !direct)
            memcpy(res, acc, len * esz);
        else if (rc == MPI_SUCCESS && dst != me)
            rc = coll_sm_cma_write(cd->pid, cd->raddr[set] + a * esz, acc, len * esz);
    }
    coll_sm_post(m, COLL_SM_V(s, 2));
    coll_sm_wait_all(m, COLL_SM_V(s, 2));
    for (int j = 0; c->root < 0 && j < n && rc == MPI_SUCCESS; j++) {
        size_t l = j * N / n, h = (j + 1) * N / n;
        const coll_sm_ctl_t *cj = coll_sm_ctl(m, j);
        if (j != me && h > l)
            rc = coll_sm_cma_read(cj->pid, cj->raddr[set] + l * esz,
                                  (char *)(uintptr_t)my->raddr[set] + l * esz, (h - l) * esz);
    }
    return rc;
}

/* ------------------------------------------------------------ entry */

/* Why sm cannot reduce this call (the same answer on every process), or
 * NULL; fills c. */
const char *coll_sm_red_prepare(coll_sm_module_t *m, coll_red_t *r, rail_typekind_t *kind,
                                obj_op_t *op, obj_datatype_t *dt, MPI_Count count, int *rc)
{
    *rc = MPI_SUCCESS;
    if (op->op == RAIL_OP_NONE)
        return "user-defined operation";
    if (op == m->prep_op && dt == m->prep_dt) {
        /* accepted before: what coll_red_init makes of a predefined type
         * without the checks (a third of a small allreduce's instructions
         * went to checking the same pair again, call after call) */
        *r = (coll_red_t){ .op = op, .rop = op->op, .udt = dt, .count = count,
                           .rdt = dt->basic, .factor = 1 };
        *kind = m->prep_kind;
        return NULL;
    }
    *rc = coll_red_init(r, op, dt, count, NULL, NULL);
    if (*rc != MPI_SUCCESS)
        return NULL;
    *kind = (rail_typekind_t)r->rdt->kind;
    if (*kind == RAIL_TK_NONE || !rail_op_kernel(r->rop, *kind))
        return "no host kernel for this datatype";
    if (obj_datatype_is_predefined(dt) && r->rdt == dt && r->factor == 1) {
        m->prep_op = op;
        m->prep_dt = dt;
        m->prep_kind = *kind;
    }
    return NULL;
}

static const char *sm_red_check(coll_sm_module_t *m, sm_red_t *c, obj_op_t *op,
                                obj_datatype_t *dt, MPI_Count count, int *rc)
{
    const char *why = coll_sm_red_prepare(m, &c->r, &c->kind, op, dt, count, rc);
    if (why || *rc != MPI_SUCCESS)
        return why;
    if (!sm_red_plan(m, c, count))
        return "datatype larger than a shared-memory buffer";
    return NULL;
}

/* After the slots declined (all_dev: everyone's buffers are device
 * memory): true where the call is handed on by size
 * (coll_sm_red_handoff) or for want of a segment (*why, *handoff) or
 * fails (*rc), the same verdict on every process. */
static bool sm_red_admit(coll_sm_module_t *m, obj_comm_t *comm, size_t bytes, int root,
                         bool all_dev, bool *handoff, const char **why, int *rc)
{
    const char *by_size = coll_sm_red_handoff(m, bytes, root, all_dev);
    if (by_size != NULL) {
        *why = by_size;
        *handoff = true;
        return true;
    }
    if (m->state == COLL_SM_UNSET && (*rc = coll_sm_segment_setup(m, comm)) != MPI_SUCCESS)
        return true;
    if (m->state != COLL_SM_READY) {
        *why = "no segment";
        *handoff = true;
        return true;
    }
    return false;
}

/* The call's state c (set up only here: zeroing it cost a small
 * reduction 20 instructions): *why where the flag rounds cannot take it. */
static const char *sm_red_setup(coll_sm_module_t *m, sm_red_t *c, const void *sbuf, void *rbuf,
                                MPI_Count count, obj_datatype_t *dt, obj_op_t *op, int root,
                                int *rc)
{
    *c = (sm_red_t){.root = root};
    c->mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    c->rbuf = root < 0 || m->me == root ? rbuf : NULL;
    const char *why = sm_red_check(m, c, op, dt, count, rc);
    if (why || *rc != MPI_SUCCESS)
        return why;
    c->dev = coll_is_device(c->mine, count, dt) || (c->rbuf && coll_is_device(c->rbuf, count, dt));
    if (!c->dev && c->r.rdt->size == c->r.rdt->extent)
        c->src = rail_dt_contig_ptr(dt->layout, count, c->mine);
    if (c->flat && c->src && c->rbuf) {   /* (c->src: the datatype is contiguous) */
        char *d = rail_dt_contig_ptr(dt->layout, count, c->rbuf);
        size_t len = (size_t)count * c->ue;
        if (d + len <= c->src || c->src + len <= d)
            c->rdst = d;
        c->rsame = d == c->src;   /* (other overlaps, erroneous: the scratch buffer) */
    }
    return NULL;
}

/* An allreduce or reduce of device buffers: offered by IPC, to be reduced
 * device to device if everyone's are (sm_device.c); *din, *dout: the
 * offered input and result (NULL: none).  Whether it was offered. */
static bool sm_red_dev_offer(coll_sm_module_t *m, const sm_red_t *c, uint64_t s, MPI_Count count,
                             obj_datatype_t *dt, size_t bytes, const char **din, char **dout)
{
    if (!c->dev || !coll_sm_dev_red_eligible(m, bytes))
        return false;
    if (c->r.rdt->size == c->r.rdt->extent && rail_dt_is_contig(dt->layout, count)) {
        *din = rail_dt_contig_ptr(dt->layout, count, c->mine);
        *dout = c->rbuf ? rail_dt_contig_ptr(dt->layout, count, c->rbuf) : NULL;
    }
    /* a reduce's result is written by everyone at the root only */
    if (c->rbuf != NULL && *dout == NULL)
        *din = NULL;
    coll_sm_dev_publish(m, s, *din, bytes, *dout, *dout ? bytes : 0);
    return true;
}

/* The rounds done and handed on (device buffers): true where everyone's
 * are and the device reduction ran (*rc).  A small allreduce: process 0
 * alone reads every input and writes every result. */
static bool sm_red_dev_run(coll_sm_module_t *m, const sm_red_t *c, uint64_t s, MPI_Count count,
                           size_t bytes, const char *din, char *dout, int *rc)
{
    bool one = c->root < 0 && coll_sm_dev_allreduce_by_one(m, bytes);
    if (!coll_sm_all_device(m, coll_sm_set(m, s)) ||
        !(one ? coll_sm_dev_ready_one(m, s, 2, 0) : coll_sm_dev_ready(m, s, 2, -1)))
        return false;
    size_t N = (size_t)(count * c->r.factor), esz = (size_t)c->r.rdt->size;
    if (one)
        *rc = coll_sm_dev_allreduce_one(m, s, c->r.rop, c->kind, N, din, dout);
    else if (c->root < 0)
        *rc = coll_sm_dev_allreduce(m, s, 3, c->r.rop, c->kind, esz, N, din, dout);
    else
        *rc = coll_sm_dev_reduce(m, s, c->root, c->r.rop, c->kind, esz, N, din, dout);
    return true;
}

/* The flag rounds of the call (c->cma: by CMA instead), s begun; rank 0
 * picks the path by time (timed) and announces it in step 1; *a, *t0: the
 * timing to record (NULL: none). */
static int sm_red_rounds(coll_sm_module_t *m, sm_red_t *c, uint64_t s, MPI_Count count,
                         size_t bytes, bool timed, rail_adapt_t **a, uint64_t *t0,
                         bool *handoff)
{
    int rc = MPI_SUCCESS;
    if (timed) {
        int want = coll_sm_agreed_want(
            m, s, c->root < 0 ? COLL_SM_ADAPT_ALLREDUCE : COLL_SM_ADAPT_REDUCE, bytes, a);
        c->step0 = 1;
        c->cma = sm_red_announce(m, c, s, want, handoff, &rc) == COLL_SM_PATH_CMA;
        *t0 = *a ? rail_now_ns() : 0;
    }
    if (c->cma && !*handoff)
        rc = sm_cma_run(m, c, s, handoff);
    for (MPI_Count k = 0, e0 = 0; !c->cma && e0 < count && !*handoff; k++, e0 += c->E) {
        MPI_Count m_u = RAIL_MIN(c->E, count - e0);
        int r = c->flat ? sm_flat_round(m, c, s, k, m_u, handoff)
                        : sm_slice_round(m, c, s, k, m_u, handoff);
        rc = SM_KEEP(rc, r);
    }
    return rc;
}

static int sm_reduce_any(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                         obj_op_t *op, int root, obj_comm_t *comm, coll_module_t *module,
                         bool *handoff, const char **why)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    int rc = MPI_SUCCESS;
    *handoff = false;
    *why = NULL;
    if (count == 0) { /* still check the arguments, as basic does */
        coll_red_t r;
        return coll_red_init(&r, op, dt, count, NULL, NULL);
    }
    /* size-based hand-offs: the same verdict on every process */
    size_t bytes = (size_t)(count * dt->size);
    if (root >= 0 && m->state == COLL_SM_UNSET && (rc = coll_sm_segment_setup(m, comm)) != MPI_SUCCESS)
        return rc;
    bool all_dev = false;
    if (coll_sm_small_reduce(m, comm, sbuf, rbuf, count, dt, op, root, 0, count,
                                          NULL, handoff, &all_dev, &rc)) {
        /* device buffers everywhere: reduced device to device below */
        if (!*handoff || !all_dev || !coll_sm_dev_red_eligible(m, bytes)) {
            if (*handoff)
                *why = "device buffers";
            return rc;
        }
        *handoff = false;
    }
    if (sm_red_admit(m, comm, bytes, root, all_dev, handoff, why, &rc))
        return rc;
    sm_red_t c;
    *why = sm_red_setup(m, &c, sbuf, rbuf, count, dt, op, root, &rc);
    if (*why || rc != MPI_SUCCESS) {
        *handoff = *why != NULL;
        return rc;
    }
    /* the same on every process: datatype, count and parameters are (a
     * flat reduction of two processes takes the adaptive choice too) */
    bool pair = c.flat && m->n == 2 && coll_sm_params.reduce_pair_flat;
    bool cma_ok = m->cma && (!c.flat || pair) && rail_dt_is_contig(dt->layout, count) &&
                  c.r.rdt->size == c.r.rdt->extent;
    c.cma = cma_ok && coll_sm_params.cma_min > 0 && bytes >= coll_sm_params.cma_min;
    bool timed = cma_ok && !c.cma && coll_sm_agreed(m, bytes);
    uint64_t s;
    rc = coll_sm_begin(m, comm, &s);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *din = NULL;
    char *dout = NULL;
    bool dev_try = sm_red_dev_offer(m, &c, s, count, dt, bytes, &din, &dout);
    rail_adapt_t *a = NULL;
    uint64_t t0 = 0;
    rc = sm_red_rounds(m, &c, s, count, bytes, timed, &a, &t0, handoff);
    if (RAIL_UNLIKELY(c.stop != COLL_SM_RED_GO)) {   /* inputs differ: everyone stops */
        *handoff = false;
        coll_sm_red_stop(m, s, c.stop);
        return rc;
    }
    if (*handoff && dev_try && sm_red_dev_run(m, &c, s, count, bytes, din, dout, &rc)) {
        *handoff = false;
        return rc;
    }
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    /* the others read my result until their FINAL; a timed call is timed
     * whole (see coll_sm_allgather) */
    if (((c.cma && root < 0) || a) && !*handoff)
        coll_sm_wait_all(m, COLL_SM_V(s, COLL_SM_FINAL));
    if (a && !*handoff)
        rail_adapt_record(a, c.cma ? COLL_SM_PATH_CMA : COLL_SM_PATH_SEGMENT, bytes,
                          rail_now_ns() - t0);
    if (*handoff)
        *why = "device buffers";
    return *handoff ? MPI_SUCCESS : rc;
}

int coll_sm_reduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                   obj_op_t *op, int root, obj_comm_t *comm, coll_module_t *module)
{
    bool handoff;
    const char *why;
    int rc = sm_reduce_any(sbuf, rbuf, count, dt, op, root, comm, module, &handoff, &why);
    if (!handoff)
        return rc;
    coll_module_t *next = coll_sm_next(comm, COLL_OP_reduce, module, why);
    return next ? next->fns.reduce(sbuf, rbuf, count, dt, op, root, comm, next)
                : MPI_ERR_UNSUPPORTED_OPERATION;
}

int coll_sm_allreduce(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                      obj_op_t *op, obj_comm_t *comm, coll_module_t *module)
{
    bool handoff;
    const char *why;
    int rc = sm_reduce_any(sbuf, rbuf, count, dt, op, -1, comm, module, &handoff, &why);
    if (!handoff)
        return rc;
    coll_module_t *next = coll_sm_next(comm, COLL_OP_allreduce, module, why);
    return next ? next->fns.allreduce(sbuf, rbuf, count, dt, op, comm, next)
                : MPI_ERR_UNSUPPORTED_OPERATION;
}

/* Scan and exscan through the slots where they fit and no process has a
 * device component (sm_small.c: each waits for the prefix's slots only);
 * otherwise the next component. */
static int sm_scan_any(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                       obj_op_t *op, obj_comm_t *comm, coll_module_t *module, bool exclusive)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    bool handoff = false;   /* (never set: no device buffers where scans take the slots) */
    int rc;
    if (coll_sm_small_reduce(m, comm, sbuf, rbuf, count, dt, op,
                             exclusive ? COLL_SM_SMALL_EXSCAN : COLL_SM_SMALL_SCAN, 0, count, NULL,
                             &handoff, NULL, &rc))
        return rc;
    int opn = exclusive ? COLL_OP_exscan : COLL_OP_scan;
    coll_module_t *next = coll_sm_next(comm, opn, module,
                                       "not for the slots (larger, or a device component)");
    if (!next)
        return MPI_ERR_UNSUPPORTED_OPERATION;
    return exclusive ? next->fns.exscan(sbuf, rbuf, count, dt, op, comm, next)
                     : next->fns.scan(sbuf, rbuf, count, dt, op, comm, next);
}

int coll_sm_scan(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt, obj_op_t *op,
                 obj_comm_t *comm, coll_module_t *module)
{
    return sm_scan_any(sbuf, rbuf, count, dt, op, comm, module, false);
}

int coll_sm_exscan(const void *sbuf, void *rbuf, MPI_Count count, obj_datatype_t *dt,
                   obj_op_t *op, obj_comm_t *comm, coll_module_t *module)
{
    return sm_scan_any(sbuf, rbuf, count, dt, op, comm, module, true);
}
