/*
 * Helpers for the collective tests (test/coll).
 *
 * Environment (set per variant in test/tests.conf):
 *   RAIL_COLL=...        the library's component list: run the same checks
 *                        against basic, nbc (everything through schedules),
 *                        or any later component, one at a time;
 *   COLLTEST_DEVICE=1    user buffers in device memory: the fake device
 *                        (needs RAIL_ACCEL=host,fake) or, with
 *                        TEST_DEVMEM=cuda, a GPU (test/devmem.h); every
 *                        buffer the library sees faults on a host access;
 *                        skipped (77) where there is no such device;
 *   COLLTEST_QUICK=1     fewer counts (for slow variants).
 *
 * Each operation runs in three forms (t_mode): blocking, nonblocking +
 * MPI_Wait, and persistent (*_init, then started three times with fresh
 * input each time, then freed).
 */
#ifndef TEST_COLL_COLL_TEST_H
#define TEST_COLL_COLL_TEST_H

#define CHECK_MPI 1
#include "test/check.h"

#include <mpi.h>
#include <mpi-ext.h>
#include "test/devmem.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int t_rank, t_size;
static int t_device;   /* buffers in device memory (test/devmem.h) */
static int t_quick;

/* Seconds on the node's monotonic clock: comparable between the processes
 * of a node (MPI_Wtime counts from each process's start). */
static inline double t_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline void t_init(int *argc, char ***argv)
{
    MPI_OK(MPI_Init(argc, argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
    const char *d = getenv("COLLTEST_DEVICE");
    t_device = d && atoi(d) != 0;
    if (d != NULL && atoi(d) != 0) {
        /* device buffers asked for: skip (77) where there is no such device */
        void *p = NULL;
        int ok = devmem_malloc(64, &p) == MPI_SUCCESS, all = 0;
        MPI_OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        if (!all)
            check_mpi_skip("device buffers: %s", devmem_why());
        devmem_free(p);
    }
    const char *q = getenv("COLLTEST_QUICK");
    t_quick = q && atoi(q) != 0;
}

/* ------------------------------------------------------------ forms */

enum { MODE_BLOCKING, MODE_NONBLOCKING, MODE_PERSISTENT, MODE_COUNT };
static int t_mode __attribute__((unused));
static const char *const t_mode_names[] __attribute__((unused)) = {
    "blocking", "nonblocking", "persistent",
};

/*
 * One collective call in the current form.  setup: fills the inputs
 * (it_: iteration, new data each time); B, N, P: the blocking call, the
 * nonblocking one and the *_init one (both with &req_); check: verifies the
 * outputs.  Persistent requests are started three times.
 */
#define COLL_CASE(setup, B, N, P, check)                                                           \
    do {                                                                                           \
        MPI_Request req_ = MPI_REQUEST_NULL;                                                       \
        int iters_ = t_mode == MODE_PERSISTENT ? 3 : 1;                                            \
        for (int it_ = 0; it_ < iters_; it_++) {                                                   \
            setup;                                                                                 \
            if (t_mode == MODE_BLOCKING) {                                                         \
                MPI_OK(B);                                                                         \
            } else if (t_mode == MODE_NONBLOCKING) {                                               \
                MPI_OK(N);                                                                         \
                MPI_OK(MPI_Wait(&req_, MPI_STATUS_IGNORE));                                        \
                CHECK(req_ == MPI_REQUEST_NULL, "request not freed by MPI_Wait");                  \
            } else {                                                                               \
                if (it_ == 0)                                                                      \
                    MPI_OK(P);                                                                     \
                MPI_OK(MPI_Start(&req_));                                                          \
                MPI_OK(MPI_Wait(&req_, MPI_STATUS_IGNORE));                                        \
                CHECK(req_ != MPI_REQUEST_NULL, "persistent request freed by MPI_Wait");           \
            }                                                                                      \
            check;                                                                                 \
        }                                                                                          \
        if (t_mode == MODE_PERSISTENT)                                                             \
            MPI_OK(MPI_Request_free(&req_));                                                       \
    } while (0)

/* ------------------------------------------------------------ buffers */

/* A buffer the library sees (host or device memory) and its host view. */
typedef struct tbuf {
    char *h;        /* host copy: filled and checked by the test */
    char *d;        /* what the library gets (== h on the host) */
    size_t len;
} tbuf_t;

/*
 * Device buffers freed by tb_free are kept, up to TB_POOL of them, and a
 * later tb_alloc of exactly the same length takes one back (still exact, so
 * the device's bounds check sees any overrun by the library), except every
 * TB_FRESH-th allocation, which is always new (a fresh allocation, often at a
 * recycled address, with a new identity for the library's caches).  A
 * device allocation and free cost system calls and a TLB shootdown each,
 * and the tests make one or two per case: on a VM where an interprocessor
 * interrupt is slow, sm_ops' fake-device variant took 106 s at 8 ranks (20 s
 * with the buffers kept).
 * COLLTEST_DEVICE_FRESH=1: every allocation new.  Single-threaded use only.
 */
#define TB_POOL 32
#define TB_FRESH 32

static struct {
    void *d[TB_POOL];
    size_t len[TB_POOL];
    int n;
    unsigned long allocs;
    int fresh;      /* -1 unknown, 0 reuse, 1 always new */
} tb_pool = { .fresh = -1 };

static inline void *tb_pool_take(size_t len)
{
    if (tb_pool.fresh < 0) {
        const char *f = getenv("COLLTEST_DEVICE_FRESH");
        tb_pool.fresh = f != NULL && atoi(f) != 0;
    }
    if (tb_pool.fresh || ++tb_pool.allocs % TB_FRESH == 0)
        return NULL;
    for (int i = tb_pool.n - 1; i >= 0; i--) {
        if (tb_pool.len[i] == len) {
            void *d = tb_pool.d[i];
            tb_pool.n--;
            tb_pool.d[i] = tb_pool.d[tb_pool.n];
            tb_pool.len[i] = tb_pool.len[tb_pool.n];
            return d;
        }
    }
    return NULL;
}

static inline void tb_pool_give(void *d, size_t len)
{
    if (tb_pool.fresh == 1) {
        devmem_free(d);
        return;
    }
    if (tb_pool.n == TB_POOL) {     /* full: the oldest goes */
        devmem_free(tb_pool.d[0]);
        memmove(&tb_pool.d[0], &tb_pool.d[1], sizeof(void *) * (TB_POOL - 1));
        memmove(&tb_pool.len[0], &tb_pool.len[1], sizeof(size_t) * (TB_POOL - 1));
        tb_pool.n--;
    }
    tb_pool.d[tb_pool.n] = d;
    tb_pool.len[tb_pool.n++] = len;
}

/* Frees the kept device buffers (before MPI_Finalize). */
static inline void tb_pool_drain(void)
{
    while (tb_pool.n > 0)
        devmem_free(tb_pool.d[--tb_pool.n]);
}

static inline void tb_alloc(tbuf_t *b, size_t len)
{
    b->len = len;
    b->h = malloc(len ? len : 1);
    CHECK(b->h, "out of memory (%zu bytes)", len);
    memset(b->h, 0, len);
    if (t_device) {
        size_t dlen = len ? len : 1;
        void *d = tb_pool_take(dlen);
        if (d == NULL)
            MPI_OK(devmem_malloc(dlen, &d));
        b->d = d;
        MPI_OK(devmem_memcpy(b->d, b->h, len));
    } else {
        b->d = b->h;
    }
}

static inline void tb_free(tbuf_t *b)
{
    if (t_device)
        tb_pool_give(b->d, b->len ? b->len : 1);
    free(b->h);
    b->h = b->d = NULL;
}

/* host -> library view, and back */
static inline void tb_push(tbuf_t *b)
{
    if (t_device && b->len)
        MPI_OK(devmem_memcpy(b->d, b->h, b->len));
}

static inline void tb_pull(tbuf_t *b)
{
    if (t_device && b->len)
        MPI_OK(devmem_memcpy(b->h, b->d, b->len));
}

/* ------------------------------------------------------------ element types */

enum { T_INT, T_DBL, T_VEC, T_DINT, T_2INT, T_MAT, T_NTYPES };

/* T_VEC: MPI_Type_vector(2, 1, 3, MPI_INT): ints at 0 and 12, holes between. */
typedef struct { int a, hole[2], b; } t_vec_t;
typedef struct { double v; int i; } t_dint_t;
typedef struct { int v, i; } t_2int_t;
typedef struct { unsigned m[4]; } t_mat_t;   /* 2x2, row major */

#define T_HOLE 0x5a5a5a5a

typedef struct tdt {
    int kind;
    const char *name;
    MPI_Datatype dt;
    size_t ext;       /* bytes per element in a buffer */
} tdt_t;

static tdt_t t_types[T_NTYPES];
static MPI_Op t_op_matmul, t_op_matmul_c;

/* inout = in x inout, element-wise over 2x2 matrices (mod 2^32). */
static void mat_mul(const t_mat_t *a, t_mat_t *b)
{
    t_mat_t r;
    r.m[0] = a->m[0] * b->m[0] + a->m[1] * b->m[2];
    r.m[1] = a->m[0] * b->m[1] + a->m[1] * b->m[3];
    r.m[2] = a->m[2] * b->m[0] + a->m[3] * b->m[2];
    r.m[3] = a->m[2] * b->m[1] + a->m[3] * b->m[3];
    *b = r;
}

static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        mat_mul((const t_mat_t *)in + i, (t_mat_t *)inout + i);
}

static void matmul_fn_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    for (MPI_Count i = 0; i < *len; i++)
        mat_mul((const t_mat_t *)in + i, (t_mat_t *)inout + i);
}

static inline void t_types_init(void)
{
    MPI_Datatype vec, mat;
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
    MPI_OK(MPI_Type_commit(&mat));
    t_types[T_INT] = (tdt_t){ T_INT, "int", MPI_INT, sizeof(int) };
    t_types[T_DBL] = (tdt_t){ T_DBL, "double", MPI_DOUBLE, sizeof(double) };
    t_types[T_VEC] = (tdt_t){ T_VEC, "vector", vec, sizeof(t_vec_t) };
    t_types[T_DINT] = (tdt_t){ T_DINT, "double_int", MPI_DOUBLE_INT, sizeof(t_dint_t) };
    t_types[T_2INT] = (tdt_t){ T_2INT, "2int", MPI_2INT, sizeof(t_2int_t) };
    t_types[T_MAT] = (tdt_t){ T_MAT, "matrix", mat, sizeof(t_mat_t) };
    MPI_OK(MPI_Op_create(matmul_fn, 0, &t_op_matmul));
    MPI_OK(MPI_Op_create_c(matmul_fn_c, 0, &t_op_matmul_c));
}

static inline void t_types_fini(void)
{
    tb_pool_drain();
    MPI_OK(MPI_Type_free(&t_types[T_VEC].dt));
    MPI_OK(MPI_Type_free(&t_types[T_MAT].dt));
    MPI_OK(MPI_Op_free(&t_op_matmul));
    MPI_OK(MPI_Op_free(&t_op_matmul_c));
}

/* Deterministic value of element i contributed by rank r in iteration it. */
static inline int gen_int(int r, long i, int it)
{
    return (int)(((long)r * 7919 + i * 31 + (long)it * 17) % 100000) - 50000;
}

static inline void gen_elem(const tdt_t *t, void *p, int r, long i, int it)
{
    switch (t->kind) {
    case T_INT:
        *(int *)p = gen_int(r, i, it);
        break;
    case T_DBL:
        *(double *)p = gen_int(r, i, it) + 0.5;
        break;
    case T_VEC: {
        t_vec_t *v = p;
        v->a = gen_int(r, 2 * i, it);
        v->b = gen_int(r, 2 * i + 1, it);
        v->hole[0] = v->hole[1] = T_HOLE;
        break;
    }
    case T_DINT: {
        t_dint_t *v = p;
        memset(v, 0, sizeof(*v));
        v->v = (double)((r * 13 + i * 7 + it) % 5);   /* ties between ranks */
        v->i = r;
        break;
    }
    case T_2INT: {
        t_2int_t *v = p;
        v->v = (int)((r * 5 + i * 3 + it) % 4);
        v->i = r;
        break;
    }
    case T_MAT: {
        t_mat_t *v = p;
        for (int k = 0; k < 4; k++)
            v->m[k] = (unsigned)gen_int(r, 4 * i + k, it) * 2654435761u + (unsigned)k;
        break;
    }
    }
}

/* Fill n elements of rank r's data. */
static inline void gen_fill(const tdt_t *t, void *buf, long n, int r, int it)
{
    for (long i = 0; i < n; i++)
        gen_elem(t, (char *)buf + i * t->ext, r, i, it);
}

/* Prepare a receive buffer: holes and untouched parts get a pattern. */
static inline void t_poison(void *buf, size_t len)
{
    unsigned *p = buf;
    for (size_t i = 0; i < len / sizeof(unsigned); i++)
        p[i] = T_HOLE;
}

/* acc = acc op x (acc: the left operand, as in a rank-ordered fold). */
static inline void ref_op(const tdt_t *t, MPI_Op op, void *acc, const void *x)
{
    switch (t->kind) {
    case T_INT: {
        int *a = acc;
        int b = *(const int *)x;
        *a = op == MPI_SUM ? *a + b : (op == MPI_MAX ? (*a > b ? *a : b) : (*a < b ? *a : b));
        break;
    }
    case T_DBL: {
        double *a = acc, b = *(const double *)x;
        *a = op == MPI_SUM ? *a + b : (op == MPI_MAX ? (*a > b ? *a : b) : (*a < b ? *a : b));
        break;
    }
    case T_VEC: {
        t_vec_t *a = acc;
        const t_vec_t *b = x;
        if (op == MPI_SUM) {
            a->a += b->a;
            a->b += b->b;
        } else {
            a->a = a->a > b->a ? a->a : b->a;
            a->b = a->b > b->b ? a->b : b->b;
        }
        break;
    }
    case T_DINT: {
        t_dint_t *a = acc;
        const t_dint_t *b = x;
        int better = op == MPI_MAXLOC ? b->v > a->v : b->v < a->v;
        if (better || (b->v == a->v && b->i < a->i))
            *a = *b;
        break;
    }
    case T_2INT: {
        t_2int_t *a = acc;
        const t_2int_t *b = x;
        int better = op == MPI_MAXLOC ? b->v > a->v : b->v < a->v;
        if (better || (b->v == a->v && b->i < a->i))
            *a = *b;
        break;
    }
    case T_MAT: {
        t_mat_t m = *(const t_mat_t *)x;
        t_mat_t *a = acc;
        t_mat_t r = *a;
        mat_mul(&r, &m);   /* m = a x m */
        *a = m;
        break;
    }
    }
}

/* Expected element i of the rank-ordered reduction over ranks lo..hi. */
static inline void ref_reduce(const tdt_t *t, MPI_Op op, void *out, long i, int lo, int hi, int it)
{
    char x[64];
    gen_elem(t, out, lo, i, it);
    for (int r = lo + 1; r <= hi; r++) {
        gen_elem(t, x, r, i, it);
        ref_op(t, op, out, x);
    }
}

/* Compare the data of one element (holes: must still hold T_HOLE when
 * `holes` is set). */
static inline int elem_equal(const tdt_t *t, const void *got, const void *want, int holes)
{
    switch (t->kind) {
    case T_INT:
        return *(const int *)got == *(const int *)want;
    case T_DBL:
        return *(const double *)got == *(const double *)want;
    case T_VEC: {
        const t_vec_t *g = got, *w = want;
        return g->a == w->a && g->b == w->b &&
               (!holes || (g->hole[0] == T_HOLE && g->hole[1] == T_HOLE));
    }
    case T_DINT: {
        const t_dint_t *g = got, *w = want;
        return g->v == w->v && g->i == w->i;
    }
    case T_2INT: {
        const t_2int_t *g = got, *w = want;
        return g->v == w->v && g->i == w->i;
    }
    case T_MAT:
        return memcmp(got, want, sizeof(t_mat_t)) == 0;
    }
    return 0;
}

static inline void elem_print(const tdt_t *t, const void *p, char *s, size_t n)
{
    switch (t->kind) {
    case T_INT:
        snprintf(s, n, "%d", *(const int *)p);
        break;
    case T_DBL:
        snprintf(s, n, "%g", *(const double *)p);
        break;
    case T_VEC: {
        const t_vec_t *v = p;
        snprintf(s, n, "{%d, [%#x %#x], %d}", v->a, v->hole[0], v->hole[1], v->b);
        break;
    }
    case T_DINT: {
        const t_dint_t *v = p;
        snprintf(s, n, "{%g, %d}", v->v, v->i);
        break;
    }
    case T_2INT: {
        const t_2int_t *v = p;
        snprintf(s, n, "{%d, %d}", v->v, v->i);
        break;
    }
    case T_MAT: {
        const t_mat_t *v = p;
        snprintf(s, n, "[%u %u; %u %u]", v->m[0], v->m[1], v->m[2], v->m[3]);
        break;
    }
    }
}

static char t_current[256] __attribute__((unused));   /* what is being tested, for messages */

#define CHECK_ELEM(t, got, want, holes, idx)                                                       \
    do {                                                                                           \
        if (!elem_equal((t), (got), (want), (holes))) {                                            \
            char g_[128], w_[128];                                                                 \
            elem_print((t), (got), g_, sizeof(g_));                                                \
            elem_print((t), (want), w_, sizeof(w_));                                               \
            CHECK(0, "%s [%s, %s]: element %ld: got %s, expected %s", t_current,                   \
                  t_mode_names[t_mode], (t)->name, (long)(idx), g_, w_);                           \
        }                                                                                          \
    } while (0)

#endif
