/*
 * coll sm: reduce_scatter and reduce_scatter_block.
 *
 * Up to coll_sm_small_max bytes of input: through the slots, as an
 * allreduce where each process folds only its own block (sm_small.c).
 *
 * Larger: each buffer is cut into n pieces of Ps bytes (a multiple of 64),
 * piece j for block j; round k carries elements [k * P, (k + 1) * P) of
 * every block (P = elements per piece; blocks of different lengths simply
 * run out of pieces early; one round is packed tight and placed by
 * coll_sm_round_buf).  Round k, buffer coll_sm_bidx(k): every process loads
 * piece k of every block of its input into its buffer, posts step k + 1,
 * waits for everyone's step k + 1 and folds piece k of its own block from
 * all n buffers, in rank order (the order of basic, so the bits match).
 * Everybody does 1 / n of the folding in every round.  Where the user's
 * buffers are dense arrays of the reduction's type in host memory, a
 * process's own piece is read from its input where it is (nobody else
 * reads it) and the fold writes straight into the result.
 *
 * Reuse: round k + 2 overwrites buffer k % 2 after the writer waited, in
 * round k + 1, for everyone's step k + 2, which each posts only after it
 * folded round k.  MPI_IN_PLACE: the result of round k lands on elements
 * [k * P, (k + 1) * P) of rbuf, inside block 0, whose later rounds read
 * only elements from (k + 1) * P on.
 *
 * Device buffers: the bit in the meta word, seen by all after round 0 (or
 * step 1 of a timed call).  From coll_sm_device_ipc_reduce_min bytes
 * (every size by default; a small call learns it from the slots), where
 * every process's buffers are dense device arrays that the others can
 * open by IPC, each reduces its block from everyone's input where it lies
 * (sm_device.c: published before that step, opened and agreed in step 2,
 * in place the result lands after step 3); otherwise the call is handed
 * on.
 *
 * SINGLE COPY, chosen by time (from coll_sm_adapt_agree_min bytes of
 * input, not oversubscribed; base/adapt.c): step 1 announces each process's
 * device bit (meta), input address (addr) and in raddr whether its input
 * and result are dense host arrays, input not in place (bit 0), and, from
 * rank 0, whether it wants single copy (bit 1).  If rank 0 wants it and
 * everyone can, each process folds its block reading the others' inputs
 * with process_vm_readv, straight into its result, and waits for
 * everyone's FINAL before returning (its input is read until then);
 * otherwise the rounds follow from step 2.
 *
 * Inputs whose sizes differ between processes (erroneous) are found by
 * every process once everyone's step 1 is in, from the meta words, before
 * anyone reads another's data (coll_sm_red_first): all stop there and
 * report it, also where some took the slots (sm_small.c, MISMATCHED
 * SIZES of allreduces and reduce_scatters).
 */
#include "coll/sm/coll_sm.h"
#include "coll/sm/sm_decide.h"
#include "coll/sm/sm_device.h"
#include "coll/sm/sm_slots.h"
#include "obj/err.h"


typedef struct sm_rs {
    coll_red_t r;
    rail_typekind_t kind;
    const MPI_Count *counts;       /* NULL: every block has `count` elements */
    MPI_Count count;
    MPI_Count total;               /* elements of the whole input */
    MPI_Count lo;                  /* where my block starts */
    const void *mine;
    void *rbuf;
    size_t ps;                     /* bytes of a piece in a buffer */
    size_t span;                   /* n * ps when there is one round (packed tight), else 0 */
    MPI_Count P;                   /* user elements of a piece */
    const char *src;               /* input / result as dense arrays of the */
    char *dst;                     /* reduction's type in host memory, or NULL */
    bool timed;                    /* single copy or rounds, chosen by time */
    size_t bytes;                  /* of the whole input */
    int stop;                      /* COLL_SM_RED_STOP*: inputs differ (coll_sm_red_first) */
} sm_rs_t;

static MPI_Count rs_block(const sm_rs_t *c, int j)
{
    return c->counts ? c->counts[j] : c->count;
}

/* Elements of block j (length b) in round k. */
static MPI_Count rs_piece(const sm_rs_t *c, MPI_Count b, MPI_Count k)
{
    MPI_Count left = b - k * c->P;
    return left <= 0 ? 0 : RAIL_MIN(left, c->P);
}

/* Rounds 0 .. K - 1, from step step0 + 1. */
static int rs_rounds(coll_sm_module_t *m, uint64_t s, sm_rs_t *c, bool dev, uint32_t step0,
                     MPI_Count K, bool *handoff)
{
    int n = m->n, me = m->me, rc = MPI_SUCCESS, set = coll_sm_set(m, s);
    size_t stride = coll_sm_rank_stride(m);   /* between ranks' buffers */
    MPI_Count mylen = rs_block(c, me);
    size_t span = c->span ? c->span : COLL_SM_MULTI_ROUND;
    for (MPI_Count k = 0; k < K; k++) {
        char *b0 = coll_sm_round_buf(m, 0, set, s, (size_t)k, span), *buf = b0 + me * stride;
        MPI_Count off = 0;
        for (int j = 0; j < n && !dev; j++) {
            MPI_Count bj = rs_block(c, j), l = rs_piece(c, bj, k);
            if (l > 0 && !(j == me && c->src))   /* nobody else reads my own piece */
                rc = SM_KEEP(rc, coll_red_load(&c->r, buf + (size_t)j * c->ps,
                                               coll_elem(c->mine, c->r.udt, off + k * c->P), l));
            off += bj;
        }
        coll_sm_post(m, COLL_SM_V(s, step0 + (uint32_t)k + 1));
        coll_sm_wait_all(m, COLL_SM_V(s, step0 + (uint32_t)k + 1));
        if (k == 0 && step0 == 0) {   /* (step0: the announcement was step 1) */
            int r2 = coll_sm_red_first(m, set, c->bytes, handoff, &c->stop);
            rc = SM_KEEP(rc, r2);
        }
        if (*handoff)
            break;
        MPI_Count l = rs_piece(c, mylen, k);
        if (l == 0 || rc != MPI_SUCCESS)
            continue;
        size_t eb = (size_t)c->r.rdt->extent * (size_t)c->r.factor;   /* bytes per element */
        char *out = c->dst ? c->dst + (size_t)(k * c->P) * eb : m->scratch;
        rc = coll_sm_fold_own(c->r.rop, c->kind, n,
                              b0 + (size_t)me * c->ps, stride,
                              (size_t)(l * c->r.factor), out, c->src ? me : -1,
                              c->src ? c->src + (size_t)(c->lo + k * c->P) * eb : NULL);
        if (!c->dst)
            rc = SM_KEEP(rc, coll_red_store(&c->r, coll_elem(c->rbuf, c->r.udt, k * c->P),
                                            m->scratch, l));
    }
    return rc;
}

/* Step 1 of a time-chosen call (SINGLE COPY above): whether everyone folds
 * by single copy; *handoff when some process has device buffers. */
static bool rs_announce(coll_sm_module_t *m, uint64_t s, sm_rs_t *c, bool dev, int want,
                        bool *handoff, int *rc)
{
    int set = coll_sm_set(m, s);
    coll_sm_ctl_t *my = coll_sm_ctl(m, m->me);
    my->meta[set] = (dev ? 1u : 0u) | coll_sm_red_meta(m, c->bytes);
    my->addr[set] = (uint64_t)(uintptr_t)c->src;
    my->raddr[set] = (c->src && c->dst ? 1u : 0u) | (uint64_t)want << 1;
    coll_sm_post(m, COLL_SM_V(s, 1));
    coll_sm_wait_all(m, COLL_SM_V(s, 1));
    if ((*rc = coll_sm_red_first(m, set, c->bytes, handoff, &c->stop)) != MPI_SUCCESS || *handoff)
        return false;
    bool all = (coll_sm_ctl(m, 0)->raddr[set] >> 1) & 1;
    for (int j = 0; j < m->n && all; j++)
        all = coll_sm_ctl(m, j)->raddr[set] & 1;
    return all;
}

/* My block, folded from everyone's input read where it is. */
static int rs_cma(coll_sm_module_t *m, uint64_t s, const sm_rs_t *c)
{
    if (!coll_sm_cma_bufs(m))
        return obj_errf(MPI_ERR_NO_MEM, "coll sm: out of memory for single-copy buffers");
    char *t1 = m->cma_buf + COLL_SM_CMA_PIECE, *t2 = t1 + COLL_SM_CMA_PIECE;
    size_t esz = (size_t)c->r.rdt->size, P = COLL_SM_CMA_PIECE / esz;
    size_t lo = (size_t)(c->lo * c->r.factor), N = (size_t)(rs_block(c, m->me) * c->r.factor);
    int rc = MPI_SUCCESS;
    for (size_t a = 0; a < N && rc == MPI_SUCCESS; a += P)
        rc = coll_sm_cma_fold(m, c->r.rop, c->kind, coll_sm_set(m, s), c->src, lo + a,
                              RAIL_MIN(P, N - a), esz, c->dst + a * esz, t1, t2);
    return rc;
}

/* The rounds of a reduce_scatter too large for the slots (or single copy). */
static int rs_run(coll_sm_module_t *m, obj_comm_t *comm, sm_rs_t *c, bool dev, bool *handoff)
{
    int n = m->n, me = m->me, rc;
    MPI_Count K = 0;
    for (int j = 0; j < n; j++)
        K = RAIL_MAX(K, (rs_block(c, j) + c->P - 1) / c->P);
    uint64_t s;
    if ((rc = coll_sm_begin(m, comm, &s)) != MPI_SUCCESS)
        return rc;
    coll_sm_claim_set(m, s);
    /* device buffers: my input offered by IPC, to be reduced device to
     * device here if everyone's are (sm_device.c) */
    bool dev_try = dev && coll_sm_dev_red_eligible(m, c->bytes);
    const char *din = NULL;
    char *dout = NULL;
    if (dev_try) {
        const obj_datatype_t *dt = c->r.udt;
        MPI_Count mylen = rs_block(c, me);
        if (c->r.rdt->size == c->r.rdt->extent) {
            din = rail_dt_contig_ptr(dt->layout, c->total, c->mine);
            dout = mylen ? rail_dt_contig_ptr(dt->layout, mylen, c->rbuf) : c->rbuf;
        }
        coll_sm_dev_publish(m, s, din && (dout || mylen == 0) ? din : NULL, c->bytes, NULL, 0);
    }
    rail_adapt_t *a = NULL;
    uint64_t t0 = 0;
    bool cma = false;
    if (c->timed) {
        /* rank 0 picks by time, everyone agrees in step 1 */
        int want = coll_sm_agreed_want(m, s, COLL_SM_ADAPT_REDUCE_SCATTER, c->bytes, &a);
        cma = rs_announce(m, s, c, dev, want, handoff, &rc);
        t0 = a ? rail_now_ns() : 0;
    } else {
        coll_sm_ctl(m, me)->meta[coll_sm_set(m, s)] = (dev ? 1u : 0u) |
                                                      coll_sm_red_meta(m, c->bytes);
    }
    if (cma)
        rc = rs_cma(m, s, c);
    else if (!*handoff)
        rc = rs_rounds(m, s, c, dev, c->timed ? 1 : 0, K, handoff);
    if (RAIL_UNLIKELY(c->stop != COLL_SM_RED_GO)) {   /* inputs differ: everyone stops */
        *handoff = false;
        coll_sm_red_stop(m, s, c->stop);
        return rc;
    }
    if (*handoff && dev_try && coll_sm_all_device(m, coll_sm_set(m, s)) &&
        coll_sm_dev_ready(m, s, 2, -1)) {
        *handoff = false;
        size_t f = (size_t)c->r.factor;
        return coll_sm_dev_reduce_scatter(m, s, 3, c->r.rop, c->kind, (size_t)c->r.rdt->size,
                                          (size_t)c->lo * f, (size_t)rs_block(c, me) * f, din,
                                          dout);
    }
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    /* my input is read until everyone's FINAL; a timed call is timed whole
     * (see coll_sm_allgather) */
    if (cma || (a && !*handoff))
        coll_sm_wait_all(m, COLL_SM_V(s, COLL_SM_FINAL));
    if (a && !*handoff)
        rail_adapt_record(a, cma ? COLL_SM_PATH_CMA : COLL_SM_PATH_SEGMENT, c->bytes,
                          rail_now_ns() - t0);
    return *handoff ? MPI_SUCCESS : rc;
}

static int rs_any(const void *sbuf, void *rbuf, const MPI_Count counts[], MPI_Count count,
                  obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm, coll_module_t *module,
                  bool *handoff, const char **why)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    sm_rs_t c = {.counts = counts, .count = count, .rbuf = rbuf};
    int rc = MPI_SUCCESS;
    *handoff = false;
    *why = NULL;
    for (int j = 0; j < m->n; j++) {
        if (j == m->me)
            c.lo = c.total;
        c.total += rs_block(&c, j);
    }
    c.mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (c.total == 0 || dt->size == 0)   /* still check the arguments, as basic does */
        return coll_red_init(&c.r, op, dt, 0, NULL, NULL);
    MPI_Count mylen = rs_block(&c, m->me);
    coll_sm_blocks_t blocks = { counts, count };
    bool all_dev = false;
    if (coll_sm_small_reduce(m, comm, sbuf, rbuf, c.total, dt, op, -1, c.lo, mylen, &blocks,
                             handoff, &all_dev, &rc) &&
        (!*handoff || !all_dev || !coll_sm_dev_red_eligible(m, (size_t)(c.total * dt->size)))) {
        if (*handoff)
            *why = "device buffers";
        return rc;
    }
    /* (device buffers everywhere: reduced device to device below) */
    if (m->state == COLL_SM_UNSET && (rc = coll_sm_segment_setup(m, comm)) != MPI_SUCCESS)
        return rc;
    *handoff = true;
    if (m->state != COLL_SM_READY) {
        *why = "no segment";
        return MPI_SUCCESS;
    }
    *why = coll_sm_red_prepare(m, &c.r, &c.kind, op, dt, c.total, &rc);
    if (*why || rc != MPI_SUCCESS) {
        *handoff = *why != NULL;
        return rc;
    }
    size_t ue = (size_t)(c.r.factor * c.r.rdt->extent);
    c.ps = m->chunk / (size_t)m->n / 64 * 64;
    c.P = ue ? (MPI_Count)(c.ps / ue) : 0;
    if (c.P == 0) {
        *why = "datatype larger than a piece of a shared-memory buffer";
        return MPI_SUCCESS;
    }
    /* one round: pieces packed tight, placed by coll_sm_round_buf */
    MPI_Count maxb = 0;
    for (int j = 0; j < m->n; j++)
        maxb = RAIL_MAX(maxb, rs_block(&c, j));
    c.span = 0;
    if (maxb <= c.P) {
        c.ps = RAIL_MAX(RAIL_ALIGN_UP((size_t)maxb * ue, (size_t)64), (size_t)64);
        c.P = (MPI_Count)(c.ps / ue);
        c.span = (size_t)m->n * c.ps;
    }
    *handoff = false;
    bool dev = coll_is_device(c.mine, c.total, dt) || coll_is_device(rbuf, mylen, dt);
    /* user buffers read and written in place where they are dense arrays
     * of the reduction's type; my own input stays where it is unless it
     * is also where the result goes (MPI_IN_PLACE) */
    bool dense = !dev && c.r.rdt->size == c.r.rdt->extent;
    if (dense && sbuf != MPI_IN_PLACE)
        c.src = rail_dt_contig_ptr(dt->layout, c.total, c.mine);
    if (dense)
        c.dst = rail_dt_contig_ptr(dt->layout, mylen, rbuf);
    /* the same verdict everywhere: sizes, parameters and the setup's are */
    c.bytes = (size_t)(c.total * dt->size);
    c.timed = coll_sm_agreed(m, c.bytes);
    rc = rs_run(m, comm, &c, dev, handoff);
    if (*handoff)
        *why = "device buffers";
    return rc;
}

int coll_sm_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count rcounts[],
                           obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm,
                           coll_module_t *module)
{
    bool handoff;
    const char *why;
    int rc = rs_any(sbuf, rbuf, rcounts, 0, dt, op, comm, module, &handoff, &why);
    if (!handoff)
        return rc;
    coll_module_t *next = coll_sm_next(comm, COLL_OP_reduce_scatter, module, why);
    return next ? next->fns.reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, next)
                : MPI_ERR_UNSUPPORTED_OPERATION;
}

int coll_sm_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount,
                                 obj_datatype_t *dt, obj_op_t *op, obj_comm_t *comm,
                                 coll_module_t *module)
{
    bool handoff;
    const char *why;
    int rc = rs_any(sbuf, rbuf, NULL, rcount, dt, op, comm, module, &handoff, &why);
    if (!handoff)
        return rc;
    coll_module_t *next = coll_sm_next(comm, COLL_OP_reduce_scatter_block, module, why);
    return next ? next->fns.reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm, next)
                : MPI_ERR_UNSUPPORTED_OPERATION;
}
