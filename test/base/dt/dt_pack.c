/*
 * Pack / unpack of random nested datatypes against the reference packer:
 * whole buffers, pieces of every size (1 byte, odd sizes, boundaries inside
 * basic elements), seek to random offsets, out-of-order unpack, iov export,
 * type-to-type copy.  Usage: dt_pack [seed] [iterations]
 */
#include "dt_testlib.h"
#include <string.h>

struct t_case {
    struct rail_dt *dt;
    int64_t count;
    struct t_buf src;
    unsigned char *ref;   /* reference packed bytes */
    size_t size;
};

static size_t t_piece(size_t left)
{
    switch (t_range(0, 4)) {
    case 0: return 1;
    case 1: return (size_t)t_range(1, 7);
    case 2: return (size_t)t_range(1, 64) | 1;
    case 3: return left;
    default: return (size_t)t_range(1, (int64_t)left + 1);
    }
}

static int t_check_queries(const struct t_case *c)
{
    int64_t lo, hi;
    const struct rail_dt *dt = c->dt;
    T_REQUIRE(t_ref_nelem(dt) == dt->nelem, "nelem %lld", (long long)dt->nelem);
    if (t_ref_bounds(dt, 1, &lo, &hi)) {
        T_REQUIRE(lo == dt->true_lb && hi - lo == dt->true_extent, "true bounds %lld %lld vs %lld %lld",
                  (long long)lo, (long long)(hi - lo), (long long)dt->true_lb,
                  (long long)dt->true_extent);
    }
    if (rail_dt_is_contig(dt, c->count) && c->size) {
        T_REQUIRE(memcmp(rail_dt_contig_ptr(dt, c->count, c->src.buf), c->ref, c->size) == 0,
                  "contig_ptr data");
    }
    return 0;
}

static int t_check_pack(const struct t_case *c)
{
    unsigned char *out = malloc(c->size + 16);
    size_t done;
    int rc = rail_dt_pack_all(c->dt, c->count, c->src.buf, out, c->size + 16, &done);
    T_REQUIRE(rc == MPI_SUCCESS && done == c->size && !memcmp(out, c->ref, c->size),
              "pack_all rc %d done %zu of %zu", rc, done, c->size);
    /* pieces */
    struct rail_dt_cursor cur;
    rail_dt_cursor_init(&cur, c->dt, c->count, c->src.buf);
    memset(out, 0, c->size + 16);
    for (size_t pos = 0; pos < c->size;) {
        size_t want = t_piece(c->size - pos), got = rail_dt_pack(&cur, out + pos, want);
        T_REQUIRE(got == RAIL_MIN(want, c->size - pos) && cur.pos == pos + got, "piece %zu", want);
        pos += got;
    }
    T_REQUIRE(!memcmp(out, c->ref, c->size), "pieces differ");
    T_REQUIRE(rail_dt_pack(&cur, out, 10) == 0, "pack past the end");
    /* seek + pack */
    for (int k = 0; k < 8 && c->size; k++) {
        size_t off = (size_t)t_range(0, (int64_t)c->size - 1), len = t_piece(c->size - off);
        rail_dt_cursor_seek(&cur, off);
        size_t got = rail_dt_pack(&cur, out, len);
        T_REQUIRE(got == RAIL_MIN(len, c->size - off) && !memcmp(out, c->ref + off, got),
                  "seek %zu len %zu", off, len);
    }
    /* truncation */
    if (c->size > 1) {
        rc = rail_dt_pack_all(c->dt, c->count, c->src.buf, out, c->size - 1, &done);
        T_REQUIRE(rc == MPI_ERR_TRUNCATE && done == c->size - 1, "truncated pack rc %d", rc);
    }
    free(out);
    return 0;
}

/* A copy of c's background with the same offset of buf. */
static void t_buf_clone(const struct t_buf *from, struct t_buf *to, const void *bg)
{
    *to = *from;
    to->mem = malloc(from->len);
    memcpy(to->mem, bg, from->len);
    to->buf = to->mem + ((unsigned char *)from->buf - from->mem);
}

/* Unpack in fragments, in order or shuffled (seek before each). */
static int t_check_unpack(const struct t_case *c, bool shuffled)
{
    struct t_buf a, b;
    unsigned char *bg = malloc(c->src.len);
    size_t offs[65], nfrag = 0;
    int order[64];
    t_fill_random(bg, c->src.len);
    t_buf_clone(&c->src, &a, bg);
    t_buf_clone(&c->src, &b, bg);
    t_ref_unpack(c->dt, c->count, a.buf, c->ref);
    for (size_t pos = 0; pos < c->size && nfrag < 64; pos += t_piece(c->size - pos))
        offs[nfrag++] = pos;
    offs[nfrag] = c->size;
    for (size_t k = 0; k < nfrag; k++)
        order[k] = (int)k;
    for (size_t k = 0; shuffled && k + 1 < nfrag; k++) {
        size_t j = (size_t)t_range((int64_t)k, (int64_t)nfrag - 1);
        int tmp = order[k];
        order[k] = order[j];
        order[j] = tmp;
    }
    struct rail_dt_cursor cur;
    rail_dt_cursor_init(&cur, c->dt, c->count, b.buf);
    for (size_t k = 0; k < nfrag; k++) {
        size_t off = offs[order[k]], len = offs[order[k] + 1] - off;
        if (shuffled)
            rail_dt_cursor_seek(&cur, off);
        T_REQUIRE(rail_dt_unpack(&cur, c->ref + off, len) == len, "unpack piece");
    }
    T_REQUIRE(!memcmp(a.mem, b.mem, a.len), "unpack%s differs", shuffled ? " (shuffled)" : "");
    size_t done;
    int rc = rail_dt_unpack_all(c->dt, c->count, b.buf, c->ref, c->size + 1, &done);
    T_REQUIRE(rc == MPI_ERR_TRUNCATE && done == c->size, "unpack_all of too much: rc %d", rc);
    free(bg);
    free(a.mem);
    free(b.mem);
    return 0;
}

static int t_check_iov(const struct t_case *c)
{
    struct rail_dt_cursor cur;
    struct iovec iov[4];
    unsigned char *out = malloc(c->size + 1);
    size_t pos = 0;
    int n;
    rail_dt_cursor_init(&cur, c->dt, c->count, c->src.buf);
    while (pos < c->size) {
        int max_iov = (int)t_range(1, 4);
        size_t got = rail_dt_cursor_iov(&cur, iov, max_iov, t_piece(c->size - pos), &n);
        size_t sum = 0;
        T_REQUIRE(got > 0 && n >= 1 && n <= max_iov, "iov progress");
        for (int j = 0; j < n; j++) {
            T_REQUIRE(j == 0 || (char *)iov[j - 1].iov_base + iov[j - 1].iov_len != iov[j].iov_base,
                      "adjacent iov entries not merged");
            memcpy(out + pos + sum, iov[j].iov_base, iov[j].iov_len);
            sum += iov[j].iov_len;
        }
        T_REQUIRE(sum == got, "iov sum %zu got %zu", sum, got);
        pos += got;
    }
    T_REQUIRE(!memcmp(out, c->ref, c->size), "iov bytes differ");
    free(out);
    return 0;
}

/* Copy from c into d's type: the same as the reference unpack of c's
 * packed bytes (as many as fit). */
static int t_check_copy(const struct t_case *c, const struct t_case *d)
{
    struct t_buf x, y;
    unsigned char *bg = malloc(d->src.len);
    t_fill_random(bg, d->src.len);
    t_buf_clone(&d->src, &x, bg);
    t_buf_clone(&d->src, &y, bg);
    t_ref_unpack_n(d->dt, d->count, x.buf, c->ref, RAIL_MIN(c->size, d->size));
    int rc = rail_dt_copy(d->dt, d->count, y.buf, c->dt, c->count, c->src.buf);
    T_REQUIRE(rc == (c->size > d->size ? MPI_ERR_TRUNCATE : MPI_SUCCESS), "copy rc %d", rc);
    T_REQUIRE(!memcmp(x.mem, y.mem, x.len), "copy differs");
    free(bg);
    free(x.mem);
    free(y.mem);
    return 0;
}

static void t_case_make(struct t_case *c, int64_t max_size)
{
    c->dt = t_rand_type(4, max_size);
    c->count = t_range(0, 3);
    rail_dt_commit(c->dt);
    t_buf_alloc(&c->src, c->dt, c->count);
    c->ref = malloc((size_t)(c->count * c->dt->size) + 1);
    c->size = t_ref_pack(c->dt, c->count, c->src.buf, c->ref);
}

static void t_case_free(struct t_case *c)
{
    t_buf_free(&c->src);
    free(c->ref);
    rail_dt_release(c->dt);
}

static int t_one(int iter)
{
    struct t_case c, d;
    int bad = 0;
    t_case_make(&c, 2048);
    t_case_make(&d, 2048);
    EXPECT(c.size == (size_t)(c.count * c.dt->size), "size");
    bad |= t_check_queries(&c) || t_check_pack(&c) || t_check_unpack(&c, false) ||
           t_check_iov(&c) || t_check_copy(&c, &d);
    if (!bad && t_ref_disjoint(c.dt, c.count))
        bad |= t_check_unpack(&c, true);
    if (bad) {
        fprintf(stderr, "iteration %d failed; type (count %lld):\n", iter, (long long)c.count);
        rail_dt_dump(c.dt, stderr);
        fprintf(stderr, "copy target (count %lld):\n", (long long)d.count);
        rail_dt_dump(d.dt, stderr);
    }
    t_case_free(&c);
    t_case_free(&d);
    return bad;
}

int main(int argc, char **argv)
{
    t_seed_from_args(argc, argv);
    int iters = argc > 2 ? atoi(argv[2]) : 20000;
    for (int i = 0; i < iters && check_failures < 5; i++)
        t_one(i);
    return check_report("dt_pack");
}
