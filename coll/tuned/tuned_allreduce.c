/* coll tuned: allreduce algorithms. */
#include "coll/tuned/tuned_impl.h"
#include "accel/accel.h"

/*
 * The fold used with non-powers of two: among the first 2*rem ranks
 * (rem = p - p2), each even rank gives its operand to the odd rank above
 * it and waits for the result; the p2 remaining processes get new ranks
 * in the same order (odd r < 2*rem: r/2, others r - rem), each standing
 * for a run of consecutive ranks, so rank order is kept.
 */
static int new_rank(int r, int rem)
{
    return r < 2 * rem ? ((r & 1) ? r / 2 : -1) : r - rem;
}

static int old_rank(int n, int rem)
{
    return n < rem ? 2 * n + 1 : n + rem;
}

/* The result of a process that left at the fold.  (After an error every
 * send and receive is still made: COUNTS THAT DIFFER, tuned_impl.h.) */
static int fold_out(const coll_tuned_call_t *c)
{
    const void *own = c->inplace ? c->rbuf : c->sbuf;
    int rc = coll_send(own, c->count, c->dt, c->rank + 1, c->tag, c->comm);
    COLL_KEEP(coll_recv_all(c->rbuf, c->count, c->dt, c->rank + 1, c->tag, c->comm));
    return rc;
}

static int fold_in(tuned_red_t *t, const coll_tuned_call_t *c, int rem)
{
    if (c->rank >= 2 * rem)
        return MPI_SUCCESS;
    int rc = coll_recv_all(t->tmp, tuned_red_n(&t->r, c->count), t->r.rdt, c->rank - 1, c->tag,
                           c->comm);
    if (rc == MPI_SUCCESS)
        rc = tuned_red_first(t, t->tmp, 0, c->count, true);
    t->src = NULL;
    return rc;
}

static int fold_back(tuned_red_t *t, const coll_tuned_call_t *c, int rem)
{
    if (c->rank >= 2 * rem)
        return MPI_SUCCESS;
    return coll_send(t->acc, tuned_red_n(&t->r, c->count), t->r.rdt, c->rank - 1, c->tag,
                     c->comm);
}

/* ------------------------------------------------------------ recursive doubling */

enum { SMALL_MAX = 512 };

/* A few elements of a predefined type with a predefined operation in host
 * memory: no temporaries to set up, the kernels called directly. */
static bool small_host(const coll_tuned_call_t *c)
{
    const obj_datatype_t *dt = c->dt;
    return c->bytes <= SMALL_MAX && dt->predefined && dt->size == dt->extent &&
           dt->kind != RAIL_TK_NONE && c->mop->op != RAIL_OP_NONE && !accel_is_device(c->rbuf) &&
           (c->inplace || !accel_is_device(c->sbuf));
}

/* Recursive doubling on small host data: rbuf accumulates; until the
 * first combination the own operand is read where it is (cur). */
static int rd_small(const coll_tuned_call_t *c, int n, int p2, int rem)
{
    _Alignas(16) char tmp[SMALL_MAX];
    rail_op_t op = c->mop->op;
    rail_typekind_t tk = (rail_typekind_t)c->dt->kind;
    size_t cnt = (size_t)c->count;
    const void *cur = c->inplace ? c->rbuf : c->sbuf;
    int rc = MPI_SUCCESS;
    if (c->rank < 2 * rem) {
        rc = coll_recv_all(tmp, c->count, c->dt, c->rank - 1, c->tag, c->comm);
        if (rc == MPI_SUCCESS)
            rc = rail_op_reduce3(op, tk, tmp, cur, c->rbuf, cnt);
        cur = c->rbuf;
    }
    for (int mask = 1; mask < p2; mask <<= 1) {
        int peer = old_rank(n ^ mask, rem);
        COLL_KEEP(tuned_sendrecv_all(cur, c->count, c->dt, peer, tmp, c->count, c->dt, peer,
                                     c->tag, c->comm));
        if (rc == MPI_SUCCESS)
            rc = cur == c->rbuf ? rail_op_reduce(op, tk, tmp, c->rbuf, cnt)
                                : rail_op_reduce3(op, tk, tmp, cur, c->rbuf, cnt);
        cur = c->rbuf;
    }
    if (c->rank < 2 * rem)
        COLL_KEEP(coll_send(c->rbuf, c->count, c->dt, c->rank - 1, c->tag, c->comm));
    return rc;
}

/* log2(p) exchanges of the whole vector with rank ^ 2^k; the lower half
 * of each pair is the left operand, so any operation works. */
TUNED_ALG(allreduce, recursive_doubling)
{
    int p2 = tuned_pow2_floor(c->size), rem = c->size - p2, n = new_rank(c->rank, rem), rc;
    if (n < 0)
        return fold_out(c);
    if (small_host(c))
        return rd_small(c, n, p2, rem);
    tuned_red_t t;
    rc = tuned_red_begin(&t, c->mop, c->dt, c->count, c->inplace ? c->rbuf : c->sbuf, c->rbuf,
                         c->count, true);
    if (rc != MPI_SUCCESS)
        return rc;
    COLL_KEEP(fold_in(&t, c, rem));
    for (int mask = 1; mask < p2; mask <<= 1) {
        int pn = n ^ mask, peer = old_rank(pn, rem);
        COLL_KEEP(tuned_red_xchg(&t, 0, c->count, peer, c->count, peer, c->tag, c->comm));
        if (rc == MPI_SUCCESS)
            rc = tuned_red_first(&t, t.tmp, 0, c->count, pn < n);
        t.src = NULL;
    }
    COLL_KEEP(fold_back(&t, c, rem));
    return tuned_red_end(&t, c->rbuf, 0, c->count, rc);
}

/* ------------------------------------------------------------ Rabenseifner */

/* Reduce-scatter by recursive halving (new rank n ends with piece n of
 * p2), then allgather by recursive doubling: 2 log2(p2) steps moving about
 * 2x the vector, for commutative operations. */
TUNED_ALG(allreduce, rabenseifner)
{
    int p2 = tuned_pow2_floor(c->size), rem = c->size - p2, n = new_rank(c->rank, rem), rc;
    MPI_Count count = c->count;
    if (n < 0)
        return fold_out(c);
    tuned_red_t t;
    rc = tuned_red_begin(&t, c->mop, c->dt, count, c->inplace ? c->rbuf : c->sbuf, c->rbuf,
                         rem ? count : tuned_piece(count, p2, p2 / 2), true);
    if (rc != MPI_SUCCESS)
        return rc;
    COLL_KEEP(fold_in(&t, c, rem));
    int lo = 0;
    for (int mask = p2 / 2; mask > 0; mask >>= 1) {
        int keep = (n & mask) ? lo + mask : lo, give = (n & mask) ? lo : lo + mask;
        MPI_Count kf = tuned_piece(count, p2, keep), kn = tuned_piece(count, p2, keep + mask) - kf;
        MPI_Count gf = tuned_piece(count, p2, give), gn = tuned_piece(count, p2, give + mask) - gf;
        int peer = old_rank(n ^ mask, rem);
        COLL_KEEP(tuned_red_xchg(&t, gf, gn, peer, kn, peer, c->tag, c->comm));
        if (rc == MPI_SUCCESS)
            rc = tuned_red_first(&t, t.tmp, kf, kn, true);
        t.src = NULL;
        lo = keep;
    }
    for (int mask = 1; mask < p2; mask <<= 1) {
        int mine = n & ~(mask - 1), theirs = mine ^ mask, peer = old_rank(n ^ mask, rem);
        MPI_Count mf = tuned_piece(count, p2, mine), mn = tuned_piece(count, p2, mine + mask) - mf;
        MPI_Count tf = tuned_piece(count, p2, theirs);
        MPI_Count tn = tuned_piece(count, p2, theirs + mask) - tf;
        COLL_KEEP(tuned_sendrecv_all(tuned_red_at(&t, t.acc, mf), tuned_red_n(&t.r, mn),
                                     t.r.rdt, peer, tuned_red_at(&t, t.acc, tf),
                                     tuned_red_n(&t.r, tn), t.r.rdt, peer, c->tag, c->comm));
    }
    COLL_KEEP(fold_back(&t, c, rem));
    return tuned_red_end(&t, c->rbuf, 0, count, rc);
}

/* ------------------------------------------------------------ ring */

/* One ring pass over elements [base, base + len): reduce-scatter (p-1
 * steps: pass piece r-k-1 on, add piece r-k-2 coming in) then allgather
 * (p-1 steps), for commutative operations. */
static int ring_pass(tuned_red_t *t, const coll_tuned_call_t *c, MPI_Count base, MPI_Count len)
{
    int p = c->size, r = c->rank, rc = MPI_SUCCESS;
    int next = (r + 1) % p, prev = (r - 1 + p) % p;
#define RING_PIECE(i, f, n)                                                                        \
    MPI_Count f = base + tuned_piece(len, p, (i)), n = base + tuned_piece(len, p, (i) + 1) - f
    for (int k = 0; k < p - 1; k++) {
        RING_PIECE((r - k - 1 + 2 * p) % p, sf, sn);
        RING_PIECE((r - k - 2 + 2 * p) % p, rf, rn);
        /* piece sf was combined in the previous step (step 0: own data) */
        const void *sp = k == 0 ? tuned_red_data(t, sf) : tuned_red_at(t, t->acc, sf);
        COLL_KEEP(tuned_sendrecv_all(sp, tuned_red_n(&t->r, sn), t->r.rdt, next, t->tmp,
                                     tuned_red_n(&t->r, rn), t->r.rdt, prev, c->tag, c->comm));
        if (rc == MPI_SUCCESS)   /* each piece is combined once: the first time */
            rc = tuned_red_first(t, t->tmp, rf, rn, true);
    }
    for (int k = 0; k < p - 1; k++) {
        RING_PIECE((r - k + p) % p, sf, sn);
        RING_PIECE((r - k - 1 + p) % p, rf, rn);
        COLL_KEEP(tuned_sendrecv_all(tuned_red_at(t, t->acc, sf), tuned_red_n(&t->r, sn),
                                     t->r.rdt, next, tuned_red_at(t, t->acc, rf),
                                     tuned_red_n(&t->r, rn), t->r.rdt, prev, c->tag, c->comm));
    }
#undef RING_PIECE
    return rc;
}

/* Ring reduce-scatter + allgather, in passes of at most p segments of
 * c->param bytes (0: one pass) so temporaries stay cache-sized. */
TUNED_ALG(allreduce, ring)
{
    int p = c->size, rc;
    MPI_Count count = c->count;
    MPI_Count pass = count;
    if (c->param)
        pass = RAIL_MAX(1, (MPI_Count)(c->param / RAIL_MAX(c->dt->size, 1))) * p;
    pass = RAIL_MIN(pass, count);
    tuned_red_t t;
    rc = tuned_red_begin(&t, c->mop, c->dt, count, c->inplace ? c->rbuf : c->sbuf, c->rbuf,
                         (pass + p - 1) / p, true);
    if (rc != MPI_SUCCESS)
        return rc;
    for (MPI_Count base = 0; base < count; base += pass)
        COLL_KEEP(ring_pass(&t, c, base, RAIL_MIN(pass, count - base)));
    t.src = NULL;
    return tuned_red_end(&t, c->rbuf, 0, count, rc);
}

/* ------------------------------------------------------------ reduce + bcast */

/* Binomial reduce to rank 0 in rank order, then binomial broadcast: keeps
 * the operand order of any operation. */
TUNED_ALG(allreduce, reduce_bcast)
{
    tuned_red_t t;
    int rc = tuned_red_begin(&t, c->mop, c->dt, c->count, c->inplace ? c->rbuf : c->sbuf,
                             c->rbuf, c->count, true);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = tuned_reduce_binomial_to0(&t, c, c->count);
    COLL_KEEP(tuned_bcast_binomial_buf(t.acc, tuned_red_n(&t.r, c->count), t.r.rdt, 0, c));
    return tuned_red_end(&t, c->rbuf, 0, c->count, rc);
}
