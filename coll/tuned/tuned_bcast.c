/* coll tuned: broadcast algorithms. */
#include "coll/tuned/tuned_impl.h"
#include "obj/errcode.h"
#include "pml/pml.h"

#include <stdlib.h>

/* The root sends the whole buffer to every other process. */
TUNED_ALG(bcast, linear)
{
    int rc = MPI_SUCCESS;
    if (c->rank != c->root)
        return coll_recv_all(c->rbuf, c->count, c->dt, c->root, c->tag, c->comm);
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++)
        if (i != c->root)
            rc = coll_reqs_isend(&b, c->rbuf, c->count, c->dt, i, c->tag, c->comm);
    return coll_reqs_wait(&b, rc);
}

int tuned_bcast_binomial_buf(void *buf, MPI_Count count, obj_datatype_t *dt, int root,
                             const coll_tuned_call_t *c)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask = 1, rc = MPI_SUCCESS;
    for (; mask < p; mask <<= 1)
        if (vr & mask) {
            rc = coll_recv_all(buf, count, dt, (c->rank - mask + p) % p, c->tag, c->comm);
            break;
        }
    /* A truncated or short message (the sender's type signature differs:
     * an erroneous program) still filled the buffer: pass it on, so that
     * the subtree is not left waiting, and report the error here. */
    int err = rc;
    if (rc != MPI_SUCCESS && (obj_errcode_class(rc) == MPI_ERR_TRUNCATE ||
                              obj_errcode_class(rc) == MPI_ERR_COUNT))
        rc = MPI_SUCCESS;
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
        if (vr + mask < p)
            rc = coll_reqs_isend(&b, buf, count, dt, (c->rank + mask) % p, c->tag, c->comm);
    rc = coll_reqs_wait(&b, rc);
    return err != MPI_SUCCESS ? err : rc;
}

/* Binomial tree over ranks relative to the root: log2(p) rounds of whole
 * messages. */
TUNED_ALG(bcast, binomial)
{
    return tuned_bcast_binomial_buf(c->rbuf, c->count, c->dt, c->root, c);
}

/* ------------------------------------------------------------ the root's length */

/* Segmented bcasts cut the data by its length.  Processes whose type
 * signatures differ (erroneous) would cut it differently and wait for
 * segments that never come, so the root's length goes first, 8 bytes down
 * the algorithm's tree, and every process runs the algorithm on that
 * length: in a temporary when its own arguments hold less (their part is
 * copied home; MPI_ERR_TRUNCATE), on a prefix of its buffer when they
 * expect more (MPI_ERR_COUNT). */
typedef struct bcast_len {
    size_t len;   /* the root's, which the algorithm uses */
    char *p;      /* where the algorithm works */
    void *mem;    /* temporary of len bytes, or NULL */
    bool device;
    int err;      /* the mismatch to report, or MPI_SUCCESS */
} bcast_len_t;

static int bcast_len_agree(const coll_tuned_call_t *c, const tuned_flat_t *f, int parent,
                           const int *kids, int nkids, bcast_len_t *b)
{
    obj_datatype_t *byte = coll_byte_type();
    uint64_t len = f->len;
    int rc = MPI_SUCCESS;
    *b = (bcast_len_t){ .len = f->len, .p = f->p };
    if (parent >= 0 && (rc = coll_recv(&len, 8, byte, parent, c->tag, c->comm)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < nkids && rc == MPI_SUCCESS; i++)
        rc = coll_send(&len, 8, byte, kids[i], c->tag, c->comm);
    if (rc != MPI_SUCCESS || len == f->len)
        return rc;
    b->len = (size_t)len;
    if (len > f->len) {
        b->device = coll_is_device(f->p, (MPI_Count)f->len, byte);
        b->p = tuned_bytes_alloc(b->len, b->device, f->p, &b->mem);
        if (!b->p)
            return obj_errf(MPI_ERR_NO_MEM, "out of memory for a %zu-byte bcast", b->len);
    }
    b->err = coll_check_length(-1, b->len, f->len);
    return MPI_SUCCESS;
}

/* The part of a temporary that fits goes home; then the mismatch, if any. */
static int bcast_len_end(bcast_len_t *b, const tuned_flat_t *f, int rc)
{
    if (b->mem) {
        obj_datatype_t *byte = coll_byte_type();
        if (rc == MPI_SUCCESS && f->len)
            rc = coll_copy(b->p, (MPI_Count)f->len, byte, f->p, (MPI_Count)f->len, byte);
        tuned_bytes_free(b->mem, b->device);
        b->mem = NULL;
    }
    return rc != MPI_SUCCESS ? rc : b->err;
}

/* ------------------------------------------------------------ chain */

/* A pipeline root -> root+1 -> ... in segments of c->param bytes: each
 * process forwards segment i while it receives segment i+1. */
TUNED_ALG(bcast, chain)
{
    int p = c->size, vr = (c->rank - c->root + p) % p, rc;
    int prev = (c->rank - 1 + p) % p, next = (c->rank + 1) % p;
    obj_datatype_t *byte = coll_byte_type();
    tuned_flat_t f;
    rc = tuned_flat_begin(&f, c->rbuf, c->count, c->dt, vr == 0);
    if (rc != MPI_SUCCESS)
        return rc;
    bcast_len_t bl;
    rc = bcast_len_agree(c, &f, vr > 0 ? prev : -1, &next, vr < p - 1 ? 1 : 0, &bl);
    if (rc != MPI_SUCCESS)
        return tuned_first_error(rc, tuned_flat_end(&f, c->rbuf, c->count, c->dt, false));
    size_t len = bl.len;
    char *base = bl.p;
    size_t seg = c->param && c->param < len ? c->param : len;
    size_t nseg = seg ? (len + seg - 1) / seg : 0;
    obj_request_t **rq = vr > 0 && nseg ? calloc(nseg, sizeof(*rq)) : NULL;
    coll_reqs_t sb;
    coll_reqs_init(&sb);
    size_t posted = 0, i = 0;
    if (vr > 0 && nseg && !rq) {
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory for %zu requests", nseg);
        goto out;
    }
    for (; vr > 0 && posted < nseg; posted++) {
        size_t off = posted * seg, n = RAIL_MIN(seg, len - off);
        rc = pml_irecv(base + off, (MPI_Count)n, byte, prev, c->tag, c->comm, PML_COLL,
                       &rq[posted]);
        if (rc != MPI_SUCCESS)
            goto out;
    }
    for (; i < nseg; i++) {
        size_t off = i * seg, n = RAIL_MIN(seg, len - off);
        if (vr > 0) {
            rc = coll_recv_error(pml_wait(rq[i], NULL));
            rq[i] = NULL;
            if (rc != MPI_SUCCESS)
                goto out;
        }
        if (vr < p - 1)
            TUNED_CHECK(coll_reqs_isend(&sb, base + off, (MPI_Count)n, byte, next, c->tag,
                                        c->comm));
    }
out:
    for (size_t j = i; rq && j < posted; j++)
        if (rq[j])
            pml_wait(rq[j], NULL);
    free(rq);
    rc = coll_reqs_wait(&sb, rc);
    rc = bcast_len_end(&bl, &f, rc);
    bool mismatch = rc != MPI_SUCCESS && rc == bl.err;
    return tuned_first_error(rc, tuned_flat_end(&f, c->rbuf, c->count, c->dt,
                                                 (rc == MPI_SUCCESS || mismatch) && vr > 0));
}

/* ------------------------------------------------------------ scatter + allgather */

/* Bytes [lo, hi) of pieces [a, b) of ps bytes each in a message of len. */
static void piece_range(size_t ps, size_t len, int a, int b, size_t *lo, size_t *hi)
{
    *lo = RAIL_MIN((size_t)a * ps, len);
    *hi = RAIL_MIN((size_t)b * ps, len);
}

/* van de Geijn: a binomial scatter gives relative rank j piece j (of p),
 * then a ring allgather of the pieces: about 2x the message through each
 * process instead of log2(p)x. */
TUNED_ALG(bcast, scatter_allgather)
{
    int p = c->size, vr = (c->rank - c->root + p) % p, rc, pmask = 1;
    obj_datatype_t *byte = coll_byte_type();
    tuned_flat_t f;
    rc = tuned_flat_begin(&f, c->rbuf, c->count, c->dt, vr == 0);
    if (rc != MPI_SUCCESS)
        return rc;
    /* the binomial tree: parent at vr - pmask, children at vr + mask below */
    while (pmask < p && !(vr & pmask))
        pmask <<= 1;
    int parent = vr ? (c->rank - pmask + p) % p : -1, kids[32], nkids = 0;
    for (int mask = pmask >> 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            kids[nkids++] = (c->rank + mask) % p;
    bcast_len_t bl;
    rc = bcast_len_agree(c, &f, parent, kids, nkids, &bl);
    if (rc != MPI_SUCCESS)
        return tuned_first_error(rc, tuned_flat_end(&f, c->rbuf, c->count, c->dt, false));
    size_t len = bl.len;
    char *base = bl.p;
    size_t ps = (len + (size_t)p - 1) / (size_t)p, lo, hi;
    coll_reqs_t b;
    coll_reqs_init(&b);
    /* scatter: receive the pieces of my subtree, pass on my children's */
    if (vr) {
        piece_range(ps, len, vr, RAIL_MIN(vr + pmask, p), &lo, &hi);
        TUNED_CHECK(coll_recv(base + lo, (MPI_Count)(hi - lo), byte, parent, c->tag, c->comm));
    }
    for (int mask = pmask >> 1; mask > 0; mask >>= 1)
        if (vr + mask < p) {
            piece_range(ps, len, vr + mask, RAIL_MIN(vr + 2 * mask, p), &lo, &hi);
            TUNED_CHECK(coll_reqs_isend(&b, base + lo, (MPI_Count)(hi - lo), byte,
                                        (c->rank + mask) % p, c->tag, c->comm));
        }
    TUNED_CHECK(coll_reqs_wait(&b, rc));
    /* ring allgather of the pieces */
    for (int k = 0; k < p - 1; k++) {
        int s = (vr - k + p) % p, t = (vr - k - 1 + p) % p;
        size_t slo, shi;
        piece_range(ps, len, s, s + 1, &slo, &shi);
        piece_range(ps, len, t, t + 1, &lo, &hi);
        TUNED_CHECK(tuned_sendrecv(base + slo, (MPI_Count)(shi - slo), byte, (c->rank + 1) % p,
                                   base + lo, (MPI_Count)(hi - lo), byte, (c->rank - 1 + p) % p,
                                   c->tag, c->comm));
    }
out:
    rc = coll_reqs_wait(&b, rc);
    rc = bcast_len_end(&bl, &f, rc);
    bool mismatch = rc != MPI_SUCCESS && rc == bl.err;
    return tuned_first_error(rc, tuned_flat_end(&f, c->rbuf, c->count, c->dt,
                                                 (rc == MPI_SUCCESS || mismatch) && vr > 0));
}
