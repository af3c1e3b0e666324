/*
 * Known answers: predefined types, MPI bounds rules (markers, struct
 * padding, negative strides, empty types), the shape of compiled programs
 * (vectors stay strided loops, adjacent blocks merge, count x vector folds),
 * subarray, argument errors, deep nesting, large counts.
 */
#include "dt_testlib.h"
#include <string.h>
#include <time.h>

#define I32 rail_dt_predefined(RAIL_TK_INT32)
#define F64 rail_dt_predefined(RAIL_TK_DOUBLE)
#define U8 rail_dt_predefined(RAIL_TK_UINT8)

static int t_bounds(const struct rail_dt *dt, int64_t size, int64_t lb, int64_t extent,
                    int64_t true_lb, int64_t true_extent)
{
    T_REQUIRE(dt->size == size && dt->lb == lb && dt->extent == extent &&
                  dt->true_lb == true_lb && dt->true_extent == true_extent,
              "got size %lld lb %lld extent %lld true %lld %lld", (long long)dt->size,
              (long long)dt->lb, (long long)dt->extent, (long long)dt->true_lb,
              (long long)dt->true_extent);
    return 0;
}

/* Program root op and, for BLOCK / STRIDED, count, stride and len. */
static int t_shape(const struct rail_dt *dt, int op, int64_t count, int64_t stride, int64_t len)
{
    const struct rail_dt_node *r = dt->root;
    T_REQUIRE(r && r->op == op, "root op %d, want %d", r ? r->op : -1, op);
    if (op == RAIL_DT_OP_STRIDED || op == RAIL_DT_OP_BLOCK)
        T_REQUIRE(r->count == count && r->stride == stride && r->len == len,
                  "count %lld stride %lld len %lld", (long long)r->count, (long long)r->stride,
                  (long long)r->len);
    return 0;
}

/* Whole round trip against the reference for count elements. */
static int t_roundtrip(const struct rail_dt *dt, int64_t count)
{
    struct t_buf b;
    t_buf_alloc(&b, dt, count);
    size_t n = (size_t)(count * dt->size);
    unsigned char *ref = malloc(n + 1), *out = malloc(n + 1);
    t_ref_pack(dt, count, b.buf, ref);
    size_t done;
    EXPECT(rail_dt_pack_all(dt, count, b.buf, out, n, &done) == MPI_SUCCESS && done == n,
           "pack_all");
    EXPECT(!memcmp(ref, out, n), "packed bytes differ");
    free(ref);
    free(out);
    t_buf_free(&b);
    return 0;
}

static void t_predefined(void)
{
    struct rail_dt *d = rail_dt_predefined(RAIL_TK_DOUBLE_INT);
    EXPECT(!t_bounds(d, 12, 0, 16, 0, 12) && d->nelem == 2 && !rail_dt_is_contig(d, 2),
           "double_int");
    EXPECT(rail_dt_is_contig(d, 1), "one double_int is dense");
    d = rail_dt_predefined(RAIL_TK_SHORT_INT);
    EXPECT(!t_bounds(d, 6, 0, 8, 0, 8) && d->root->op == RAIL_DT_OP_BLKS, "short_int");
    d = rail_dt_predefined(RAIL_TK_2INT);
    EXPECT(!t_bounds(d, 8, 0, 8, 0, 8) && rail_dt_is_contig(d, 5), "2int");
    d = rail_dt_predefined(RAIL_TK_LONG_DOUBLE_INT);
    EXPECT(!t_bounds(d, (int64_t)sizeof(long double) + 4, 0,
                     (int64_t)sizeof(struct { long double v; int i; }), 0,
                     (int64_t)sizeof(long double) + 4),
           "long_double_int");
    EXPECT(rail_dt_predefined(RAIL_TK_NONE) == NULL, "none");
    EXPECT(rail_dt_predefined(RAIL_TK_COUNT) == NULL, "out of range");
    d = rail_dt_predefined_ext32(RAIL_TK_INT64, 4);
    EXPECT(d && d->size == 8 && d->ext32_size == 4 && d->tk == RAIL_TK_INT64, "long");
    EXPECT(rail_dt_predefined_ext32(RAIL_TK_INT32, 4) == I32, "default ext32 size");
    EXPECT(rail_dt_predefined_ext32(RAIL_TK_INT32, 8) == NULL, "bad ext32 size");
    EXPECT(rail_dt_retain(I32) == I32, "retain predefined");
    rail_dt_release(I32);
    EXPECT(I32->size == 4 && rail_dt_is_contig(I32, 1000), "int32");
}

static void t_vectors(void)
{
    struct rail_dt *v, *c, *r, *h;
    rail_dt_create_vector(50, 2, 4, I32, &v);
    rail_dt_commit(v);
    EXPECT(!t_bounds(v, 400, 0, 792, 0, 792), "vector bounds");
    EXPECT(!t_shape(v, RAIL_DT_OP_STRIDED, 50, 16, 8), "vector is one strided loop");
    rail_dt_create_contiguous(3, v, &c);
    rail_dt_commit(c);
    EXPECT(c->root->op == RAIL_DT_OP_VEC && c->root->child == v->root, "shares committed child");
    EXPECT(!t_roundtrip(c, 2), "contiguous of vector");
    rail_dt_create_resized(v, 0, 800, &r);   /* now consecutive vectors tile */
    rail_dt_release(c);
    rail_dt_create_contiguous(3, r, &c);
    rail_dt_commit(c);
    rail_dt_commit(r);
    EXPECT(!t_shape(c, RAIL_DT_OP_STRIDED, 150, 16, 8), "tiling vectors fold");
    struct rail_dt_cursor cur;
    rail_dt_cursor_init(&cur, r, 1000, NULL);
    EXPECT(cur.top.op == RAIL_DT_OP_STRIDED && cur.top.count == 50000, "count x vector folds");
    EXPECT(!t_roundtrip(c, 3), "folded");
    rail_dt_release(c);
    rail_dt_release(r);
    rail_dt_release(v);
    rail_dt_create_vector(4, 1, 1, I32, &v);
    rail_dt_commit(v);
    EXPECT(!t_shape(v, RAIL_DT_OP_BLOCK, 1, 16, 16) && rail_dt_is_contig(v, 7), "dense vector");
    rail_dt_release(v);
    rail_dt_create_hvector(3, 1, -8, F64, &h);
    rail_dt_commit(h);
    EXPECT(!t_bounds(h, 24, -16, 24, -16, 24), "negative stride bounds");
    EXPECT(!t_shape(h, RAIL_DT_OP_STRIDED, 3, -8, 8) && !rail_dt_is_contig(h, 1),
           "negative stride keeps type-map order");
    EXPECT(!t_roundtrip(h, 4), "negative stride");
    rail_dt_release(h);
}

static void t_structs(void)
{
    struct rail_dt *s, *r, *m, *types[2] = {rail_dt_predefined(RAIL_TK_INT8), F64};
    int64_t bl[2] = {1, 1}, d[2] = {0, 8};
    rail_dt_create_struct(2, bl, d, types, &s);
    rail_dt_commit(s);
    EXPECT(!t_bounds(s, 9, 0, 16, 0, 16), "struct padding (epsilon)");
    EXPECT(s->root->op == RAIL_DT_OP_BLKS && s->root->count == 2, "two blocks");
    rail_dt_release(s);
    types[0] = I32;
    types[1] = I32;
    d[1] = 4;
    rail_dt_create_struct(2, bl, d, types, &s);
    rail_dt_commit(s);
    EXPECT(!t_shape(s, RAIL_DT_OP_BLOCK, 1, 8, 8) && rail_dt_is_contig(s, 3), "merged struct");
    rail_dt_release(s);
    /* sticky markers: only the resized member decides lb/ub */
    rail_dt_create_resized(I32, -4, 16, &r);
    EXPECT(!t_bounds(r, 4, -4, 16, 0, 4) && (r->flags & RAIL_DT_F_MARKERS), "resized");
    types[0] = r;
    d[0] = 0;
    d[1] = 100;
    rail_dt_create_struct(2, bl, d, types, &m);
    EXPECT(!t_bounds(m, 8, -4, 16, 0, 104), "markers win over data");
    rail_dt_release(m);
    /* contiguous of a resized type: markers move with the copies */
    rail_dt_create_contiguous(3, r, &m);
    rail_dt_commit(m);
    EXPECT(!t_bounds(m, 12, -4, 48, 0, 36), "contiguous of resized");
    EXPECT(!t_shape(m, RAIL_DT_OP_STRIDED, 3, 16, 4), "strided");
    rail_dt_release(m);
    rail_dt_release(r);
}

static void t_indexed(void)
{
    struct rail_dt *h, *e, *s, *types[2];
    int64_t bl[4] = {1, 1, 1, 1}, d[4] = {0, 16, 32, 48}, z[2] = {0, 0};
    rail_dt_create_hindexed(4, bl, d, I32, &h);
    rail_dt_commit(h);
    EXPECT(!t_shape(h, RAIL_DT_OP_STRIDED, 4, 16, 4), "regular hindexed is a vector");
    rail_dt_release(h);
    d[1] = 4, d[2] = 8, d[3] = 100;
    rail_dt_create_hindexed(4, bl, d, I32, &h);
    rail_dt_commit(h);
    EXPECT(h->root->op == RAIL_DT_OP_BLKS && h->root->count == 2 && h->root->blk[0].len == 12,
           "adjacent blocks merge");
    rail_dt_release(h);
    d[1] = -4;  /* adjacent in memory but not in type-map order: no merge */
    rail_dt_create_hindexed(2, bl, d, I32, &h);
    rail_dt_commit(h);
    EXPECT(!t_shape(h, RAIL_DT_OP_STRIDED, 2, -4, 4) && !t_bounds(h, 8, -4, 8, -4, 8), "backwards");
    EXPECT(!t_roundtrip(h, 3), "backwards blocks");
    rail_dt_release(h);
    /* empty types vanish from bounds */
    rail_dt_create_contiguous(0, I32, &e);
    rail_dt_commit(e);
    EXPECT(!t_bounds(e, 0, 0, 0, 0, 0) && e->root == NULL && rail_dt_is_contig(e, 3), "empty");
    struct rail_dt_cursor cur;
    EXPECT(rail_dt_cursor_init(&cur, e, 5, NULL) == MPI_SUCCESS && cur.total == 0, "empty cursor");
    types[0] = e;
    types[1] = I32;
    z[1] = 8;
    int64_t bl2[2] = {3, 1};
    rail_dt_create_struct(2, bl2, z, types, &s);
    EXPECT(!t_bounds(s, 4, 8, 4, 8, 4), "empty member ignored");
    rail_dt_release(s);
    rail_dt_release(e);
    int64_t zero[3] = {0, 2, 0}, dd[3] = {-1000, 0, 1000};
    rail_dt_create_hindexed(3, zero, dd, I32, &h);
    EXPECT(!t_bounds(h, 8, 0, 8, 0, 8), "zero-length blocks ignored");
    rail_dt_release(h);
}

static void t_subarray(void)
{
    struct rail_dt *s;
    int64_t sizes[2] = {4, 5}, sub[2] = {2, 3}, starts[2] = {1, 1};
    EXPECT(rail_dt_create_subarray(2, sizes, sub, starts, false, I32, &s) == MPI_SUCCESS, "C");
    rail_dt_commit(s);
    EXPECT(!t_bounds(s, 24, 0, 80, 24, 32), "C order bounds");
    EXPECT(s->root->op == RAIL_DT_OP_STRIDED && s->root->disp == 24 && s->root->stride == 20 &&
               s->root->len == 12,
           "C order rows");
    EXPECT(!t_roundtrip(s, 2), "subarray C");
    rail_dt_release(s);
    EXPECT(rail_dt_create_subarray(2, sizes, sub, starts, true, I32, &s) == MPI_SUCCESS, "F");
    rail_dt_commit(s);
    EXPECT(!t_bounds(s, 24, 0, 80, 20, 40), "Fortran order bounds");
    EXPECT(!t_roundtrip(s, 2), "subarray Fortran");
    rail_dt_release(s);
    int64_t bad[2] = {3, 5};
    EXPECT(rail_dt_create_subarray(2, sizes, bad, starts, false, I32, &s) == MPI_ERR_ARG,
           "subsize + start beyond size");
}

static void t_errors(void)
{
    struct rail_dt *dt = NULL;
    int64_t neg[1] = {-1}, d[1] = {0};
    EXPECT(rail_dt_create_contiguous(-1, I32, &dt) == MPI_ERR_COUNT, "negative count");
    EXPECT(rail_dt_create_hvector(1, -1, 0, I32, &dt) == MPI_ERR_ARG, "negative blocklen");
    EXPECT(rail_dt_create_hindexed(1, neg, d, I32, &dt) == MPI_ERR_ARG, "negative blocklens");
    EXPECT(rail_dt_create_contiguous(1, NULL, &dt) == MPI_ERR_TYPE, "NULL type");
    EXPECT(rail_dt_create_hindexed(1, NULL, d, I32, &dt) == MPI_ERR_ARG, "NULL array");
    rail_dt_create_contiguous(2, I32, &dt);
    struct rail_dt_cursor cur;
    EXPECT(rail_dt_cursor_init(&cur, dt, 1, NULL) == MPI_ERR_TYPE, "uncommitted");
    rail_dt_commit(dt);
    EXPECT(rail_dt_cursor_init(&cur, dt, -1, NULL) == MPI_ERR_COUNT, "negative count");
    rail_dt_release(dt);
}

/* 20 levels of non-tiling vectors: the program is capped in depth. */
static void t_deep(void)
{
    struct rail_dt *t = rail_dt_retain(U8), *n;
    for (int i = 0; i < 20; i++) {
        rail_dt_create_hvector(2, 1, t->extent + 1 + i % 3, t, &n);
        rail_dt_release(t);
        t = n;
    }
    EXPECT(rail_dt_commit(t) == MPI_SUCCESS && t->root->depth < RAIL_DT_MAX_DEPTH, "depth %d",
           t->root->depth);
    EXPECT(!t_roundtrip(t, 2), "deep type");
    struct rail_dt *flat;
    bool m = false, exact;
    rail_dt_create_contiguous(2 << 20, U8, &flat);
    EXPECT(rail_dt_sig_match(t, 2, flat, 1, &m) == MPI_SUCCESS && m, "deep signature");
    EXPECT(rail_dt_get_elements(t, 12345, &exact) == 12345 && exact, "deep get_elements");
    size_t xn = 0, pos = 0;
    rail_dt_external32_size(t, 1, &xn);
    unsigned char *x = malloc(xn);
    struct t_buf b;
    t_buf_alloc(&b, t, 1);
    EXPECT(rail_dt_pack_external32(t, 1, b.buf, x, xn, &pos) == MPI_SUCCESS && pos == xn,
           "deep external32");
    t_buf_free(&b);
    free(x);
    rail_dt_release(flat);
    rail_dt_release(t);
}

/* A vector of a million blocks compiles to one node, immediately. */
static void t_large(void)
{
    struct rail_dt *v, *c;
    clock_t t0 = clock();
    rail_dt_create_vector(1 << 20, 16, 32, I32, &v);
    rail_dt_create_contiguous(1000, v, &c);
    rail_dt_commit(v);
    rail_dt_commit(c);
    EXPECT(!t_shape(v, RAIL_DT_OP_STRIDED, 1 << 20, 128, 64), "vector");
    EXPECT(c->root->op == RAIL_DT_OP_VEC && c->root->child->op == RAIL_DT_OP_STRIDED,
           "contiguous of a big vector");
    EXPECT(c->size == 1000LL * (1 << 20) * 64, "size beyond 2^32");
    struct rail_dt_cursor cur;
    rail_dt_cursor_init(&cur, c, 3, NULL);
    rail_dt_cursor_seek(&cur, (size_t)c->size * 2 + 64 * 12345 + 7);
    /* 3 x contiguous(1000) of vectors folds into one VEC of 3000 */
    EXPECT(cur.depth == 2 && cur.stack[0].i == 2000 && cur.stack[1].i == 12345 && cur.off == 7,
           "seek in a big type");
    EXPECT((double)(clock() - t0) / CLOCKS_PER_SEC < 0.5, "too slow");
    rail_dt_release(c);
    rail_dt_release(v);
}

/* Uncommitted children used several times: compiled once, shared. */
static void t_shared(void)
{
    struct rail_dt *a, *b, *t, *s, *types[5];
    int64_t bl[5] = {1, 2, 1, 1, 3}, d[5] = {0, 100, 400, 700, 1000};
    rail_dt_create_hvector(70, 1, 12, I32, &a);    /* too many blocks to flatten */
    rail_dt_create_hvector(70, 2, 20, rail_dt_predefined(RAIL_TK_INT16), &b);
    rail_dt_create_contiguous(2, a, &t);
    types[0] = a, types[1] = b, types[2] = a, types[3] = t, types[4] = b;
    rail_dt_create_struct(5, bl, d, types, &s);
    EXPECT(rail_dt_commit(s) == MPI_SUCCESS && s->root->op == RAIL_DT_OP_SEQ, "seq");
    EXPECT(s->root->sub[0].child == s->root->sub[2].child, "a compiled once");
    EXPECT(!t_roundtrip(s, 3), "shared children");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    rail_dt_dump(s, f);
    fclose(f);
    EXPECT(text && strstr(text, "program:") && strstr(text, "seq"), "dump");
    free(text);
    rail_dt_release(s);
    rail_dt_release(t);
    rail_dt_release(b);
    rail_dt_release(a);
}

int main(void)
{
    t_predefined();
    t_vectors();
    t_structs();
    t_indexed();
    t_subarray();
    t_errors();
    t_deep();
    t_large();
    t_shared();
    return check_report("dt_basic");
}
