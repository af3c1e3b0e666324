/*
 * coll tuned: gather and scatter.  At the root, block i of the gathered
 * (scattered) buffer is c->count (c->scount) elements of c->dt (c->sdt);
 * elsewhere the process's own block is c->scount of c->sdt (gather) or
 * c->count of c->dt (scatter).  Binomial trees pass runs of blocks of
 * consecutive relative ranks, packed as bytes in intermediate processes.
 */
#include "coll/tuned/tuned_impl.h"
#include "obj/errcode.h"

/* Bytes of one block (the same everywhere by the type signature rules). */
static size_t gs_block_bytes(const coll_tuned_call_t *c, bool gather)
{
    bool root = c->rank == c->root;
    if (gather == root)   /* gather at the root, scatter elsewhere: receive side */
        return (size_t)(c->count * c->dt->size);
    return (size_t)(c->scount * c->sdt->size);
}

/* Size of the subtree of relative rank v in a binomial tree of p. */
static int subtree(int v, int p)
{
    return v == 0 ? p : RAIL_MIN(tuned_lowbit(v), p - v);
}

/* ------------------------------------------------------------ linear */

TUNED_ALG(gather, linear)
{
    int rc = MPI_SUCCESS;
    if (c->rank != c->root)
        return coll_send(c->sbuf, c->scount, c->sdt, c->root, c->tag, c->comm);
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++) {
        void *blk = coll_elem(c->rbuf, c->dt, (MPI_Count)i * c->count);
        if (i != c->rank)
            rc = coll_reqs_irecv_all(&b, blk, c->count, c->dt, i, c->tag, c->comm);
        else if (!c->inplace)
            rc = coll_copy(c->sbuf, c->scount, c->sdt, blk, c->count, c->dt);
    }
    return coll_reqs_wait(&b, rc);
}

TUNED_ALG(scatter, linear)
{
    int rc = MPI_SUCCESS;
    if (c->rank != c->root)
        return coll_recv_all(c->rbuf, c->count, c->dt, c->root, c->tag, c->comm);
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++) {
        const void *blk = coll_elem(c->sbuf, c->sdt, (MPI_Count)i * c->scount);
        if (i != c->rank)
            rc = coll_reqs_isend(&b, blk, c->scount, c->sdt, i, c->tag, c->comm);
        else if (!c->inplace)
            rc = coll_copy(blk, c->scount, c->sdt, c->rbuf, c->count, c->dt);
    }
    return coll_reqs_wait(&b, rc);
}

/* A byte temporary of len bytes in the memory kind (host or the device)
 * of count x dt at buf, the buffer this process gives or gets; NULL when
 * out of memory.  Free with tuned_bytes_free(*mem, *dev). */
static char *gs_tmp(size_t len, const void *buf, MPI_Count count, obj_datatype_t *dt, bool *dev,
                    void **mem)
{
    *dev = coll_is_device(buf, count, dt);
    *mem = NULL;
    return tuned_bytes_alloc(len, *dev, (const char *)buf + dt->true_lb, mem);
}

/* ------------------------------------------------------------ binomial gather */

/* The root unpacks T (block i of relative rank i) into rbuf, or, with
 * root 0, the children's blocks went straight to rbuf. */
static int gather_root_unpack(const coll_tuned_call_t *c, const char *T, size_t B)
{
    int p = c->size, root = c->root, rc = MPI_SUCCESS;
    obj_datatype_t *byte = coll_byte_type();
    /* relative 1 .. p-1-root are absolute root+1 .. p-1; the rest wrap */
    int n1 = p - 1 - root;
    if (n1 > 0)
        rc = coll_copy(T + B, (MPI_Count)(B * (size_t)n1), byte,
                       coll_elem(c->rbuf, c->dt, (MPI_Count)(root + 1) * c->count),
                       c->count * n1, c->dt);
    if (rc == MPI_SUCCESS && root > 0)
        rc = coll_copy(T + B * (size_t)(n1 + 1), (MPI_Count)(B * (size_t)root), byte, c->rbuf,
                       c->count * root, c->dt);
    return rc;
}

TUNED_ALG(gather, binomial)
{
    int p = c->size, v = (c->rank - c->root + p) % p, sub = subtree(v, p), rc = MPI_SUCCESS;
    bool root = v == 0, direct = root && c->root == 0;
    size_t B = gs_block_bytes(c, true);
    obj_datatype_t *byte = coll_byte_type();
    if (sub == 1)   /* a leaf sends its block as it is */
        return coll_send(c->sbuf, c->scount, c->sdt, (c->rank - tuned_lowbit(v) + p) % p, c->tag,
                         c->comm);
    bool dev = false;
    void *mem = NULL;
    char *T = NULL;
    if (!direct) {
        T = root ? gs_tmp(B * (size_t)sub, c->rbuf, c->count * p, c->dt, &dev, &mem)
                 : gs_tmp(B * (size_t)sub, c->sbuf, c->scount, c->sdt, &dev, &mem);
        if (!T)
            return obj_errf(MPI_ERR_NO_MEM, "out of memory for %zu bytes", B * (size_t)sub);
        if (!root)   /* own block first */
            rc = coll_copy(c->sbuf, c->scount, c->sdt, T, (MPI_Count)B, byte);
    }
    if (root && !c->inplace)
        rc = coll_copy(c->sbuf, c->scount, c->sdt,
                       coll_elem(c->rbuf, c->dt, (MPI_Count)c->root * c->count), c->count, c->dt);
    coll_reqs_t b;
    coll_reqs_init(&b);
    for (int mask = 1; mask < sub && rc == MPI_SUCCESS; mask <<= 1) {
        int n = RAIL_MIN(mask, sub - mask), child = (c->rank + mask) % p;
        if (direct)
            rc = coll_reqs_irecv_all(&b, coll_elem(c->rbuf, c->dt, (MPI_Count)mask * c->count),
                                     c->count * n, c->dt, child, c->tag, c->comm);
        else
            rc = coll_reqs_irecv_all(&b, T + (size_t)mask * B, (MPI_Count)(B * (size_t)n), byte,
                                     child, c->tag, c->comm);
    }
    bool posted = rc == MPI_SUCCESS;
    rc = coll_reqs_wait(&b, rc);
    if (posted && !root) {
        /* passed on even where a child's blocks had another length
         * (mismatched type signatures): the parent does not wait forever */
        int r2 = coll_send(T, (MPI_Count)(B * (size_t)sub), byte,
                           (c->rank - tuned_lowbit(v) + p) % p, c->tag, c->comm);
        rc = rc != MPI_SUCCESS ? rc : r2;
    } else if (rc == MPI_SUCCESS && !direct)
        rc = gather_root_unpack(c, T, B);
    tuned_bytes_free(mem, dev);
    return rc;
}

/* ------------------------------------------------------------ binomial scatter */

/* The root's blocks rotated so that relative rank i's comes i-th. */
static int scatter_root_pack(const coll_tuned_call_t *c, char *T, size_t B)
{
    int p = c->size, root = c->root, rc;
    obj_datatype_t *byte = coll_byte_type();
    rc = coll_copy(coll_elem(c->sbuf, c->sdt, (MPI_Count)root * c->scount),
                   c->scount * (p - root), c->sdt, T, (MPI_Count)(B * (size_t)(p - root)), byte);
    if (rc == MPI_SUCCESS && root > 0)
        rc = coll_copy(c->sbuf, c->scount * root, c->sdt, T + B * (size_t)(p - root),
                       (MPI_Count)(B * (size_t)root), byte);
    return rc;
}

TUNED_ALG(scatter, binomial)
{
    int p = c->size, v = (c->rank - c->root + p) % p, sub = subtree(v, p), rc = MPI_SUCCESS;
    bool root = v == 0, direct = root && c->root == 0;
    size_t B = gs_block_bytes(c, false);
    obj_datatype_t *byte = coll_byte_type();
    int parent = (c->rank - tuned_lowbit(v) + p) % p;
    if (sub == 1)   /* a leaf receives its block as it is */
        return coll_recv_all(c->rbuf, c->count, c->dt, parent, c->tag, c->comm);
    bool dev = false;
    void *mem = NULL;
    char *T = NULL;
    if (!direct) {
        T = root ? gs_tmp(B * (size_t)sub, c->sbuf, c->scount * p, c->sdt, &dev, &mem)
                 : gs_tmp(B * (size_t)sub, c->rbuf, c->count, c->dt, &dev, &mem);
        if (!T)
            return obj_errf(MPI_ERR_NO_MEM, "out of memory for %zu bytes", B * (size_t)sub);
        rc = root ? scatter_root_pack(c, T, B)
                  : coll_recv_all(T, (MPI_Count)(B * (size_t)sub), byte, parent, c->tag, c->comm);
    }
    /* A truncated or short message (a type signature that differs: an
     * erroneous program) is passed on all the same, so that the subtree is
     * not left waiting; the error is reported here. */
    int err = rc;
    if (rc != MPI_SUCCESS && (obj_errcode_class(rc) == MPI_ERR_TRUNCATE ||
                              obj_errcode_class(rc) == MPI_ERR_COUNT))
        rc = MPI_SUCCESS;
    coll_reqs_t b;
    coll_reqs_init(&b);
    int top = 1;
    while (top * 2 < sub)
        top *= 2;
    for (int mask = top; mask > 0 && rc == MPI_SUCCESS; mask >>= 1) {
        if (mask >= sub)
            continue;
        int n = RAIL_MIN(mask, sub - mask), child = (c->rank + mask) % p;
        if (direct)
            rc = coll_reqs_isend(&b, coll_elem(c->sbuf, c->sdt, (MPI_Count)mask * c->scount),
                                 c->scount * n, c->sdt, child, c->tag, c->comm);
        else
            rc = coll_reqs_isend(&b, T + (size_t)mask * B, (MPI_Count)(B * (size_t)n), byte, child,
                                 c->tag, c->comm);
    }
    if (rc == MPI_SUCCESS && !c->inplace) {   /* own block (root: unless in place) */
        if (direct)
            rc = coll_copy(c->sbuf, c->scount, c->sdt, c->rbuf, c->count, c->dt);
        else
            rc = coll_copy(T, (MPI_Count)B, byte, c->rbuf, c->count, c->dt);
    }
    rc = coll_reqs_wait(&b, rc);
    tuned_bytes_free(mem, dev);
    return err != MPI_SUCCESS ? err : rc;
}
