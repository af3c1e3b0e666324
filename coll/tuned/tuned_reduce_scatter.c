/*
 * coll tuned: reduce_scatter and reduce_scatter_block algorithms (one set:
 * c->counts NULL means c->count elements for every process).  Block i of
 * the vector (counts[i] elements) ends at process i.
 */
#include "coll/tuned/tuned_impl.h"

#include <stdlib.h>

/* Block starts: d[i] (d[p] = total). */
static MPI_Count *block_starts(const coll_tuned_call_t *c)
{
    MPI_Count *d = malloc(((size_t)c->size + 1) * sizeof(*d));
    if (!d)
        return NULL;
    d[0] = 0;
    for (int i = 0; i < c->size; i++)
        d[i + 1] = d[i] + (c->counts ? c->counts[i] : c->count);
    return d;
}

static const void *own_operand(const coll_tuned_call_t *c)
{
    return c->inplace ? c->rbuf : c->sbuf;
}

/* Set up the reduction of the whole vector (temporary of tmp_count). */
static int begin(tuned_red_t *t, const coll_tuned_call_t *c, MPI_Count total, MPI_Count tmp_count,
                 bool load)
{
    /* no deferral in place: the result would be written over the operand
     * still being read */
    return tuned_red_begin(t, c->mop, c->dt, total, load ? own_operand(c) : NULL, NULL,
                           tmp_count, !c->inplace);
}

/* ------------------------------------------------------------ recursive halving */

/* Element start of the blocks of new rank m (m = p2: the end). */
static MPI_Count super_start(const MPI_Count *d, int m, int rem, int p2)
{
    if (m >= p2)
        return d[p2 + rem];
    return d[m < rem ? 2 * m : m + rem];
}

/* The halving steps; with `stored` non-NULL the last step writes this
 * process's block straight into rbuf (its super-block is one block). */
static int halving(tuned_red_t *t, const coll_tuned_call_t *c, const MPI_Count *d, int n,
                   int rem, int p2, bool *stored)
{
    int lo = 0, rc = MPI_SUCCESS;
    /* (after an error every exchange is still made: COUNTS THAT DIFFER,
     * tuned_impl.h) */
    for (int mask = p2 / 2; mask > 0; mask >>= 1) {
        int keep = (n & mask) ? lo + mask : lo, give = (n & mask) ? lo : lo + mask;
        MPI_Count kf = super_start(d, keep, rem, p2);
        MPI_Count kn = super_start(d, keep + mask, rem, p2) - kf;
        MPI_Count gf = super_start(d, give, rem, p2);
        MPI_Count gn = super_start(d, give + mask, rem, p2) - gf;
        int pm = n ^ mask, peer = pm < rem ? 2 * pm : pm + rem;
        COLL_KEEP(tuned_red_xchg(t, gf, gn, peer, kn, peer, c->tag, c->comm));
        if (rc == MPI_SUCCESS && mask == 1 && stored)
            rc = tuned_red_last(t, t->tmp, kf, kn, c->rbuf, stored);
        else if (rc == MPI_SUCCESS)
            rc = tuned_red_first(t, t->tmp, kf, kn, true);
        t->src = NULL;
        lo = keep;
    }
    return rc;
}

/* Recursive halving over the largest power of two p2, each step keeping
 * the half of the vector whose blocks belong to this side (commutative
 * operations).  Beforehand each odd rank r < 2*rem folds its vector into
 * r - 1, which at the end hands it its block. */
TUNED_ALG(reduce_scatter, recursive_halving)
{
    int p = c->size, r = c->rank, p2 = tuned_pow2_floor(p), rem = p - p2, rc;
    MPI_Count *d = block_starts(c);
    if (!d)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for %d block offsets", p);
    MPI_Count total = d[p], mine = d[r + 1] - d[r];
    tuned_red_t t = { 0 };
    if (r < 2 * rem && (r & 1)) {
        rc = coll_send(own_operand(c), total, c->dt, r - 1, c->tag, c->comm);
        COLL_KEEP(coll_recv_all(c->rbuf, mine, c->dt, r - 1, c->tag, c->comm));
        free(d);
        return rc;
    }
    int n = r < 2 * rem ? r / 2 : r - rem;
    bool stored = false;
    TUNED_CHECK(begin(&t, c, total, total, true));
    /* (after an error every send and receive is still made: COUNTS THAT
     * DIFFER, tuned_impl.h) */
    if (r < 2 * rem) {
        COLL_KEEP(coll_recv_all(t.tmp, tuned_red_n(&t.r, total), t.r.rdt, r + 1, c->tag,
                                c->comm));
        if (rc == MPI_SUCCESS)
            rc = tuned_red_first(&t, t.tmp, 0, total, true);
        t.src = NULL;
    }
    COLL_KEEP(halving(&t, c, d, n, rem, p2, r < 2 * rem ? NULL : &stored));
    if (r < 2 * rem)
        COLL_KEEP(coll_send(tuned_red_at(&t, t.acc, d[r + 1]),
                            tuned_red_n(&t.r, d[r + 2] - d[r + 1]), t.r.rdt, r + 1, c->tag,
                            c->comm));
out:
    rc = tuned_red_end(&t, stored ? NULL : c->rbuf, d[r], mine, rc);
    free(d);
    return rc;
}

/* ------------------------------------------------------------ ring */

/* p-1 steps: pass block r-k-1 on to rank + 1 and add the incoming block
 * r-k-2 to ours; after the last, block r is complete (commutative
 * operations). */
TUNED_ALG(reduce_scatter, ring)
{
    int p = c->size, r = c->rank, rc;
    MPI_Count *d = block_starts(c), big = 0;
    if (!d)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for %d block offsets", p);
    for (int i = 0; i < p; i++)
        big = RAIL_MAX(big, d[i + 1] - d[i]);
    tuned_red_t t = { 0 };
    bool stored = false;
    TUNED_CHECK(begin(&t, c, d[p], big, true));
    for (int k = 0; k < p - 1; k++) {
        int s = (r - k - 1 + 2 * p) % p, b = (r - k - 2 + 2 * p) % p;
        /* block s was combined in the previous step (step 0: own data) */
        const void *sp = k == 0 ? tuned_red_data(&t, d[s]) : tuned_red_at(&t, t.acc, d[s]);
        /* (after an error every step is still made: COUNTS THAT DIFFER,
         * tuned_impl.h) */
        COLL_KEEP(tuned_sendrecv_all(sp, tuned_red_n(&t.r, d[s + 1] - d[s]), t.r.rdt,
                                     (r + 1) % p, t.tmp, tuned_red_n(&t.r, d[b + 1] - d[b]),
                                     t.r.rdt, (r - 1 + p) % p, c->tag, c->comm));
        if (rc == MPI_SUCCESS && k == p - 2)   /* block r: straight into rbuf where possible */
            rc = tuned_red_last(&t, t.tmp, d[b], d[b + 1] - d[b], c->rbuf, &stored);
        else if (rc == MPI_SUCCESS)
            rc = tuned_red_first(&t, t.tmp, d[b], d[b + 1] - d[b], true);
    }
    t.src = NULL;
out:
    rc = tuned_red_end(&t, stored ? NULL : c->rbuf, d[r], d[r + 1] - d[r], rc);
    free(d);
    return rc;
}

/* ------------------------------------------------------------ reduce + scatterv */

/* Binomial reduce of the whole vector to rank 0 in rank order, then rank 0
 * sends each process its block: keeps the operand order of any operation. */
TUNED_ALG(reduce_scatter, reduce_scatterv)
{
    int p = c->size, r = c->rank, rc;
    MPI_Count *d = block_starts(c);
    if (!d)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for %d block offsets", p);
    tuned_red_t t = { 0 };
    coll_reqs_t b;
    coll_reqs_init(&b);
    TUNED_CHECK(begin(&t, c, d[p], d[p], true));
    /* (after an error every send and receive is still made: COUNTS THAT
     * DIFFER, tuned_impl.h) */
    rc = tuned_reduce_binomial_to0(&t, c, d[p]);
    if (r != 0) {
        COLL_KEEP(coll_recv_all(c->rbuf, d[r + 1] - d[r], c->dt, 0, c->tag, c->comm));
        tuned_red_end(&t, NULL, 0, 0, rc);
        free(d);
        return rc;
    }
    for (int i = 1; i < p; i++)
        COLL_KEEP(coll_reqs_isend(&b, tuned_red_at(&t, t.acc, d[i]),
                                  tuned_red_n(&t.r, d[i + 1] - d[i]), t.r.rdt, i, c->tag,
                                  c->comm));
out:
    rc = coll_reqs_wait(&b, rc);
    rc = tuned_red_end(&t, c->rbuf, 0, d[1], rc);
    free(d);
    return rc;
}
