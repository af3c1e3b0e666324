/*
 * MPI_Pack / MPI_Unpack / MPI_Pack_size of nested types against layouts
 * computed by hand, several calls sharing one buffer through `position`,
 * truncation; MPI_Pack_external / MPI_Unpack_external /
 * MPI_Pack_external_size: external32 byte order and sizes.
 */
#include "test/dtype/dtype_test.h"

#include <complex.h>
#include <stdbool.h>

typedef struct {
    int off, len;   /* bytes [off, off + len) of the buffer, in type-map order */
} seg_t;

/* Pack `count` elements of t at buf (the buffer's byte i is i * 7 + 3) and
 * compare with the segments; unpack into a zeroed buffer and check that
 * exactly the segments came back. */
static void check_layout(MPI_Datatype t, int count, int span, const seg_t *segs, int nsegs,
                         const char *what)
{
    unsigned char *buf = malloc((size_t)span), *back = calloc(1, (size_t)span);
    unsigned char packed[1024], want[1024];
    int n = 0;
    for (int i = 0; i < span; i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    for (int s = 0; s < nsegs; s++)
        for (int k = 0; k < segs[s].len; k++)
            want[n++] = buf[segs[s].off + k];
    int size, pos = 0;
    MPI_OK(MPI_Pack_size(count, t, MPI_COMM_SELF, &size));
    CHECK(size == n, "%s: pack size %d, expected %d", what, size, n);
    MPI_OK(MPI_Pack(buf, count, t, packed, sizeof(packed), &pos, MPI_COMM_SELF));
    CHECK(pos == n, "%s: packed %d bytes, expected %d", what, pos, n);
    for (int i = 0; i < n; i++)
        CHECK(packed[i] == want[i], "%s: packed byte %d is %d, expected %d", what, i, packed[i],
              want[i]);
    pos = 0;
    MPI_OK(MPI_Unpack(packed, n, &pos, back, count, t, MPI_COMM_SELF));
    CHECK(pos == n, "%s: unpacked %d bytes", what, pos);
    for (int i = 0; i < span; i++) {
        bool in = false;
        for (int s = 0; s < nsegs; s++)
            in |= i >= segs[s].off && i < segs[s].off + segs[s].len;
        CHECK(back[i] == (in ? buf[i] : 0), "%s: unpacked byte %d is %d", what, i, back[i]);
    }
    free(buf);
    free(back);
}

static void test_nested(void)
{
    /* A: vector(2, 1, 3) of struct {int @0, char @6} (size 5, extent 8). */
    MPI_Datatype s, a;
    int bl[] = {1, 1};
    MPI_Aint d[] = {0, 6};
    MPI_Datatype ts[] = {MPI_INT, MPI_CHAR};
    MPI_OK(MPI_Type_create_struct(2, bl, d, ts, &s));
    MPI_OK(MPI_Type_vector(2, 1, 3, s, &a));
    MPI_OK(MPI_Type_commit(&a));
    CHECK_BOUNDS(a, 10, 0, 32, 0, 31);
    seg_t sa[] = {{0, 4}, {6, 1}, {24, 4}, {30, 1}};
    check_layout(a, 1, 40, sa, 4, "vector of struct");
    /* Two of them: the second starts at the extent, 32. */
    seg_t sa2[] = {{0, 4}, {6, 1}, {24, 4}, {30, 1}, {32, 4}, {38, 1}, {56, 4}, {62, 1}};
    check_layout(a, 2, 72, sa2, 8, "2 x vector of struct");

    /* B: contiguous(3) of resized(contiguous(2, short), -2, 10). */
    MPI_Datatype c2, r, b;
    MPI_OK(MPI_Type_contiguous(2, MPI_SHORT, &c2));
    MPI_OK(MPI_Type_create_resized(c2, -2, 10, &r));
    MPI_OK(MPI_Type_contiguous(3, r, &b));
    MPI_OK(MPI_Type_commit(&b));
    CHECK_BOUNDS(b, 12, -2, 30, 0, 24);
    seg_t sb[] = {{0, 4}, {10, 4}, {20, 4}};
    check_layout(b, 1, 30, sb, 3, "contiguous of resized");

    /* C: indexed({2, 1}, {1, 5}) of hvector(2, 1, 7, char) (extent 8). */
    MPI_Datatype h, c;
    int ibl[] = {2, 1}, idp[] = {1, 5};
    MPI_OK(MPI_Type_create_hvector(2, 1, 7, MPI_CHAR, &h));
    MPI_OK(MPI_Type_indexed(2, ibl, idp, h, &c));
    MPI_OK(MPI_Type_commit(&c));
    seg_t sc[] = {{8, 1}, {15, 1}, {16, 1}, {23, 1}, {40, 1}, {47, 1}};
    check_layout(c, 1, 48, sc, 6, "indexed of hvector");

    /* D: struct whose entries are out of address order (type-map order). */
    MPI_Datatype e;
    int ebl[] = {2, 1, 3};
    MPI_Aint edp[] = {20, 0, 8};
    MPI_Datatype ets[] = {MPI_SHORT, MPI_INT, MPI_CHAR};
    MPI_OK(MPI_Type_create_struct(3, ebl, edp, ets, &e));
    MPI_OK(MPI_Type_commit(&e));
    seg_t se[] = {{20, 4}, {0, 4}, {8, 3}};
    check_layout(e, 1, 24, se, 3, "struct out of order");

    /* E: subarray of a subarray. */
    MPI_Datatype sub1, sub2;
    int sz[] = {4, 6}, ss[] = {2, 4}, st[] = {1, 1};
    MPI_OK(MPI_Type_create_subarray(2, sz, ss, st, MPI_ORDER_C, MPI_CHAR, &sub1));
    int sz2[] = {3}, ss2[] = {1}, st2[] = {2};
    MPI_OK(MPI_Type_create_subarray(1, sz2, ss2, st2, MPI_ORDER_C, sub1, &sub2));
    MPI_OK(MPI_Type_commit(&sub2));
    /* third 4x6 block (offset 48): rows 1-2, columns 1-4 */
    seg_t sd[] = {{48 + 7, 4}, {48 + 13, 4}};
    check_layout(sub2, 1, 72, sd, 2, "subarray of subarray");

    MPI_Type_free(&s), MPI_Type_free(&a), MPI_Type_free(&c2), MPI_Type_free(&r);
    MPI_Type_free(&b), MPI_Type_free(&h), MPI_Type_free(&c), MPI_Type_free(&e);
    MPI_Type_free(&sub1), MPI_Type_free(&sub2);
}

/* Absolute addresses: a struct over three separate variables, packed and
 * unpacked at MPI_BOTTOM. */
static void test_bottom(void)
{
    static int i1 = 11;
    static double d1 = 2.5;
    static short s1[3] = {4, 5, 6};
    MPI_Aint addr[3];
    MPI_OK(MPI_Get_address(&d1, &addr[0]));
    MPI_OK(MPI_Get_address(&i1, &addr[1]));
    MPI_OK(MPI_Get_address(s1, &addr[2]));
    int bl[] = {1, 1, 3};
    MPI_Datatype ts[] = {MPI_DOUBLE, MPI_INT, MPI_SHORT}, t;
    MPI_OK(MPI_Type_create_struct(3, bl, addr, ts, &t));
    MPI_OK(MPI_Type_commit(&t));
    char packed[32];
    int pos = 0;
    MPI_OK(MPI_Pack(MPI_BOTTOM, 1, t, packed, sizeof(packed), &pos, MPI_COMM_SELF));
    CHECK(pos == 18, "packed %d bytes at MPI_BOTTOM", pos);
    double d;
    int i;
    short s[3];
    memcpy(&d, packed, 8), memcpy(&i, packed + 8, 4), memcpy(s, packed + 12, 6);
    CHECK(d == 2.5 && i == 11 && s[0] == 4 && s[2] == 6, "MPI_BOTTOM pack");
    i1 = 0, d1 = 0, s1[0] = s1[1] = s1[2] = 0;
    pos = 0;
    MPI_OK(MPI_Unpack(packed, 18, &pos, MPI_BOTTOM, 1, t, MPI_COMM_SELF));
    CHECK(d1 == 2.5 && i1 == 11 && s1[1] == 5, "MPI_BOTTOM unpack");
    MPI_OK(MPI_Type_free(&t));
}

static void test_position(void)
{
    int ints[3] = {1, 2, 3};
    double dbl[2] = {4.5, 5.5};
    char packed[64];
    int pos = 0;
    MPI_OK(MPI_Pack(ints, 3, MPI_INT, packed, sizeof(packed), &pos, MPI_COMM_SELF));
    MPI_OK(MPI_Pack(dbl, 2, MPI_DOUBLE, packed, sizeof(packed), &pos, MPI_COMM_SELF));
    CHECK(pos == 28, "position after two packs: %d", pos);
    /* Too little room: MPI_ERR_TRUNCATE, position unchanged. */
    MPI_FAILS(MPI_Pack(ints, 3, MPI_INT, packed, 36, &pos, MPI_COMM_SELF), MPI_ERR_TRUNCATE);
    CHECK(pos == 28, "a failed pack moved the position to %d", pos);
    int ri[3];
    double rd[2];
    int rp = 0;
    MPI_OK(MPI_Unpack(packed, pos, &rp, ri, 3, MPI_INT, MPI_COMM_SELF));
    MPI_OK(MPI_Unpack(packed, pos, &rp, rd, 2, MPI_DOUBLE, MPI_COMM_SELF));
    CHECK(rp == 28 && ri[2] == 3 && rd[1] == 5.5, "sequential unpack");
    MPI_FAILS(MPI_Unpack(packed, pos, &rp, ri, 1, MPI_INT, MPI_COMM_SELF), MPI_ERR_TRUNCATE);
    /* Bad positions and counts. */
    int bad = 65;
    MPI_FAILS(MPI_Pack(ints, 1, MPI_INT, packed, 64, &bad, MPI_COMM_SELF), MPI_ERR_ARG);
    bad = -1;
    MPI_FAILS(MPI_Unpack(packed, 64, &bad, ri, 1, MPI_INT, MPI_COMM_SELF), MPI_ERR_ARG);
    rp = 0;
    MPI_FAILS(MPI_Unpack(packed, 64, &rp, ri, -1, MPI_INT, MPI_COMM_SELF), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Pack(ints, -1, MPI_INT, packed, 64, &rp, MPI_COMM_SELF), MPI_ERR_COUNT);
    /* Count 0 packs nothing, even from NULL. */
    rp = 0;
    MPI_OK(MPI_Pack(NULL, 0, MPI_INT, packed, 64, &rp, MPI_COMM_SELF));
    CHECK(rp == 0, "count 0");
    /* Big-count forms. */
    MPI_Count cp = 0, csize;
    MPI_OK(MPI_Pack_c(ints, 3, MPI_INT, packed, 64, &cp, MPI_COMM_SELF));
    MPI_OK(MPI_Pack_size_c(3, MPI_INT, MPI_COMM_SELF, &csize));
    CHECK(cp == 12 && csize == 12, "MPI_Pack_c");
    cp = 0;
    MPI_OK(MPI_Unpack_c(packed, 12, &cp, ri, 3, MPI_INT, MPI_COMM_SELF));
    CHECK(cp == 12 && ri[0] == 1, "MPI_Unpack_c");
}

/* ------------------------------------------------------------ external32 */

static void expect_bytes(const unsigned char *got, const unsigned char *want, int n,
                         const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: external32 byte %d is %02x, expected %02x", what, i, got[i],
              want[i]);
}

static void ext32_one(MPI_Datatype t, const void *val, int count, const unsigned char *want,
                      int n, const char *what)
{
    unsigned char out[64], back[64];
    MPI_Aint size, pos = 0, rpos = 0;
    MPI_OK(MPI_Pack_external_size("external32", count, t, &size));
    CHECK(size == n, "%s: external32 size %ld, expected %d", what, (long)size, n);
    MPI_OK(MPI_Pack_external("external32", val, count, t, out, sizeof(out), &pos));
    CHECK(pos == n, "%s: position %ld", what, (long)pos);
    expect_bytes(out, want, n, what);
    memset(back, 0, sizeof(back));
    MPI_OK(MPI_Unpack_external("external32", out, pos, &rpos, back, count, t));
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
    MPI_Count tsize;
    MPI_OK(MPI_Type_size_c(t, &tsize));
    /* x87 long double: 10 bytes of value, 6 of padding. */
    size_t cmp = t == MPI_LONG_DOUBLE ? 10 : (size_t)(tsize * count);
    CHECK(rpos == n && memcmp(back, val, cmp) == 0, "%s: round trip", what);
}

static void test_external32(void)
{
    int32_t i32 = 0x01020304;
    ext32_one(MPI_INT, &i32, 1, (const unsigned char[]){1, 2, 3, 4}, 4, "MPI_INT");
    int16_t s2[2] = {0x0102, -2};
    ext32_one(MPI_SHORT, s2, 2, (const unsigned char[]){1, 2, 0xff, 0xfe}, 4, "MPI_SHORT");
    double one = 1.0;
    ext32_one(MPI_DOUBLE, &one, 1, (const unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, 8,
              "MPI_DOUBLE");
    float mtwo = -2.0f;
    ext32_one(MPI_FLOAT, &mtwo, 1, (const unsigned char[]){0xc0, 0, 0, 0}, 4, "MPI_FLOAT");
    int64_t i64 = 0x0102030405060708LL;
    ext32_one(MPI_INT64_T, &i64, 1, (const unsigned char[]){1, 2, 3, 4, 5, 6, 7, 8}, 8,
              "MPI_INT64_T");
    /* MPI_LONG is 4 bytes in external32. */
    long l = 0x0a0b0c0d;
    ext32_one(MPI_LONG, &l, 1, (const unsigned char[]){0x0a, 0x0b, 0x0c, 0x0d}, 4, "MPI_LONG");
    _Bool b = 1;
    ext32_one(MPI_C_BOOL, &b, 1, (const unsigned char[]){1}, 1, "MPI_C_BOOL");
    float _Complex fc = 1.0f + 2.0f * I;
    ext32_one(MPI_C_FLOAT_COMPLEX, &fc, 1, (const unsigned char[]){0x3f, 0x80, 0, 0, 0x40, 0, 0, 0},
              8, "MPI_C_FLOAT_COMPLEX");
    /* long double: IEEE binary128. */
    long double ld = 1.0L;
    unsigned char w128[16] = {0x3f, 0xff};
    ext32_one(MPI_LONG_DOUBLE, &ld, 1, w128, 16, "MPI_LONG_DOUBLE");
    /* Pairs are their two members back to back: MPI_DOUBLE_INT is 12 bytes. */
    struct {
        double v;
        int i;
    } di = {1.0, 0x01020304};
    ext32_one(MPI_DOUBLE_INT, &di, 1,
              (const unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}, 12,
              "MPI_DOUBLE_INT");

    /* A derived type with holes: struct {short @0, int @4} resized to 12. */
    MPI_Datatype s, r;
    int bl[] = {1, 1};
    MPI_Aint d[] = {0, 4};
    MPI_Datatype ts[] = {MPI_SHORT, MPI_INT};
    MPI_OK(MPI_Type_create_struct(2, bl, d, ts, &s));
    MPI_OK(MPI_Type_create_resized(s, 0, 12, &r));
    MPI_OK(MPI_Type_commit(&r));
    struct {
        int16_t a;
        int32_t b;
        int32_t pad;
    } v[2] = {{0x0102, 0x03040506, 0}, {-1, 7, 0}};
    unsigned char want[] = {1, 2, 3, 4, 5, 6, 0xff, 0xff, 0, 0, 0, 7};
    unsigned char out[32];
    MPI_Aint pos = 0, size;
    MPI_OK(MPI_Pack_external_size("external32", 2, r, &size));
    CHECK(size == 12, "external32 size of the struct pair: %ld", (long)size);
    MPI_OK(MPI_Pack_external("external32", v, 2, r, out, sizeof(out), &pos));
    expect_bytes(out, want, 12, "struct");
    __typeof__(v) back;
    memset(back, 0, sizeof(back));
    MPI_Aint rpos = 0;
    MPI_OK(MPI_Unpack_external("external32", out, pos, &rpos, back, 2, r));
    CHECK(back[0].a == 0x0102 && back[0].b == 0x03040506 && back[1].a == -1 && back[1].b == 7 &&
              back[0].pad == 0,
          "struct external32 round trip");

    /* Errors: other representations, truncation. */
    MPI_FAILS(MPI_Pack_external("native", &i32, 1, MPI_INT, out, 32, &pos),
              MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_FAILS(MPI_Pack_external_size("internal", 1, MPI_INT, &size), MPI_ERR_UNSUPPORTED_DATAREP);
    pos = 30;
    MPI_FAILS(MPI_Pack_external("external32", &i32, 1, MPI_INT, out, 32, &pos), MPI_ERR_TRUNCATE);
    rpos = 0;
    MPI_FAILS(MPI_Unpack_external("external32", out, 2, &rpos, &i32, 1, MPI_INT),
              MPI_ERR_TRUNCATE);
    MPI_Count cpos = 0, csize;
    MPI_OK(MPI_Pack_external_c("external32", &i32, 1, MPI_INT, out, 32, &cpos));
    MPI_OK(MPI_Pack_external_size_c("external32", 3, MPI_INT, &csize));
    CHECK(cpos == 4 && csize == 12, "_c external32");
    MPI_Type_free(&s);
    MPI_Type_free(&r);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    test_nested();
    test_bottom();
    test_position();
    test_external32();
    return check_mpi_finalize("dtype_pack");
}
