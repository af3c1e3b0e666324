/*
 * Collectives on an intercommunicator (the even and the odd ranks of
 * MPI_COMM_WORLD, made with MPI_Comm_split + MPI_Intercomm_create: groups
 * of different sizes at odd process counts) and on the split
 * intracommunicators themselves; blocking, nonblocking and persistent.
 * Intercommunicator semantics: rooted operations go from the root (MPI_ROOT;
 * its group partners pass MPI_PROC_NULL) to the other group; the all-to-all
 * and all-reduce forms exchange between the groups (each group's result
 * comes from the other group's data); Scan / Exscan / MPI_IN_PLACE are not
 * allowed.  Skipped (77) at np 1 or when the library cannot make
 * intercommunicators.
 */
#include "coll_test.h"

static MPI_Comm ic, local;
static int grp, lr, ls, rs;   /* my group (0 even, 1 odd), local rank / size, remote size */

/* Identity of a process for the data it contributes. */
static int pid(int g, int r)
{
    return 100 * g + r;
}

static void fill(int *p, long n, int who, int it)
{
    for (long i = 0; i < n; i++)
        p[i] = gen_int(who, i, it);
}

static void expect(const int *p, long n, int who, int it, const char *what)
{
    for (long i = 0; i < n; i++)
        CHECK(p[i] == gen_int(who, i, it), "%s [%s] count %ld: element %ld from %d: got %d, "
              "expected %d", what, t_mode_names[t_mode], n, i, who, p[i], gen_int(who, i, it));
}

/* The root of rooted operations sits in group rg at local rank 0; the
 * arguments of the processes: root (MPI_ROOT / MPI_PROC_NULL / 0). */
static int root_arg(int rg)
{
    if (grp == rg)
        return lr == 0 ? MPI_ROOT : MPI_PROC_NULL;
    return 0;
}

/* ------------------------------------------------------------ rooted */

static void test_rooted(long c, int rg)
{
    int root = root_arg(rg), is_root = root == MPI_ROOT, sender = grp != rg;
    int *sb = calloc((size_t)((c + 2) * (rs + 1) * 2), sizeof(int));
    int *rb = calloc((size_t)((c + 2) * (rs + 1) * 2), sizeof(int));
    int *counts = calloc((size_t)rs, sizeof(int)), *displs = calloc((size_t)rs, sizeof(int));
    for (int j = 0; j < rs; j++) {
        counts[j] = (int)(c ? c + j % 2 : 0);
        displs[j] = j == 0 ? 0 : displs[j - 1] + counts[j - 1] + 1;
    }
    int n = (int)c;
    /* bcast: root -> every process of the other group */
    COLL_CASE(
        {
            if (is_root)
                fill(sb, c, pid(rg, 0), it_);
        },
        MPI_Bcast(is_root ? sb : rb, n, MPI_INT, root, ic),
        MPI_Ibcast(is_root ? sb : rb, n, MPI_INT, root, ic, &req_),
        MPI_Bcast_init(is_root ? sb : rb, n, MPI_INT, root, ic, MPI_INFO_NULL, &req_),
        {
            if (sender)
                expect(rb, c, pid(rg, 0), it_, "inter bcast");
        });
    /* gather: every process of the other group -> root */
    COLL_CASE(fill(sb, c, pid(grp, lr), it_),
              MPI_Gather(sb, n, MPI_INT, rb, n, MPI_INT, root, ic),
              MPI_Igather(sb, n, MPI_INT, rb, n, MPI_INT, root, ic, &req_),
              MPI_Gather_init(sb, n, MPI_INT, rb, n, MPI_INT, root, ic, MPI_INFO_NULL, &req_),
              {
                  for (int j = 0; is_root && j < rs; j++)
                      expect(rb + j * c, c, pid(!rg, j), it_, "inter gather");
              });
    /* gatherv */
    int mycount = (int)(c ? c + lr % 2 : 0);
    COLL_CASE(fill(sb, mycount, pid(grp, lr), it_),
              MPI_Gatherv(sb, mycount, MPI_INT, rb, counts, displs, MPI_INT, root, ic),
              MPI_Igatherv(sb, mycount, MPI_INT, rb, counts, displs, MPI_INT, root, ic, &req_),
              MPI_Gatherv_init(sb, mycount, MPI_INT, rb, counts, displs, MPI_INT, root, ic,
                               MPI_INFO_NULL, &req_),
              {
                  for (int j = 0; is_root && j < rs; j++)
                      expect(rb + displs[j], counts[j], pid(!rg, j), it_, "inter gatherv");
              });
    /* scatter: root -> block j to process j of the other group */
    COLL_CASE(
        {
            for (int j = 0; is_root && j < rs; j++)
                fill(sb + j * c, c, pid(!rg, j) + 1000, it_);
        },
        MPI_Scatter(sb, n, MPI_INT, rb, n, MPI_INT, root, ic),
        MPI_Iscatter(sb, n, MPI_INT, rb, n, MPI_INT, root, ic, &req_),
        MPI_Scatter_init(sb, n, MPI_INT, rb, n, MPI_INT, root, ic, MPI_INFO_NULL, &req_),
        {
            if (sender)
                expect(rb, c, pid(grp, lr) + 1000, it_, "inter scatter");
        });
    /* scatterv */
    COLL_CASE(
        {
            for (int j = 0; is_root && j < rs; j++)
                fill(sb + displs[j], counts[j], pid(!rg, j) + 2000, it_);
        },
        MPI_Scatterv(sb, counts, displs, MPI_INT, rb, mycount, MPI_INT, root, ic),
        MPI_Iscatterv(sb, counts, displs, MPI_INT, rb, mycount, MPI_INT, root, ic, &req_),
        MPI_Scatterv_init(sb, counts, displs, MPI_INT, rb, mycount, MPI_INT, root, ic,
                          MPI_INFO_NULL, &req_),
        {
            if (sender)
                expect(rb, mycount, pid(grp, lr) + 2000, it_, "inter scatterv");
        });
    free(sb);
    free(rb);
    free(counts);
    free(displs);
}

/* ------------------------------------------------------------ all-to-all */

static void test_alls(long c)
{
    int n = (int)c;
    int *sb = calloc((size_t)((c + 3) * (rs + 1)), sizeof(int));
    int *rb = calloc((size_t)((c + 3) * (rs + 1)), sizeof(int));
    int *rc = calloc((size_t)rs, sizeof(int)), *rd = calloc((size_t)rs, sizeof(int));
    int *sc = calloc((size_t)rs, sizeof(int)), *sd = calloc((size_t)rs, sizeof(int));
    MPI_Datatype *st = calloc((size_t)rs, sizeof(MPI_Datatype));
    int *bd = calloc((size_t)rs, sizeof(int)), *bs = calloc((size_t)rs, sizeof(int));
    /* allgather: block j from remote process j */
    COLL_CASE(fill(sb, c, pid(grp, lr), it_),
              MPI_Allgather(sb, n, MPI_INT, rb, n, MPI_INT, ic),
              MPI_Iallgather(sb, n, MPI_INT, rb, n, MPI_INT, ic, &req_),
              MPI_Allgather_init(sb, n, MPI_INT, rb, n, MPI_INT, ic, MPI_INFO_NULL, &req_),
              {
                  for (int j = 0; j < rs; j++)
                      expect(rb + j * c, c, pid(!grp, j), it_, "inter allgather");
              });
    /* allgatherv: remote process j contributes c + j % 2 */
    for (int j = 0; j < rs; j++) {
        rc[j] = (int)(c ? c + j % 2 : 0);
        rd[j] = j == 0 ? 0 : rd[j - 1] + rc[j - 1] + 1;
    }
    int mycount = (int)(c ? c + lr % 2 : 0);
    COLL_CASE(fill(sb, mycount, pid(grp, lr), it_),
              MPI_Allgatherv(sb, mycount, MPI_INT, rb, rc, rd, MPI_INT, ic),
              MPI_Iallgatherv(sb, mycount, MPI_INT, rb, rc, rd, MPI_INT, ic, &req_),
              MPI_Allgatherv_init(sb, mycount, MPI_INT, rb, rc, rd, MPI_INT, ic, MPI_INFO_NULL,
                                  &req_),
              {
                  for (int j = 0; j < rs; j++)
                      expect(rb + rd[j], rc[j], pid(!grp, j), it_, "inter allgatherv");
              });
    /* alltoall: block j to / from remote process j */
    COLL_CASE(
        {
            for (int j = 0; j < rs; j++)
                fill(sb + j * c, c, pid(grp, lr) * 1000 + pid(!grp, j), it_);
        },
        MPI_Alltoall(sb, n, MPI_INT, rb, n, MPI_INT, ic),
        MPI_Ialltoall(sb, n, MPI_INT, rb, n, MPI_INT, ic, &req_),
        MPI_Alltoall_init(sb, n, MPI_INT, rb, n, MPI_INT, ic, MPI_INFO_NULL, &req_),
        {
            for (int j = 0; j < rs; j++)
                expect(rb + j * c, c, pid(!grp, j) * 1000 + pid(grp, lr), it_,
                       "inter alltoall");
        });
    /* alltoallv / alltoallw: I send remote j (c + (lr + j) % 2) ints */
    for (int j = 0; j < rs; j++) {
        sc[j] = (int)(c ? c + (lr + j) % 2 : 0);
        sd[j] = j == 0 ? 0 : sd[j - 1] + sc[j - 1];
        rc[j] = (int)(c ? c + (j + lr) % 2 : 0);
        rd[j] = j == 0 ? 0 : rd[j - 1] + rc[j - 1] + 2;
        st[j] = MPI_INT;
        bs[j] = sd[j] * (int)sizeof(int);
        bd[j] = rd[j] * (int)sizeof(int);
    }
    COLL_CASE(
        {
            for (int j = 0; j < rs; j++)
                fill(sb + sd[j], sc[j], pid(grp, lr) * 1000 + pid(!grp, j), it_);
        },
        MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic),
        MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic, &req_),
        MPI_Alltoallv_init(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic, MPI_INFO_NULL, &req_),
        {
            for (int j = 0; j < rs; j++)
                expect(rb + rd[j], rc[j], pid(!grp, j) * 1000 + pid(grp, lr), it_,
                       "inter alltoallv");
        });
    COLL_CASE(
        {
            for (int j = 0; j < rs; j++)
                fill(sb + sd[j], sc[j], pid(grp, lr) * 1000 + pid(!grp, j), it_ + 5);
        },
        MPI_Alltoallw(sb, sc, bs, st, rb, rc, bd, st, ic),
        MPI_Ialltoallw(sb, sc, bs, st, rb, rc, bd, st, ic, &req_),
        MPI_Alltoallw_init(sb, sc, bs, st, rb, rc, bd, st, ic, MPI_INFO_NULL, &req_),
        {
            for (int j = 0; j < rs; j++)
                expect(rb + rd[j], rc[j], pid(!grp, j) * 1000 + pid(grp, lr), it_ + 5,
                       "inter alltoallw");
        });
    free(sb);
    free(rb);
    free(rc);
    free(rd);
    free(sc);
    free(sd);
    free(st);
    free(bd);
    free(bs);
}

/* ------------------------------------------------------------ reductions */

/* Sum over the processes 0..n-1 of group g of element i. */
static int gsum(int g, int n, long i, int it)
{
    int s = 0;
    for (int r = 0; r < n; r++)
        s += gen_int(pid(g, r), i, it);
    return s;
}

static void expect_sum(const int *p, long n, long first, int g, int gsize, int it,
                       const char *what)
{
    for (long i = 0; i < n; i++)
        CHECK(p[i] == gsum(g, gsize, first + i, it), "%s [%s]: element %ld: got %d, expected %d",
              what, t_mode_names[t_mode], first + i, p[i], gsum(g, gsize, first + i, it));
}

static void test_reductions(long c, int rg)
{
    int root = root_arg(rg), is_root = root == MPI_ROOT, n = (int)c;
    /* reduce_scatter: vectors of T elements in both groups */
    long T = c * ls * rs;
    int *sb = calloc((size_t)(T + c + 1), sizeof(int)), *rb = calloc((size_t)(T + c + 1), sizeof(int));
    int *counts = calloc((size_t)ls, sizeof(int));
    for (int i = 0; i < ls; i++)
        counts[i] = (int)(T / ls);
    COLL_CASE(fill(sb, c, pid(grp, lr), it_),
              MPI_Reduce(sb, rb, n, MPI_INT, MPI_SUM, root, ic),
              MPI_Ireduce(sb, rb, n, MPI_INT, MPI_SUM, root, ic, &req_),
              MPI_Reduce_init(sb, rb, n, MPI_INT, MPI_SUM, root, ic, MPI_INFO_NULL, &req_),
              {
                  if (is_root)
                      expect_sum(rb, c, 0, !rg, rs, it_, "inter reduce");
              });
    COLL_CASE(fill(sb, c, pid(grp, lr), it_),
              MPI_Allreduce(sb, rb, n, MPI_INT, MPI_SUM, ic),
              MPI_Iallreduce(sb, rb, n, MPI_INT, MPI_SUM, ic, &req_),
              MPI_Allreduce_init(sb, rb, n, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &req_),
              expect_sum(rb, c, 0, !grp, rs, it_, "inter allreduce"));
    COLL_CASE(fill(sb, T, pid(grp, lr), it_),
              MPI_Reduce_scatter(sb, rb, counts, MPI_INT, MPI_SUM, ic),
              MPI_Ireduce_scatter(sb, rb, counts, MPI_INT, MPI_SUM, ic, &req_),
              MPI_Reduce_scatter_init(sb, rb, counts, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &req_),
              expect_sum(rb, T / ls, lr * (T / ls), !grp, rs, it_, "inter reduce_scatter"));
    COLL_CASE(fill(sb, T, pid(grp, lr), it_),
              MPI_Reduce_scatter_block(sb, rb, (int)(T / ls), MPI_INT, MPI_SUM, ic),
              MPI_Ireduce_scatter_block(sb, rb, (int)(T / ls), MPI_INT, MPI_SUM, ic, &req_),
              MPI_Reduce_scatter_block_init(sb, rb, (int)(T / ls), MPI_INT, MPI_SUM, ic,
                                            MPI_INFO_NULL, &req_),
              expect_sum(rb, T / ls, lr * (T / ls), !grp, rs, it_, "inter reduce_scatter_block"));
    /* non-commutative: the root's result is the product in the other group's rank order */
    const tdt_t *mt = &t_types[T_MAT];
    t_mat_t *ms = calloc((size_t)c + 1, sizeof(t_mat_t)), *mr = calloc((size_t)c + 1, sizeof(t_mat_t));
    COLL_CASE(gen_fill(mt, ms, c, pid(grp, lr), it_),
              MPI_Reduce(ms, mr, n, mt->dt, t_op_matmul, root, ic),
              MPI_Ireduce(ms, mr, n, mt->dt, t_op_matmul, root, ic, &req_),
              MPI_Reduce_init(ms, mr, n, mt->dt, t_op_matmul, root, ic, MPI_INFO_NULL, &req_),
              {
                  for (long i = 0; is_root && i < c; i++) {
                      t_mat_t want;
                      t_mat_t x;
                      gen_elem(mt, &want, pid(!rg, 0), i, it_);
                      for (int r = 1; r < rs; r++) {
                          gen_elem(mt, &x, pid(!rg, r), i, it_);
                          ref_op(mt, t_op_matmul, &want, &x);
                      }
                      snprintf(t_current, sizeof(t_current), "inter reduce matmul");
                      CHECK_ELEM(mt, &mr[i], &want, 0, i);
                  }
              });
    free(ms);
    free(mr);
    free(sb);
    free(rb);
    free(counts);
}

/* ------------------------------------------------------------ restrictions */

static void test_refusals(void)
{
    int a = 0, b = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Scan(&a, &b, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    MPI_FAILS(MPI_Iexscan(&a, &b, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_COMM);
    MPI_FAILS(MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_BUFFER);
    MPI_FAILS(MPI_Bcast(&a, 1, MPI_INT, rs, ic), MPI_ERR_ROOT);
    MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (t_size < 2)
        check_mpi_skip("needs at least 2 processes");
    t_types_init();
    grp = t_rank % 2;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, grp, t_rank, &local));
    MPI_OK(MPI_Comm_rank(local, &lr));
    MPI_OK(MPI_Comm_size(local, &ls));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, grp ? 0 : 1, 42, &ic);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc != MPI_SUCCESS)
        check_mpi_skip("MPI_Intercomm_create is not available");
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    long counts[] = { 0, 1, 1009, 40000 };
    for (t_mode = 0; t_mode < MODE_COUNT; t_mode++) {
        MPI_OK(MPI_Barrier(ic));
        for (int ci = 0; ci < 4; ci++) {
            for (int rg = 0; rg < 2; rg++) {
                test_rooted(counts[ci], rg);
                test_reductions(counts[ci], rg);
            }
            test_alls(counts[ci]);
        }
        /* the split intracommunicator works alongside */
        int s = 0, one = 1;
        MPI_OK(MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, local));
        CHECK(s == ls, "allreduce on the split communicator: %d", s);
    }
    test_refusals();
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
    t_types_fini();
    if (t_rank == 0)
        printf("coll_inter: passed at np %d\n", t_size);
    MPI_OK(MPI_Finalize());
    return 0;
}
