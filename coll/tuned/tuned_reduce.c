/*
 * coll tuned: reduce algorithms.
 *
 * A commutative operation may combine operands in any order, so trees and
 * chains are laid out relative to the root.  A non-commutative one must
 * give x0 op x1 op ... op x(p-1): the tree or chain is then laid out over
 * the ranks in order (rank 0 at the top, each subtree a run of consecutive
 * ranks, lower runs on the left) and rank 0 sends the result to the root.
 */
#include "coll/tuned/tuned_impl.h"
#include "pml/pml.h"

#include <stdlib.h>

/* The process's operand. */
static const void *own_operand(const coll_tuned_call_t *c)
{
    return c->inplace ? c->rbuf : c->sbuf;
}

/* Binomial tree rooted at vroot: children v + 2^k (v = rank relative to
 * vroot) send their partial results up; on return the top's t->acc holds
 * the result.  Each subtree is a run of consecutive relative ranks, so with
 * vroot 0 operands are combined in rank order. */
static int binomial_tree(tuned_red_t *t, const coll_tuned_call_t *c, int vroot, MPI_Count count)
{
    int p = c->size, v = (c->rank - vroot + p) % p, rc = MPI_SUCCESS;
    MPI_Count n = tuned_red_n(&t->r, count);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (v & mask) {   /* (after an error too: COUNTS THAT DIFFER, tuned_impl.h) */
            COLL_KEEP(coll_send(tuned_red_data(t, 0), n, t->r.rdt, (c->rank - mask + p) % p,
                                c->tag, c->comm));
            return rc;
        }
        if (v + mask >= p)
            continue;
        COLL_KEEP(coll_recv_all(t->tmp, n, t->r.rdt, (c->rank + mask) % p, c->tag, c->comm));
        if (rc == MPI_SUCCESS)
            rc = tuned_red_first(t, t->tmp, 0, count, false);
        t->src = NULL;
    }
    return rc;
}

int tuned_reduce_binomial_to0(tuned_red_t *t, const coll_tuned_call_t *c, MPI_Count count)
{
    return binomial_tree(t, c, 0, count);
}

/* Whether relative rank v is a leaf of a binomial tree of p. */
static bool binomial_leaf(int v, int p)
{
    return (v & 1) || v + 1 >= p;
}

TUNED_ALG(reduce, binomial)
{
    bool ordered = !c->mop->commute, am_root = c->rank == c->root;
    int p = c->size, vroot = ordered ? 0 : c->root, v = (c->rank - vroot + p) % p, rc;
    const void *own = own_operand(c);
    if (binomial_leaf(v, p)) {   /* no children: send the operand as it is */
        int parent = (c->rank - tuned_lowbit(v) + p) % p;
        rc = coll_send(own, c->count, c->dt, parent, c->tag, c->comm);
        if (am_root)
            COLL_KEEP(coll_recv_all(c->rbuf, c->count, c->dt, vroot, c->tag, c->comm));
        return rc;
    }
    void *res = v == 0 && am_root ? c->rbuf : NULL;
    tuned_red_t t;
    rc = tuned_red_begin(&t, c->mop, c->dt, c->count, own, res, c->count, true);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = binomial_tree(&t, c, vroot, c->count);
    if (v == 0 && !am_root)
        COLL_KEEP(coll_send(t.acc, tuned_red_n(&t.r, c->count), t.r.rdt, c->root, c->tag,
                            c->comm));
    rc = tuned_red_end(&t, res, 0, c->count, rc);
    if (am_root && v != 0)
        COLL_KEEP(coll_recv_all(c->rbuf, c->count, c->dt, vroot, c->tag, c->comm));
    return rc;
}

/* ------------------------------------------------------------ Rabenseifner */

/* Rank of new rank m after the fold of a Rabenseifner algorithm: among the
 * first 2*rem relative ranks the even ones stay (m = v/2), the others are
 * v - rem. */
static int fold_rank(int m, int rem, int base, int p)
{
    int v = m < rem ? 2 * m : m + rem;
    return (v + base) % p;
}

/* Reduce-scatter by recursive halving over p2 new ranks (pieces of count by
 * new rank) then a binomial gather of the pieces to new rank 0 = the root.
 * The extra processes first fold their operand into a neighbour. */
TUNED_ALG(reduce, rabenseifner)
{
    int p = c->size, vr = (c->rank - c->root + p) % p, rc;
    int p2 = tuned_pow2_floor(p), rem = p - p2;
    const void *own = own_operand(c);
    MPI_Count count = c->count;
    if (vr < 2 * rem && (vr & 1))
        return coll_send(own, count, c->dt, (c->rank - 1 + p) % p, c->tag, c->comm);
    int n = vr < 2 * rem ? vr / 2 : vr - rem;
    void *res = vr == 0 ? c->rbuf : NULL;
    tuned_red_t t;
    rc = tuned_red_begin(&t, c->mop, c->dt, count, own, res,
                         rem ? count : tuned_piece(count, p2, p2 / 2), true);
    if (rc != MPI_SUCCESS)
        return rc;
    /* (after an error every send and receive is still made: COUNTS THAT
     * DIFFER, tuned_impl.h) */
    if (vr < 2 * rem) {
        COLL_KEEP(coll_recv_all(t.tmp, tuned_red_n(&t.r, count), t.r.rdt, (c->rank + 1) % p,
                                c->tag, c->comm));
        if (rc == MPI_SUCCESS)
            rc = tuned_red_first(&t, t.tmp, 0, count, true);
        t.src = NULL;
    }
    int lo = 0;
    for (int mask = p2 / 2; mask > 0; mask >>= 1) {
        int keep = (n & mask) ? lo + mask : lo, give = (n & mask) ? lo : lo + mask;
        MPI_Count kf = tuned_piece(count, p2, keep), kn = tuned_piece(count, p2, keep + mask) - kf;
        MPI_Count gf = tuned_piece(count, p2, give), gn = tuned_piece(count, p2, give + mask) - gf;
        int peer = fold_rank(n ^ mask, rem, c->root, p);
        COLL_KEEP(tuned_red_xchg(&t, gf, gn, peer, kn, peer, c->tag, c->comm));
        if (rc == MPI_SUCCESS)
            rc = tuned_red_first(&t, t.tmp, kf, kn, true);
        t.src = NULL;
        lo = keep;
    }
    for (int mask = 1; mask < p2; mask <<= 1) {
        MPI_Count f = tuned_piece(count, p2, n), e = tuned_piece(count, p2, n + mask);
        if (n & mask) {
            COLL_KEEP(coll_send(tuned_red_at(&t, t.acc, f), tuned_red_n(&t.r, e - f), t.r.rdt,
                                fold_rank(n - mask, rem, c->root, p), c->tag, c->comm));
            break;
        }
        MPI_Count g = tuned_piece(count, p2, n + 2 * mask);
        COLL_KEEP(coll_recv_all(tuned_red_at(&t, t.acc, e), tuned_red_n(&t.r, g - e), t.r.rdt,
                                fold_rank(n + mask, rem, c->root, p), c->tag, c->comm));
    }
    return tuned_red_end(&t, res, 0, count, rc);
}

/* ------------------------------------------------------------ chain */

/* Wait for receive request *rq of `want` bytes from src (and forget it);
 * a shorter message is MPI_ERR_COUNT. */
static int wait_one(obj_request_t **rq, size_t want, int src)
{
    obj_req_status_t st = { 0 };
    int rc = coll_recv_error(pml_wait(*rq, &st));
    *rq = NULL;
    return rc == MPI_SUCCESS ? coll_check_length(src, (size_t)st.count, want) : rc;
}

/* Post receives of nseg segments of segc elements into t->tmp from src. */
static int post_segments(tuned_red_t *t, MPI_Count count, MPI_Count segc, size_t nseg, int src,
                         const coll_tuned_call_t *c, obj_request_t **rq, size_t *posted)
{
    int rc = MPI_SUCCESS;
    for (*posted = 0; *posted < nseg && rc == MPI_SUCCESS; (*posted)++) {
        MPI_Count f = (MPI_Count)*posted * segc, n = RAIL_MIN(segc, count - f);
        rc = pml_irecv(tuned_red_at(t, t->tmp, f), tuned_red_n(&t->r, n), t->r.rdt, src, c->tag,
                       c->comm, PML_COLL, &rq[*posted]);
    }
    if (rc != MPI_SUCCESS)
        (*posted)--;
    return rc;
}

/* The pipeline of a non-head process: combine each segment from upstream
 * with its own and pass it downstream (down < 0: keep it). */
static int chain_body(tuned_red_t *t, const coll_tuned_call_t *c, int up, int down,
                      MPI_Count segc)
{
    MPI_Count count = c->count;
    size_t nseg = (size_t)((count + segc - 1) / segc), posted = 0, i = 0;
    obj_request_t **rq = calloc(nseg, sizeof(*rq));
    coll_reqs_t sb;
    coll_reqs_init(&sb);
    int rc = rq ? post_segments(t, count, segc, nseg, up, c, rq, &posted)
                : obj_errf(MPI_ERR_NO_MEM, "out of memory for %zu requests", nseg);
    /* (after a receive's error each segment is still passed on: COUNTS
     * THAT DIFFER, tuned_impl.h) */
    for (; i < posted; i++) {
        MPI_Count f = (MPI_Count)i * segc, n = RAIL_MIN(segc, count - f);
        void *a = tuned_red_at(t, t->acc, f);
        COLL_KEEP(wait_one(&rq[i], (size_t)(n * c->dt->size), up));
        if (rc == MPI_SUCCESS)   /* upstream holds higher ranks */
            rc = tuned_red_first(t, tuned_red_at(t, t->tmp, f), f, n, false);
        if (down >= 0)
            COLL_KEEP(coll_reqs_isend(&sb, a, tuned_red_n(&t->r, n), t->r.rdt, down, c->tag,
                                      c->comm));
    }
    for (size_t j = i; rq && j < posted; j++)
        if (rq[j])
            pml_wait(rq[j], NULL);
    free(rq);
    t->src = NULL;
    return coll_reqs_wait(&sb, rc);
}

/* A pipeline from the farthest process to the root in segments of c->param
 * bytes; each process adds its operand to a segment and passes it on. */
TUNED_ALG(reduce, chain)
{
    bool ordered = !c->mop->commute, am_root = c->rank == c->root;
    int p = c->size, vroot = ordered ? 0 : c->root, v = (c->rank - vroot + p) % p, rc;
    int up = (c->rank + 1) % p, down = v > 0 ? (c->rank - 1 + p) % p : -1;
    const void *own = own_operand(c);
    MPI_Count segc = c->param ? (MPI_Count)c->param / RAIL_MAX(c->dt->size, 1) : c->count;
    segc = RAIL_MAX(segc, 1);
    if (v == p - 1) {   /* the head sends its operand in segments */
        coll_reqs_t sb;
        coll_reqs_init(&sb);
        rc = MPI_SUCCESS;
        for (MPI_Count f = 0; f < c->count && rc == MPI_SUCCESS; f += segc)
            rc = coll_reqs_isend(&sb, coll_elem(own, c->dt, f), RAIL_MIN(segc, c->count - f), c->dt,
                                 down, c->tag, c->comm);
        rc = coll_reqs_wait(&sb, rc);
        if (am_root)
            COLL_KEEP(coll_recv_all(c->rbuf, c->count, c->dt, vroot, c->tag, c->comm));
        return rc;
    }
    void *res = v == 0 && am_root ? c->rbuf : NULL;
    tuned_red_t t;
    rc = tuned_red_begin(&t, c->mop, c->dt, c->count, own, res, c->count, true);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = chain_body(&t, c, up, down, segc);
    if (v == 0 && !am_root)
        COLL_KEEP(coll_send(t.acc, tuned_red_n(&t.r, c->count), t.r.rdt, c->root, c->tag,
                            c->comm));
    rc = tuned_red_end(&t, res, 0, c->count, rc);
    if (am_root && v != 0)
        COLL_KEEP(coll_recv_all(c->rbuf, c->count, c->dt, vroot, c->tag, c->comm));
    return rc;
}
