/*
 * Predefined datatypes: size, extent and true extent against the C types
 * (Fortran types by gfortran's sizes), names, envelopes, that they cannot be
 * freed; MPI_Type_match_size, MPI_Type_create_f90_*, MPI_Type_get_value_index,
 * MPI_Get_address, MPI_Aint_add / MPI_Aint_diff.
 */
#include "test/dtype/dtype_test.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

typedef struct {
    MPI_Datatype t;
    const char *name;
    MPI_Count size, extent, true_extent;
} expect_t;

#define E(t, sz) {t, #t, sz, sz, sz}
#define PAIR(t, V, I)                                                                              \
    {t, #t, sizeof(V) + sizeof(I), sizeof(struct { V v; I i; }),                                  \
     offsetof(struct { V v; I i; }, i) + sizeof(I)}

static const expect_t expect[] = {
    E(MPI_CHAR, sizeof(char)),
    E(MPI_SIGNED_CHAR, sizeof(signed char)),
    E(MPI_UNSIGNED_CHAR, sizeof(unsigned char)),
    E(MPI_BYTE, 1),
    E(MPI_PACKED, 1),
    E(MPI_WCHAR, sizeof(wchar_t)),
    E(MPI_SHORT, sizeof(short)),
    E(MPI_UNSIGNED_SHORT, sizeof(unsigned short)),
    E(MPI_INT, sizeof(int)),
    E(MPI_UNSIGNED, sizeof(unsigned)),
    E(MPI_LONG, sizeof(long)),
    E(MPI_UNSIGNED_LONG, sizeof(unsigned long)),
    E(MPI_LONG_LONG, sizeof(long long)),
    E(MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long)),
    E(MPI_INT8_T, 1),
    E(MPI_UINT8_T, 1),
    E(MPI_INT16_T, 2),
    E(MPI_UINT16_T, 2),
    E(MPI_INT32_T, 4),
    E(MPI_UINT32_T, 4),
    E(MPI_INT64_T, 8),
    E(MPI_UINT64_T, 8),
    E(MPI_AINT, sizeof(MPI_Aint)),
    E(MPI_COUNT, sizeof(MPI_Count)),
    E(MPI_OFFSET, sizeof(MPI_Offset)),
    E(MPI_FLOAT, sizeof(float)),
    E(MPI_DOUBLE, sizeof(double)),
    E(MPI_LONG_DOUBLE, sizeof(long double)),
    E(MPI_C_BOOL, sizeof(_Bool)),
    E(MPI_C_FLOAT_COMPLEX, sizeof(float _Complex)),
    E(MPI_C_DOUBLE_COMPLEX, sizeof(double _Complex)),
    E(MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex)),
    E(MPI_CXX_BOOL, 1),
    E(MPI_CXX_FLOAT_COMPLEX, sizeof(float _Complex)),
    E(MPI_CXX_DOUBLE_COMPLEX, sizeof(double _Complex)),
    E(MPI_CXX_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex)),
    E(MPI_INTEGER, 4),
    E(MPI_REAL, 4),
    E(MPI_DOUBLE_PRECISION, 8),
    E(MPI_COMPLEX, 8),
    E(MPI_DOUBLE_COMPLEX, 16),
    E(MPI_LOGICAL, 4),
    E(MPI_CHARACTER, 1),
    E(MPI_INTEGER1, 1),
    E(MPI_INTEGER2, 2),
    E(MPI_INTEGER4, 4),
    E(MPI_INTEGER8, 8),
    E(MPI_INTEGER16, 16),
    E(MPI_REAL2, 2),
    E(MPI_REAL4, 4),
    E(MPI_REAL8, 8),
    E(MPI_REAL16, 16),
    E(MPI_COMPLEX4, 4),
    E(MPI_COMPLEX8, 8),
    E(MPI_COMPLEX16, 16),
    E(MPI_COMPLEX32, 32),
    E(MPIX_LOGICAL1, 1),
    E(MPIX_LOGICAL2, 2),
    E(MPIX_LOGICAL4, 4),
    E(MPIX_LOGICAL8, 8),
    E(MPIX_LOGICAL16, 16),
    PAIR(MPI_FLOAT_INT, float, int),
    PAIR(MPI_DOUBLE_INT, double, int),
    PAIR(MPI_LONG_INT, long, int),
    PAIR(MPI_2INT, int, int),
    PAIR(MPI_SHORT_INT, short, int),
    PAIR(MPI_LONG_DOUBLE_INT, long double, int),
    PAIR(MPI_2REAL, float, float),
    PAIR(MPI_2DOUBLE_PRECISION, double, double),
    PAIR(MPI_2INTEGER, int, int),
};

static void test_table(void)
{
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        const expect_t *e = &expect[i];
        MPI_Count size, lb, extent, tlb, textent;
        MPI_OK(MPI_Type_size_c(e->t, &size));
        MPI_OK(MPI_Type_get_extent_c(e->t, &lb, &extent));
        MPI_OK(MPI_Type_get_true_extent_c(e->t, &tlb, &textent));
        CHECK(size == e->size && lb == 0 && extent == e->extent && tlb == 0 &&
                  textent == e->true_extent,
              "%s: size %lld lb %lld extent %lld true %lld/%lld, expected %lld 0 %lld 0/%lld",
              e->name, (long long)size, (long long)lb, (long long)extent, (long long)tlb,
              (long long)textent, (long long)e->size, (long long)e->extent,
              (long long)e->true_extent);
        /* The int and _x forms agree. */
        int isize;
        MPI_Aint alb, aext;
        MPI_Count xsize;
        MPI_OK(MPI_Type_size(e->t, &isize));
        MPI_OK(MPI_Type_size_x(e->t, &xsize));
        MPI_OK(MPI_Type_get_extent(e->t, &alb, &aext));
        CHECK(isize == size && xsize == size && aext == extent, "%s: int/_x forms differ", e->name);
        /* Name, envelope, no contents, cannot be freed; commit is fine. */
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_OK(MPI_Type_get_name(e->t, name, &len));
        CHECK(strcmp(name, e->name) == 0 && len == (int)strlen(e->name), "name of %s is '%s'",
              e->name, name);
        int ni, na, nd, comb;
        MPI_OK(MPI_Type_get_envelope(e->t, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "envelope of %s",
              e->name);
        int ints[1];
        MPI_Aint addrs[1];
        MPI_Datatype types[1];
        MPI_FAILS(MPI_Type_get_contents(e->t, 1, 1, 1, ints, addrs, types), MPI_ERR_TYPE);
        MPI_Datatype t = e->t;
        MPI_OK(MPI_Type_commit(&t));
        MPI_FAILS(MPI_Type_free(&t), MPI_ERR_TYPE);
        CHECK(t == e->t, "a failed free changed the handle of %s", e->name);
    }
    /* Aliases are the same type. */
    CHECK(MPI_LONG_LONG_INT == MPI_LONG_LONG && MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX, "aliases");
}

static void test_names(void)
{
    MPI_Datatype t;
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0 && name[0] == 0, "a new type has no name, got '%s'", name);
    MPI_OK(MPI_Type_set_name(t, "pair of ints"));
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "pair of ints") == 0 && len == 12, "name '%s'", name);
    char longname[300];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = 0;
    MPI_OK(MPI_Type_set_name(t, longname));
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1, "long names are truncated (%d)", len);
    MPI_OK(MPI_Type_free(&t));
}

static void test_match_size(void)
{
    static const struct {
        int cls, size;
        MPI_Datatype t;
    } m[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4}, {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},       {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8}, {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16},
    };
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        MPI_OK(MPI_Type_match_size(m[i].cls, m[i].size, &t));
        CHECK(t == m[i].t, "match_size(%d, %d)", m[i].cls, m[i].size);
    }
    MPI_Datatype t;
    MPI_FAILS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t), MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 1, &t), MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_match_size(12345, 4, &t), MPI_ERR_ARG);
}

static void check_f90(MPI_Datatype t, int combiner, int ni, const int *ints, MPI_Count size)
{
    MPI_Count s;
    MPI_OK(MPI_Type_size_c(t, &s));
    CHECK(s == size, "f90 type of size %lld, expected %lld", (long long)s, (long long)size);
    int n_i, n_a, n_d, comb, got[2];
    MPI_OK(MPI_Type_get_envelope(t, &n_i, &n_a, &n_d, &comb));
    CHECK(comb == combiner && n_i == ni && n_a == 0 && n_d == 0, "f90 envelope %d %d %d %d", comb,
          n_i, n_a, n_d);
    MPI_OK(MPI_Type_get_contents(t, 2, 0, 0, got, NULL, NULL));
    for (int i = 0; i < ni; i++)
        CHECK(got[i] == ints[i], "f90 contents[%d] = %d, expected %d", i, got[i], ints[i]);
    MPI_Datatype c = t;
    MPI_FAILS(MPI_Type_free(&c), MPI_ERR_TYPE);
    /* Usable like any type. */
    char buf[64], packed[64];
    int pos = 0;
    memset(buf, 7, sizeof(buf));
    MPI_OK(MPI_Pack(buf, 1, t, packed, sizeof(packed), &pos, MPI_COMM_SELF));
    CHECK(pos == size, "packed %d bytes", pos);
}

static void test_f90(void)
{
    MPI_Datatype t, t2;
    int r9[] = {9}, r2[] = {2}, p6[] = {6, MPI_UNDEFINED}, p10[] = {10, MPI_UNDEFINED},
        p15r300[] = {15, 300}, p5[] = {5, 30};
    MPI_OK(MPI_Type_create_f90_integer(9, &t));
    check_f90(t, MPI_COMBINER_F90_INTEGER, 1, r9, 4);
    MPI_OK(MPI_Type_create_f90_integer(9, &t2));
    CHECK(t == t2, "the same arguments give the same handle");
    MPI_OK(MPI_Type_create_f90_integer(2, &t));
    check_f90(t, MPI_COMBINER_F90_INTEGER, 1, r2, 1);
    MPI_OK(MPI_Type_create_f90_integer(10, &t));
    MPI_Count s;
    MPI_OK(MPI_Type_size_c(t, &s));
    CHECK(s == 8, "f90_integer(10) is %lld bytes", (long long)s);
    MPI_FAILS(MPI_Type_create_f90_integer(100, &t), MPI_ERR_ARG);
    MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
    check_f90(t, MPI_COMBINER_F90_REAL, 2, p6, 4);
    MPI_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &t));
    check_f90(t, MPI_COMBINER_F90_REAL, 2, p10, 8);
    MPI_OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &t));
    MPI_OK(MPI_Type_size_c(t, &s));
    CHECK(s == 8, "f90_real(-, 300) is %lld bytes", (long long)s);
    MPI_FAILS(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    MPI_OK(MPI_Type_create_f90_complex(15, 300, &t));
    check_f90(t, MPI_COMBINER_F90_COMPLEX, 2, p15r300, 16);
    MPI_OK(MPI_Type_create_f90_complex(5, 30, &t));
    check_f90(t, MPI_COMBINER_F90_COMPLEX, 2, p5, 8);
    /* Reductions work as on the matching type. */
    MPI_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &t));
    double a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    MPI_OK(MPI_Reduce_local(a, b, 3, t, MPI_SUM));
    CHECK(b[0] == 11 && b[1] == 22 && b[2] == 33, "SUM on an f90 real");
}

static void test_value_index(void)
{
    static const struct {
        MPI_Datatype v, i, pair;
    } named[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},  {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},    {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},  {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    MPI_Datatype t;
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
        MPI_OK(MPI_Type_get_value_index(named[i].v, named[i].i, &t));
        CHECK(t == named[i].pair, "value-index pair %zu", i);
    }
    /* No index of a non-integer type, no such pair kind: MPI_DATATYPE_NULL. */
    MPI_OK(MPI_Type_get_value_index(MPI_FLOAT, MPI_FLOAT, &t));
    CHECK(t == MPI_DATATYPE_NULL, "(float, float) has no pair type");
    MPI_OK(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &t));
    CHECK(t == MPI_DATATYPE_NULL, "(char, int) has no pair type");
    MPI_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_SHORT, &t));
    CHECK(t == MPI_DATATYPE_NULL, "(double, short) has no pair type");
    MPI_FAILS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t), MPI_ERR_TYPE);

    /* (int64, int64): a VALUE_INDEX type made by the library. */
    MPI_Datatype p, p2;
    MPI_OK(MPI_Type_get_value_index(MPI_INT64_T, MPI_INT64_T, &p));
    CHECK(p != MPI_DATATYPE_NULL, "(int64, int64) has a pair type");
    MPI_OK(MPI_Type_get_value_index(MPI_INT64_T, MPI_INT64_T, &p2));
    CHECK(p == p2, "same arguments, same pair type");
    CHECK_BOUNDS(p, 16, 0, 16, 0, 16);
    MPI_Count ni, na, nc, nd;
    int comb;
    MPI_OK(MPI_Type_get_envelope_c(p, &ni, &na, &nc, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VALUE_INDEX && ni == 0 && na == 0 && nc == 0 && nd == 2,
          "value-index envelope");
    MPI_Datatype parts[2];
    MPI_OK(MPI_Type_get_contents(p, 0, 0, 2, NULL, NULL, parts));
    CHECK(parts[0] == MPI_INT64_T && parts[1] == MPI_INT64_T, "value-index contents");
    MPI_Datatype c = p;
    MPI_FAILS(MPI_Type_free(&c), MPI_ERR_TYPE);
    struct {
        int64_t v, i;
    } in[3] = {{5, 1}, {2, 7}, {9, 4}}, io[3] = {{5, 0}, {3, 2}, {9, 9}};
    MPI_OK(MPI_Reduce_local(in, io, 3, p, MPI_MINLOC));
    CHECK(io[0].v == 5 && io[0].i == 0 && io[1].v == 2 && io[1].i == 7 && io[2].v == 9 &&
              io[2].i == 4,
          "MINLOC on (int64, int64): {%lld %lld} {%lld %lld} {%lld %lld}", (long long)io[0].v,
          (long long)io[0].i, (long long)io[1].v, (long long)io[1].i, (long long)io[2].v,
          (long long)io[2].i);
    /* (int32_t, int): same representation as MPI_2INT. */
    MPI_OK(MPI_Type_get_value_index(MPI_INT32_T, MPI_INT, &p));
    CHECK(p != MPI_DATATYPE_NULL && p != MPI_2INT, "(int32_t, int) pair");
    CHECK_BOUNDS(p, 8, 0, 8, 0, 8);
}

static void test_addresses(void)
{
    char buf[100] = {0};
    MPI_Aint a, b;
    MPI_OK(MPI_Get_address(&buf[10], &a));
    MPI_OK(MPI_Get_address(&buf[75], &b));
    CHECK(a == (MPI_Aint)(uintptr_t)&buf[10], "MPI_Get_address");
    CHECK(MPI_Aint_diff(b, a) == 65, "MPI_Aint_diff");
    CHECK(MPI_Aint_add(a, 65) == b, "MPI_Aint_add");
    CHECK(MPI_Aint_add(b, -65) == a, "MPI_Aint_add negative");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    test_table();
    test_names();
    test_match_size();
    test_f90();
    test_value_index();
    test_addresses();
    return check_mpi_finalize("dtype_predef");
}
