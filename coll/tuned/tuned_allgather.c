/*
 * coll tuned: allgather algorithms.  Block i of the receive buffer is
 * c->count elements of c->dt from process i; a run of n blocks from block a
 * is n * count elements at block a, so ranges of blocks travel as one
 * message whatever the datatype.
 */
#include "coll/tuned/tuned_impl.h"

static void *block(const coll_tuned_call_t *c, int i)
{
    return coll_elem(c->rbuf, c->dt, (MPI_Count)i * c->count);
}

/* Own block into place (not with MPI_IN_PLACE: it is there). */
static int place_own(const coll_tuned_call_t *c)
{
    if (c->inplace)
        return MPI_SUCCESS;
    return coll_copy(c->sbuf, c->scount, c->sdt, block(c, c->rank), c->count, c->dt);
}

/* Send blocks [sa, sa+n) to dst, receive blocks [ra, ra+n) from src. */
static int xchg_blocks(const coll_tuned_call_t *c, int sa, int ra, int n, int dst, int src)
{
    MPI_Count k = (MPI_Count)n * c->count;
    return tuned_sendrecv(block(c, sa), k, c->dt, dst, block(c, ra), k, c->dt, src, c->tag,
                          c->comm);
}

/* Every send and receive posted at once: one round, p-1 messages each way. */
TUNED_ALG(allgather, linear)
{
    int p = c->size, r = c->rank, rc = MPI_SUCCESS;
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int k = 1; k < p && rc == MPI_SUCCESS; k++)
        rc = coll_reqs_irecv(&b, block(c, (r - k + p) % p), c->count, c->dt, (r - k + p) % p,
                             c->tag, c->comm);
    for (int k = 1; k < p && rc == MPI_SUCCESS; k++) {
        int dst = (r + k) % p;
        if (c->inplace)
            rc = coll_reqs_isend(&b, block(c, r), c->count, c->dt, dst, c->tag, c->comm);
        else
            rc = coll_reqs_isend(&b, c->sbuf, c->scount, c->sdt, dst, c->tag, c->comm);
    }
    if (rc == MPI_SUCCESS)
        rc = place_own(c);
    return coll_reqs_wait(&b, rc);
}

/* log2(p) exchanges with rank ^ 2^k, doubling the blocks each time. */
TUNED_ALG(allgather, recursive_doubling)
{
    int r = c->rank, rc = place_own(c);
    for (int mask = 1; mask < c->size && rc == MPI_SUCCESS; mask <<= 1) {
        int mine = r & ~(mask - 1);
        rc = xchg_blocks(c, mine, mine ^ mask, mask, r ^ mask, r ^ mask);
    }
    return rc;
}

/* p-1 steps: pass on the block received in the previous step. */
TUNED_ALG(allgather, ring)
{
    int p = c->size, r = c->rank, rc = place_own(c);
    for (int k = 0; k < p - 1 && rc == MPI_SUCCESS; k++)
        rc = xchg_blocks(c, (r - k + p) % p, (r - k - 1 + p) % p, 1, (r + 1) % p,
                         (r - 1 + p) % p);
    return rc;
}

/*
 * Neighbour exchange (even p): p/2 steps.  Step 0 swaps own blocks with the
 * other rank of the pair (2g, 2g+1); then each step sends the two blocks
 * received last to a neighbour and gets two new ones, alternating between
 * the neighbours on either side.  An even rank of pair g receives pairs
 * g-1, g+1, g-2, g+2, ...; an odd one g+1, g-1, g+2, g-2, ...
 */
TUNED_ALG(allgather, neighbor_exchange)
{
    int p = c->size, r = c->rank, half = p / 2, g = r / 2, rc = place_own(c);
    bool even = !(r & 1);
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    if (rc == MPI_SUCCESS)
        rc = xchg_blocks(c, r, r ^ 1, 1, r ^ 1, r ^ 1);
    int last = g;
    for (int s = 1; s < half && rc == MPI_SUCCESS; s++) {
        bool odd_step = s & 1;
        int peer = odd_step == even ? left : right;
        int d = odd_step ? (s + 1) / 2 : s / 2;
        int want = (odd_step == even ? g - d : g + d);
        want = ((want % half) + half) % half;
        rc = xchg_blocks(c, 2 * last, 2 * want, 2, peer, peer);
        last = want;
    }
    return rc;
}

/* Bruck: ceil(log2 p) steps on a packed copy rotated so that own block
 * comes first; step k sends the first min(k, p-k) blocks to rank - k and
 * appends those of rank + k; then the blocks are unrotated into place. */
TUNED_ALG(allgather, bruck)
{
    int p = c->size, r = c->rank, rc;
    size_t B = (size_t)(c->count * c->dt->size);
    obj_datatype_t *byte = coll_byte_type();
    bool dev = coll_is_device(c->rbuf, c->count * p, c->dt);
    void *mem;
    char *T = tuned_bytes_alloc(B * (size_t)p, dev, (char *)c->rbuf + c->dt->true_lb, &mem);
    if (!T)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for %zu bytes of blocks", B * (size_t)p);
    if (c->inplace)
        rc = coll_copy(block(c, r), c->count, c->dt, T, (MPI_Count)B, byte);
    else
        rc = coll_copy(c->sbuf, c->scount, c->sdt, T, (MPI_Count)B, byte);
    for (int k = 1; k < p && rc == MPI_SUCCESS; k <<= 1) {
        MPI_Count n = (MPI_Count)(B * (size_t)RAIL_MIN(k, p - k));
        rc = tuned_sendrecv(T, n, byte, (r - k + p) % p, T + (size_t)k * B, n, byte, (r + k) % p,
                            c->tag, c->comm);
    }
    if (rc == MPI_SUCCESS)
        rc = coll_copy(T, (MPI_Count)(B * (size_t)(p - r)), byte, block(c, r),
                       c->count * (p - r), c->dt);
    if (rc == MPI_SUCCESS && r > 0)
        rc = coll_copy(T + B * (size_t)(p - r), (MPI_Count)(B * (size_t)r), byte, block(c, 0),
                       c->count * r, c->dt);
    tuned_bytes_free(mem, dev);
    return rc;
}
