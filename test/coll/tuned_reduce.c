/*
 * The tuned component's reduction algorithms on MPI_COMM_WORLD: Reduce,
 * Allreduce, Reduce_scatter, Reduce_scatter_block (blocking: tuned serves
 * only those), each algorithm forced by a test/tests.conf variant
 * (tuned_test.h), against a rank-ordered reference computed here:
 *   int and double SUM, int MAX, a derived vector of ints SUM (holes
 *   untouched), MPI_DOUBLE_INT MINLOC / MPI_2INT MAXLOC (ties: smaller
 *   index), and a NON-COMMUTATIVE user operation (2x2 matrix product, from
 *   MPI_Op_create and MPI_Op_create_c) whose result shows the operand order
 *   (commutative-only algorithms must fall back for it);
 *   counts 0, 1, 7 (fewer than the processes), 1009 (prime) and ~1 MiB;
 *   irregular reduce_scatter counts, zeros included; roots 0, n-1, n/2;
 *   MPI_IN_PLACE; COLLTEST_DEVICE=1: every buffer in fake device memory.
 */
#include "tuned_test.h"

typedef struct tcase {
    int kind;
    MPI_Op *op;
    const char *opname;
    int large;   /* also run at ~1 MiB */
} tcase_t;

static MPI_Op op_sum = MPI_SUM, op_max = MPI_MAX, op_minloc = MPI_MINLOC, op_maxloc = MPI_MAXLOC;

static const tcase_t cases[] = {
    { T_INT, &op_sum, "SUM", 1 },     { T_INT, &op_max, "MAX", 0 },
    { T_DBL, &op_sum, "SUM", 0 },     { T_VEC, &op_sum, "SUM", 0 },
    { T_DINT, &op_minloc, "MINLOC", 0 }, { T_2INT, &op_maxloc, "MAXLOC", 0 },
    { T_MAT, &t_op_matmul, "matmul", 1 }, { T_MAT, &t_op_matmul_c, "matmul_c", 0 },
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static MPI_Op ref_of(const tcase_t *tc)
{
    return *tc->op == t_op_matmul_c ? t_op_matmul : *tc->op;
}

/* n elements of buf: elements first.. of the reduction over all ranks. */
static void expect_red(const tcase_t *tc, const char *buf, long n, long first, int it)
{
    const tdt_t *t = &t_types[tc->kind];
    char want[64];
    for (long i = 0; i < n; i++) {
        ref_reduce(t, ref_of(tc), want, first + i, 0, t_size - 1, it);
        CHECK_ELEM(t, buf + i * t->ext, want, 1, first + i);
    }
}

static void expect_poison(const char *buf, size_t from, size_t to)
{
    for (size_t i = from / sizeof(unsigned); i < to / sizeof(unsigned); i++)
        CHECK(((const unsigned *)buf)[i] == T_HOLE, "%s: byte %zu beyond the result changed",
              t_current, i * sizeof(unsigned));
}

/* Inputs of iteration it: n elements in sb, or in rb when in place. */
static void fill_input(const tcase_t *tc, tbuf_t *sb, tbuf_t *rb, long n, int inplace, int it)
{
    const tdt_t *t = &t_types[tc->kind];
    t_poison(rb->h, rb->len);
    gen_fill(t, inplace ? rb->h : sb->h, n, t_rank, it);
    tb_push(sb);
    tb_push(rb);
}

static void test_reduce(const tcase_t *tc, long c, int root, int inplace)
{
    const tdt_t *t = &t_types[tc->kind];
    int is_root = t_rank == root, ip = inplace && is_root;
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)c * t->ext);
    tb_alloc(&rb, is_root ? (size_t)c * t->ext : 0);
    snprintf(t_current, sizeof(t_current), "reduce %s %s count %ld root %d%s", t->name,
             tc->opname, c, root, inplace ? " in place" : "");
    for (int it = 0; it < 2; it++) {
        fill_input(tc, &sb, &rb, c, ip, it);
        MPI_OK(MPI_Reduce(ip ? MPI_IN_PLACE : sb.d, is_root ? rb.d : NULL, (int)c, t->dt,
                          *tc->op, root, MPI_COMM_WORLD));
        if (is_root) {
            tb_pull(&rb);
            expect_red(tc, rb.h, c, 0, it);
        }
    }
    tb_free(&sb);
    tb_free(&rb);
}

static void test_allreduce(const tcase_t *tc, long c, int inplace)
{
    const tdt_t *t = &t_types[tc->kind];
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)c * t->ext);
    tb_alloc(&rb, (size_t)c * t->ext);
    snprintf(t_current, sizeof(t_current), "allreduce %s %s count %ld%s", t->name, tc->opname, c,
             inplace ? " in place" : "");
    for (int it = 0; it < 2; it++) {
        fill_input(tc, &sb, &rb, c, inplace, it);
        MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : sb.d, rb.d, (int)c, t->dt, *tc->op,
                             MPI_COMM_WORLD));
        tb_pull(&rb);
        expect_red(tc, rb.h, c, 0, it);
    }
    tb_free(&sb);
    tb_free(&rb);
}

/* Irregular counts; with c 0 only odd ranks get an element. */
static long rs_count(long c, int i)
{
    return c ? c + (i * 5) % 3 : i % 2;
}

/* counts NULL: reduce_scatter_block with c each. */
static void test_reduce_scatter(const tcase_t *tc, long c, int block, int inplace)
{
    const tdt_t *t = &t_types[tc->kind];
    int n = t_size;
    int *counts = malloc(sizeof(int) * (size_t)n);
    long total = 0, off = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = (int)(block ? c : rs_count(c, i));
        if (i == t_rank)
            off = total;
        total += counts[i];
    }
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)total * t->ext);
    tb_alloc(&rb, (size_t)(inplace ? total : counts[t_rank] + 1) * t->ext);
    snprintf(t_current, sizeof(t_current), "reduce_scatter%s %s %s count %ld%s",
             block ? "_block" : "", t->name, tc->opname, c, inplace ? " in place" : "");
    for (int it = 0; it < 2; it++) {
        fill_input(tc, &sb, &rb, total, inplace, it);
        const void *sp = inplace ? MPI_IN_PLACE : sb.d;
        if (block)
            MPI_OK(MPI_Reduce_scatter_block(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD));
        else
            MPI_OK(MPI_Reduce_scatter(sp, rb.d, counts, t->dt, *tc->op, MPI_COMM_WORLD));
        tb_pull(&rb);
        expect_red(tc, rb.h, counts[t_rank], off, it);
        if (!inplace)
            expect_poison(rb.h, (size_t)counts[t_rank] * t->ext, rb.len);
    }
    tb_free(&sb);
    tb_free(&rb);
    free(counts);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    t_types_init();
    t_mode = MODE_BLOCKING;
    t_banner("tuned_reduce");
    int roots[3], nroots = t_roots(roots);
    for (int k = 0; k < NCASES; k++) {
        const tcase_t *tc = &cases[k];
        long counts[] = { 0, 1, 7, 1009, (1L << 20) / (long)t_types[tc->kind].ext };
        int nc = tc->large ? 5 : 4;
        for (int ci = 0; ci < nc; ci++) {
            long c = counts[ci];
            for (int ip = 0; ip < 2; ip++) {
                for (int ri = 0; ri < nroots && t_checks("reduce"); ri++)
                    if (ci < 4 || ri == 0)
                        test_reduce(tc, c, roots[ri], ip);
                if (t_checks("allreduce"))
                    test_allreduce(tc, c, ip);
                if (t_checks("reduce_scatter"))
                    test_reduce_scatter(tc, ci == 4 ? c / t_size : c, 0, ip);
                if (t_checks("reduce_scatter_block"))
                    test_reduce_scatter(tc, ci == 4 ? c / t_size : c, 1, ip);
            }
        }
    }
    if (t_rank == 0)
        printf("tuned_reduce: passed at np %d\n", t_size);
    t_types_fini();
    MPI_OK(MPI_Finalize());
    return 0;
}
