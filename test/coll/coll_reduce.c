/*
 * Reductions on MPI_COMM_WORLD: Reduce, Allreduce, Reduce_scatter,
 * Reduce_scatter_block, Scan, Exscan, each blocking, nonblocking and
 * persistent, against a rank-ordered reference computed here:
 *   int and double with SUM and MAX, a derived vector of ints with SUM
 *   (holes untouched), MPI_DOUBLE_INT with MINLOC / MAXLOC and MPI_2INT
 *   with MAXLOC (ties: smaller index), and a NON-COMMUTATIVE user operation
 *   (2x2 matrix product, from MPI_Op_create and MPI_Op_create_c) whose
 *   result shows the order of the operands;
 *   counts 0, 1, 1009 and ~1 MiB; roots 0 and n-1; MPI_IN_PLACE.
 */
#include "coll_test.h"

typedef struct tcase {
    int kind;
    MPI_Op *op;
    const char *opname;
} tcase_t;

static MPI_Op op_sum = MPI_SUM, op_max = MPI_MAX, op_minloc = MPI_MINLOC, op_maxloc = MPI_MAXLOC;

static const tcase_t cases[] = {
    { T_INT, &op_sum, "SUM" },         { T_INT, &op_max, "MAX" },
    { T_DBL, &op_sum, "SUM" },         { T_DBL, &op_max, "MAX" },
    { T_VEC, &op_sum, "SUM" },         { T_DINT, &op_minloc, "MINLOC" },
    { T_DINT, &op_maxloc, "MAXLOC" },  { T_2INT, &op_maxloc, "MAXLOC" },
    { T_MAT, &t_op_matmul, "matmul" }, { T_MAT, &t_op_matmul_c, "matmul_c" },
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

/* The reference works with the predefined ops by value; user ops by kind. */
static MPI_Op ref_of(const tcase_t *tc)
{
    return *tc->op == t_op_matmul_c ? t_op_matmul : *tc->op;
}

/* n elements of buf: element first+i of the reduction over ranks lo..hi. */
static void expect_red(const tcase_t *tc, const char *buf, long n, long first, int lo, int hi,
                       int it, int holes)
{
    const tdt_t *t = &t_types[tc->kind];
    char want[64];
    for (long i = 0; i < n; i++) {
        ref_reduce(t, ref_of(tc), want, first + i, lo, hi, it);
        CHECK_ELEM(t, buf + i * t->ext, want, holes, first + i);
    }
}

/* Elements [from, to) of buf must still be poison. */
static void expect_poison(const char *buf, size_t from, size_t to)
{
    for (size_t i = from / sizeof(unsigned); i < to / sizeof(unsigned); i++)
        CHECK(((const unsigned *)buf)[i] == T_HOLE, "%s [%s]: byte %zu beyond the result changed",
              t_current, t_mode_names[t_mode], i * sizeof(unsigned));
}

static void fill_input(const tcase_t *tc, tbuf_t *sb, tbuf_t *rb, long n, int inplace, int it)
{
    const tdt_t *t = &t_types[tc->kind];
    t_poison(rb->h, rb->len);
    if (inplace) {
        gen_fill(t, rb->h, n, t_rank, it);
    } else {
        gen_fill(t, sb->h, n, t_rank, it);
        tb_push(sb);
    }
    tb_push(rb);
}

/* ------------------------------------------------------------ reduce, allreduce */

static void test_reduce(const tcase_t *tc, long c, int root, int inplace)
{
    const tdt_t *t = &t_types[tc->kind];
    int is_root = t_rank == root, ip = inplace && is_root;
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)c * t->ext);
    tb_alloc(&rb, (size_t)c * t->ext);
    snprintf(t_current, sizeof(t_current), "reduce %s count %ld root %d%s", tc->opname, c, root,
             inplace ? " in place" : "");
    const void *sp = ip ? MPI_IN_PLACE : sb.d;
    COLL_CASE(fill_input(tc, &sb, &rb, c, ip, it_),
              MPI_Reduce(sp, rb.d, (int)c, t->dt, *tc->op, root, MPI_COMM_WORLD),
              MPI_Ireduce(sp, rb.d, (int)c, t->dt, *tc->op, root, MPI_COMM_WORLD, &req_),
              MPI_Reduce_init(sp, rb.d, (int)c, t->dt, *tc->op, root, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &req_),
              {
                  if (is_root) {
                      tb_pull(&rb);
                      expect_red(tc, rb.h, c, 0, 0, t_size - 1, it_, 1);
                  }
              });
    tb_free(&sb);
    tb_free(&rb);
}

static void test_allreduce(const tcase_t *tc, long c, int inplace)
{
    const tdt_t *t = &t_types[tc->kind];
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)c * t->ext);
    tb_alloc(&rb, (size_t)c * t->ext);
    snprintf(t_current, sizeof(t_current), "allreduce %s count %ld%s", tc->opname, c,
             inplace ? " in place" : "");
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    COLL_CASE(fill_input(tc, &sb, &rb, c, inplace, it_),
              MPI_Allreduce(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD),
              MPI_Iallreduce(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD, &req_),
              MPI_Allreduce_init(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &req_),
              {
                  tb_pull(&rb);
                  expect_red(tc, rb.h, c, 0, 0, t_size - 1, it_, 1);
              });
    tb_free(&sb);
    tb_free(&rb);
}

/* ------------------------------------------------------------ reduce_scatter */

static long rs_count(long c, int i)
{
    return c ? c + (i * 5) % 3 : 0;
}

static void test_reduce_scatter(const tcase_t *tc, long c, int inplace)
{
    const tdt_t *t = &t_types[tc->kind];
    int n = t_size;
    int *counts = malloc(sizeof(int) * (size_t)n);
    long total = 0, off = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = (int)rs_count(c, i);
        if (i == t_rank)
            off = total;
        total += counts[i];
    }
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)total * t->ext);
    tb_alloc(&rb, (size_t)(inplace ? total : counts[t_rank] + 1) * t->ext);
    snprintf(t_current, sizeof(t_current), "reduce_scatter %s count %ld%s", tc->opname, c,
             inplace ? " in place" : "");
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    COLL_CASE(fill_input(tc, &sb, &rb, total, inplace, it_),
              MPI_Reduce_scatter(sp, rb.d, counts, t->dt, *tc->op, MPI_COMM_WORLD),
              MPI_Ireduce_scatter(sp, rb.d, counts, t->dt, *tc->op, MPI_COMM_WORLD, &req_),
              MPI_Reduce_scatter_init(sp, rb.d, counts, t->dt, *tc->op, MPI_COMM_WORLD,
                                      MPI_INFO_NULL, &req_),
              {
                  tb_pull(&rb);
                  expect_red(tc, rb.h, counts[t_rank], off, 0, n - 1, it_, 1);
                  if (!inplace)
                      expect_poison(rb.h, (size_t)counts[t_rank] * t->ext, rb.len);
              });
    tb_free(&sb);
    tb_free(&rb);
    free(counts);
}

static void test_reduce_scatter_block(const tcase_t *tc, long c, int inplace)
{
    const tdt_t *t = &t_types[tc->kind];
    long total = c * t_size;
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)total * t->ext);
    tb_alloc(&rb, (size_t)(inplace ? total : c + 1) * t->ext);
    snprintf(t_current, sizeof(t_current), "reduce_scatter_block %s count %ld%s", tc->opname, c,
             inplace ? " in place" : "");
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    COLL_CASE(fill_input(tc, &sb, &rb, total, inplace, it_),
              MPI_Reduce_scatter_block(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD),
              MPI_Ireduce_scatter_block(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD, &req_),
              MPI_Reduce_scatter_block_init(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD,
                                            MPI_INFO_NULL, &req_),
              {
                  tb_pull(&rb);
                  expect_red(tc, rb.h, c, c * t_rank, 0, t_size - 1, it_, 1);
                  if (!inplace)
                      expect_poison(rb.h, (size_t)c * t->ext, rb.len);
              });
    tb_free(&sb);
    tb_free(&rb);
}

/* ------------------------------------------------------------ scan, exscan */

static void test_scan(const tcase_t *tc, long c, int inplace, int exclusive)
{
    const tdt_t *t = &t_types[tc->kind];
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)c * t->ext);
    tb_alloc(&rb, (size_t)c * t->ext);
    snprintf(t_current, sizeof(t_current), "%s %s count %ld%s", exclusive ? "exscan" : "scan",
             tc->opname, c, inplace ? " in place" : "");
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    if (exclusive) {
        COLL_CASE(fill_input(tc, &sb, &rb, c, inplace, it_),
                  MPI_Exscan(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD),
                  MPI_Iexscan(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD, &req_),
                  MPI_Exscan_init(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD, MPI_INFO_NULL,
                                  &req_),
                  {
                      tb_pull(&rb);
                      if (t_rank > 0)   /* rank 0's buffer is undefined */
                          expect_red(tc, rb.h, c, 0, 0, t_rank - 1, it_, 1);
                  });
    } else {
        COLL_CASE(fill_input(tc, &sb, &rb, c, inplace, it_),
                  MPI_Scan(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD),
                  MPI_Iscan(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD, &req_),
                  MPI_Scan_init(sp, rb.d, (int)c, t->dt, *tc->op, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &req_),
                  {
                      tb_pull(&rb);
                      expect_red(tc, rb.h, c, 0, 0, t_rank, it_, 1);
                  });
    }
    tb_free(&sb);
    tb_free(&rb);
}

/* ------------------------------------------------------------ driver */

/* The largest count (1 MiB of data per process) only for int SUM, the
 * vector SUM and the matrix product, so the run stays short. */
static int large_case(const tcase_t *tc)
{
    return (tc->kind == T_INT && *tc->op == MPI_SUM) || tc->kind == T_MAT ||
           (tc->kind == T_VEC && !t_quick);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    t_types_init();
    int roots[] = { 0, t_size - 1 };
    int nroots = t_size > 1 ? 2 : 1;
    for (t_mode = 0; t_mode < MODE_COUNT; t_mode++) {
        for (int k = 0; k < NCASES; k++) {
            const tcase_t *tc = &cases[k];
            long counts[] = { 0, 1, 1009, (1L << 20) / (long)t_types[tc->kind].ext };
            int nc = large_case(tc) && t_mode != MODE_PERSISTENT ? 4 : 3;
            for (int ci = 0; ci < nc; ci++) {
                long c = counts[ci];
                for (int ip = 0; ip < 2; ip++) {
                    for (int ri = 0; ri < nroots; ri++)
                        test_reduce(tc, c, roots[ri], ip);
                    test_allreduce(tc, c, ip);
                    test_reduce_scatter(tc, ci == 3 ? c / t_size : c, ip);
                    test_reduce_scatter_block(tc, ci == 3 ? c / t_size : c, ip);
                    test_scan(tc, c, ip, 0);
                    test_scan(tc, c, ip, 1);
                }
            }
        }
        if (t_rank == 0)
            printf("coll_reduce: %s forms passed at np %d%s\n", t_mode_names[t_mode], t_size,
                   t_device ? " (device buffers)" : "");
    }
    t_types_fini();
    MPI_OK(MPI_Finalize());
    return 0;
}
