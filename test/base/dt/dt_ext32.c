/*
 * external32: sizes from the MPI table, big-endian byte patterns, MPI_LONG
 * as 4 bytes, long double as IEEE binary128 (x87 conversion, rounding,
 * special values), random nested types against a reference encoder, and
 * round trips.  Usage: dt_ext32 [seed] [iterations]
 */
#include "dt_testlib.h"
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>

#define TK(k) rail_dt_predefined(RAIL_TK_##k)

static int t_encode(const struct rail_dt *dt, int64_t count, const void *buf, const char *hex)
{
    unsigned char out[64], want[64];
    size_t n = strlen(hex) / 2, pos = 0;
    for (size_t i = 0; i < n; i++)
        sscanf(hex + 2 * i, "%2hhx", &want[i]);
    int rc = rail_dt_pack_external32(dt, count, buf, out, sizeof(out), &pos);
    T_REQUIRE(rc == MPI_SUCCESS && pos == n, "rc %d pos %zu, want %zu", rc, pos, n);
    T_REQUIRE(!memcmp(out, want, n), "bytes differ from %s", hex);
    return 0;
}

static void t_sizes(void)
{
    static const struct { rail_typekind_t tk; size_t size; } sz[] = {
        {RAIL_TK_INT8, 1}, {RAIL_TK_INT16, 2}, {RAIL_TK_INT32, 4}, {RAIL_TK_INT64, 8},
        {RAIL_TK_FLOAT, 4}, {RAIL_TK_DOUBLE, 8}, {RAIL_TK_LONG_DOUBLE, 16}, {RAIL_TK_BOOL, 1},
        {RAIL_TK_C_FLOAT_COMPLEX, 8}, {RAIL_TK_C_DOUBLE_COMPLEX, 16},
        {RAIL_TK_C_LONG_DOUBLE_COMPLEX, 32}, {RAIL_TK_LOGICAL4, 4}, {RAIL_TK_BYTE, 1},
        {RAIL_TK_DOUBLE_INT, 12}, {RAIL_TK_LONG_INT, 8}, {RAIL_TK_SHORT_INT, 6},
        {RAIL_TK_LONG_DOUBLE_INT, 20}, {RAIL_TK_2INT64, 16}, {RAIL_TK_UINT128, 16},
    };
    size_t s;
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(sz); i++) {
        int rc = rail_dt_external32_size(rail_dt_predefined(sz[i].tk), 3, &s);
        EXPECT(rc == MPI_SUCCESS && s == 3 * sz[i].size, "%s: %zu", rail_typekind_name(sz[i].tk),
               s);
    }
    EXPECT(rail_dt_external32_size(rail_dt_predefined_ext32(RAIL_TK_INT64, 4), 2, &s) ==
                   MPI_SUCCESS && s == 8,
           "MPI_LONG is 4 bytes");
}

static void t_patterns(void)
{
    int32_t i = 0x01020304;
    int16_t h = 0x0102;
    double d = 1.0;
    float f[2] = {-2.0f, 1.0f};
    float _Complex fc = 1.0f + 2.0f * _Complex_I;
    _Bool b = 1;
    int64_t l[2] = {-2, 0x1122334455667788};
    uint64_t ul = 0xFFFFFFFFu;
    struct { long v; int i; } li = {-3, 7};
    struct { double v; int i; } di = {-0.5, 0x0A0B0C0D};
    EXPECT(!t_encode(TK(INT32), 1, &i, "01020304"), "int32");
    EXPECT(!t_encode(TK(INT16), 1, &h, "0102"), "int16");
    EXPECT(!t_encode(TK(DOUBLE), 1, &d, "3ff0000000000000"), "double");
    EXPECT(!t_encode(TK(FLOAT), 2, f, "c00000003f800000"), "float");
    EXPECT(!t_encode(TK(C_FLOAT_COMPLEX), 1, &fc, "3f80000040000000"), "complex");
    EXPECT(!t_encode(TK(BOOL), 1, &b, "01"), "bool");
    EXPECT(!t_encode(TK(INT64), 1, &l[1], "1122334455667788"), "int64");
    EXPECT(!t_encode(rail_dt_predefined_ext32(RAIL_TK_INT64, 4), 2, l, "fffffffe55667788"),
           "long truncated to 4 bytes");
    EXPECT(!t_encode(TK(LONG_INT), 1, &li, "fffffffd00000007"), "long_int");
    EXPECT(!t_encode(TK(DOUBLE_INT), 1, &di, "bfe00000000000000a0b0c0d"), "double_int");
    /* narrow longs widen back with their sign */
    unsigned char in[8] = {0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xff};
    size_t pos = 0;
    int64_t back[2];
    rail_dt_unpack_external32(rail_dt_predefined_ext32(RAIL_TK_INT64, 4), 2, back, in, 8, &pos);
    EXPECT(back[0] == -2 && back[1] == -1 && pos == 8, "long sign extension");
    pos = 4;
    rail_dt_unpack_external32(rail_dt_predefined_ext32(RAIL_TK_UINT64, 4), 1, &ul, in, 8, &pos);
    EXPECT(ul == 0xFFFFFFFFu, "unsigned long zero extension");
}

#if LDBL_MANT_DIG == 64
static void t_ld_roundtrip(long double v, const char *hex)
{
    long double back = 0;
    unsigned char out[16];
    size_t pos = 0;
    EXPECT(!t_encode(TK(LONG_DOUBLE), 1, &v, hex), "%Lg", v);
    rail_dt_pack_external32(TK(LONG_DOUBLE), 1, &v, out, 16, &pos);
    pos = 0;
    rail_dt_unpack_external32(TK(LONG_DOUBLE), 1, &back, out, 16, &pos);
    EXPECT((isnan(v) && isnan(back)) || !memcmp(&v, &back, 10), "%Lg round trip", v);
}

/* Decode a binary128 pattern and compare with an expected long double. */
static void t_ld_decode(const char *hex, long double want)
{
    unsigned char in[16];
    long double got;
    size_t pos = 0;
    for (int i = 0; i < 16; i++)
        sscanf(hex + 2 * i, "%2hhx", &in[i]);
    rail_dt_unpack_external32(TK(LONG_DOUBLE), 1, &got, in, 16, &pos);
    EXPECT(got == want || (isnan(got) && isnan(want)), "%s: %La, want %La", hex, got, want);
}

static void t_long_double(void)
{
    t_ld_roundtrip(1.0L, "3fff0000000000000000000000000000");
    t_ld_roundtrip(-2.5L, "c0004000000000000000000000000000");
    t_ld_roundtrip(LDBL_MIN, "00010000000000000000000000000000");
    t_ld_roundtrip(LDBL_TRUE_MIN, "00000000000000000002000000000000");
    t_ld_roundtrip(LDBL_MAX, "7ffefffffffffffffffe000000000000");
    t_ld_roundtrip(INFINITY, "7fff0000000000000000000000000000");
    t_ld_roundtrip(-INFINITY, "ffff0000000000000000000000000000");
    t_ld_roundtrip(-0.0L, "80000000000000000000000000000000");
    t_ld_roundtrip(1.0L / 3, "3ffd5555555555555556000000000000");
    long double nan = NAN;
    t_ld_roundtrip(nan, "7fff8000000000000000000000000000");
    /* rounding the 49 extra bits: below half, half (ties to even), above */
    t_ld_decode("3fff0000000000000000800000000000", 1.0L);
    t_ld_decode("3fff0000000000000001000000000000", 1.0L);
    t_ld_decode("3fff0000000000000001800000000000", 1.0L + 0x1p-63L);
    t_ld_decode("3fff0000000000000003000000000000", 1.0L + 0x1p-62L);
    t_ld_decode("7ffeffffffffffffffffffffffffffff", INFINITY);   /* rounds up past max */
    t_ld_decode("0000ffffffffffffffffffffffffffff", LDBL_MIN);   /* denormal rounds up */
    long double _Complex z = 1.0L - 2.0L * _Complex_I;
    EXPECT(!t_encode(TK(C_LONG_DOUBLE_COMPLEX), 1, &z,
                     "3fff0000000000000000000000000000c0000000000000000000000000000000"),
           "long double complex");
}
#else
static void t_long_double(void)
{
    check_skip_part("long double conversions: long double is not x87 here");
}
#endif

/* ------------------------------------------------------- random types */

static void t_ref_x32_leaf(uintptr_t addr, const struct rail_dt *leaf, void *arg)
{
    unsigned char **out = arg, *p = (unsigned char *)addr;
    size_t half = leaf->tk == RAIL_TK_C_DOUBLE_COMPLEX || leaf->tk == RAIL_TK_C_FLOAT_COMPLEX
                      ? (size_t)leaf->size / 2
                      : (size_t)leaf->size;
    for (size_t part = 0; part < (size_t)leaf->size; part += half)
        for (size_t b = 0; b < half; b++)
            (*out)[part + b] = p[part + half - 1 - b];
    *out += leaf->size;
}

static int t_random_one(void)
{
    struct rail_dt *dt = t_rand_type(4, 1024);
    int64_t count = t_range(0, 3);
    struct t_buf src, dst;
    size_t n, pos = 3, pos2 = 3;
    rail_dt_commit(dt);
    rail_dt_external32_size(dt, count, &n);
    t_buf_alloc(&src, dt, count);
    unsigned char *out = malloc(n + 3), *want = malloc(n + 3), *w = want + 3;
    unsigned char *a = malloc(n + 1), *b = malloc(n + 1);
    t_ref_walk(dt, count, (uintptr_t)src.buf, t_ref_x32_leaf, &w);
    int rc = rail_dt_pack_external32(dt, count, src.buf, out, n + 3, &pos);
    T_REQUIRE(rc == MPI_SUCCESS && pos == n + 3 && !memcmp(out + 3, want + 3, n), "encode rc %d",
              rc);
    dst = src;
    dst.mem = malloc(src.len);
    dst.buf = dst.mem + ((unsigned char *)src.buf - src.mem);
    rc = rail_dt_unpack_external32(dt, count, dst.buf, out, n + 3, &pos2);
    t_ref_pack(dt, count, src.buf, a);
    t_ref_pack(dt, count, dst.buf, b);
    T_REQUIRE(rc == MPI_SUCCESS && pos2 == n + 3 && !memcmp(a, b, (size_t)(count * dt->size)),
              "round trip rc %d", rc);
    if (n) {
        pos = 3;
        T_REQUIRE(rail_dt_pack_external32(dt, count, src.buf, out, n + 2, &pos) ==
                          MPI_ERR_TRUNCATE && pos == 3,
                  "too small");
    }
    free(out), free(want), free(a), free(b), free(dst.mem);
    t_buf_free(&src);
    rail_dt_release(dt);
    return 0;
}

int main(int argc, char **argv)
{
    t_seed_from_args(argc, argv);
    t_sizes();
    t_patterns();
    t_long_double();
    t_leaf_ext32_safe = true;
    int iters = argc > 2 ? atoi(argv[2]) : 5000;
    for (int i = 0; i < iters && check_failures < 5; i++)
        t_random_one();
    return check_report("dt_ext32");
}
