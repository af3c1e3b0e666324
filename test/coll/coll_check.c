/*
 * Checked collectives (parameter coll_check, set here before MPI_Init).
 *
 * First every blocking collective with matching arguments, some of them
 * matching only by type signature (a contiguous type against its
 * elements, raw bytes against doubles, in place), must pass the check and
 * give the right data.  Then, from 2 processes, one process's arguments
 * differ from the others' in each way the check tells apart, and every
 * process must get the same error class, where without the check these
 * calls hang or pass silently: counts above and below the others'
 * (allreduce, reduce, scan, a zero count), the same size of another type,
 * another root, another operation, another collective, a gatherv's and an
 * alltoallv's per-process counts, a reduce_scatter's recvcounts, and one
 * process whose own arguments are wrong.  After each, the communicator
 * still works and agrees.  Neighbourhood collectives on a periodic ring
 * too: matching ones, then one process sending more than its neighbours
 * take.  Persistent collectives are checked at their initialization.
 * Intercommunicator collectives too (evens against odds).
 */
#include "coll_test.h"

static int me, n;
static MPI_Comm W;

static void after(const char *what)
{
    int one = 1, s = 0;
    MPI_OK(MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, W));
    CHECK(s == n, "allreduce after %s: %d", what, s);
}

/* Every process gets class cls from call. */
#define ALL_FAIL(call, cls, what)                                                                  \
    do {                                                                                           \
        MPI_FAILS(call, cls);                                                                      \
        after(what);                                                                               \
    } while (0)

static void valid_calls(void)
{
    int root = n - 1, N = n;
    double d[4], e[4];
    MPI_Datatype four;
    MPI_OK(MPI_Type_contiguous(4, MPI_DOUBLE, &four));
    MPI_OK(MPI_Type_commit(&four));

    MPI_OK(MPI_Barrier(W));

    /* bcast: doubles at the root, one contiguous type of four elsewhere */
    for (int i = 0; i < 4; i++)
        d[i] = me == root ? 1.5 * i : -1;
    if (me == root)
        MPI_OK(MPI_Bcast(d, 4, MPI_DOUBLE, root, W));
    else
        MPI_OK(MPI_Bcast(d, 1, four, root, W));
    for (int i = 0; i < 4; i++)
        CHECK(d[i] == 1.5 * i, "bcast [%d] = %g", i, d[i]);
    /* raw bytes against doubles: compared by size */
    for (int i = 0; i < 4; i++)
        d[i] = me == 0 ? 2.0 * i : -1;
    if (me == 0)
        MPI_OK(MPI_Bcast(d, 4, MPI_DOUBLE, 0, W));
    else
        MPI_OK(MPI_Bcast(d, (int)sizeof(d), MPI_BYTE, 0, W));
    for (int i = 0; i < 4; i++)
        CHECK(d[i] == 2.0 * i, "byte bcast [%d] = %g", i, d[i]);
    /* zero counts everywhere */
    MPI_OK(MPI_Bcast(d, 0, MPI_DOUBLE, 0, W));
    MPI_OK(MPI_Allreduce(d, e, 0, MPI_DOUBLE, MPI_SUM, W));

    int *all = calloc((size_t)N * 8, sizeof(int)), *cnt = calloc((size_t)N, sizeof(int));
    int *dsp = calloc((size_t)N, sizeof(int)), *cnt2 = calloc((size_t)N, sizeof(int));
    int *dsp2 = calloc((size_t)N, sizeof(int)), x[8], y[8];
    /* gather in place at the root, gatherv of me + 1 ints */
    for (int i = 0; i < N; i++)
        all[i] = me == root && i == root ? 100 + i : -1;
    x[0] = 100 + me;
    MPI_OK(MPI_Gather(me == root ? MPI_IN_PLACE : x, 1, MPI_INT, all, 1, MPI_INT, root, W));
    for (int i = 0; me == root && i < N; i++)
        CHECK(all[i] == 100 + i, "gather [%d] = %d", i, all[i]);
    for (int i = 0, o = 0; i < N; o += i + 1, i++) {
        cnt[i] = i + 1;
        dsp[i] = o;
    }
    for (int k = 0; k <= me && k < 8; k++)
        x[k] = 10 * me + k;
    MPI_OK(MPI_Gatherv(x, me + 1 > 8 ? 8 : me + 1, MPI_INT, all, cnt, dsp, MPI_INT, 0, W));
    for (int i = 0; me == 0 && i < N; i++)
        for (int k = 0; k <= i && k < 8; k++)
            CHECK(all[dsp[i] + k] == 10 * i + k, "gatherv [%d][%d] = %d", i, k, all[dsp[i] + k]);
    /* scatter, scatterv (the same counts) */
    for (int i = 0; i < N; i++)
        all[i] = 7 * i;
    MPI_OK(MPI_Scatter(all, 1, MPI_INT, y, 1, MPI_INT, 0, W));
    CHECK(y[0] == 7 * me, "scatter got %d", y[0]);
    for (int i = 0; i < N; i++)
        for (int k = 0; k <= i && k < 8; k++)
            all[dsp[i] + k] = 3 * i + k;
    MPI_OK(MPI_Scatterv(all, cnt, dsp, MPI_INT, y, me + 1, MPI_INT, 0, W));
    for (int k = 0; k <= me && k < 8; k++)
        CHECK(y[k] == 3 * me + k, "scatterv [%d] = %d", k, y[k]);
    /* allgather in place, allgatherv */
    for (int i = 0; i < N; i++)
        all[i] = i == me ? 5 * me : -1;
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, W));
    for (int i = 0; i < N; i++)
        CHECK(all[i] == 5 * i, "allgather [%d] = %d", i, all[i]);
    MPI_OK(MPI_Allgatherv(x, me + 1, MPI_INT, all, cnt, dsp, MPI_INT, W));
    for (int i = 0; i < N; i++)
        for (int k = 0; k <= i && k < 8; k++)
            CHECK(all[dsp[i] + k] == 10 * i + k, "allgatherv [%d][%d]", i, k);
    /* alltoall; alltoallv where process i sends i + 1 ints to each; alltoallw */
    int *sb = calloc((size_t)N * 8, sizeof(int));
    for (int i = 0; i < N; i++)
        sb[i] = 100 * me + i;
    MPI_OK(MPI_Alltoall(sb, 1, MPI_INT, all, 1, MPI_INT, W));
    for (int i = 0; i < N; i++)
        CHECK(all[i] == 100 * i + me, "alltoall [%d] = %d", i, all[i]);
    int c1 = me + 1 > 8 ? 8 : me + 1;
    for (int i = 0; i < N; i++) {
        cnt[i] = c1;
        dsp[i] = 8 * i;
        cnt2[i] = i + 1 > 8 ? 8 : i + 1;
        dsp2[i] = 8 * i;
        for (int k = 0; k < 8; k++)
            sb[8 * i + k] = 1000 * me + 10 * i + k;
    }
    MPI_OK(MPI_Alltoallv(sb, cnt, dsp, MPI_INT, all, cnt2, dsp2, MPI_INT, W));
    for (int i = 0; i < N; i++)
        for (int k = 0; k < cnt2[i]; k++)
            CHECK(all[8 * i + k] == 1000 * i + 10 * me + k, "alltoallv [%d][%d]", i, k);
    MPI_Datatype *ty = calloc((size_t)N, sizeof(MPI_Datatype));
    for (int i = 0; i < N; i++) {
        ty[i] = MPI_INT;
        cnt[i] = 1;
        dsp[i] = (int)sizeof(int) * i;
    }
    MPI_OK(MPI_Alltoallw(sb, cnt, dsp, ty, all, cnt, dsp, ty, W));
    free(ty);

    /* reductions */
    for (int i = 0; i < 4; i++)
        d[i] = me + i;
    MPI_OK(MPI_Reduce(d, e, 4, MPI_DOUBLE, MPI_SUM, root, W));
    for (int i = 0; me == root && i < 4; i++)
        CHECK(e[i] == N * (N - 1) / 2.0 + N * i, "reduce [%d] = %g", i, e[i]);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, d, 4, MPI_DOUBLE, MPI_MAX, W));
    CHECK(d[3] == N - 1 + 3, "allreduce max = %g", d[3]);
    for (int i = 0; i < N; i++) {
        cnt[i] = 1;
        sb[i] = i + me;
    }
    MPI_OK(MPI_Reduce_scatter(sb, y, cnt, MPI_INT, MPI_SUM, W));
    CHECK(y[0] == N * me + N * (N - 1) / 2, "reduce_scatter got %d", y[0]);
    MPI_OK(MPI_Reduce_scatter_block(sb, y, 1, MPI_INT, MPI_SUM, W));
    CHECK(y[0] == N * me + N * (N - 1) / 2, "reduce_scatter_block got %d", y[0]);
    x[0] = me + 1;
    MPI_OK(MPI_Scan(x, y, 1, MPI_INT, MPI_SUM, W));
    CHECK(y[0] == (me + 1) * (me + 2) / 2, "scan got %d", y[0]);
    MPI_OK(MPI_Exscan(x, y, 1, MPI_INT, MPI_SUM, W));
    CHECK(me == 0 || y[0] == me * (me + 1) / 2, "exscan got %d", y[0]);

    free(sb);
    free(all);
    free(cnt);
    free(dsp);
    free(cnt2);
    free(dsp2);
    MPI_OK(MPI_Type_free(&four));
}

/* Neighbourhood collectives on a periodic ring (at np 1 and 2 both
 * neighbours are one process: its two edges add up), then, from 2
 * processes, process 1 sending two ints to each neighbour that expects
 * one. */
static void neighbours(void)
{
    int dims[1] = {n}, periods[1] = {1}, left = (me - 1 + n) % n, right = (me + 1) % n;
    MPI_Comm ring;
    MPI_OK(MPI_Cart_create(W, 1, dims, periods, 0, &ring));
    MPI_OK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    int x[4] = {10 * me, 10 * me + 1, 10 * me + 2, 10 * me + 3}, y[8];
    MPI_OK(MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, ring));
    CHECK(y[0] == 10 * left && y[1] == 10 * right, "neighbor_allgather got %d %d", y[0], y[1]);
    MPI_OK(MPI_Neighbor_alltoall(x, 2, MPI_INT, y, 2, MPI_INT, ring));
    CHECK(y[0] == 10 * left + 2 && y[2] == 10 * right, "neighbor_alltoall got %d %d", y[0], y[2]);
    int sc[2] = {1, 1}, sd[2] = {0, 1}, rc[2] = {1, 1}, rd[2] = {0, 1};
    MPI_OK(MPI_Neighbor_alltoallv(x, sc, sd, MPI_INT, y, rc, rd, MPI_INT, ring));
    CHECK(y[0] == 10 * left + 1 && y[1] == 10 * right, "neighbor_alltoallv got %d %d", y[0],
          y[1]);
    if (n >= 2) {
        int odd = me == 1;
        MPI_FAILS(MPI_Neighbor_alltoall(x, odd ? 2 : 1, MPI_INT, y, 1, MPI_INT, ring),
                  MPI_ERR_TRUNCATE);
        int one = 1, sum = 0;
        MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ring));
        CHECK(sum == n, "allreduce on the ring after a mismatch: %d", sum);
    }
    MPI_OK(MPI_Comm_free(&ring));
}

/* Persistent collectives are checked at their initialization (nonlocal):
 * matching ones start many times; a mismatched one fails to initialize
 * on every process; an initialization against a blocking call too. */
static void persistent(void)
{
    static double a[300], b[300];
    MPI_Request r = MPI_REQUEST_NULL;
    for (int i = 0; i < 4; i++)
        a[i] = me + i;
    MPI_OK(MPI_Allreduce_init(a, b, 4, MPI_DOUBLE, MPI_SUM, W, MPI_INFO_NULL, &r));
    for (int it = 0; it < 3; it++) {
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(b[3] == n * (n - 1) / 2.0 + 3.0 * n, "persistent allreduce [3] = %g", b[3]);
    }
    MPI_OK(MPI_Request_free(&r));
    if (n < 2)
        return;
    int odd = me == 1;
    r = MPI_REQUEST_NULL;
    MPI_FAILS(MPI_Allreduce_init(a, b, odd ? 300 : 50, MPI_DOUBLE, MPI_SUM, W, MPI_INFO_NULL, &r),
              MPI_ERR_TRUNCATE);
    CHECK(r == MPI_REQUEST_NULL, "a failed initialization set the request");
    after("persistent allreduce 300 against 50");
    if (odd)
        MPI_FAILS(MPI_Bcast_init(a, 1, MPI_DOUBLE, 0, W, MPI_INFO_NULL, &r), MPI_ERR_OTHER);
    else
        MPI_FAILS(MPI_Bcast(a, 1, MPI_DOUBLE, 0, W), MPI_ERR_OTHER);
    CHECK(r == MPI_REQUEST_NULL, "a failed initialization set the request");
    after("a bcast initialization against bcasts");
}

/* An intercommunicator between the even and the odd processes: matching
 * bcast, allreduce and gather, then an allreduce where one process's count
 * differs and a bcast where one process of the receiving group gives
 * MPI_PROC_NULL as if it were in the root's group. */
static void inter(void)
{
    if (n < 2)
        return;
    int color = me % 2, lr, rn;
    MPI_Comm local, ic;
    MPI_OK(MPI_Comm_split(W, color, me, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, W, 1 - color, 7, &ic));
    MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_rank(ic, &lr));
    MPI_OK(MPI_Comm_remote_size(ic, &rn));
    int x = 100 + me, y = -1, *all = calloc((size_t)rn, sizeof(int));
    /* the evens' process 0 broadcasts to the odds */
    int root = color ? 0 : lr == 0 ? MPI_ROOT : MPI_PROC_NULL;
    MPI_OK(MPI_Bcast(&x, 1, MPI_INT, root, ic));
    CHECK(!color || x == 100, "intercommunicator bcast got %d", x);
    x = 1;
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, ic));
    CHECK(y == rn, "intercommunicator allreduce got %d, want %d", y, rn);
    /* the odds gather at the evens' process 0 */
    x = me;
    root = color ? 0 : lr == 0 ? MPI_ROOT : MPI_PROC_NULL;
    MPI_OK(MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, root, ic));
    for (int i = 0; !color && lr == 0 && i < rn; i++)
        CHECK(all[i] == 2 * i + 1, "intercommunicator gather [%d] = %d", i, all[i]);
    int two[2] = {1, 1}, out[2];
    MPI_FAILS(MPI_Allreduce(two, out, me == 1 ? 2 : 1, MPI_INT, MPI_SUM, ic), MPI_ERR_TRUNCATE);
    after("an intercommunicator allreduce of 2 against 1");
    root = color ? (me == 1 ? MPI_PROC_NULL : 0) : lr == 0 ? MPI_ROOT : MPI_PROC_NULL;
    MPI_FAILS(MPI_Bcast(&x, 1, MPI_INT, root, ic), MPI_ERR_ROOT);
    after("an intercommunicator bcast with MPI_PROC_NULL in the receiving group");
    free(all);
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
}

static void mismatches(void)
{
    static double a[300], b[300];
    int odd = me == 1;
    int x[8] = {0}, y[8 * 64] = {0};

    /* counts: process 1 above, then below the others (allreduce), above
     * (reduce: the slots against tuned or the flag rounds; scan) */
    ALL_FAIL(MPI_Allreduce(a, b, odd ? 300 : 50, MPI_DOUBLE, MPI_SUM, W), MPI_ERR_TRUNCATE,
             "allreduce 300 against 50");
    ALL_FAIL(MPI_Allreduce(a, b, odd ? 50 : 300, MPI_DOUBLE, MPI_SUM, W), MPI_ERR_COUNT,
             "allreduce 50 against 300");
    ALL_FAIL(MPI_Reduce(a, b, odd ? 300 : 50, MPI_DOUBLE, MPI_SUM, 0, W), MPI_ERR_TRUNCATE,
             "reduce 300 against 50");
    ALL_FAIL(MPI_Scan(a, b, odd ? 300 : 50, MPI_DOUBLE, MPI_SUM, W), MPI_ERR_TRUNCATE,
             "scan 300 against 50");
    /* a zero count on process 1 only */
    ALL_FAIL(MPI_Allreduce(a, b, odd ? 0 : 10, MPI_DOUBLE, MPI_SUM, W), MPI_ERR_COUNT,
             "allreduce 0 against 10");
    ALL_FAIL(MPI_Bcast(a, odd ? 0 : 10, MPI_DOUBLE, 0, W), MPI_ERR_TRUNCATE,
             "bcast 0 against 10");
    /* the same size of another type */
    ALL_FAIL(MPI_Allreduce(x, y, 4, odd ? MPI_FLOAT : MPI_INT, MPI_SUM, W), MPI_ERR_TYPE,
             "allreduce of floats against ints");
    /* another root, another operation, another collective */
    ALL_FAIL(MPI_Bcast(x, 1, MPI_INT, odd ? 1 : 0, W), MPI_ERR_ROOT, "bcast with another root");
    ALL_FAIL(MPI_Allreduce(x, y, 1, MPI_INT, odd ? MPI_MAX : MPI_SUM, W), MPI_ERR_OP,
             "allreduce with another op");
    if (odd)
        ALL_FAIL(MPI_Barrier(W), MPI_ERR_OTHER, "a barrier against allreduces");
    else
        ALL_FAIL(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, W), MPI_ERR_OTHER,
                 "allreduces against a barrier");
    /* a gather's sender giving more than the root takes, a scatter's root
     * sending more than process 1 takes, an allgatherv whose recvcounts
     * differ at process 1, an allgather where everyone receives more than
     * it sends */
    ALL_FAIL(MPI_Gather(x, odd ? 2 : 1, MPI_INT, y, 1, MPI_INT, 0, W), MPI_ERR_TRUNCATE,
             "gather sending 2 where the root takes 1");
    ALL_FAIL(MPI_Scatter(x, 2, MPI_INT, y, odd ? 1 : 2, MPI_INT, 0, W), MPI_ERR_TRUNCATE,
             "scatter of 2 where process 1 takes 1");
    {
        int *rc = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
        for (int i = 0; i < n; i++) {
            rc[i] = odd && i == 0 ? 2 : 1;
            rd[i] = 2 * i;
        }
        ALL_FAIL(MPI_Allgatherv(x, 1, MPI_INT, y, rc, rd, MPI_INT, W), MPI_ERR_TRUNCATE,
                 "allgatherv whose recvcounts differ");
        free(rc);
        free(rd);
    }
    ALL_FAIL(MPI_Allgather(x, 1, MPI_INT, y, 2, MPI_INT, W), MPI_ERR_COUNT,
             "allgather receiving 2 of 1");
    /* per-process counts: the gatherv's root expects 3 ints from process
     * 1, which sends 2; process 1 sends 2 ints to process 0 in an
     * alltoallv where 0 expects 1 */
    int *cnt = calloc((size_t)n, sizeof(int)), *dsp = calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        cnt[i] = i == 1 ? 3 : 1;
        dsp[i] = 8 * i;
    }
    ALL_FAIL(MPI_Gatherv(x, odd ? 2 : 1, MPI_INT, y, cnt, dsp, MPI_INT, 0, W), MPI_ERR_COUNT,
             "gatherv of 2 where the root expects 3");
    int *scnt = calloc((size_t)n, sizeof(int)), *rcnt = calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        scnt[i] = odd && i == 0 ? 2 : 1;
        rcnt[i] = 1;
    }
    int *sb = calloc((size_t)n * 8, sizeof(int));
    ALL_FAIL(MPI_Alltoallv(sb, scnt, dsp, MPI_INT, y, rcnt, dsp, MPI_INT, W), MPI_ERR_TRUNCATE,
             "alltoallv sending 2 where 1 is expected");
    /* reduce_scatter whose recvcounts differ: process 1 gives 2 for block 0 */
    for (int i = 0; i < n; i++)
        rcnt[i] = odd && i == 0 ? 2 : 1;
    ALL_FAIL(MPI_Reduce_scatter(sb, y, rcnt, MPI_INT, MPI_SUM, W), MPI_ERR_TRUNCATE,
             "reduce_scatter with other recvcounts");
    /* process 1's own arguments are wrong: everyone reports its class,
     * whether the front end finds it or the entry point (a root out of
     * range, a negative count) */
    ALL_FAIL(MPI_Allreduce(x, y, 1, MPI_INT, odd ? MPI_MAXLOC : MPI_SUM, W), MPI_ERR_OP,
             "MAXLOC on MPI_INT at one process");
    ALL_FAIL(MPI_Bcast(x, 1, MPI_INT, odd ? n : 0, W), MPI_ERR_ROOT, "a root out of range at one "
             "process");
    ALL_FAIL(MPI_Allreduce(x, y, odd ? -1 : 1, MPI_INT, MPI_SUM, W), MPI_ERR_COUNT,
             "a negative count at one process");
    {
        MPI_Request r = MPI_REQUEST_NULL;
        ALL_FAIL(MPI_Reduce_init(x, y, odd ? -1 : 1, MPI_INT, MPI_SUM, 0, W, MPI_INFO_NULL, &r),
                 MPI_ERR_COUNT, "a negative count at one process's persistent initialization");
        CHECK(r == MPI_REQUEST_NULL, "a failed initialization set the request");
    }
    free(cnt);
    free(dsp);
    free(scnt);
    free(rcnt);
    free(sb);
}

int main(int argc, char **argv)
{
    setenv("RAIL_COLL_CHECK", "1", 1);
    t_init(&argc, &argv);
    W = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_set_errhandler(W, MPI_ERRORS_RETURN));
    me = t_rank;
    n = t_size;
    for (int it = 0; it < 2; it++)
        valid_calls();
    neighbours();
    persistent();
    inter();
    if (n >= 2)
        mismatches();
    /* process 1 alone: its local error is its own */
    int x = 0, y = 0;
    MPI_FAILS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAXLOC, W), MPI_ERR_OP);
    valid_calls();
    MPI_OK(MPI_Finalize());
    if (me == 0)
        printf("coll_check: %d processes: ok\n", n);
    return 0;
}
