/*
 * Probes: MPI_Probe / MPI_Iprobe with wildcards, matched probes
 * (MPI_Mprobe / MPI_Improbe + MPI_Mrecv / MPI_Imrecv) for eager and
 * rendezvous messages, MPI_MESSAGE_NO_PROC, and that a matched message is
 * no longer seen by other receives.
 */
#include "p2p_test.h"

static void probe_then_recv(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    size_t lens[] = { 0, 5, 3000, 200000 };
    for (int k = 0; k < 4; k++) {
        size_t n = lens[k];
        char *s = malloc(n + 1);
        t_fill(s, n, t_rank, k);
        MPI_Request r;
        MPI_OK(MPI_Isend(s, (int)n, MPI_BYTE, to, 100 + k, MPI_COMM_WORLD, &r));
        MPI_Status st;
        /* blocking probe, wildcard source and tag but our own tag range */
        MPI_OK(MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int cnt;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 100 + k && cnt == (int)n,
              "probe: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
        /* probing again sees the same message */
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 100 + k, MPI_COMM_WORLD, &flag, &st));
        CHECK(st.MPI_TAG == 100 + k, "iprobe tag");
        char *b = malloc((size_t)cnt + 1);
        MPI_OK(MPI_Recv(b, cnt, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
        t_expect(b, n, from, k, "probed message");
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        free(s);
        free(b);
    }
    int flag = 1;
    MPI_OK(MPI_Iprobe(from, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "Iprobe found a message nobody sent");
}

static void matched_probe(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    size_t lens[] = { 0, 8, 5000, 300000 };
    for (int k = 0; k < 4; k++) {
        size_t n = lens[k];
        char *s1 = malloc(n + 1), *s2 = malloc(n + 1), *b = malloc(n + 1);
        t_fill(s1, n, t_rank, 10 + k);
        t_fill(s2, n, t_rank, 20 + k);
        MPI_Request r[2];
        MPI_OK(MPI_Isend(s1, (int)n, MPI_BYTE, to, 200, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Isend(s2, (int)n, MPI_BYTE, to, 200, MPI_COMM_WORLD, &r[1]));
        MPI_Message msg;
        MPI_Status st;
        if (k % 2 == 0) {
            MPI_OK(MPI_Mprobe(from, 200, MPI_COMM_WORLD, &msg, &st));
        } else {
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, 200, MPI_COMM_WORLD, &flag, &msg, &st));
        }
        CHECK(msg != MPI_MESSAGE_NULL && st.MPI_SOURCE == from, "mprobe");
        /* the second message is the one a receive now gets */
        MPI_OK(MPI_Recv(b, (int)n, MPI_BYTE, from, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        t_expect(b, n, from, 20 + k, "message after the matched one");
        memset(b, 0, n);
        if (k < 2) {
            MPI_OK(MPI_Mrecv(b, (int)n, MPI_BYTE, &msg, &st));
        } else {
            MPI_Request q;
            MPI_OK(MPI_Imrecv(b, (int)n, MPI_BYTE, &msg, &q));
            MPI_OK(MPI_Wait(&q, &st));
        }
        CHECK(msg == MPI_MESSAGE_NULL, "message handle not reset");
        int cnt;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == (int)n && st.MPI_SOURCE == from && st.MPI_TAG == 200, "mrecv status");
        t_expect(b, n, from, 10 + k, "matched message");
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        free(s1);
        free(s2);
        free(b);
    }
}

static void no_proc(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int x = 7;
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "mprobe PROC_NULL");
    MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG &&
              x == 7, "mrecv NO_PROC");
    int flag = 0;
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "improbe PROC_NULL");
    MPI_Request q;
    MPI_OK(MPI_Imrecv(&x, 1, MPI_INT, &msg, &q));
    MPI_OK(MPI_Wait(&q, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "imrecv NO_PROC");
    MPI_OK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "probe PROC_NULL");
}

/* MPI_Mrecv's errors go to the errhandler of the message's communicator:
 * a truncated matched receive on a duplicate with MPI_ERRORS_RETURN returns
 * MPI_ERR_TRUNCATE while MPI_COMM_WORLD and MPI_COMM_SELF keep the default
 * MPI_ERRORS_ARE_FATAL (raised on the default handler, it ended the job). */
static void mrecv_errhandler(void)
{
    if (t_size < 2)
        return;
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int v[2] = { 5, 6 }, x = 0;
    if (t_rank == 1)
        MPI_OK(MPI_Send(v, 2, MPI_INT, 0, 4, c));
    if (t_rank == 0) {
        MPI_Message msg;
        MPI_Status st;
        MPI_Request q;
        int cls = 0;
        MPI_OK(MPI_Mprobe(1, 4, c, &msg, &st));
        int rc = MPI_Mrecv(&x, 1, MPI_INT, &msg, &st);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE && msg == MPI_MESSAGE_NULL, "truncated MPI_Mrecv: class %d",
              cls);
        MPI_OK(MPI_Send(v, 2, MPI_INT, 0, 4, c));   /* to itself, for MPI_Imrecv */
        MPI_OK(MPI_Mprobe(0, 4, c, &msg, &st));
        rc = MPI_Imrecv(&x, 1, MPI_INT, &msg, &q);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&q, &st);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "truncated MPI_Imrecv: class %d", cls);
    }
    MPI_OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    probe_then_recv();
    t_barrier();
    matched_probe();
    t_barrier();
    no_proc();
    t_barrier();
    mrecv_errhandler();
    return check_mpi_finalize("p2p_probe");
}
