/* coll tuned: barrier algorithms. */
#include "coll/tuned/tuned_impl.h"

/* Exchange of empty messages. */
static int zero_xchg(int dst, int src, const coll_tuned_call_t *c)
{
    obj_datatype_t *byte = coll_byte_type();
    return tuned_sendrecv(NULL, 0, byte, dst, NULL, 0, byte, src, c->tag, c->comm);
}

/* ceil(log2 p) rounds: in round k, signal rank + 2^k and wait for rank - 2^k. */
TUNED_ALG(barrier, dissemination)
{
    int p = c->size, r = c->rank, rc = MPI_SUCCESS;
    for (int d = 1; d < p && rc == MPI_SUCCESS; d <<= 1)
        rc = zero_xchg((r + d) % p, (r - d + p) % p, c);
    return rc;
}

/* Pairwise exchanges with rank ^ 2^k among the largest power of two; the
 * extra processes first signal a partner there and are released by it
 * at the end. */
TUNED_ALG(barrier, recursive_doubling)
{
    int p = c->size, r = c->rank, p2 = tuned_pow2_floor(p), rc = MPI_SUCCESS;
    obj_datatype_t *byte = coll_byte_type();
    if (r >= p2) {
        rc = coll_send(NULL, 0, byte, r - p2, c->tag, c->comm);
        return rc == MPI_SUCCESS ? coll_recv(NULL, 0, byte, r - p2, c->tag, c->comm) : rc;
    }
    if (r + p2 < p)
        rc = coll_recv(NULL, 0, byte, r + p2, c->tag, c->comm);
    for (int mask = 1; mask < p2 && rc == MPI_SUCCESS; mask <<= 1)
        rc = zero_xchg(r ^ mask, r ^ mask, c);
    if (rc == MPI_SUCCESS && r + p2 < p)
        rc = coll_send(NULL, 0, byte, r + p2, c->tag, c->comm);
    return rc;
}
