/*
 * Datatype engine: compiling a description into a program (see base/dt.h
 * for the node kinds and the normalisations).  Builders return NULL for an
 * empty part; an allocation failure sets ctx->rc, which commit checks once
 * at the end.
 */
#include "base/dt_impl.h"
#include <stdlib.h>
#include <string.h>

#define DT_FLAT_MIN 64        /* always flatten parts of at most this many blocks */
#define DT_ARENA_CHUNK 4096

/* ------------------------------------------------------------------ arena */

struct dt_chunk {
    struct dt_chunk *next;
    size_t used, cap;
    _Alignas(16) char data[];
};

static void *dt_arena_alloc(void **arena, size_t size)
{
    struct dt_chunk *c = *arena, *n;
    size = RAIL_ALIGN_UP(size, (size_t)16);
    if (c && c->cap - c->used >= size) {
        c->used += size;
        return c->data + c->used - size;
    }
    size_t cap = RAIL_MAX(size, (size_t)DT_ARENA_CHUNK);
    if (!(n = malloc(sizeof(*n) + cap)))
        return NULL;
    n->cap = cap;
    n->used = size;
    if (c && size > DT_ARENA_CHUNK / 2) {  /* a big array: keep the current chunk */
        n->next = c->next;
        c->next = n;
    } else {
        n->next = c;
        *arena = n;
    }
    return n->data;
}

void rail_dt_arena_free(void *arena)
{
    for (struct dt_chunk *c = arena, *next; c; c = next) {
        next = c->next;
        free(c);
    }
}

/* ---------------------------------------------------------------- context */

struct dt_memo {
    const struct rail_dt *dt;
    const struct rail_dt_node *node;
};

struct dt_ctx {
    void *arena;
    int rc;
    struct dt_memo *memo;
    size_t memo_cap, memo_n;
};

static size_t dt_memo_slot(const struct dt_memo *memo, size_t cap, const struct rail_dt *dt)
{
    size_t i = (size_t)(((uintptr_t)dt >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
    while (memo[i].dt && memo[i].dt != dt)
        i = (i + 1) & (cap - 1);
    return i;
}

static bool dt_memo_get(const struct dt_ctx *x, const struct rail_dt *dt,
                        const struct rail_dt_node **node)
{
    if (!x->memo_cap)
        return false;
    size_t i = dt_memo_slot(x->memo, x->memo_cap, dt);
    *node = x->memo[i].node;
    return x->memo[i].dt != NULL;
}

static void dt_memo_put(struct dt_ctx *x, const struct rail_dt *dt, const struct rail_dt_node *node)
{
    if (2 * (x->memo_n + 1) > x->memo_cap) {
        size_t cap = x->memo_cap ? 2 * x->memo_cap : 16;
        struct dt_memo *m = calloc(cap, sizeof(*m));
        if (!m) {
            x->rc = MPI_ERR_NO_MEM;
            return;
        }
        for (size_t i = 0; i < x->memo_cap; i++)
            if (x->memo[i].dt)
                m[dt_memo_slot(m, cap, x->memo[i].dt)] = x->memo[i];
        free(x->memo);
        x->memo = m;
        x->memo_cap = cap;
    }
    x->memo[dt_memo_slot(x->memo, x->memo_cap, dt)] = (struct dt_memo){dt, node};
    x->memo_n++;
}

/* ------------------------------------------------------------------ nodes */

static struct rail_dt_node *dt_node_new(struct dt_ctx *x, enum rail_dt_op op)
{
    struct rail_dt_node *n = dt_arena_alloc(&x->arena, sizeof(*n));
    if (!n) {
        x->rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    memset(n, 0, sizeof(*n));
    n->op = (uint8_t)op;
    n->depth = 1;
    return n;
}

static const struct rail_dt_node *dt_block(struct dt_ctx *x, int64_t disp, int64_t len)
{
    struct rail_dt_node *n = dt_node_new(x, RAIL_DT_OP_BLOCK);
    if (n) {
        n->disp = disp;
        n->size = n->len = n->stride = len;
        n->count = n->nblocks = 1;
    }
    return n;
}

static const struct rail_dt_node *dt_strided(struct dt_ctx *x, int64_t disp, int64_t count,
                                             int64_t stride, int64_t len)
{
    if (count == 1 || stride == len)
        return dt_block(x, disp, count * len);
    struct rail_dt_node *n = dt_node_new(x, RAIL_DT_OP_STRIDED);
    if (n) {
        n->disp = disp;
        n->count = n->nblocks = count;
        n->stride = stride;
        n->len = len;
        n->size = count * len;
    }
    return n;
}

/* The same node, its origin moved by d. */
static const struct rail_dt_node *dt_shift(struct dt_ctx *x, const struct rail_dt_node *c,
                                           int64_t d)
{
    if (!c || d == 0)
        return c;
    struct rail_dt_node *n = dt_node_new(x, RAIL_DT_OP_BLOCK);
    if (n) {
        *n = *c;
        n->disp += d;
    }
    return n;
}

/* ------------------------------------------------------------- flattening */

static void dt_flat_emit(struct rail_dt_blk *b, int64_t *k, int64_t disp, int64_t len)
{
    if (*k > 0 && b[*k - 1].disp + b[*k - 1].len == disp) {
        b[*k - 1].len += len;
        return;
    }
    b[(*k)++] = (struct rail_dt_blk){disp, len, 0};
}

/* Append the blocks of one instance of n with origin base, in order. */
static void dt_flat_walk(const struct rail_dt_node *n, int64_t base, struct rail_dt_blk *b,
                         int64_t *k)
{
    base += n->disp;
    for (int64_t i = 0; i < n->count; i++) {
        switch (n->op) {
        case RAIL_DT_OP_BLOCK:
        case RAIL_DT_OP_STRIDED:
            dt_flat_emit(b, k, base + i * n->stride, n->len);
            break;
        case RAIL_DT_OP_BLKS:
            dt_flat_emit(b, k, base + n->blk[i].disp, n->blk[i].len);
            break;
        case RAIL_DT_OP_VEC:
            dt_flat_walk(n->child, base + i * n->stride, b, k);
            break;
        case RAIL_DT_OP_SEQ:
            dt_flat_walk(n->sub[i].child, base + n->sub[i].disp, b, k);
            break;
        }
    }
}

static bool dt_blocks_regular(const struct rail_dt_blk *b, int64_t k)
{
    int64_t step = b[1].disp - b[0].disp;
    for (int64_t i = 1; i < k; i++)
        if (b[i].len != b[0].len || b[i].disp - b[i - 1].disp != step)
            return false;
    return true;
}

/* A leaf for a merged block list: BLOCK, STRIDED when regular, else BLKS. */
static const struct rail_dt_node *dt_from_blocks(struct dt_ctx *x, const struct rail_dt_blk *b,
                                                 int64_t k)
{
    if (k == 1)
        return dt_block(x, b[0].disp, b[0].len);
    if (dt_blocks_regular(b, k))
        return dt_strided(x, b[0].disp, k, b[1].disp - b[0].disp, b[0].len);
    struct rail_dt_node *n = dt_node_new(x, RAIL_DT_OP_BLKS);
    struct rail_dt_blk *arr = n ? dt_arena_alloc(&x->arena, (size_t)k * sizeof(*arr)) : NULL;
    if (!arr) {
        x->rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int64_t i = 0; i < k; i++) {
        arr[i] = b[i];
        arr[i].prefix = n->size;
        n->size += b[i].len;
    }
    n->count = n->nblocks = k;
    n->blk = arr;
    return n;
}

static const struct rail_dt_node *dt_flatten(struct dt_ctx *x, const struct rail_dt_node *n)
{
    if (n->nblocks >= INT64_MAX / (int64_t)sizeof(struct rail_dt_blk)) {
        x->rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    struct rail_dt_blk *tmp = malloc((size_t)n->nblocks * sizeof(*tmp));
    if (!tmp) {
        x->rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    int64_t k = 0;
    dt_flat_walk(n, 0, tmp, &k);
    const struct rail_dt_node *r = dt_from_blocks(x, tmp, k);
    free(tmp);
    return r;
}

static const struct rail_dt_node *dt_cap_depth(struct dt_ctx *x, const struct rail_dt_node *n)
{
    return n && n->depth >= RAIL_DT_MAX_DEPTH ? dt_flatten(x, n) : n;
}

/* ----------------------------------------------------------- interior nodes */

static const struct rail_dt_node *dt_vec_node(struct dt_ctx *x, int64_t disp, int64_t count,
                                              int64_t stride, const struct rail_dt_node *c)
{
    struct rail_dt_node *n = dt_node_new(x, RAIL_DT_OP_VEC);
    if (!n)
        return NULL;
    n->disp = disp;
    n->count = count;
    n->stride = stride;
    n->child = c;
    n->size = count * c->size;
    n->nblocks = rail_dt_sat_mul(count, c->nblocks);
    n->depth = (uint8_t)(c->depth + 1);
    return dt_cap_depth(x, n);
}

/* count instances of c, stride apart. */
static const struct rail_dt_node *dt_vec(struct dt_ctx *x, int64_t count, int64_t stride,
                                         const struct rail_dt_node *c)
{
    if (!c || count == 0)
        return NULL;
    if (count == 1)
        return c;
    bool tiles = stride == c->count * c->stride;
    if (c->op == RAIL_DT_OP_BLOCK || (c->op == RAIL_DT_OP_STRIDED && tiles))
        return dt_strided(x, c->disp, c->op == RAIL_DT_OP_BLOCK ? count : count * c->count,
                          c->op == RAIL_DT_OP_BLOCK ? stride : c->stride, c->len);
    if (c->op == RAIL_DT_OP_VEC && tiles)
        return dt_vec_node(x, c->disp, count * c->count, c->stride, c->child);
    if (rail_dt_sat_mul(count, c->nblocks) <= DT_FLAT_MIN) {
        struct rail_dt_node tmp = {.op = RAIL_DT_OP_VEC, .count = count, .stride = stride,
                                   .child = c, .nblocks = count * c->nblocks};
        return dt_flatten(x, &tmp);
    }
    return dt_vec_node(x, 0, count, stride, c);
}

static bool dt_subs_regular(const struct rail_dt_sub *e, int64_t k)
{
    int64_t step = e[1].disp - e[0].disp;
    for (int64_t i = 1; i < k; i++)
        if (e[i].child != e[0].child || e[i].disp - e[i - 1].disp != step)
            return false;
    return true;
}

static const struct rail_dt_node *dt_seq_node(struct dt_ctx *x, const struct rail_dt_sub *e,
                                              int64_t k, int64_t blocks)
{
    struct rail_dt_node *n = dt_node_new(x, RAIL_DT_OP_SEQ);
    struct rail_dt_sub *arr = n ? dt_arena_alloc(&x->arena, (size_t)k * sizeof(*arr)) : NULL;
    if (!arr) {
        x->rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int64_t i = 0; i < k; i++) {
        arr[i] = e[i];
        arr[i].prefix = n->size;
        n->size += e[i].child->size;
        n->depth = (uint8_t)RAIL_MAX(n->depth, e[i].child->depth + 1);
    }
    n->count = k;
    n->nblocks = blocks;
    n->sub = arr;
    return dt_cap_depth(x, n);
}

/* Children e[i].child at e[i].disp, in type-map order (NULLs dropped). */
static const struct rail_dt_node *dt_seq(struct dt_ctx *x, struct rail_dt_sub *e, int64_t m)
{
    int64_t k = 0, blocks = 0;
    for (int64_t i = 0; i < m; i++)
        if (e[i].child) {
            e[k++] = e[i];
            blocks = rail_dt_sat_add(blocks, e[i].child->nblocks);
        }
    if (k <= 1)
        return k ? dt_shift(x, e[0].child, e[0].disp) : NULL;
    if (blocks <= RAIL_MAX(DT_FLAT_MIN, 2 * k)) {
        struct rail_dt_node tmp = {.op = RAIL_DT_OP_SEQ, .count = k, .sub = e, .nblocks = blocks};
        return dt_flatten(x, &tmp);
    }
    if (dt_subs_regular(e, k))
        return dt_shift(x, dt_vec(x, k, e[1].disp - e[0].disp, e[0].child), e[0].disp);
    return dt_seq_node(x, e, k, blocks);
}

/* ---------------------------------------------------------------- compile */

static const struct rail_dt_node *dt_compile(struct dt_ctx *x, const struct rail_dt *dt);

/* hindexed, hindexed_block, struct: entry i is blocklen_i copies of its type. */
static const struct rail_dt_node *dt_compile_entries(struct dt_ctx *x, const struct rail_dt *dt)
{
    struct rail_dt_sub *e = malloc((size_t)RAIL_MAX(dt->count, 1) * sizeof(*e));
    const struct rail_dt *prev_t = NULL, *t;
    const struct rail_dt_node *prev = NULL;
    int64_t prev_bl = -1, bl;
    if (!e) {
        x->rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int64_t i = 0; i < dt->count; i++) {
        t = dt->types ? dt->types[i] : dt->old;
        bl = dt->blocklens ? dt->blocklens[i] : dt->blocklen;
        if (t != prev_t || bl != prev_bl)
            prev = dt_vec(x, bl, t->extent, dt_compile(x, t));
        prev_t = t;
        prev_bl = bl;
        e[i] = (struct rail_dt_sub){.disp = dt->displs[i], .child = prev};
    }
    const struct rail_dt_node *n = dt_seq(x, e, dt->count);
    free(e);
    return n;
}

static const struct rail_dt_node *dt_compile(struct dt_ctx *x, const struct rail_dt *dt)
{
    const struct rail_dt_node *n;
    if (dt->flags & RAIL_DT_F_COMMITTED)
        return dt->root;
    if (dt_memo_get(x, dt, &n))
        return n;
    switch (dt->combiner) {
    case RAIL_DT_CONTIGUOUS:
        n = dt_vec(x, dt->count, dt->old->extent, dt_compile(x, dt->old));
        break;
    case RAIL_DT_HVECTOR:
        n = dt_vec(x, dt->blocklen, dt->old->extent, dt_compile(x, dt->old));
        n = dt_vec(x, dt->count, dt->stride, n);
        break;
    case RAIL_DT_RESIZED:
        n = dt_compile(x, dt->old);
        break;
    default:
        n = dt_compile_entries(x, dt);
        break;
    }
    dt_memo_put(x, dt, n);
    return n;
}

int rail_dt_commit(struct rail_dt *dt)
{
    if (!dt)
        return MPI_ERR_TYPE;
    if (dt->flags & RAIL_DT_F_COMMITTED)
        return MPI_SUCCESS;
    struct dt_ctx x = {0};
    const struct rail_dt_node *root = dt_compile(&x, dt);
    free(x.memo);
    if (x.rc != MPI_SUCCESS) {
        rail_dt_arena_free(x.arena);
        return x.rc;
    }
    dt->root = root;
    dt->arena = x.arena;
    if (!root || root->op == RAIL_DT_OP_BLOCK)
        dt->flags |= RAIL_DT_F_ONEBLOCK;
    if ((dt->flags & RAIL_DT_F_ONEBLOCK) && (dt->size == dt->extent || dt->size == 0))
        dt->flags |= RAIL_DT_F_CONTIG;
    dt->flags |= RAIL_DT_F_COMMITTED;
    return MPI_SUCCESS;
}
