/*
 * Datatype engine: the cursor (pack, unpack, seek, iov export, copy
 * callback).  Invariant between calls: when pos < total, stack[depth-1] is
 * a leaf frame (BLOCK, STRIDED or BLKS) whose block i holds the next byte,
 * off bytes into it; stack[0] describes cur->top.
 */
#include "base/dt_impl.h"
#include <string.h>

#define DT_INLINE static inline __attribute__((always_inline))
#define DT_IOV_BATCH 32

/* Move len bytes between the packed stream and user memory. */
DT_INLINE void dt_mv(char *pk, uintptr_t us, size_t len, int unpack)
{
    if (unpack)
        memcpy((void *)us, pk, len);
    else
        memcpy(pk, (const void *)us, len);
}

/* Short variable-length moves without a call: two overlapping loads and
 * stores of the largest size that fits (as memcpy implementations do). */
#define DT_MV_PAIR(T, pk, us, len, unpack)                                                         \
    do {                                                                                           \
        T a_, b_;                                                                                  \
        void *d_ = unpack ? (void *)(us) : (void *)(pk);                                           \
        const void *s_ = unpack ? (const void *)(pk) : (const void *)(us);                         \
        memcpy(&a_, s_, sizeof(T));                                                                \
        memcpy(&b_, (const char *)s_ + (len) - sizeof(T), sizeof(T));                              \
        memcpy(d_, &a_, sizeof(T));                                                                \
        memcpy((char *)d_ + (len) - sizeof(T), &b_, sizeof(T));                                    \
    } while (0)

DT_INLINE void dt_mv_var(char *pk, uintptr_t us, size_t len, int unpack)
{
    if (len > 16)
        dt_mv(pk, us, len, unpack);
    else if (len >= 8)
        DT_MV_PAIR(uint64_t, pk, us, len, unpack);
    else if (len >= 4)
        DT_MV_PAIR(uint32_t, pk, us, len, unpack);
    else if (len >= 2)
        DT_MV_PAIR(uint16_t, pk, us, len, unpack);
    else if (len == 1)
        dt_mv(pk, us, 1, unpack);
}

#define DT_BULK_CASE(L)                                                                            \
    case L:                                                                                        \
        for (int64_t j = 0; j < k; j++)                                                            \
            dt_mv(pk + j * (L), us + (uintptr_t)(j * stride), (L), unpack);                        \
        break;

/* k blocks of len bytes: dense in the packed stream, stride apart in user
 * memory.  Common sizes get constant-size moves. */
DT_INLINE void dt_bulk(char *pk, uintptr_t us, int64_t k, size_t len, int64_t stride, int unpack)
{
    switch (len) {
        DT_BULK_CASE(1)
        DT_BULK_CASE(2)
        DT_BULK_CASE(4)
        DT_BULK_CASE(8)
        DT_BULK_CASE(12)
        DT_BULK_CASE(16)
        DT_BULK_CASE(24)
        DT_BULK_CASE(32)
        DT_BULK_CASE(48)
        DT_BULK_CASE(64)
        DT_BULK_CASE(96)
        DT_BULK_CASE(128)
        DT_BULK_CASE(256)
    default:
        for (int64_t j = 0; j < k; j++)
            dt_mv(pk + (size_t)j * len, us + (uintptr_t)(j * stride), len, unpack);
        break;
    }
}

/* ------------------------------------------------------------- positions */

/* Push frames from the top (interior) frame down to a leaf, at index 0. */
static void dt_descend(struct rail_dt_cursor *c)
{
    struct rail_dt_frame *f = &c->stack[c->depth - 1];
    while (f->node->op == RAIL_DT_OP_VEC || f->node->op == RAIL_DT_OP_SEQ) {
        const struct rail_dt_node *n = f->node, *ch;
        uintptr_t b;
        if (n->op == RAIL_DT_OP_VEC) {
            ch = n->child;
            b = f->base + (uintptr_t)(f->i * n->stride);
        } else {
            ch = n->sub[f->i].child;
            b = f->base + (uintptr_t)n->sub[f->i].disp;
        }
        f = &c->stack[c->depth++];
        *f = (struct rail_dt_frame){ch, b + (uintptr_t)ch->disp, 0};
    }
}

/* The leaf on top is finished: move to the first block of the next one. */
static void dt_advance(struct rail_dt_cursor *c)
{
    c->off = 0;
    for (c->depth--; c->depth > 0; c->depth--) {
        struct rail_dt_frame *f = &c->stack[c->depth - 1];
        if (++f->i < f->node->count) {
            dt_descend(c);
            return;
        }
    }
}

/* Child of interior frame f holding packed offset *off (reduced to it). */
static const struct rail_dt_node *dt_seek_child(struct rail_dt_frame *f, int64_t *off,
                                                uintptr_t *base)
{
    const struct rail_dt_node *n = f->node;
    if (n->op == RAIL_DT_OP_VEC) {
        f->i = *off / n->child->size;
        *off -= f->i * n->child->size;
        *base = f->base + (uintptr_t)(f->i * n->stride);
        return n->child;
    }
    f->i = rail_dt_bsearch(&n->sub[0].prefix, sizeof(n->sub[0]), n->count, *off);
    *off -= n->sub[f->i].prefix;
    *base = f->base + (uintptr_t)n->sub[f->i].disp;
    return n->sub[f->i].child;
}

void rail_dt_cursor_seek(struct rail_dt_cursor *c, size_t pos)
{
    c->pos = RAIL_MIN(pos, c->total);
    c->off = 0;
    c->depth = 0;
    if (c->pos == c->total)
        return;
    int64_t off = (int64_t)c->pos;
    struct rail_dt_frame *f = &c->stack[c->depth++];
    *f = (struct rail_dt_frame){&c->top, c->buf + (uintptr_t)c->top.disp, 0};
    while (f->node->op == RAIL_DT_OP_VEC || f->node->op == RAIL_DT_OP_SEQ) {
        uintptr_t b;
        const struct rail_dt_node *ch = dt_seek_child(f, &off, &b);
        f = &c->stack[c->depth++];
        *f = (struct rail_dt_frame){ch, b + (uintptr_t)ch->disp, 0};
    }
    const struct rail_dt_node *n = f->node;
    if (n->op == RAIL_DT_OP_BLKS) {
        f->i = rail_dt_bsearch(&n->blk[0].prefix, sizeof(n->blk[0]), n->count, off);
        c->off = off - n->blk[f->i].prefix;
    } else {
        f->i = off / n->len;
        c->off = off - f->i * n->len;
    }
}

/* count x root, folded into one node when consecutive elements tile. */
static void dt_top(struct rail_dt_cursor *c)
{
    const struct rail_dt_node *r = c->dt->root;
    int64_t n = c->count, ext = c->dt->extent;
    c->top = *r;
    if (n == 1)
        return;
    bool tiles = ext == r->count * r->stride;
    if (r->op == RAIL_DT_OP_BLOCK && tiles) {
        c->top.len = c->top.stride = c->top.size = n * r->len;
    } else if (r->op == RAIL_DT_OP_BLOCK) {
        c->top.op = RAIL_DT_OP_STRIDED;
        c->top.count = n;
        c->top.stride = ext;
        c->top.size = n * r->len;
    } else if ((r->op == RAIL_DT_OP_STRIDED || r->op == RAIL_DT_OP_VEC) && tiles) {
        c->top.count *= n;
        c->top.size *= n;
    } else {
        c->top = (struct rail_dt_node){.op = RAIL_DT_OP_VEC, .depth = (uint8_t)(r->depth + 1),
                                       .count = n, .stride = ext, .child = r,
                                       .size = n * r->size};
    }
}

int rail_dt_cursor_init(struct rail_dt_cursor *c, const struct rail_dt *dt, int64_t count,
                        const void *buf)
{
    if (!dt || !(dt->flags & RAIL_DT_F_COMMITTED))
        return MPI_ERR_TYPE;
    if (count < 0)
        return MPI_ERR_COUNT;
    c->dt = dt;
    c->buf = (uintptr_t)buf;
    c->count = count;
    c->total = dt->root ? (size_t)count * (size_t)dt->size : 0;
    c->status = MPI_SUCCESS;
    c->copy = NULL;
    c->copy_ctx = NULL;
    if (c->total)
        dt_top(c);
    rail_dt_cursor_seek(c, 0);
    return MPI_SUCCESS;
}

void rail_dt_cursor_set_copy(struct rail_dt_cursor *c, rail_dt_copy_fn copy, void *ctx)
{
    c->copy = copy;
    c->copy_ctx = ctx;
}

/* ------------------------------------------------------------ host moves */

/* From a BLOCK / STRIDED leaf: up to max bytes, returns bytes moved. */
DT_INLINE size_t dt_leaf_strided(struct rail_dt_cursor *c, struct rail_dt_frame *f, char *pk,
                                 size_t max, int unpack)
{
    const struct rail_dt_node *n = f->node;
    size_t len = (size_t)n->len, done = 0;
    uintptr_t us = f->base + (uintptr_t)(f->i * n->stride);
    if (c->off) {
        done = RAIL_MIN(len - (size_t)c->off, max);
        dt_mv(pk, us + (uintptr_t)c->off, done, unpack);
        c->off += (int64_t)done;
        if ((size_t)c->off < len)
            return done;
        c->off = 0;
        f->i++;
        us += (uintptr_t)n->stride;
    }
    int64_t k = RAIL_MIN(n->count - f->i, (int64_t)((max - done) / len));
    dt_bulk(pk + done, us, k, len, n->stride, unpack);
    done += (size_t)k * len;
    f->i += k;
    if (f->i < n->count && done < max) {
        dt_mv(pk + done, us + (uintptr_t)(k * n->stride), max - done, unpack);
        c->off = (int64_t)(max - done);
        done = max;
    }
    return done;
}

/* From a BLKS leaf: whole blocks in a tight loop, partial ones at the ends. */
DT_INLINE size_t dt_leaf_blks(struct rail_dt_cursor *c, struct rail_dt_frame *f, char *pk,
                              size_t max, int unpack)
{
    const struct rail_dt_blk *b = f->node->blk;
    int64_t i = f->i, n = f->node->count;
    size_t done = 0;
    if (c->off) {
        done = RAIL_MIN((size_t)(b[i].len - c->off), max);
        dt_mv(pk, f->base + (uintptr_t)(b[i].disp + c->off), done, unpack);
        c->off += (int64_t)done;
        if (c->off < b[i].len)
            return done;
        c->off = 0;
        i++;
    }
    for (; i < n && done + (size_t)b[i].len <= max; done += (size_t)b[i++].len)
        dt_mv_var(pk + done, f->base + (uintptr_t)b[i].disp, (size_t)b[i].len, unpack);
    if (i < n && done < max) {
        dt_mv(pk + done, f->base + (uintptr_t)b[i].disp, max - done, unpack);
        c->off = (int64_t)(max - done);
        done = max;
    }
    f->i = i;
    return done;
}

/* The leaf on top is finished.  Fast path: its parent is a VEC with more
 * instances, so only the leaf's origin moves. */
DT_INLINE void dt_next_leaf(struct rail_dt_cursor *c)
{
    if (c->depth >= 2) {
        struct rail_dt_frame *p = &c->stack[c->depth - 2], *f = p + 1;
        if (p->node->op == RAIL_DT_OP_VEC && p->i + 1 < p->node->count) {
            p->i++;
            f->base += (uintptr_t)p->node->stride;
            f->i = 0;
            c->off = 0;
            return;
        }
    }
    dt_advance(c);
}

DT_INLINE size_t dt_walk(struct rail_dt_cursor *c, char *pk, size_t max, int unpack)
{
    size_t done = 0;
    max = RAIL_MIN(max, c->total - c->pos);
    c->stack[0].node = &c->top;
    while (done < max) {
        struct rail_dt_frame *f = &c->stack[c->depth - 1];
        if (f->node->op == RAIL_DT_OP_BLKS)
            done += dt_leaf_blks(c, f, pk + done, max - done, unpack);
        else
            done += dt_leaf_strided(c, f, pk + done, max - done, unpack);
        if (f->i == f->node->count)
            dt_next_leaf(c);
    }
    c->pos += done;
    return done;
}

/* ------------------------------------------------------------- iov export */

/* Address and length of the current block of leaf frame f. */
static inline void dt_piece(const struct rail_dt_frame *f, uintptr_t *addr, size_t *len)
{
    const struct rail_dt_node *n = f->node;
    if (n->op == RAIL_DT_OP_BLKS) {
        *addr = f->base + (uintptr_t)n->blk[f->i].disp;
        *len = (size_t)n->blk[f->i].len;
    } else {
        *addr = f->base + (uintptr_t)(f->i * n->stride);
        *len = (size_t)n->len;
    }
}

/* Append [addr, addr+m) to iov, merging with the last entry; false: full. */
static inline bool dt_iov_add(struct iovec *iov, int *n, int max_iov, uintptr_t addr, size_t m)
{
    if (*n > 0 && (uintptr_t)iov[*n - 1].iov_base + iov[*n - 1].iov_len == addr) {
        iov[*n - 1].iov_len += m;
        return true;
    }
    if (*n == max_iov)
        return false;
    iov[(*n)++] = (struct iovec){(void *)addr, m};
    return true;
}

size_t rail_dt_cursor_iov(struct rail_dt_cursor *c, struct iovec *iov, int max_iov,
                          size_t max_bytes, int *n_iov)
{
    size_t done = 0, len;
    uintptr_t addr;
    int n = 0;
    max_bytes = RAIL_MIN(max_bytes, c->total - c->pos);
    c->stack[0].node = &c->top;
    while (done < max_bytes) {
        struct rail_dt_frame *f = &c->stack[c->depth - 1];
        dt_piece(f, &addr, &len);
        size_t m = RAIL_MIN(len - (size_t)c->off, max_bytes - done);
        if (!dt_iov_add(iov, &n, max_iov, addr + (uintptr_t)c->off, m))
            break;
        done += m;
        c->off += (int64_t)m;
        if ((size_t)c->off == len) {
            c->off = 0;
            if (++f->i == f->node->count)
                dt_next_leaf(c);
        }
    }
    c->pos += done;
    *n_iov = n;
    return done;
}

/* ---------------------------------------------------------- copy callback */

static size_t dt_walk_cb(struct rail_dt_cursor *c, char *pk, size_t max, int unpack)
{
    struct iovec iov[DT_IOV_BATCH];
    size_t done = 0;
    int n;
    while (done < max && c->pos < c->total) {
        size_t start = c->pos, got = rail_dt_cursor_iov(c, iov, DT_IOV_BATCH, max - done, &n);
        size_t k = 0;
        for (int j = 0; j < n; k += iov[j++].iov_len) {
            int rc = unpack ? c->copy(iov[j].iov_base, pk + done + k, iov[j].iov_len, c->copy_ctx)
                            : c->copy(pk + done + k, iov[j].iov_base, iov[j].iov_len, c->copy_ctx);
            if (rc != MPI_SUCCESS) {
                c->status = c->status != MPI_SUCCESS ? c->status : rc;
                rail_dt_cursor_seek(c, start + k);
                return done + k;
            }
        }
        done += got;
    }
    return done;
}

size_t rail_dt_pack(struct rail_dt_cursor *c, void *dst, size_t max_bytes)
{
    if (c->copy)
        return dt_walk_cb(c, dst, max_bytes, 0);
    return dt_walk(c, dst, max_bytes, 0);
}

size_t rail_dt_unpack(struct rail_dt_cursor *c, const void *src, size_t bytes)
{
    if (c->copy)
        return dt_walk_cb(c, (char *)src, bytes, 1);
    return dt_walk(c, (char *)src, bytes, 1);
}
