/*
 * Datatype constructors: known size, lb, extent, true lb and true extent of
 * each, known envelope and contents, and the round trip type -> contents ->
 * rebuilt type (same bounds, same packed bytes), classic and large-count
 * encodings; counts, block lengths and displacements beyond INT_MAX in the
 * _c constructors (including a pack over a sparse 6 GB mapping); duplicates.
 */
#include "test/dtype/dtype_test.h"

#include <limits.h>
#include <stdbool.h>
#include <sys/mman.h>

#define BIG ((MPI_Count)INT_MAX + 7)

static bool is_predef(MPI_Datatype t)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    MPI_OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    return comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_INTEGER ||
           comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX ||
           comb == MPI_COMBINER_VALUE_INDEX;
}

/* A new type built from t's envelope and contents (its old types rebuilt
 * the same way); predefined types come back as they are. */
static MPI_Datatype rebuild(MPI_Datatype t)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    MPI_OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    if (is_predef(t))
        return t;
    int *I = malloc((size_t)(ni + 1) * sizeof(int));
    MPI_Aint *A = malloc((size_t)(na + 1) * sizeof(MPI_Aint));
    MPI_Count *C = malloc((size_t)(nc + 1) * sizeof(MPI_Count));
    MPI_Datatype *D = malloc((size_t)(nd + 1) * sizeof(MPI_Datatype));
    MPI_Datatype *D2 = malloc((size_t)(nd + 1) * sizeof(MPI_Datatype));
    MPI_OK(MPI_Type_get_contents_c(t, ni, na, nc, nd, I, A, C, D));
    for (MPI_Count i = 0; i < nd; i++)
        D2[i] = rebuild(D[i]);
    bool big = nc > 0;
    MPI_Datatype r = MPI_DATATYPE_NULL;
    int n = big ? (int)C[0] : I[0];
    switch (comb) {
    case MPI_COMBINER_DUP:
        MPI_OK(MPI_Type_dup(D2[0], &r));
        break;
    case MPI_COMBINER_CONTIGUOUS:
        MPI_OK(big ? MPI_Type_contiguous_c(C[0], D2[0], &r) : MPI_Type_contiguous(I[0], D2[0], &r));
        break;
    case MPI_COMBINER_VECTOR:
        MPI_OK(big ? MPI_Type_vector_c(C[0], C[1], C[2], D2[0], &r)
                   : MPI_Type_vector(I[0], I[1], I[2], D2[0], &r));
        break;
    case MPI_COMBINER_HVECTOR:
        MPI_OK(big ? MPI_Type_create_hvector_c(C[0], C[1], C[2], D2[0], &r)
                   : MPI_Type_create_hvector(I[0], I[1], A[0], D2[0], &r));
        break;
    case MPI_COMBINER_INDEXED:
        MPI_OK(big ? MPI_Type_indexed_c(C[0], C + 1, C + 1 + C[0], D2[0], &r)
                   : MPI_Type_indexed(n, I + 1, I + 1 + n, D2[0], &r));
        break;
    case MPI_COMBINER_HINDEXED:
        MPI_OK(big ? MPI_Type_create_hindexed_c(C[0], C + 1, C + 1 + C[0], D2[0], &r)
                   : MPI_Type_create_hindexed(n, I + 1, A, D2[0], &r));
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        MPI_OK(big ? MPI_Type_create_indexed_block_c(C[0], C[1], C + 2, D2[0], &r)
                   : MPI_Type_create_indexed_block(n, I[1], I + 2, D2[0], &r));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        MPI_OK(big ? MPI_Type_create_hindexed_block_c(C[0], C[1], C + 2, D2[0], &r)
                   : MPI_Type_create_hindexed_block(n, I[1], A, D2[0], &r));
        break;
    case MPI_COMBINER_STRUCT:
        MPI_OK(big ? MPI_Type_create_struct_c(C[0], C + 1, C + 1 + C[0], D2, &r)
                   : MPI_Type_create_struct(n, I + 1, A, D2, &r));
        break;
    case MPI_COMBINER_SUBARRAY: {
        int nd_ = I[0];
        MPI_OK(big ? MPI_Type_create_subarray_c(nd_, C, C + nd_, C + 2 * nd_, I[1], D2[0], &r)
                   : MPI_Type_create_subarray(nd_, I + 1, I + 1 + nd_, I + 1 + 2 * nd_,
                                              I[1 + 3 * nd_], D2[0], &r));
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int nd_ = I[2];
        if (big)
            MPI_OK(MPI_Type_create_darray_c(I[0], I[1], nd_, C, I + 3, I + 3 + nd_,
                                            I + 3 + 2 * nd_, I[3 + 3 * nd_], D2[0], &r));
        else
            MPI_OK(MPI_Type_create_darray(I[0], I[1], nd_, I + 3, I + 3 + nd_, I + 3 + 2 * nd_,
                                          I + 3 + 3 * nd_, I[3 + 4 * nd_], D2[0], &r));
        break;
    }
    case MPI_COMBINER_RESIZED:
        MPI_OK(big ? MPI_Type_create_resized_c(D2[0], C[0], C[1], &r)
                   : MPI_Type_create_resized(D2[0], A[0], A[1], &r));
        break;
    default:
        CHECK(0, "unexpected combiner %d", comb);
    }
    for (MPI_Count i = 0; i < nd; i++) {
        if (!is_predef(D[i]))
            MPI_OK(MPI_Type_free(&D[i]));
        if (!is_predef(D2[i]))
            MPI_OK(MPI_Type_free(&D2[i]));
    }
    free(I), free(A), free(C), free(D), free(D2);
    return r;
}

/* Same bounds, and (when small enough) the same packed bytes of `count`
 * elements over a patterned buffer. */
static void compare(MPI_Datatype a, MPI_Datatype b, const char *what)
{
    MPI_Count sa, sb, la, lb_, ea, eb, ta, tb, tea, teb;
    MPI_OK(MPI_Type_size_c(a, &sa));
    MPI_OK(MPI_Type_size_c(b, &sb));
    MPI_OK(MPI_Type_get_extent_c(a, &la, &ea));
    MPI_OK(MPI_Type_get_extent_c(b, &lb_, &eb));
    MPI_OK(MPI_Type_get_true_extent_c(a, &ta, &tea));
    MPI_OK(MPI_Type_get_true_extent_c(b, &tb, &teb));
    CHECK(sa == sb && la == lb_ && ea == eb && ta == tb && tea == teb, "%s: rebuilt bounds differ",
          what);
    if (tea > (1 << 20) || ea < 0 || ea > (1 << 20))
        return;
    MPI_Datatype ca = a, cb = b;
    MPI_OK(MPI_Type_commit(&ca));
    MPI_OK(MPI_Type_commit(&cb));
    int count = 2;
    size_t span = (size_t)(tea + (count - 1) * ea);
    unsigned char *mem = malloc(span + 1), *pa = malloc((size_t)(count * sa) + 1),
                  *pb = malloc((size_t)(count * sa) + 1);
    for (size_t i = 0; i < span; i++)
        mem[i] = (unsigned char)(i * 7 + 3);
    void *buf = mem - ta;
    int pos_a = 0, pos_b = 0;
    MPI_OK(MPI_Pack(buf, count, ca, pa, (int)(count * sa), &pos_a, MPI_COMM_SELF));
    MPI_OK(MPI_Pack(buf, count, cb, pb, (int)(count * sa), &pos_b, MPI_COMM_SELF));
    CHECK(pos_a == pos_b && pos_a == count * sa && memcmp(pa, pb, (size_t)pos_a) == 0,
          "%s: rebuilt type packs differently", what);
    free(mem), free(pa), free(pb);
}

static void check_envelope(MPI_Datatype t, int combiner, MPI_Count ni, MPI_Count na, MPI_Count nc,
                           MPI_Count nd, const char *what)
{
    MPI_Count i, a, c, d;
    int comb;
    MPI_OK(MPI_Type_get_envelope_c(t, &i, &a, &c, &d, &comb));
    CHECK(comb == combiner && i == ni && a == na && c == nc && d == nd,
          "%s: envelope %d (%lld %lld %lld %lld), expected %d (%lld %lld %lld %lld)", what, comb,
          (long long)i, (long long)a, (long long)c, (long long)d, combiner, (long long)ni,
          (long long)na, (long long)nc, (long long)nd);
    if (nc == 0) {
        int ii, ia, id, cc;
        MPI_OK(MPI_Type_get_envelope(t, &ii, &ia, &id, &cc));
        CHECK(ii == ni && ia == na && id == nd && cc == combiner, "%s: classic envelope", what);
    } else {
        int ii, ia, id, cc;
        MPI_FAILS(MPI_Type_get_envelope(t, &ii, &ia, &id, &cc), MPI_ERR_TYPE);
        MPI_FAILS(MPI_Type_get_contents(t, 100, 100, 100, NULL, NULL, NULL), MPI_ERR_TYPE);
    }
}

/* Checks t, its rebuilt twin, and frees t. */
static void round_trip(MPI_Datatype *t, const char *what)
{
    MPI_Datatype r = rebuild(*t);
    compare(*t, r, what);
    MPI_OK(MPI_Type_free(&r));
    MPI_OK(MPI_Type_free(t));
}

static void test_known(void)
{
    MPI_Datatype t;
    /* contiguous */
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    CHECK_BOUNDS(t, 12, 0, 12, 0, 12);
    check_envelope(t, MPI_COMBINER_CONTIGUOUS, 1, 0, 0, 1, "contiguous");
    int ints[8];
    MPI_Aint addrs[4];
    MPI_Datatype dts[4];
    MPI_OK(MPI_Type_get_contents(t, 8, 4, 4, ints, addrs, dts));
    CHECK(ints[0] == 3 && dts[0] == MPI_INT, "contiguous contents");
    round_trip(&t, "contiguous");

    /* vector, also with a negative stride */
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    CHECK_BOUNDS(t, 24, 0, 40, 0, 40);
    check_envelope(t, MPI_COMBINER_VECTOR, 3, 0, 0, 1, "vector");
    MPI_OK(MPI_Type_get_contents(t, 8, 4, 4, ints, addrs, dts));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4, "vector contents");
    round_trip(&t, "vector");
    MPI_OK(MPI_Type_vector(3, 1, -2, MPI_INT, &t));
    CHECK_BOUNDS(t, 12, -16, 20, -16, 20);
    round_trip(&t, "vector with negative stride");

    /* hvector */
    MPI_OK(MPI_Type_create_hvector(2, 3, 100, MPI_DOUBLE, &t));
    CHECK_BOUNDS(t, 48, 0, 124, 0, 124);
    check_envelope(t, MPI_COMBINER_HVECTOR, 2, 1, 0, 1, "hvector");
    MPI_OK(MPI_Type_get_contents(t, 8, 4, 4, ints, addrs, dts));
    CHECK(ints[0] == 2 && ints[1] == 3 && addrs[0] == 100 && dts[0] == MPI_DOUBLE,
          "hvector contents");
    round_trip(&t, "hvector");

    /* indexed */
    int bl3[] = {1, 2, 3}, d3[] = {0, 3, 8};
    MPI_OK(MPI_Type_indexed(3, bl3, d3, MPI_INT, &t));
    CHECK_BOUNDS(t, 24, 0, 44, 0, 44);
    check_envelope(t, MPI_COMBINER_INDEXED, 7, 0, 0, 1, "indexed");
    MPI_OK(MPI_Type_get_contents(t, 8, 4, 4, ints, addrs, dts));
    CHECK(ints[0] == 3 && ints[1] == 1 && ints[3] == 3 && ints[4] == 0 && ints[6] == 8,
          "indexed contents");
    round_trip(&t, "indexed");

    /* hindexed */
    int bl2[] = {2, 1};
    MPI_Aint ad2[] = {4, 40};
    MPI_OK(MPI_Type_create_hindexed(2, bl2, ad2, MPI_SHORT, &t));
    CHECK_BOUNDS(t, 6, 4, 38, 4, 38);
    check_envelope(t, MPI_COMBINER_HINDEXED, 3, 2, 0, 1, "hindexed");
    MPI_OK(MPI_Type_get_contents(t, 8, 4, 4, ints, addrs, dts));
    CHECK(ints[0] == 2 && ints[1] == 2 && ints[2] == 1 && addrs[0] == 4 && addrs[1] == 40,
          "hindexed contents");
    round_trip(&t, "hindexed");

    /* indexed_block, hindexed_block */
    int db[] = {5, 0, 10};
    MPI_OK(MPI_Type_create_indexed_block(3, 2, db, MPI_FLOAT, &t));
    CHECK_BOUNDS(t, 24, 0, 48, 0, 48);
    check_envelope(t, MPI_COMBINER_INDEXED_BLOCK, 5, 0, 0, 1, "indexed_block");
    round_trip(&t, "indexed_block");
    MPI_Aint hb[] = {0, 100};
    MPI_OK(MPI_Type_create_hindexed_block(2, 3, hb, MPI_CHAR, &t));
    CHECK_BOUNDS(t, 6, 0, 103, 0, 103);
    check_envelope(t, MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 0, 1, "hindexed_block");
    round_trip(&t, "hindexed_block");

    /* struct: extent rounded up to the largest alignment (double: 8). */
    int sbl[] = {1, 2, 1};
    MPI_Aint sd[] = {0, 8, 24};
    MPI_Datatype st[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_OK(MPI_Type_create_struct(3, sbl, sd, st, &t));
    CHECK_BOUNDS(t, 21, 0, 32, 0, 28);
    check_envelope(t, MPI_COMBINER_STRUCT, 4, 3, 0, 3, "struct");
    MPI_OK(MPI_Type_get_contents(t, 8, 4, 4, ints, addrs, dts));
    CHECK(ints[0] == 3 && ints[2] == 2 && addrs[2] == 24 && dts[0] == MPI_CHAR &&
              dts[1] == MPI_DOUBLE && dts[2] == MPI_INT,
          "struct contents");
    round_trip(&t, "struct");

    /* resized */
    MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    CHECK_BOUNDS(t, 4, -4, 16, 0, 4);
    check_envelope(t, MPI_COMBINER_RESIZED, 0, 2, 0, 1, "resized");
    MPI_OK(MPI_Type_get_contents(t, 8, 4, 4, ints, addrs, dts));
    CHECK(addrs[0] == -4 && addrs[1] == 16, "resized contents");
    round_trip(&t, "resized");

    /* subarray, C and Fortran order */
    int sz[] = {4, 5}, sub[] = {2, 3}, st2[] = {1, 2};
    MPI_OK(MPI_Type_create_subarray(2, sz, sub, st2, MPI_ORDER_C, MPI_INT, &t));
    CHECK_BOUNDS(t, 24, 0, 80, 28, 32);
    check_envelope(t, MPI_COMBINER_SUBARRAY, 8, 0, 0, 1, "subarray");
    MPI_OK(MPI_Type_get_contents(t, 8, 4, 4, ints, addrs, dts));
    CHECK(ints[0] == 2 && ints[1] == 4 && ints[3] == 2 && ints[5] == 1 && ints[7] == MPI_ORDER_C,
          "subarray contents");
    round_trip(&t, "subarray C");
    MPI_OK(MPI_Type_create_subarray(2, sz, sub, st2, MPI_ORDER_FORTRAN, MPI_INT, &t));
    CHECK_BOUNDS(t, 24, 0, 80, 36, 40);
    round_trip(&t, "subarray Fortran");

    /* darray: 2 x 2 grid, block x cyclic(2), rank 3 */
    int gs[] = {6, 7}, di[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[] = {2, 2};
    MPI_OK(MPI_Type_create_darray(4, 3, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t));
    /* rows 3..5, columns {2,3,6}: 9 ints, in a 6 x 7 array */
    CHECK_BOUNDS(t, 36, 0, 168, (3 * 7 + 2) * 4, ((5 * 7 + 6) - (3 * 7 + 2) + 1) * 4);
    check_envelope(t, MPI_COMBINER_DARRAY, 4 * 2 + 4, 0, 0, 1, "darray");
    round_trip(&t, "darray");
}

static void test_nested_and_dup(void)
{
    /* struct of vector of resized, and a dup of it */
    MPI_Datatype r, v, s, d, dd;
    MPI_OK(MPI_Type_create_resized(MPI_SHORT, 0, 6, &r));
    MPI_OK(MPI_Type_vector(2, 2, 3, r, &v));
    int bl[] = {1, 1};
    MPI_Aint disp[] = {0, 64};
    MPI_Datatype ts[] = {v, MPI_DOUBLE};
    MPI_OK(MPI_Type_create_struct(2, bl, disp, ts, &s));
    MPI_OK(MPI_Type_dup(s, &d));
    check_envelope(d, MPI_COMBINER_DUP, 0, 0, 0, 1, "dup");
    /* v's sticky bounds (0, 30) are the struct's: the double lies outside. */
    CHECK_BOUNDS(d, 8 + 8, 0, 30, 0, 72);
    /* A dup of an uncommitted type is uncommitted; of a committed one, committed. */
    char buf[128] = {0}, out[64];
    int pos = 0;
    MPI_FAILS(MPI_Pack(buf, 1, d, out, sizeof(out), &pos, MPI_COMM_SELF), MPI_ERR_TYPE);
    MPI_OK(MPI_Type_commit(&s));
    MPI_OK(MPI_Type_dup(s, &dd));
    MPI_OK(MPI_Pack(buf, 1, dd, out, sizeof(out), &pos, MPI_COMM_SELF));
    CHECK(pos == 16, "packed %d bytes of the dup", pos);
    /* The old types outlive their handles inside the new ones. */
    MPI_OK(MPI_Type_free(&r));
    MPI_OK(MPI_Type_free(&v));
    MPI_Datatype got[2];
    MPI_Aint a[2];
    int ints[3];
    MPI_OK(MPI_Type_get_contents(s, 3, 2, 2, ints, a, got));
    MPI_Count ni, na, nc, nd;
    int comb;
    MPI_OK(MPI_Type_get_envelope_c(got[0], &ni, &na, &nc, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && got[1] == MPI_DOUBLE, "contents of the struct");
    MPI_OK(MPI_Type_free(&got[0]));
    MPI_Datatype x = rebuild(d);
    compare(d, x, "dup of nested");
    MPI_OK(MPI_Type_free(&x));
    MPI_OK(MPI_Type_free(&d));
    MPI_OK(MPI_Type_free(&dd));
    MPI_OK(MPI_Type_free(&s));
    /* Dup of a predefined type. */
    MPI_OK(MPI_Type_dup(MPI_DOUBLE_INT, &d));
    CHECK_BOUNDS(d, 12, 0, 16, 0, 12);
    check_envelope(d, MPI_COMBINER_DUP, 0, 0, 0, 1, "dup of predefined");
    MPI_OK(MPI_Pack(buf, 1, d, out, sizeof(out), &(int){0}, MPI_COMM_SELF));
    MPI_OK(MPI_Type_free(&d));
}

/* ------------------------------------------------------------ large counts */

static void check_counts(MPI_Datatype t, MPI_Count n, const MPI_Count *want, const char *what)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    MPI_OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    CHECK(nc == n, "%s: %lld large counts, expected %lld", what, (long long)nc, (long long)n);
    int ints[16];
    MPI_Aint addrs[16];
    MPI_Count counts[16];
    MPI_Datatype dts[16];
    MPI_OK(MPI_Type_get_contents_c(t, 16, 16, 16, 16, ints, addrs, counts, dts));
    for (MPI_Count i = 0; i < n; i++)
        CHECK(counts[i] == want[i], "%s: large count %lld is %lld, expected %lld", what,
              (long long)i, (long long)counts[i], (long long)want[i]);
    for (MPI_Count i = 0; i < nd; i++)
        if (!is_predef(dts[i]))
            MPI_OK(MPI_Type_free(&dts[i]));
}

static void test_large(void)
{
    MPI_Datatype t;
    int isize;
    MPI_OK(MPI_Type_contiguous_c(BIG, MPI_BYTE, &t));
    CHECK_BOUNDS(t, BIG, 0, BIG, 0, BIG);
    MPI_OK(MPI_Type_size(t, &isize));
    CHECK(isize == MPI_UNDEFINED, "MPI_Type_size of %lld bytes gives %d", (long long)BIG, isize);
    check_envelope(t, MPI_COMBINER_CONTIGUOUS, 0, 0, 1, 1, "contiguous_c");
    check_counts(t, 1, (MPI_Count[]){BIG}, "contiguous_c");
    round_trip(&t, "contiguous_c");

    /* Small values through a _c constructor read back in the classic encoding. */
    MPI_OK(MPI_Type_vector_c(10, 1, 2, MPI_INT, &t));
    check_envelope(t, MPI_COMBINER_VECTOR, 3, 0, 0, 1, "small vector_c");
    round_trip(&t, "small vector_c");

    MPI_Count s3 = 3000000000LL;
    MPI_OK(MPI_Type_vector_c(3, 1, s3, MPI_BYTE, &t));
    CHECK_BOUNDS(t, 3, 0, 2 * s3 + 1, 0, 2 * s3 + 1);
    check_envelope(t, MPI_COMBINER_VECTOR, 0, 0, 3, 1, "vector_c");
    check_counts(t, 3, (MPI_Count[]){3, 1, s3}, "vector_c");
    round_trip(&t, "vector_c");

    MPI_OK(MPI_Type_create_hvector_c(BIG, 1, 1, MPI_BYTE, &t));
    check_envelope(t, MPI_COMBINER_HVECTOR, 0, 0, 3, 1, "hvector_c");
    round_trip(&t, "hvector_c");

    MPI_OK(MPI_Type_indexed_c(2, (MPI_Count[]){1, 1}, (MPI_Count[]){0, s3}, MPI_BYTE, &t));
    CHECK_BOUNDS(t, 2, 0, s3 + 1, 0, s3 + 1);
    check_envelope(t, MPI_COMBINER_INDEXED, 0, 0, 5, 1, "indexed_c");
    check_counts(t, 5, (MPI_Count[]){2, 1, 1, 0, s3}, "indexed_c");
    round_trip(&t, "indexed_c");

    /* hindexed displacements are addresses: classic encoding. */
    MPI_OK(MPI_Type_create_hindexed_c(2, (MPI_Count[]){1, 1}, (MPI_Count[]){0, 5 * s3}, MPI_BYTE,
                                      &t));
    check_envelope(t, MPI_COMBINER_HINDEXED, 3, 2, 0, 1, "hindexed_c");
    round_trip(&t, "hindexed_c");
    MPI_OK(MPI_Type_create_hindexed_c(1, (MPI_Count[]){BIG}, (MPI_Count[]){8}, MPI_BYTE, &t));
    check_envelope(t, MPI_COMBINER_HINDEXED, 0, 0, 3, 1, "big hindexed_c");
    round_trip(&t, "big hindexed_c");

    MPI_OK(MPI_Type_create_indexed_block_c(2, 2, (MPI_Count[]){0, s3}, MPI_BYTE, &t));
    check_envelope(t, MPI_COMBINER_INDEXED_BLOCK, 0, 0, 4, 1, "indexed_block_c");
    round_trip(&t, "indexed_block_c");
    MPI_OK(MPI_Type_create_hindexed_block_c(1, BIG, (MPI_Count[]){0}, MPI_BYTE, &t));
    check_envelope(t, MPI_COMBINER_HINDEXED_BLOCK, 0, 0, 3, 1, "hindexed_block_c");
    round_trip(&t, "hindexed_block_c");

    MPI_Datatype ts[] = {MPI_BYTE, MPI_INT};
    MPI_OK(MPI_Type_create_struct_c(2, (MPI_Count[]){BIG, 1}, (MPI_Count[]){0, 2 * BIG}, ts, &t));
    check_envelope(t, MPI_COMBINER_STRUCT, 0, 0, 5, 2, "struct_c");
    CHECK_BOUNDS(t, BIG + 4, 0, 2 * BIG + 4, 0, 2 * BIG + 4);
    round_trip(&t, "struct_c");

    MPI_OK(MPI_Type_create_resized_c(MPI_INT, 0, BIG, &t));
    CHECK_BOUNDS(t, 4, 0, BIG, 0, 4);
    round_trip(&t, "resized_c");

    MPI_OK(MPI_Type_create_subarray_c(1, (MPI_Count[]){2 * s3}, (MPI_Count[]){2},
                                      (MPI_Count[]){s3}, MPI_ORDER_C, MPI_BYTE, &t));
    CHECK_BOUNDS(t, 2, 0, 2 * s3, s3, 2);
    check_envelope(t, MPI_COMBINER_SUBARRAY, 2, 0, 3, 1, "subarray_c");
    check_counts(t, 3, (MPI_Count[]){2 * s3, 2, s3}, "subarray_c");
    round_trip(&t, "subarray_c");

    MPI_OK(MPI_Type_create_darray_c(2, 1, 1, (MPI_Count[]){2 * s3},
                                    (int[]){MPI_DISTRIBUTE_BLOCK},
                                    (int[]){MPI_DISTRIBUTE_DFLT_DARG}, (int[]){2}, MPI_ORDER_C,
                                    MPI_BYTE, &t));
    CHECK_BOUNDS(t, s3, 0, 2 * s3, s3, s3);
    check_envelope(t, MPI_COMBINER_DARRAY, 3 + 4, 0, 1, 1, "darray_c");
    check_counts(t, 1, (MPI_Count[]){2 * s3}, "darray_c");
    round_trip(&t, "darray_c");
}

/* Pack and unpack 3 bytes spread over 4 GB of a sparse mapping. */
static void test_large_pack(void)
{
    MPI_Count stride = (MPI_Count)INT_MAX + 10;
    size_t span = (size_t)(2 * stride + 1);
    char *mem = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (mem == MAP_FAILED) {
        if (t_rank == 0)
            check_skip_part("large pack: no 4 GB of address space");
        return;
    }
    MPI_Datatype t;
    MPI_OK(MPI_Type_vector_c(3, 1, stride, MPI_BYTE, &t));
    MPI_OK(MPI_Type_commit(&t));
    mem[0] = 'a', mem[stride] = 'b', mem[2 * stride] = 'c';
    char packed[3];
    MPI_Count pos = 0, size;
    MPI_OK(MPI_Pack_size_c(1, t, MPI_COMM_SELF, &size));
    CHECK(size == 3, "pack size %lld", (long long)size);
    MPI_OK(MPI_Pack_c(mem, 1, t, packed, 3, &pos, MPI_COMM_SELF));
    CHECK(pos == 3 && packed[0] == 'a' && packed[1] == 'b' && packed[2] == 'c', "large pack");
    packed[0] = 'x', packed[1] = 'y', packed[2] = 'z';
    pos = 0;
    MPI_OK(MPI_Unpack_c(packed, 3, &pos, mem, 1, t, MPI_COMM_SELF));
    CHECK(mem[0] == 'x' && mem[stride] == 'y' && mem[2 * stride] == 'z', "large unpack");
    MPI_OK(MPI_Type_free(&t));
    munmap(mem, span);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    test_known();
    test_nested_and_dup();
    test_large();
    test_large_pack();
    return check_mpi_finalize("dtype_ctor");
}
