/*
 * coll tuned: alltoall algorithms.  Send block i: c->scount elements of
 * c->sdt at i * scount elements of sbuf; receive block i: c->count of
 * c->dt in rbuf.  With MPI_IN_PLACE the send blocks are the receive blocks.
 */
#include "coll/tuned/tuned_impl.h"

static const void *sblock(const coll_tuned_call_t *c, int i)
{
    return coll_elem(c->sbuf, c->sdt, (MPI_Count)i * c->scount);
}

static void *rblock(const coll_tuned_call_t *c, int i)
{
    return coll_elem(c->rbuf, c->dt, (MPI_Count)i * c->count);
}

static size_t block_bytes(const coll_tuned_call_t *c)
{
    return (size_t)(c->count * c->dt->size);
}

static bool rbuf_device(const coll_tuned_call_t *c)
{
    return coll_is_device(c->rbuf, c->count * c->size, c->dt);
}

static const void *like(const coll_tuned_call_t *c)
{
    return (const char *)c->rbuf + c->dt->true_lb;
}

/* Up to c->param peers (0: all) in flight at a time: receives from rank -
 * k and sends to rank + k for a window of k. */
TUNED_ALG(alltoall, linear)
{
    int p = c->size, r = c->rank;
    int w = c->param ? (int)RAIL_MIN(c->param, (size_t)p - 1) : p - 1;
    int rc = coll_copy(sblock(c, r), c->scount, c->sdt, rblock(c, r), c->count, c->dt);
    coll_reqs_t b;
    coll_reqs_init(&b);
    if (tuned_alltoall_single_copy((size_t)(c->scount * c->sdt->size)))
        b.send_flags = PML_SINGLE_COPY;
    for (int start = 1; start < p && rc == MPI_SUCCESS; start += w) {
        int end = RAIL_MIN(start + w, p);
        for (int k = start; k < end && rc == MPI_SUCCESS; k++) {
            int src = (r - k + p) % p;
            rc = coll_reqs_irecv(&b, rblock(c, src), c->count, c->dt, src, c->tag, c->comm);
        }
        for (int k = start; k < end && rc == MPI_SUCCESS; k++) {
            int dst = (r + k) % p;
            rc = coll_reqs_isend(&b, sblock(c, dst), c->scount, c->sdt, dst, c->tag, c->comm);
        }
        rc = coll_reqs_wait(&b, rc);
    }
    return rc;
}

/* p-1 exchanges: with rank ^ k on powers of two, else send to rank + k and
 * receive from rank - k.  MPI_IN_PLACE: the blocks to send are staged
 * first. */
TUNED_ALG(alltoall, pairwise)
{
    int p = c->size, r = c->rank, rc = MPI_SUCCESS;
    size_t B = block_bytes(c);
    obj_datatype_t *byte = coll_byte_type();
    bool dev = false;
    void *mem = NULL;
    char *S = NULL;
    if (c->inplace) {
        dev = rbuf_device(c);
        S = tuned_bytes_alloc(B * (size_t)p, dev, like(c), &mem);
        if (!S)
            return obj_errf(MPI_ERR_NO_MEM, "out of memory staging %zu bytes", B * (size_t)p);
        rc = coll_copy(c->rbuf, c->count * p, c->dt, S, (MPI_Count)(B * (size_t)p), byte);
    } else {
        rc = coll_copy(sblock(c, r), c->scount, c->sdt, rblock(c, r), c->count, c->dt);
    }
    bool pow2 = tuned_is_pow2(p);
    for (int k = 1; k < p && rc == MPI_SUCCESS; k++) {
        int dst = pow2 ? r ^ k : (r + k) % p, src = pow2 ? r ^ k : (r - k + p) % p;
        if (S)
            rc = tuned_sendrecv(S + (size_t)dst * B, (MPI_Count)B, byte, dst, rblock(c, src),
                                c->count, c->dt, src, c->tag, c->comm);
        else
            rc = tuned_sendrecv(sblock(c, dst), c->scount, c->sdt, dst, rblock(c, src), c->count,
                                c->dt, src, c->tag, c->comm);
    }
    tuned_bytes_free(mem, dev);
    return rc;
}

/* ------------------------------------------------------------ Bruck */

/* Blocks i of T (B bytes each) whose index has bit k set, into / out of
 * the contiguous buffer X. */
static int bruck_move(char *T, char *X, int p, int k, size_t B, bool pack)
{
    int rc = MPI_SUCCESS;
    size_t j = 0;
    for (int i = k; i < p && rc == MPI_SUCCESS; i++)
        if (i & k) {
            rc = pack ? tuned_memcpy(X + j * B, T + (size_t)i * B, B)
                      : tuned_memcpy(T + (size_t)i * B, X + j * B, B);
            j++;
        }
    return rc;
}

/* Rotate: T[i] = send block (r + i) % p, packed. */
static int bruck_load(const coll_tuned_call_t *c, char *T, size_t B)
{
    int p = c->size, r = c->rank;
    obj_datatype_t *byte = coll_byte_type();
    const void *base = c->inplace ? (const void *)c->rbuf : c->sbuf;
    MPI_Count n = c->inplace ? c->count : c->scount;
    obj_datatype_t *dt = c->inplace ? c->dt : c->sdt;
    int rc = coll_copy(coll_elem(base, dt, n * r), n * (p - r), dt, T,
                       (MPI_Count)(B * (size_t)(p - r)), byte);
    if (rc == MPI_SUCCESS && r > 0)
        rc = coll_copy(base, n * r, dt, T + B * (size_t)(p - r), (MPI_Count)(B * (size_t)r), byte);
    return rc;
}

/* Bruck: ceil(log2 p) steps; in step k every block whose rotated index has
 * bit k set moves k ranks on.  Few, larger messages: for small blocks. */
TUNED_ALG(alltoall, bruck)
{
    int p = c->size, r = c->rank, rc;
    size_t B = block_bytes(c), half = B * (size_t)((p + 1) / 2);
    obj_datatype_t *byte = coll_byte_type();
    bool dev = rbuf_device(c);
    void *mem;
    char *T = tuned_bytes_alloc(B * (size_t)p + 2 * half, dev, like(c), &mem);
    if (!T)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for %zu bytes of blocks", B * (size_t)p);
    char *S = T + B * (size_t)p, *R = S + half;
    rc = bruck_load(c, T, B);
    for (int k = 1; k < p && rc == MPI_SUCCESS; k <<= 1) {
        int m = 0;
        for (int i = k; i < p; i++)
            m += (i & k) != 0;
        rc = bruck_move(T, S, p, k, B, true);
        if (rc == MPI_SUCCESS)
            rc = tuned_sendrecv(S, (MPI_Count)(B * (size_t)m), byte, (r + k) % p, R,
                                (MPI_Count)(B * (size_t)m), byte, (r - k + p) % p, c->tag,
                                c->comm);
        if (rc == MPI_SUCCESS)
            rc = bruck_move(T, R, p, k, B, false);
    }
    /* T[i] came from rank r - i */
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
        rc = coll_copy(T + (size_t)i * B, (MPI_Count)B, byte, rblock(c, (r - i + p) % p),
                       c->count, c->dt);
    tuned_bytes_free(mem, dev);
    return rc;
}
