/*
 * Requests: persistent requests (Send/Ssend/Rsend/Bsend/Recv_init, Start,
 * Startall), generalized requests, MPI_Cancel of receives and sends,
 * MPI_Request_free, MPI_Request_get_status (+ _any/_all/_some), and the
 * Wait/Test any/some/all forms with null and inactive requests.
 */
#include "p2p_test.h"

static void persistent(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    enum { N = 20000 };
    int *s = malloc(N * sizeof(int)), *r = malloc(N * sizeof(int));
    MPI_Request q[2];
    for (int mode = 0; mode < 3; mode++) {
        for (int n = 1; n <= N; n *= 100) {
            MPI_OK(MPI_Recv_init(r, n, MPI_INT, from, 30, MPI_COMM_WORLD, &q[0]));
            if (mode == 0)
                MPI_OK(MPI_Send_init(s, n, MPI_INT, to, 30, MPI_COMM_WORLD, &q[1]));
            else if (mode == 1)
                MPI_OK(MPI_Ssend_init(s, n, MPI_INT, to, 30, MPI_COMM_WORLD, &q[1]));
            else
                MPI_OK(MPI_Rsend_init(s, n, MPI_INT, to, 30, MPI_COMM_WORLD, &q[1]));
            /* inactive: Wait and Test return at once with an empty status */
            MPI_Status st;
            int flag = 0;
            MPI_OK(MPI_Test(&q[0], &flag, &st));
            CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
                  "inactive persistent request: Test flag %d source %d", flag, st.MPI_SOURCE);
            for (int it = 0; it < 5; it++) {
                for (int i = 0; i < n; i++)
                    s[i] = t_rank * 7 + i + it;
                MPI_OK(MPI_Start(&q[0]));
                t_barrier(); /* receives posted before Rsend */
                MPI_OK(MPI_Start(&q[1]));
                MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
                CHECK(q[0] != MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL,
                      "persistent request freed by Waitall");
                for (int i = 0; i < n; i++)
                    CHECK(r[i] == from * 7 + i + it, "persistent mode %d n %d it %d: [%d]=%d", mode,
                          n, it, i, r[i]);
            }
            MPI_OK(MPI_Startall(2, q));
            MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
            MPI_OK(MPI_Request_free(&q[0]));
            MPI_OK(MPI_Request_free(&q[1]));
            CHECK(q[0] == MPI_REQUEST_NULL, "Request_free");
        }
    }
    /* Bsend_init */
    int bsize = 4 * (1000 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));
    MPI_OK(MPI_Bsend_init(s, 1000, MPI_INT, to, 31, MPI_COMM_WORLD, &q[1]));
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 1000; i++)
            s[i] = i * it + t_rank;
        MPI_OK(MPI_Start(&q[1]));
        MPI_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
        MPI_OK(MPI_Recv(r, 1000, MPI_INT, from, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 1000; i++)
            CHECK(r[i] == i * it + from, "Bsend_init data");
    }
    MPI_OK(MPI_Request_free(&q[1]));
    void *p;
    int psize;
    MPI_OK(MPI_Buffer_detach(&p, &psize));
    CHECK(p == bbuf && psize == bsize, "Buffer_detach returned %p/%d", p, psize);
    free(bbuf);
    free(s);
    free(r);
}

/* ---------------------------------------------------------- generalized */

typedef struct greq_state {
    int queried, freed, cancelled;
} greq_state_t;

static int q_fn(void *extra, MPI_Status *st)
{
    greq_state_t *g = extra;
    g->queried++;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, g->cancelled != 0);
    st->MPI_SOURCE = 4242;
    st->MPI_TAG = 77;
    return MPI_SUCCESS;
}

static int f_fn(void *extra)
{
    ((greq_state_t *)extra)->freed++;
    return MPI_SUCCESS;
}

static int c_fn(void *extra, int complete)
{
    ((greq_state_t *)extra)->cancelled = 1 + complete;
    return MPI_SUCCESS;
}

static void generalized(void)
{
    greq_state_t g = { 0, 0, 0 };
    MPI_Request r;
    MPI_OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &g, &r));
    int flag = 1;
    MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "generalized request complete before Grequest_complete");
    MPI_OK(MPI_Grequest_complete(r));
    MPI_Status st;
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == 4242, "get_status of a generalized request");
    MPI_OK(MPI_Wait(&r, &st));
    int cnt;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == 4242 && st.MPI_TAG == 77 && cnt == 3,
          "greq status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
    CHECK(g.queried >= 1 && g.freed == 1, "query %d free %d", g.queried, g.freed);

    /* cancel before completion, freed with Request_free after completion */
    greq_state_t h = { 0, 0, 0 };
    MPI_OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &h, &r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(h.cancelled == 1, "cancel_fn called with complete=%d", h.cancelled - 1);
    MPI_Request keep = r;
    MPI_OK(MPI_Request_free(&r));
    CHECK(h.freed == 0, "free_fn ran before completion");
    MPI_OK(MPI_Grequest_complete(keep));
    CHECK(h.freed == 1, "free_fn not run at completion of a freed request");

    /* cancel after Grequest_complete: cancel_fn still runs, complete true
     * (MPI-4.1 13.2; mpi4py's test_grequest) */
    greq_state_t k = { 0, 0, 0 };
    MPI_OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &k, &r));
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(k.cancelled == 2, "cancel_fn after completion: %s",
          k.cancelled ? "called with complete=0" : "not called");
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "the query after cancel_fn did not report the cancel");
    CHECK(k.freed == 1, "free_fn ran %d times", k.freed);
}

/* ---------------------------------------------------------- cancel */

static void cancel(void)
{
    int x = 0;
    MPI_Request r;
    MPI_Status st;
    int flag = -1;
    /* a receive nobody will match */
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, t_rank, 999, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "posted receive not cancelled");
    /* a wildcard one */
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 998, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "ANY_SOURCE receive not cancelled");
    /* a send: either cancelled (then nothing arrives) or delivered */
    int v = 5;
    MPI_OK(MPI_Isend(&v, 1, MPI_INT, t_rank, 997, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    if (!flag) {
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, t_rank, 997, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(x == 5, "send not cancelled but data wrong");
    } else {
        int found = 1;
        MPI_OK(MPI_Iprobe(t_rank, 997, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE));
        CHECK(!found, "cancelled send was delivered");
    }
    /* cancelling a completed receive does nothing */
    MPI_OK(MPI_Isend(&v, 1, MPI_INT, t_rank, 996, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, t_rank, 996, MPI_COMM_WORLD, &r));
    do
        MPI_OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
    while (!flag);
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag && x == 5, "completed receive reported cancelled");
}

/* ---------------------------------------------------------- request arrays */

static void arrays(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    MPI_Request q[6];
    MPI_Status st[6];
    int vals[3] = { 1, 2, 3 }, in[3] = { 0, 0, 0 };
    int idx, flag, out, ind[6];
    /* all null */
    for (int i = 0; i < 6; i++)
        q[i] = MPI_REQUEST_NULL;
    MPI_OK(MPI_Waitall(6, q, st));
    MPI_OK(MPI_Waitany(6, q, &idx, &st[0]));
    CHECK(idx == MPI_UNDEFINED, "Waitany on nulls: index %d", idx);
    MPI_OK(MPI_Testany(6, q, &idx, &flag, &st[0]));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany on nulls");
    MPI_OK(MPI_Waitsome(6, q, &out, ind, st));
    CHECK(out == MPI_UNDEFINED, "Waitsome on nulls: %d", out);
    MPI_OK(MPI_Testall(6, q, &flag, st));
    CHECK(flag, "Testall on nulls");
    /* receives interleaved with nulls; sends come later */
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, from, 40 + i, MPI_COMM_WORLD, &q[2 * i]));
    MPI_OK(MPI_Request_get_status_any(6, q, &idx, &flag, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Request_get_status_all(6, q, &flag, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Request_get_status_some(6, q, &out, ind, MPI_STATUSES_IGNORE));
    t_barrier();
    for (int i = 2; i >= 0; i--)
        MPI_OK(MPI_Send(&vals[i], 1, MPI_INT, to, 40 + i, MPI_COMM_WORLD));
    int done = 0;
    while (done < 3) {
        MPI_OK(MPI_Waitany(6, q, &idx, &st[0]));
        CHECK(idx >= 0 && idx % 2 == 0 && st[0].MPI_TAG == 40 + idx / 2, "Waitany index %d", idx);
        done++;
    }
    CHECK(in[0] == 1 && in[1] == 2 && in[2] == 3, "Waitany data");
    /* Waitsome / Testsome */
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, from, 50 + i, MPI_COMM_WORLD, &q[i]));
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Send(&vals[i], 1, MPI_INT, to, 50 + i, MPI_COMM_WORLD));
    done = 0;
    while (done < 3) {
        MPI_OK(MPI_Testsome(3, q, &out, ind, st));
        if (out == MPI_UNDEFINED)
            break;
        for (int k = 0; k < out; k++)
            CHECK(st[k].MPI_TAG == 50 + ind[k] && in[ind[k]] == ind[k] + 1, "Testsome");
        done += out;
    }
    CHECK(done == 3, "Testsome completed %d", done);
    /* Request_get_status on a pending request, then the message arrives */
    MPI_OK(MPI_Irecv(&in[0], 1, MPI_INT, from, 60, MPI_COMM_WORLD, &q[0]));
    t_barrier();
    MPI_OK(MPI_Send(&vals[2], 1, MPI_INT, to, 60, MPI_COMM_WORLD));
    do
        MPI_OK(MPI_Request_get_status(q[0], &flag, &st[0]));
    while (!flag);
    CHECK(q[0] != MPI_REQUEST_NULL && st[0].MPI_TAG == 60, "get_status keeps the request");
    MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
    CHECK(in[0] == 3, "data after get_status");
    /* Request_free of a pending send: the message still arrives */
    MPI_OK(MPI_Isend(&vals[1], 1, MPI_INT, to, 61, MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Request_free(&q[0]));
    MPI_OK(MPI_Recv(&in[1], 1, MPI_INT, from, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[1] == 2, "freed send delivered");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    persistent();
    t_barrier();
    generalized();
    cancel();
    t_barrier();
    arrays();
    return check_mpi_finalize("p2p_requests");
}
