/*
 * Point-to-point across communicators: matching is per communicator
 * (same ranks and tags on a duplicate never match), messages that arrive
 * before the receiver has created the communicator (early arrivals), a
 * communicator freed while a receive on it is pending, ranks translated
 * through a split with reversed order, and intercommunicators.  Exits 77
 * when the communicator constructors are not implemented yet.
 */
#include "p2p_test.h"

static int supported(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return 1;
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "%s failed with class %d", what, cls);
    if (t_rank == 0)
        check_skip_part("the part that needs %s: not implemented", what);
    return 0;
}

static void isolation(MPI_Comm dup)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    int a = 1, b = 2, ra = 0, rb = 0;
    MPI_Request q[4];
    /* the same (source, tag) on two communicators: each receive gets its own */
    MPI_OK(MPI_Irecv(&rb, 1, MPI_INT, from, 5, dup, &q[0]));
    MPI_OK(MPI_Irecv(&ra, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Isend(&a, 1, MPI_INT, to, 5, MPI_COMM_WORLD, &q[2]));
    MPI_OK(MPI_Isend(&b, 1, MPI_INT, to, 5, dup, &q[3]));
    MPI_OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
    CHECK(ra == 1 && rb == 2, "messages crossed communicators: %d %d", ra, rb);
    /* a wildcard receive on the duplicate does not see WORLD's message */
    int flag = 1;
    MPI_OK(MPI_Isend(&a, 1, MPI_INT, to, 6, MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Recv(&ra, 1, MPI_INT, from, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "probe on the duplicate saw a message of MPI_COMM_WORLD");
}

/* Send on a brand-new communicator at once: the receiver may not have
 * created it yet when the messages arrive. */
static void early_arrivals(void)
{
    for (int round = 0; round < 5; round++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
        int v[3] = { t_rank, round, 7 }, r[3];
        MPI_Request q[3];
        for (int i = 0; i < 3; i++)
            MPI_OK(MPI_Isend(&v[i], 1, MPI_INT, to, i, c, &q[i]));
        for (int i = 0; i < 3; i++) {
            MPI_OK(MPI_Recv(&r[i], 1, MPI_INT, from, MPI_ANY_TAG, c, MPI_STATUS_IGNORE));
        }
        CHECK(r[0] == from && r[1] == round && r[2] == 7, "early arrivals out of order");
        MPI_OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
        MPI_OK(MPI_Comm_free(&c));
    }
}

/* MPI_Comm_free with a receive pending: the communicator lives on until
 * the receive completes. */
static void free_while_pending(void)
{
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    int x = -1, y = t_rank;
    MPI_Request rq, sq;
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, from, 9, c, &rq));
    MPI_OK(MPI_Isend(&y, 1, MPI_INT, to, 9, c, &sq));
    MPI_OK(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL, "Comm_free did not reset the handle");
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    CHECK(x == from, "receive on a freed communicator got %d", x);
}

static void reversed_split(void)
{
    MPI_Comm rev;
    if (!supported(MPI_Comm_split(MPI_COMM_WORLD, 0, t_size - t_rank, &rev), "MPI_Comm_split"))
        return;
    int r, n;
    MPI_OK(MPI_Comm_rank(rev, &r));
    MPI_OK(MPI_Comm_size(rev, &n));
    CHECK(r == t_size - 1 - t_rank && n == t_size, "split rank %d", r);
    int to = (r + 1) % n, from = (r + n - 1) % n, v = t_rank, got = -1;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, to, 3, &got, 1, MPI_INT, MPI_ANY_SOURCE, 3, rev, &st));
    CHECK(st.MPI_SOURCE == from && got == t_size - 1 - from, "split: source %d value %d",
          st.MPI_SOURCE, got);
    MPI_OK(MPI_Comm_free(&rev));
}

static void intercomm(void)
{
    if (t_size < 2)
        return;
    MPI_Comm half, inter;
    int color = t_rank % 2;
    if (!supported(MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &half), "MPI_Comm_split"))
        return;
    int rc = MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 77, &inter);
    if (!supported(rc, "MPI_Intercomm_create")) {
        MPI_Comm_free(&half);
        return;
    }
    int lr, rs;
    MPI_OK(MPI_Comm_rank(inter, &lr));
    MPI_OK(MPI_Comm_remote_size(inter, &rs));
    /* every rank sends to remote rank lr % rs and receives from anyone */
    int v = t_rank, got;
    MPI_Request q;
    MPI_OK(MPI_Isend(&v, 1, MPI_INT, lr % rs, 4, inter, &q));
    int lsize;
    MPI_OK(MPI_Comm_size(half, &lsize));
    /* how many remote ranks r have r % lsize == lr */
    int expect = 0;
    for (int r = 0; r < rs; r++)
        expect += (r % lsize) == lr;
    for (int i = 0; i < expect; i++) {
        MPI_Status st;
        MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 4, inter, &st));
        CHECK(got % 2 != color && st.MPI_SOURCE == got / 2, "intercomm: value %d source %d", got,
              st.MPI_SOURCE);
    }
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&half));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Comm dup;
    if (!supported(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup"))
        check_mpi_skip("MPI_Comm_dup is not implemented yet");
    isolation(dup);
    MPI_OK(MPI_Comm_free(&dup));
    early_arrivals();
    free_while_pending();
    reversed_split();
    t_barrier();
    intercomm();
    return check_mpi_finalize("p2p_comm");
}
