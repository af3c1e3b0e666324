/*
 * Device temporaries are kept for reuse (accel_scratch_cache): reductions on
 * device buffers (allreduce, in place too, reduce, reduce_scatter_block,
 * scan; several sizes) allocate the device memory they stage through in
 * their first calls only, later calls take it from the kept buffers.  MPI_T
 * counters accel_device_allocs / accel_scratch_reused tell; results are
 * checked every call.  With SCRATCH_EXPECT=none (run with
 * RAIL_ACCEL_SCRATCH_CACHE=0) every call allocates again and nothing is
 * reused.  Needs device buffers (COLLTEST_DEVICE=1: the fake device, or a
 * GPU with TEST_DEVMEM=cuda); skipped (77) without one.
 */
#include "coll_test.h"
#include "sm_util.h"

static const int counts[] = { 1, 1000, 100000 };
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))

static void put(tbuf_t *b, int n, double base)
{
    for (int i = 0; i < n; i++)
        ((double *)b->h)[i] = base + i % 13;
    tb_push(b);
}

static void expect(tbuf_t *b, int n, double want_base, double scale, const char *what)
{
    tb_pull(b);
    for (int i = 0; i < n; i++) {
        double want = want_base + scale * (i % 13);
        CHECK(((double *)b->h)[i] == want, "%s: [%d] = %g, want %g", what, i,
              ((double *)b->h)[i], want);
    }
}

static void round_of_ops(void)
{
    const double np = t_size, tri = np * (np + 1) / 2;
    for (int k = 0; k < NCOUNTS; k++) {
        int n = counts[k];
        tbuf_t in, out;
        tb_alloc(&in, (size_t)n * t_size * sizeof(double));
        tb_alloc(&out, (size_t)n * t_size * sizeof(double));
        put(&in, n * t_size, t_rank + 1);
        MPI_OK(MPI_Allreduce(in.d, out.d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        expect(&out, n, tri, np, "allreduce");
        put(&out, n, t_rank + 1);
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, out.d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        expect(&out, n, tri, np, "allreduce in place");
        MPI_OK(MPI_Reduce(in.d, out.d, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
        if (t_rank == 0)
            expect(&out, n, tri, np, "reduce");
        /* rank r's block of the sum: elements r*n .. r*n+n-1 */
        MPI_OK(MPI_Reduce_scatter_block(in.d, out.d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        tb_pull(&out);
        for (int i = 0; i < n; i++) {
            double want = tri + np * ((t_rank * n + i) % 13);
            CHECK(((double *)out.h)[i] == want, "reduce_scatter_block: [%d] = %g, want %g", i,
                  ((double *)out.h)[i], want);
        }
        MPI_OK(MPI_Scan(in.d, out.d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        expect(&out, n, (double)(t_rank + 1) * (t_rank + 2) / 2, t_rank + 1, "scan");
        tb_free(&in);
        tb_free(&out);
    }
}

static void counters(unsigned long long *allocs, unsigned long long *reused)
{
    *allocs = pvar_count("accel_device_allocs");
    *reused = pvar_count("accel_scratch_reused");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    tb_pool.fresh = 1;      /* every buffer new, as the allocation counts below assume */
    if (!t_device)
        check_mpi_skip("needs COLLTEST_DEVICE=1");
    if (t_size == 1) /* (one process's collectives copy, stage nothing) */
        check_mpi_skip("no collective stages through temporaries at one process");
    const char *e = getenv("SCRATCH_EXPECT");
    int keep = !(e != NULL && strcmp(e, "none") == 0);
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    unsigned long long a0, r0, a1, r1, a2, r2;
    counters(&a0, &r0);
    for (int i = 0; i < 3; i++)
        round_of_ops();
    counters(&a1, &r1);
    for (int i = 0; i < 5; i++)
        round_of_ops();
    counters(&a2, &r2);
    /* somebody must stage through device temporaries, or this tests nothing */
    unsigned long long mine = a1 - a0, most = 0;
    MPI_OK(MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
    CHECK(most > 0, "no process allocated device temporaries in 3 rounds of reductions");
    if (keep) {
        CHECK(a2 == a1, "%llu device allocations in 5 rounds after the first 3 (kept buffers "
              "should serve them)", a2 - a1);
        if (a1 > a0)
            CHECK(r2 > r1, "temporaries allocated but none reused");
    } else {
        if (a1 > a0)
            CHECK(a2 > a1, "no device allocation in 5 rounds with accel_scratch_cache=0");
        CHECK(r2 == r0, "%llu requests served by kept buffers with accel_scratch_cache=0",
              r2 - r0);
    }
    MPI_T_finalize();
    if (t_rank == 0)
        printf("coll_device_scratch: passed at np %d (%s; first rounds allocated %llu on rank 0, "
               "later %llu)\n", t_size, keep ? "kept" : "not kept", a1 - a0, a2 - a1);
    MPI_OK(MPI_Finalize());
    return 0;
}
