/*
 * Nonblocking and persistent collectives in flight together, on the same
 * communicator, mixed with point-to-point traffic on that communicator
 * (including MPI_ANY_TAG / MPI_ANY_SOURCE receives, which must never see a
 * collective's message) and with blocking collectives; completion in any
 * order (Wait in reverse, Waitall, Test polling, Waitany); persistent
 * requests started many times with MPI_Startall; MPI_Request_free of an
 * inactive persistent collective; many operations outstanding at once.
 */
#include "coll_test.h"

#define NOPS 8

/* Buffers of one round of overlapping operations. */
typedef struct round {
    tbuf_t bc, ar_s, ar_r, a2a_s, a2a_r, g_s, g_r, scan_s, scan_r, agv_s, agv_r, rsb_s, rsb_r;
    int *agv_counts, *agv_displs;
    long n;
} round_t;

static int ival(int r, long i, int it)
{
    return gen_int(r, i, it);
}

static void round_alloc(round_t *R, long n)
{
    int p = t_size;
    R->n = n;
    tb_alloc(&R->bc, (size_t)n * sizeof(int));
    tb_alloc(&R->ar_s, (size_t)n * sizeof(int));
    tb_alloc(&R->ar_r, (size_t)n * sizeof(int));
    tb_alloc(&R->a2a_s, (size_t)(n * p) * sizeof(int));
    tb_alloc(&R->a2a_r, (size_t)(n * p) * sizeof(int));
    tb_alloc(&R->g_s, (size_t)n * sizeof(int));
    tb_alloc(&R->g_r, (size_t)(n * p) * sizeof(int));
    tb_alloc(&R->scan_s, (size_t)n * sizeof(int));
    tb_alloc(&R->scan_r, (size_t)n * sizeof(int));
    R->agv_counts = malloc(sizeof(int) * (size_t)p);
    R->agv_displs = malloc(sizeof(int) * (size_t)p);
    long tot = 0;
    for (int i = 0; i < p; i++) {
        R->agv_counts[i] = (int)(n + i);
        R->agv_displs[i] = (int)tot;
        tot += n + i;
    }
    tb_alloc(&R->agv_s, (size_t)(n + t_rank) * sizeof(int));
    tb_alloc(&R->agv_r, (size_t)tot * sizeof(int));
    tb_alloc(&R->rsb_s, (size_t)(n * p) * sizeof(int));
    tb_alloc(&R->rsb_r, (size_t)n * sizeof(int));
}

static void round_free(round_t *R)
{
    tbuf_t *all[] = { &R->bc, &R->ar_s, &R->ar_r, &R->a2a_s, &R->a2a_r, &R->g_s, &R->g_r,
                      &R->scan_s, &R->scan_r, &R->agv_s, &R->agv_r, &R->rsb_s, &R->rsb_r };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        tb_free(all[i]);
    free(R->agv_counts);
    free(R->agv_displs);
}

static void fill_ints(tbuf_t *b, long n, int who, long first, int it)
{
    int *p = (int *)b->h;
    for (long i = 0; i < n; i++)
        p[i] = ival(who, first + i, it);
}

static void round_fill(round_t *R, int it)
{
    long n = R->n;
    int p = t_size;
    if (t_rank == 0)
        fill_ints(&R->bc, n, 0, 0, it);
    fill_ints(&R->ar_s, n, t_rank, 0, it);
    for (int j = 0; j < p; j++) {
        int *blk = (int *)R->a2a_s.h + j * n;
        for (long i = 0; i < n; i++)
            blk[i] = ival(t_rank * 1000 + j, i, it);
    }
    fill_ints(&R->g_s, n, t_rank, 0, it);
    fill_ints(&R->scan_s, n, t_rank, 0, it);
    fill_ints(&R->agv_s, n + t_rank, t_rank, 0, it);
    fill_ints(&R->rsb_s, n * p, t_rank, 0, it);
    tbuf_t *all[] = { &R->bc, &R->ar_s, &R->a2a_s, &R->g_s, &R->scan_s, &R->agv_s, &R->rsb_s };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        tb_push(all[i]);
}

/* Start the round's operations (nonblocking) into reqs[0..NOPS). */
static void round_start(round_t *R, MPI_Comm comm, MPI_Request *reqs)
{
    int n = (int)R->n, root_g = t_size - 1;
    MPI_OK(MPI_Ibcast(R->bc.d, n, MPI_INT, 0, comm, &reqs[0]));
    MPI_OK(MPI_Iallreduce(R->ar_s.d, R->ar_r.d, n, MPI_INT, MPI_SUM, comm, &reqs[1]));
    MPI_OK(MPI_Ialltoall(R->a2a_s.d, n, MPI_INT, R->a2a_r.d, n, MPI_INT, comm, &reqs[2]));
    MPI_OK(MPI_Igather(R->g_s.d, n, MPI_INT, R->g_r.d, n, MPI_INT, root_g, comm, &reqs[3]));
    MPI_OK(MPI_Iscan(R->scan_s.d, R->scan_r.d, n, MPI_INT, MPI_SUM, comm, &reqs[4]));
    MPI_OK(MPI_Ibarrier(comm, &reqs[5]));
    MPI_OK(MPI_Iallgatherv(R->agv_s.d, n + t_rank, MPI_INT, R->agv_r.d, R->agv_counts,
                           R->agv_displs, MPI_INT, comm, &reqs[6]));
    MPI_OK(MPI_Ireduce_scatter_block(R->rsb_s.d, R->rsb_r.d, n, MPI_INT, MPI_SUM, comm,
                                     &reqs[7]));
}

static int sum_over(int lo, int hi, long i, int it)
{
    int s = 0;
    for (int r = lo; r <= hi; r++)
        s += ival(r, i, it);
    return s;
}

static void round_check(round_t *R, int it)
{
    long n = R->n;
    int p = t_size;
    tbuf_t *all[] = { &R->bc, &R->ar_r, &R->a2a_r, &R->g_r, &R->scan_r, &R->agv_r, &R->rsb_r };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        tb_pull(all[i]);
    for (long i = 0; i < n; i++) {
        CHECK(((int *)R->bc.h)[i] == ival(0, i, it), "%s: ibcast element %ld", t_current, i);
        CHECK(((int *)R->ar_r.h)[i] == sum_over(0, p - 1, i, it), "%s: iallreduce element %ld",
              t_current, i);
        CHECK(((int *)R->scan_r.h)[i] == sum_over(0, t_rank, i, it), "%s: iscan element %ld",
              t_current, i);
        CHECK(((int *)R->rsb_r.h)[i] == sum_over(0, p - 1, t_rank * n + i, it),
              "%s: ireduce_scatter_block element %ld", t_current, i);
        for (int j = 0; j < p; j++) {
            CHECK(((int *)R->a2a_r.h)[j * n + i] == ival(j * 1000 + t_rank, i, it),
                  "%s: ialltoall block %d element %ld", t_current, j, i);
            if (t_rank == p - 1)
                CHECK(((int *)R->g_r.h)[j * n + i] == ival(j, i, it),
                      "%s: igather block %d element %ld", t_current, j, i);
        }
    }
    for (int j = 0; j < p; j++)
        for (long i = 0; i < n + j; i++)
            CHECK(((int *)R->agv_r.h)[R->agv_displs[j] + i] == ival(j, i, it),
                  "%s: iallgatherv block %d element %ld", t_current, j, i);
}

/* Point-to-point traffic on comm around the collectives: a ring exchange
 * with a wildcard receive posted before the collectives start. */
typedef struct p2p {
    int out, in_any, in_tag;
    MPI_Request r[3];
} p2p_t;

static void p2p_start(p2p_t *x, MPI_Comm comm, int it)
{
    int to = (t_rank + 1) % t_size, from = (t_rank - 1 + t_size) % t_size;
    x->out = t_rank * 100 + it;
    /* the tag-7 message matches the receive naming it (posted first); the
     * wildcard one gets the tag-9 message sent after the collectives */
    MPI_OK(MPI_Irecv(&x->in_tag, 1, MPI_INT, from, 7, comm, &x->r[0]));
    MPI_OK(MPI_Irecv(&x->in_any, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &x->r[1]));
    (void)to;
}

static void p2p_send(p2p_t *x, MPI_Comm comm)
{
    int to = (t_rank + 1) % t_size;
    MPI_OK(MPI_Isend(&x->out, 1, MPI_INT, to, 7, comm, &x->r[2]));
}

static void p2p_finish(p2p_t *x, MPI_Comm comm, int it)
{
    int to = (t_rank + 1) % t_size, from = (t_rank - 1 + t_size) % t_size;
    MPI_Status st;
    /* the wildcard receive gets the second message of the ring */
    MPI_OK(MPI_Send(&x->out, 1, MPI_INT, to, 9, comm));
    MPI_OK(MPI_Wait(&x->r[1], &st));
    MPI_OK(MPI_Wait(&x->r[0], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&x->r[2], MPI_STATUS_IGNORE));
    CHECK(x->in_tag == from * 100 + it, "p2p ring: got %d, expected %d", x->in_tag,
          from * 100 + it);
    CHECK(x->in_any == from * 100 + it && st.MPI_TAG == 9 && st.MPI_SOURCE == from,
          "wildcard receive matched something else: value %d tag %d source %d", x->in_any,
          st.MPI_TAG, st.MPI_SOURCE);
}

/* ------------------------------------------------------------ scenarios */

/* Rounds of overlapping operations, completed in various orders. */
static void test_overlap(MPI_Comm comm, long n, int rounds)
{
    round_t R;
    round_alloc(&R, n);
    for (int it = 0; it < rounds; it++) {
        MPI_Request reqs[NOPS];
        p2p_t x;
        snprintf(t_current, sizeof(t_current), "overlap round %d count %ld", it, n);
        round_fill(&R, it);
        p2p_start(&x, comm, it);
        round_start(&R, comm, reqs);
        p2p_send(&x, comm);
        /* a blocking collective while the others are in flight */
        int one = 1, total = 0;
        MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm));
        CHECK(total == t_size, "blocking allreduce among nonblocking ones: %d", total);
        switch (it % 4) {
        case 0:
            for (int k = NOPS - 1; k >= 0; k--)
                MPI_OK(MPI_Wait(&reqs[k], MPI_STATUS_IGNORE));
            break;
        case 1:
            MPI_OK(MPI_Waitall(NOPS, reqs, MPI_STATUSES_IGNORE));
            break;
        case 2: {
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Testall(NOPS, reqs, &flag, MPI_STATUSES_IGNORE));
            break;
        }
        default:
            for (int k = 0; k < NOPS; k++) {
                int idx;
                MPI_OK(MPI_Waitany(NOPS, reqs, &idx, MPI_STATUS_IGNORE));
                CHECK(idx != MPI_UNDEFINED, "Waitany found nothing");
            }
        }
        for (int k = 0; k < NOPS; k++)
            CHECK(reqs[k] == MPI_REQUEST_NULL, "request %d not freed", k);
        p2p_finish(&x, comm, it);
        round_check(&R, it);
    }
    round_free(&R);
}

/* Persistent requests started many times, together (MPI_Startall). */
static void test_persistent(MPI_Comm comm, long n, int starts)
{
    int ncount = (int)n;
    tbuf_t bc, ar_s, ar_r, a2a_s, a2a_r;
    tb_alloc(&bc, (size_t)n * sizeof(int));
    tb_alloc(&ar_s, (size_t)n * sizeof(int));
    tb_alloc(&ar_r, (size_t)n * sizeof(int));
    tb_alloc(&a2a_s, (size_t)(n * t_size) * sizeof(int));
    tb_alloc(&a2a_r, (size_t)(n * t_size) * sizeof(int));
    MPI_Request reqs[4], unused;
    int root = t_size / 2;
    MPI_OK(MPI_Bcast_init(bc.d, ncount, MPI_INT, root, comm, MPI_INFO_NULL, &reqs[0]));
    MPI_OK(MPI_Allreduce_init(ar_s.d, ar_r.d, ncount, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL,
                              &reqs[1]));
    MPI_OK(MPI_Alltoall_init(a2a_s.d, ncount, MPI_INT, a2a_r.d, ncount, MPI_INT, comm,
                             MPI_INFO_NULL, &reqs[2]));
    MPI_OK(MPI_Barrier_init(comm, MPI_INFO_NULL, &reqs[3]));
    /* an inactive persistent collective that is never started, then freed */
    MPI_OK(MPI_Allreduce_init(ar_s.d, ar_r.d, ncount, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL,
                              &unused));
    MPI_OK(MPI_Request_free(&unused));
    CHECK(unused == MPI_REQUEST_NULL, "Request_free did not reset the handle");
    for (int it = 0; it < starts; it++) {
        snprintf(t_current, sizeof(t_current), "persistent start %d", it);
        if (t_rank == root)
            fill_ints(&bc, n, root, 0, it);
        fill_ints(&ar_s, n, t_rank, 0, it);
        for (int j = 0; j < t_size; j++)
            for (long i = 0; i < n; i++)
                ((int *)a2a_s.h)[j * n + i] = ival(t_rank * 1000 + j, i, it);
        tb_push(&bc);
        tb_push(&ar_s);
        tb_push(&a2a_s);
        p2p_t x;
        p2p_start(&x, comm, it);
        MPI_OK(MPI_Startall(4, reqs));
        p2p_send(&x, comm);
        MPI_OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
        p2p_finish(&x, comm, it);
        tb_pull(&bc);
        tb_pull(&ar_r);
        tb_pull(&a2a_r);
        for (long i = 0; i < n; i++) {
            int mx = ival(0, i, it);
            for (int r = 1; r < t_size; r++)
                mx = ival(r, i, it) > mx ? ival(r, i, it) : mx;
            CHECK(((int *)bc.h)[i] == ival(root, i, it), "%s: bcast element %ld", t_current, i);
            CHECK(((int *)ar_r.h)[i] == mx, "%s: allreduce element %ld", t_current, i);
            for (int j = 0; j < t_size; j++)
                CHECK(((int *)a2a_r.h)[j * n + i] == ival(j * 1000 + t_rank, i, it),
                      "%s: alltoall block %d element %ld", t_current, j, i);
        }
    }
    for (int k = 0; k < 4; k++) {
        MPI_OK(MPI_Request_free(&reqs[k]));
        CHECK(reqs[k] == MPI_REQUEST_NULL, "Request_free did not reset handle %d", k);
    }
    tb_free(&bc);
    tb_free(&ar_s);
    tb_free(&ar_r);
    tb_free(&a2a_s);
    tb_free(&a2a_r);
}

/* Many operations outstanding at once. */
static void test_many(MPI_Comm comm, int k)
{
    int *in = malloc(sizeof(int) * (size_t)k), *out = malloc(sizeof(int) * (size_t)k);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)k);
    for (int i = 0; i < k; i++) {
        in[i] = t_rank + i;
        out[i] = -1;
        MPI_OK(MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, comm, &reqs[i]));
    }
    MPI_OK(MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < k; i++)
        CHECK(out[i] == t_size * (t_size - 1) / 2 + t_size * i, "iallreduce %d of %d: got %d", i,
              k, out[i]);
    free(in);
    free(out);
    free(reqs);
}

/* The big-count (_c) bindings: MPI_Count counts, MPI_Aint displacements. */
static void test_bigcount(MPI_Comm comm)
{
    int n = t_size;
    MPI_Count c = 3, *counts = malloc(sizeof(MPI_Count) * (size_t)n);
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)n);
    int *in = malloc(sizeof(int) * 3 * (size_t)n), *out = malloc(sizeof(int) * 3 * (size_t)n);
    for (int i = 0; i < n; i++) {
        counts[i] = c;
        displs[i] = 3 * i;
        for (int k = 0; k < 3; k++)
            in[3 * i + k] = t_rank * 100 + i * 10 + k;
    }
    int s = t_rank, sum = 0;
    MPI_OK(MPI_Allreduce_c(&s, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == n * (n - 1) / 2, "MPI_Allreduce_c: %d", sum);
    MPI_Request r;
    MPI_OK(MPI_Ialltoallv_c(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, comm, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            CHECK(out[3 * i + k] == i * 100 + t_rank * 10 + k, "MPI_Ialltoallv_c block %d", i);
    MPI_OK(MPI_Bcast_init_c(out, c, MPI_INT, 0, comm, MPI_INFO_NULL, &r));
    if (t_rank == 0)
        out[0] = 4242;
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Request_free(&r));
    CHECK(out[0] == 4242, "MPI_Bcast_init_c: %d", out[0]);
    free(counts);
    free(displs);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    long counts[] = { 1, 1009, 65536 };
    for (int ci = 0; ci < 3; ci++)
        test_overlap(MPI_COMM_WORLD, counts[ci], ci == 2 ? 4 : 12);
    test_persistent(MPI_COMM_WORLD, 1, 100);
    test_persistent(MPI_COMM_WORLD, 4099, 10);
    if (!t_device) {
        test_many(MPI_COMM_WORLD, 200);
        test_bigcount(MPI_COMM_WORLD);
    }
    /* the same on a duplicate, if the library has MPI_Comm_dup */
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc == MPI_SUCCESS) {
        /* collectives on both communicators in flight together */
        MPI_Request r[2];
        int a = t_rank, b = 2 * t_rank, sa = 0, sb = 0;
        MPI_OK(MPI_Iallreduce(&a, &sa, 1, MPI_INT, MPI_SUM, dup, &r[0]));
        MPI_OK(MPI_Iallreduce(&b, &sb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]));
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(sa == t_size * (t_size - 1) / 2 && sb == 2 * sa, "dup/world: %d %d", sa, sb);
        test_overlap(dup, 1009, 4);
        /* freeing the communicator while a collective on it is pending */
        MPI_OK(MPI_Iallreduce(&a, &sa, 1, MPI_INT, MPI_SUM, dup, &r[0]));
        MPI_OK(MPI_Comm_free(&dup));
        MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        CHECK(sa == t_size * (t_size - 1) / 2, "iallreduce on a freed communicator: %d", sa);
    } else if (t_rank == 0) {
        check_skip_part("the overlap on a duplicate: MPI_Comm_dup not available");
    }
    if (t_rank == 0)
        printf("coll_overlap: passed at np %d%s\n", t_size, t_device ? " (device buffers)" : "");
    tb_pool_drain();
    MPI_OK(MPI_Finalize());
    return 0;
}
