/*
 * MPI_Reduce_local: every predefined operation on every predefined type,
 * against results computed here for the combinations MPI-4.1 section 6.9.2
 * allows and MPI_ERR_OP for all others (MPI_REPLACE and MPI_NO_OP are for
 * accumulates only); derived types made of one predefined type, contiguous
 * or not; user operations, commutative or not, int and _c functions, and
 * the split of counts above INT_MAX for int functions; MPI_Op_free and
 * MPI_Op_commutative.
 */
#include "test/dtype/dtype_test.h"

#include <complex.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>

/* Representation of one element, for reading and writing test values. */
typedef enum {
    R_I8, R_U8, R_I16, R_U16, R_I32, R_U32, R_I64, R_U64, R_I128,
    R_F16, R_F32, R_F64, R_LD, R_F128,
    R_CF16, R_CF32, R_CF64, R_CLD, R_CF128,
    R_BOOL, R_LOG1, R_LOG2, R_LOG4, R_LOG8, R_BYTE,
    R_FI, R_DI, R_LI, R_II, R_SI, R_LDI, R_FF, R_DD,
    R_NONE,
} repr_t;

/* Classes of MPI-4.1 section 6.9.2. */
enum { C_INT = 1, F_INT = 2, FLT = 4, LOGIC = 8, CPLX = 16, BYTE = 32, MULTI = 64, PAIR = 128,
       NOCLASS = 0 };

typedef struct {
    MPI_Datatype t;
    const char *name;
    int cls;
    repr_t r;
} tinfo_t;

#define T(t, c, r) {t, #t, c, r}
/* MPI_CHAR: reduced as signed char by every arithmetic, logical and
 * bitwise operation (an extension, as Open MPI and MPICH), refused with
 * RAIL_MPI_REDUCE_CHAR_STRICT=1 (set in main). */
static tinfo_t types[] = {
    T(MPI_CHAR, C_INT, R_I8),          T(MPI_WCHAR, NOCLASS, R_I32),
    T(MPI_PACKED, NOCLASS, R_U8),        T(MPI_CHARACTER, NOCLASS, R_I8),
    T(MPIX_LOGICAL16, NOCLASS, R_NONE),
    T(MPI_SIGNED_CHAR, C_INT, R_I8),     T(MPI_UNSIGNED_CHAR, C_INT, R_U8),
    T(MPI_SHORT, C_INT, R_I16),          T(MPI_UNSIGNED_SHORT, C_INT, R_U16),
    T(MPI_INT, C_INT, R_I32),            T(MPI_UNSIGNED, C_INT, R_U32),
    T(MPI_LONG, C_INT, R_I64),           T(MPI_UNSIGNED_LONG, C_INT, R_U64),
    T(MPI_LONG_LONG, C_INT, R_I64),      T(MPI_UNSIGNED_LONG_LONG, C_INT, R_U64),
    T(MPI_INT8_T, C_INT, R_I8),          T(MPI_UINT8_T, C_INT, R_U8),
    T(MPI_INT16_T, C_INT, R_I16),        T(MPI_UINT16_T, C_INT, R_U16),
    T(MPI_INT32_T, C_INT, R_I32),        T(MPI_UINT32_T, C_INT, R_U32),
    T(MPI_INT64_T, C_INT, R_I64),        T(MPI_UINT64_T, C_INT, R_U64),
    T(MPI_INTEGER, F_INT, R_I32),        T(MPI_INTEGER1, F_INT, R_I8),
    T(MPI_INTEGER2, F_INT, R_I16),       T(MPI_INTEGER4, F_INT, R_I32),
    T(MPI_INTEGER8, F_INT, R_I64),
#ifdef __SIZEOF_INT128__
    T(MPI_INTEGER16, F_INT, R_I128),
#endif
    T(MPI_FLOAT, FLT, R_F32),            T(MPI_DOUBLE, FLT, R_F64),
    T(MPI_LONG_DOUBLE, FLT, R_LD),       T(MPI_REAL, FLT, R_F32),
    T(MPI_DOUBLE_PRECISION, FLT, R_F64), T(MPI_REAL4, FLT, R_F32),
    T(MPI_REAL8, FLT, R_F64),
#ifdef __FLT16_MAX__
    T(MPI_REAL2, FLT, R_F16),            T(MPI_COMPLEX4, CPLX, R_CF16),
#endif
#ifdef __FLT128_MAX__
    T(MPI_REAL16, FLT, R_F128),          T(MPI_COMPLEX32, CPLX, R_CF128),
#endif
    T(MPI_LOGICAL, LOGIC, R_LOG4),       T(MPI_C_BOOL, LOGIC, R_BOOL),
    T(MPI_CXX_BOOL, LOGIC, R_BOOL),      T(MPIX_LOGICAL1, LOGIC, R_LOG1),
    T(MPIX_LOGICAL2, LOGIC, R_LOG2),     T(MPIX_LOGICAL4, LOGIC, R_LOG4),
    T(MPIX_LOGICAL8, LOGIC, R_LOG8),
    T(MPI_C_FLOAT_COMPLEX, CPLX, R_CF32), T(MPI_C_DOUBLE_COMPLEX, CPLX, R_CF64),
    T(MPI_C_LONG_DOUBLE_COMPLEX, CPLX, R_CLD), T(MPI_CXX_FLOAT_COMPLEX, CPLX, R_CF32),
    T(MPI_CXX_DOUBLE_COMPLEX, CPLX, R_CF64), T(MPI_CXX_LONG_DOUBLE_COMPLEX, CPLX, R_CLD),
    T(MPI_COMPLEX, CPLX, R_CF32),        T(MPI_DOUBLE_COMPLEX, CPLX, R_CF64),
    T(MPI_COMPLEX8, CPLX, R_CF32),       T(MPI_COMPLEX16, CPLX, R_CF64),
    T(MPI_BYTE, BYTE, R_BYTE),
    T(MPI_AINT, MULTI, R_I64),           T(MPI_OFFSET, MULTI, R_I64),
    T(MPI_COUNT, MULTI, R_I64),
    T(MPI_FLOAT_INT, PAIR, R_FI),        T(MPI_DOUBLE_INT, PAIR, R_DI),
    T(MPI_LONG_INT, PAIR, R_LI),         T(MPI_2INT, PAIR, R_II),
    T(MPI_SHORT_INT, PAIR, R_SI),        T(MPI_LONG_DOUBLE_INT, PAIR, R_LDI),
    T(MPI_2REAL, PAIR, R_FF),            T(MPI_2DOUBLE_PRECISION, PAIR, R_DD),
    T(MPI_2INTEGER, PAIR, R_II),
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

typedef struct {
    MPI_Op op;
    const char *name;
    int classes;
} opinfo_t;

static const opinfo_t ops[] = {
    {MPI_MAX, "MPI_MAX", C_INT | F_INT | FLT | MULTI},
    {MPI_MIN, "MPI_MIN", C_INT | F_INT | FLT | MULTI},
    {MPI_SUM, "MPI_SUM", C_INT | F_INT | FLT | CPLX | MULTI},
    {MPI_PROD, "MPI_PROD", C_INT | F_INT | FLT | CPLX | MULTI},
    /* the logical operations also take MPI_AINT, MPI_OFFSET and MPI_COUNT
     * (beyond the standard's table, as MPICH) */
    {MPI_LAND, "MPI_LAND", C_INT | LOGIC | MULTI},
    {MPI_LOR, "MPI_LOR", C_INT | LOGIC | MULTI},
    {MPI_LXOR, "MPI_LXOR", C_INT | LOGIC | MULTI},
    {MPI_BAND, "MPI_BAND", C_INT | F_INT | BYTE | MULTI},
    {MPI_BOR, "MPI_BOR", C_INT | F_INT | BYTE | MULTI},
    {MPI_BXOR, "MPI_BXOR", C_INT | F_INT | BYTE | MULTI},
    {MPI_MAXLOC, "MPI_MAXLOC", PAIR},
    {MPI_MINLOC, "MPI_MINLOC", PAIR},
    {MPI_REPLACE, "MPI_REPLACE", 0},
    {MPI_NO_OP, "MPI_NO_OP", 0},
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

#define N 13

/* ------------------------------------------------------------ element access */

/* Component k (0: real part / value, 1: imaginary part / index) of element i. */
static double get(repr_t r, const void *buf, int i, int k)
{
    switch (r) {
#define S(R, Ty) case R: return (double)((const Ty *)buf)[i];
    S(R_I8, int8_t) S(R_U8, uint8_t) S(R_I16, int16_t) S(R_U16, uint16_t) S(R_I32, int32_t)
    S(R_U32, uint32_t) S(R_I64, int64_t) S(R_U64, uint64_t) S(R_F32, float) S(R_F64, double)
    S(R_LD, long double) S(R_BOOL, _Bool) S(R_LOG1, int8_t) S(R_LOG2, int16_t)
    S(R_LOG4, int32_t) S(R_LOG8, int64_t) S(R_BYTE, uint8_t)
#ifdef __SIZEOF_INT128__
    S(R_I128, __int128)
#endif
#ifdef __FLT16_MAX__
    S(R_F16, _Float16)
    case R_CF16: return (double)((const _Float16 *)buf)[2 * i + k];
#endif
#ifdef __FLT128_MAX__
    S(R_F128, _Float128)
    case R_CF128: return (double)((const _Float128 *)buf)[2 * i + k];
#endif
#undef S
    case R_CF32: return k ? cimagf(((const float _Complex *)buf)[i]) : crealf(((const float _Complex *)buf)[i]);
    case R_CF64: return k ? cimag(((const double _Complex *)buf)[i]) : creal(((const double _Complex *)buf)[i]);
    case R_CLD: return (double)(k ? cimagl(((const long double _Complex *)buf)[i]) : creall(((const long double _Complex *)buf)[i]));
#define P(R, V, I)                                                                                 \
    case R: {                                                                                      \
        const struct { V v; I i; } *p = buf;                                                       \
        return k ? (double)p[i].i : (double)p[i].v;                                                \
    }
    P(R_FI, float, int) P(R_DI, double, int) P(R_LI, long, int) P(R_II, int, int)
    P(R_SI, short, int) P(R_LDI, long double, int) P(R_FF, float, float) P(R_DD, double, double)
#undef P
    default:
        return 0;
    }
}

static void set(repr_t r, void *buf, int i, int k, double x)
{
    switch (r) {
#define S(R, Ty) case R: ((Ty *)buf)[i] = (Ty)x; return;
    S(R_I8, int8_t) S(R_U8, uint8_t) S(R_I16, int16_t) S(R_U16, uint16_t) S(R_I32, int32_t)
    S(R_U32, uint32_t) S(R_I64, int64_t) S(R_U64, uint64_t) S(R_F32, float) S(R_F64, double)
    S(R_LD, long double) S(R_BOOL, _Bool) S(R_LOG1, int8_t) S(R_LOG2, int16_t)
    S(R_LOG4, int32_t) S(R_LOG8, int64_t) S(R_BYTE, uint8_t)
#ifdef __SIZEOF_INT128__
    S(R_I128, __int128)
#endif
#ifdef __FLT16_MAX__
    S(R_F16, _Float16)
    case R_CF16: ((_Float16 *)buf)[2 * i + k] = (_Float16)x; return;
#endif
#ifdef __FLT128_MAX__
    S(R_F128, _Float128)
    case R_CF128: ((_Float128 *)buf)[2 * i + k] = (_Float128)x; return;
#endif
#undef S
    case R_CF32: ((float *)buf)[2 * i + k] = (float)x; return;
    case R_CF64: ((double *)buf)[2 * i + k] = x; return;
    case R_CLD: ((long double *)buf)[2 * i + k] = x; return;
#define P(R, V, I)                                                                                 \
    case R: {                                                                                      \
        struct { V v; I i; } *p = buf;                                                             \
        if (k)                                                                                     \
            p[i].i = (I)x;                                                                         \
        else                                                                                       \
            p[i].v = (V)x;                                                                         \
        return;                                                                                    \
    }
    P(R_FI, float, int) P(R_DI, double, int) P(R_LI, long, int) P(R_II, int, int)
    P(R_SI, short, int) P(R_LDI, long double, int) P(R_FF, float, float) P(R_DD, double, double)
#undef P
    default:
        return;
    }
}

static bool is_complex(repr_t r)
{
    return r >= R_CF16 && r <= R_CF128;
}

/* ------------------------------------------------------------ values and results */

/* Inputs: small values whose results are exact in every type (int8 too). */
static void fill(const tinfo_t *ti, MPI_Op op, void *a, void *b)
{
    for (int i = 0; i < N; i++) {
        double x = i % 5 + 1, y = (i * 3) % 7 + 1;
        if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) {
            x = (i & 1) ? (ti->cls == LOGIC ? 1 : 3 + i % 2) : 0;
            y = (i & 2) ? 1 : 0;
        } else if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) {
            x = (i * 37 + 5) & 0x7f;
            y = (i * 11 + 3) & 0x7f;
        } else if (ti->cls == PAIR) {
            x = i % 3;          /* ties on purpose */
            y = (i + 1) % 3;
        }
        set(ti->r, a, i, 0, x);
        set(ti->r, b, i, 0, y);
        if (is_complex(ti->r)) {
            set(ti->r, a, i, 1, i % 3);
            set(ti->r, b, i, 1, (i + 2) % 4);
        }
        if (ti->cls == PAIR) {
            set(ti->r, a, i, 1, i % 4);
            set(ti->r, b, i, 1, (i * 5) % 4);
        }
    }
}

static double bits(double x, double y, MPI_Op op)
{
    long a = (long)x, b = (long)y;
    return (double)(op == MPI_BAND ? (a & b) : op == MPI_BOR ? (a | b) : (a ^ b));
}

/* Expected component k of element i of `in op inout`. */
static double expected(const tinfo_t *ti, MPI_Op op, const void *a, const void *b, int i, int k)
{
    repr_t r = ti->r;
    double x = get(r, a, i, 0), y = get(r, b, i, 0);
    if (is_complex(r)) {
        double xi = get(r, a, i, 1), yi = get(r, b, i, 1);
        if (op == MPI_SUM)
            return k ? xi + yi : x + y;
        return k ? x * yi + xi * y : x * y - xi * yi;   /* PROD */
    }
    if (ti->cls == PAIR) {
        double xi = get(r, a, i, 1), yi = get(r, b, i, 1);
        bool a_wins = op == MPI_MAXLOC ? x > y : x < y;
        if (x == y)
            return k ? (xi < yi ? xi : yi) : x;
        return a_wins ? (k ? xi : x) : (k ? yi : y);
    }
    if (op == MPI_MAX)
        return x > y ? x : y;
    if (op == MPI_MIN)
        return x < y ? x : y;
    if (op == MPI_SUM)
        return x + y;
    if (op == MPI_PROD)
        return x * y;
    if (op == MPI_LAND)
        return (x != 0) && (y != 0);
    if (op == MPI_LOR)
        return (x != 0) || (y != 0);
    if (op == MPI_LXOR)
        return (x != 0) != (y != 0);
    return bits(x, y, op);
}

static void check_result(const tinfo_t *ti, const opinfo_t *oi, const void *a, const void *b0,
                         const void *b)
{
    int parts = is_complex(ti->r) || ti->cls == PAIR ? 2 : 1;
    bool logical = oi->op == MPI_LAND || oi->op == MPI_LOR || oi->op == MPI_LXOR;
    for (int i = 0; i < N; i++)
        for (int k = 0; k < parts; k++) {
            double want = expected(ti, oi->op, a, b0, i, k), got = get(ti->r, b, i, k);
            /* Fortran LOGICAL: any nonzero value is true. */
            if (logical && ti->cls == LOGIC && ti->r != R_BOOL)
                got = got != 0;
            CHECK(got == want, "%s on %s, element %d part %d: %g, expected %g", oi->name,
                  ti->name, i, k, got, want);
        }
}

static void test_predefined(void)
{
    unsigned char a[N * 32], b[N * 32], b0[N * 32];
    int tested = 0, refused = 0;
    for (size_t t = 0; t < NTYPES; t++) {
        const tinfo_t *ti = &types[t];
        for (size_t o = 0; o < NOPS; o++) {
            const opinfo_t *oi = &ops[o];
            memset(a, 0, sizeof(a));
            memset(b, 0, sizeof(b));
            if (!(ti->cls & oi->classes)) {
                MPI_FAILS(MPI_Reduce_local(a, b, N, ti->t, oi->op), MPI_ERR_OP);
                MPI_FAILS(MPI_Reduce_local(a, b, 0, ti->t, oi->op), MPI_ERR_OP);
                refused++;
                continue;
            }
            fill(ti, oi->op, a, b);
            memcpy(b0, b, sizeof(b));
            MPI_OK(MPI_Reduce_local(a, b, N, ti->t, oi->op));
            check_result(ti, oi, a, b0, b);
            /* The _c binding and count 0 (nothing changes). */
            memcpy(b, b0, sizeof(b));
            MPI_OK(MPI_Reduce_local_c(a, b, (MPI_Count)N, ti->t, oi->op));
            check_result(ti, oi, a, b0, b);
            MPI_OK(MPI_Reduce_local(a, b0, 0, ti->t, oi->op));
            tested++;
        }
    }
    if (t_rank == 0)
        printf("  %d (op, type) pairs reduced, %d refused\n", tested, refused);
}

/* ------------------------------------------------------------ derived types */

static void test_derived(void)
{
    /* contiguous: reduced in place. */
    MPI_Datatype c3;
    MPI_OK(MPI_Type_contiguous(3, MPI_DOUBLE, &c3));
    MPI_OK(MPI_Type_commit(&c3));
    double da[6] = {1, 2, 3, 4, 5, 6}, db[6] = {10, 20, 30, 40, 50, 60};
    MPI_OK(MPI_Reduce_local(da, db, 2, c3, MPI_SUM));
    for (int i = 0; i < 6; i++)
        CHECK(db[i] == 11 * (i + 1), "contiguous SUM [%d] = %g", i, db[i]);

    /* vector with holes: staged; the holes stay untouched. */
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    int ia[12], ib[12];
    for (int i = 0; i < 12; i++)
        ia[i] = i, ib[i] = 100 + i;
    MPI_OK(MPI_Reduce_local(ia, ib, 2, v, MPI_MAX));
    MPI_OK(MPI_Reduce_local(ia, ib, 2, v, MPI_SUM));
    /* Elements of 2 vectors (extent 5 ints): 0 2 4, 5 7 9. */
    for (int i = 0; i < 12; i++) {
        bool in = i == 0 || i == 2 || i == 4 || i == 5 || i == 7 || i == 9;
        CHECK(ib[i] == (in ? 100 + 2 * i : 100 + i), "vector MAX+SUM [%d] = %d", i, ib[i]);
    }

    /* resized with a gap, MINLOC on pairs through a derived type. */
    MPI_Datatype r;
    MPI_OK(MPI_Type_create_resized(MPI_2INT, 0, 12, &r));
    MPI_OK(MPI_Type_commit(&r));
    int pa[9] = {5, 1, -1, 3, 2, -1, 7, 0, -1}, pb[9] = {5, 0, -2, 4, 9, -2, 1, 1, -2};
    MPI_OK(MPI_Reduce_local(pa, pb, 3, r, MPI_MINLOC));
    int want[9] = {5, 0, -2, 3, 2, -2, 1, 1, -2};
    for (int i = 0; i < 9; i++)
        CHECK(pb[i] == want[i], "resized MINLOC [%d] = %d, expected %d", i, pb[i], want[i]);

    /* Mixed or disallowed basic types: MPI_ERR_OP. */
    MPI_Datatype s, cc;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
    MPI_OK(MPI_Type_create_struct(2, bl, disp, ts, &s));
    MPI_OK(MPI_Type_commit(&s));
    char buf[64] = {0}, buf2[64] = {0};
    MPI_FAILS(MPI_Reduce_local(buf, buf2, 1, s, MPI_SUM), MPI_ERR_OP);
    MPI_OK(MPI_Type_contiguous(4, MPI_WCHAR, &cc));
    MPI_OK(MPI_Type_commit(&cc));
    MPI_FAILS(MPI_Reduce_local(buf, buf2, 1, cc, MPI_SUM), MPI_ERR_OP);
    MPI_FAILS(MPI_Reduce_local(buf, buf2, 1, c3, MPI_BAND), MPI_ERR_OP);
    /* A struct of one basic type is fine. */
    MPI_Datatype s2;
    MPI_Datatype ts2[2] = {MPI_INT, MPI_INT};
    MPI_OK(MPI_Type_create_struct(2, bl, disp, ts2, &s2));
    MPI_OK(MPI_Type_commit(&s2));
    int sa[4] = {1, 0, 2, 0}, sb[4] = {10, -1, 20, -1};
    MPI_OK(MPI_Reduce_local(sa, sb, 1, s2, MPI_SUM));
    CHECK(sb[0] == 11 && sb[1] == -1 && sb[2] == 22 && sb[3] == -1, "struct of ints SUM");

    MPI_Type_free(&c3);
    MPI_Type_free(&v);
    MPI_Type_free(&r);
    MPI_Type_free(&s);
    MPI_Type_free(&s2);
    MPI_Type_free(&cc);
}

/* ------------------------------------------------------------ user operations */

/* inout = 10 * in + inout: not commutative, shows the operand order. */
static void lin(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    CHECK(*dt == MPI_INT || *dt != MPI_DATATYPE_NULL, "datatype passed");
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = 10 * ((int *)in)[i] + ((int *)inout)[i];
}

static void lin_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] = 10 * ((int *)in)[i] + ((int *)inout)[i];
}

static MPI_Count calls, lens[4];
static void *ptrs[4];
static void record(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)inout;
    (void)dt;
    if (calls < 4) {
        lens[calls] = *len;
        ptrs[calls] = in;
    }
    calls++;
}

static void test_user(void)
{
    MPI_Op op, opc;
    int commute;
    MPI_OK(MPI_Op_create(lin, 0, &op));
    MPI_OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0, "non-commutative op reports %d", commute);
    int a[5] = {1, 2, 3, 4, 5}, b[5] = {6, 7, 8, 9, 10};
    MPI_OK(MPI_Reduce_local(a, b, 5, MPI_INT, op));
    for (int i = 0; i < 5; i++)
        CHECK(b[i] == 10 * (i + 1) + i + 6, "user op order [%d] = %d", i, b[i]);
    /* User functions take any datatype, even MPI_CHAR. */
    MPI_OK(MPI_Reduce_local(a, b, 0, MPI_CHAR, op));
    MPI_OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "MPI_Op_free sets MPI_OP_NULL");

    MPI_OK(MPI_Op_create_c(lin_c, 1, &opc));
    MPI_OK(MPI_Op_commutative(opc, &commute));
    CHECK(commute == 1, "commutative op reports %d", commute);
    int b2[5] = {6, 7, 8, 9, 10};
    MPI_OK(MPI_Reduce_local_c(a, b2, 5, MPI_INT, opc));
    for (int i = 0; i < 5; i++)
        CHECK(b2[i] == 10 * (i + 1) + i + 6, "user _c op [%d] = %d", i, b2[i]);
    MPI_OK(MPI_Op_free(&opc));
    MPI_FAILS(MPI_Op_free(&opc), MPI_ERR_OP);   /* MPI_OP_NULL now */

    /* Counts above INT_MAX reach an int function in pieces; a type of
     * extent 0 keeps the buffers tiny (the pointers advance by 0). */
    MPI_Datatype z;
    MPI_OK(MPI_Type_create_resized(MPI_BYTE, 0, 0, &z));
    MPI_OK(MPI_Type_commit(&z));
    MPI_OK(MPI_Op_create(record, 1, &op));
    char x = 0, y = 0;
    calls = 0;
    MPI_OK(MPI_Reduce_local_c(&x, &y, (MPI_Count)INT_MAX + 5, z, op));
    CHECK(calls == 2 && lens[0] == INT_MAX && lens[1] == 5 && ptrs[0] == &x && ptrs[1] == &x,
          "split of INT_MAX + 5: %lld calls, lengths %lld %lld", (long long)calls,
          (long long)lens[0], (long long)lens[1]);
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&z));

    /* Predefined operations cannot be freed; invalid handles. */
    MPI_Op p = MPI_SUM;
    MPI_FAILS(MPI_Op_free(&p), MPI_ERR_OP);
    CHECK(p == MPI_SUM, "failed free keeps the handle");
    MPI_FAILS(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG);
    MPI_FAILS(MPI_Reduce_local(a, b, 5, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    MPI_OK(MPI_Op_commutative(MPI_MAX, &commute));
    CHECK(commute == 1, "predefined ops are commutative");
}

/* OSU's osu_allreduce reduces MPI_CHAR: signed, so MIN of negative values
 * is the most negative. */
static void test_char_collective(bool strict)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char in[3] = {(char)-(t_rank + 1), (char)(t_rank + 1), (char)(1 << (t_rank % 7))};
    char out[3] = {0, 0, 0};
    if (strict) {
        MPI_FAILS(MPI_Allreduce(in, out, 1, MPI_CHAR, MPI_MIN, MPI_COMM_WORLD), MPI_ERR_OP);
        return;
    }
    MPI_OK(MPI_Allreduce(in, out, 1, MPI_CHAR, MPI_MIN, MPI_COMM_WORLD));
    CHECK(out[0] == -size, "MPI_CHAR MIN = %d, expected %d", out[0], -size);
    MPI_OK(MPI_Allreduce(in + 1, out + 1, 1, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD));
    CHECK(out[1] == size * (size + 1) / 2, "MPI_CHAR SUM = %d", out[1]);
    MPI_OK(MPI_Allreduce(in + 2, out + 2, 1, MPI_CHAR, MPI_BOR, MPI_COMM_WORLD));
    int want = 0;
    for (int r = 0; r < size; r++)
        want |= 1 << (r % 7);
    CHECK(out[2] == want, "MPI_CHAR BOR = %d, expected %d", out[2], want);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    const char *strict = getenv("RAIL_MPI_REDUCE_CHAR_STRICT");
    bool char_strict = strict && strcmp(strict, "1") == 0;
    if (char_strict)
        types[0].cls = NOCLASS;
    test_char_collective(char_strict);
    test_predefined();
    test_derived();
    test_user();
    return check_mpi_finalize("dtype_reduce");
}
