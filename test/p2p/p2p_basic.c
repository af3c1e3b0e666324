/*
 * Point-to-point basics: every send mode, blocking and nonblocking, sizes
 * from 0 bytes to rendezvous, self messages, MPI_PROC_NULL, status fields,
 * Get_count / Get_elements, Sendrecv(_replace), Isendrecv(_replace), and
 * synchronous sends completing only after the match.
 */
#include "p2p_test.h"

static const size_t sizes[] = { 0, 1, 7, 64, 1000, 4096, 8192, 12000, 65536, 300001, 2u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void ring_modes(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    size_t max = sizes[NSIZES - 1];
    char *sbuf = malloc(max), *rbuf = malloc(max);
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k];
        for (int mode = 0; mode < 5; mode++) {
            int seq = (int)k * 8 + mode;
            t_fill(sbuf, n, t_rank, seq);
            memset(rbuf, 0, n);
            MPI_Request rr, sr;
            MPI_Status st;
            MPI_OK(MPI_Irecv(rbuf, (int)n, MPI_BYTE, from, seq, MPI_COMM_WORLD, &rr));
            t_barrier(); /* receives are posted: Rsend is legal */
            switch (mode) {
            case 0: MPI_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, to, seq, MPI_COMM_WORLD)); break;
            case 1: MPI_OK(MPI_Ssend(sbuf, (int)n, MPI_BYTE, to, seq, MPI_COMM_WORLD)); break;
            case 2: MPI_OK(MPI_Rsend(sbuf, (int)n, MPI_BYTE, to, seq, MPI_COMM_WORLD)); break;
            case 3:
                MPI_OK(MPI_Isend(sbuf, (int)n, MPI_BYTE, to, seq, MPI_COMM_WORLD, &sr));
                MPI_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
                CHECK(sr == MPI_REQUEST_NULL, "request not freed by Wait");
                break;
            case 4:
                MPI_OK(MPI_Issend(sbuf, (int)n, MPI_BYTE, to, seq, MPI_COMM_WORLD, &sr));
                MPI_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
                break;
            }
            MPI_OK(MPI_Wait(&rr, &st));
            int cnt = -1;
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
            CHECK(st.MPI_SOURCE == from && st.MPI_TAG == seq && cnt == (int)n,
                  "mode %d size %zu: status source %d tag %d count %d", mode, n, st.MPI_SOURCE,
                  st.MPI_TAG, cnt);
            t_expect(rbuf, n, from, seq, "ring message");
        }
    }
    free(sbuf);
    free(rbuf);
}

static void self_messages(void)
{
    int a[1000], b[1000];
    for (int i = 0; i < 1000; i++)
        a[i] = i * 3 + t_rank;
    MPI_Request r;
    MPI_Status st;
    /* send first (eager, unexpected), then receive */
    MPI_OK(MPI_Isend(a, 10, MPI_INT, t_rank, 1001, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Recv(b, 10, MPI_INT, t_rank, 1001, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(memcmp(a, b, 10 * sizeof(int)) == 0 && st.MPI_SOURCE == t_rank, "self eager");
    /* large to self (rendezvous through get) */
    static char big[1 << 20], bigr[1 << 20];
    t_fill(big, sizeof big, t_rank, 77);
    MPI_OK(MPI_Isend(big, sizeof big, MPI_BYTE, t_rank, 1002, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Recv(bigr, sizeof bigr, MPI_BYTE, MPI_ANY_SOURCE, 1002, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    t_expect(bigr, sizeof bigr, t_rank, 77, "self rendezvous");
    CHECK(st.MPI_TAG == 1002 && st.MPI_SOURCE == t_rank, "tag %d", st.MPI_TAG);
    /* synchronous to self: completes once matched */
    MPI_OK(MPI_Issend(a, 1000, MPI_INT, t_rank, 1003, MPI_COMM_WORLD, &r));
    int flag = 0;
    for (int i = 0; i < 100; i++)
        MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "Issend to self completed before the receive was posted");
    MPI_OK(MPI_Recv(b, 1000, MPI_INT, t_rank, 1003, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(memcmp(a, b, sizeof a) == 0, "self ssend data");
}

static void proc_null(void)
{
    int x = 5;
    MPI_Status st;
    MPI_Request r;
    MPI_OK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Ssend(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    st.MPI_SOURCE = 99;
    MPI_OK(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    int cnt = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0 && x == 5,
          "Recv from PROC_NULL: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Irecv PROC_NULL");
    /* nothing from nobody: MPI_DATATYPE_NULL is accepted (as MPICH) */
    st.MPI_SOURCE = 99;
    MPI_OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Recv DATATYPE_NULL from PROC_NULL: %d", st.MPI_SOURCE);
    MPI_OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    st.MPI_SOURCE = 99;
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && cnt == 0, "Irecv DATATYPE_NULL from PROC_NULL");
    MPI_OK(MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &x, 1, MPI_INT, MPI_PROC_NULL, 0,
                        MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Sendrecv PROC_NULL");
    int flag = 0;
    MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL, "Iprobe PROC_NULL");
}

static void counts(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    char c[7] = "abcdef";
    char r[16];
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(c, 7, MPI_CHAR, to, 11, r, 16, MPI_CHAR, from, 11, MPI_COMM_WORLD, &st));
    int cnt;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == MPI_UNDEFINED, "7 bytes as MPI_INT: count %d", cnt);
    MPI_OK(MPI_Get_count(&st, MPI_CHAR, &cnt));
    CHECK(cnt == 7, "count %d", cnt);
    MPI_OK(MPI_Get_elements(&st, MPI_CHAR, &cnt));
    CHECK(cnt == 7, "elements %d", cnt);
    MPI_Count big;
    MPI_OK(MPI_Get_elements_x(&st, MPI_CHAR, &big));
    CHECK(big == 7, "elements_x %lld", (long long)big);
    MPI_OK(MPI_Get_count_c(&st, MPI_CHAR, &big));
    CHECK(big == 7, "count_c %lld", (long long)big);
    /* Status_set_elements then Get_elements: round trip */
    MPI_Status s2;
    MPI_OK(MPI_Status_set_elements(&s2, MPI_DOUBLE, 5));
    MPI_OK(MPI_Get_elements(&s2, MPI_DOUBLE, &cnt));
    CHECK(cnt == 5, "set/get elements %d", cnt);
    MPI_OK(MPI_Get_count(&s2, MPI_BYTE, &cnt));
    CHECK(cnt == 40, "set elements -> %d bytes", cnt);
    /* the big-count form: more elements than an int holds */
    MPI_OK(MPI_Status_set_elements_c(&s2, MPI_DOUBLE, (MPI_Count)3 << 30));
    MPI_OK(MPI_Get_elements_c(&s2, MPI_DOUBLE, &big));
    CHECK(big == (MPI_Count)3 << 30, "set/get elements_c %lld", (long long)big);
    MPI_OK(MPI_Get_elements(&s2, MPI_DOUBLE, &cnt));
    CHECK(cnt == MPI_UNDEFINED, "3 Gi elements as int: %d", cnt);
    MPI_OK(MPI_Status_set_cancelled(&s2, 1));
    int flag;
    MPI_OK(MPI_Test_cancelled(&s2, &flag));
    CHECK(flag, "set_cancelled");
    MPI_OK(MPI_Status_set_source(&s2, 3));
    MPI_OK(MPI_Status_set_tag(&s2, 4));
    MPI_OK(MPI_Status_set_error(&s2, MPI_ERR_OTHER));
    int a, b, e;
    MPI_OK(MPI_Status_get_source(&s2, &a));
    MPI_OK(MPI_Status_get_tag(&s2, &b));
    MPI_OK(MPI_Status_get_error(&s2, &e));
    CHECK(a == 3 && b == 4 && e == MPI_ERR_OTHER, "status get/set");
    /* zero-byte message: count 0, right source and tag */
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, to, 12, NULL, 0, MPI_INT, from, 12, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 0 && st.MPI_SOURCE == from && st.MPI_TAG == 12, "zero-byte message");
}

static void sendrecv_forms(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    enum { N = 100000 };
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    for (int n = 1; n <= N; n *= 10) {
        for (int i = 0; i < n; i++)
            a[i] = t_rank * 1000000 + i;
        MPI_Status st;
        MPI_OK(MPI_Sendrecv_replace(a, n, MPI_INT, to, 20, from, 20, MPI_COMM_WORLD, &st));
        for (int i = 0; i < n; i++)
            CHECK(a[i] == from * 1000000 + i, "Sendrecv_replace n=%d [%d]=%d", n, i, a[i]);
        MPI_Request r;
        for (int i = 0; i < n; i++)
            a[i] = t_rank * 1000000 + i;
        MPI_OK(MPI_Isendrecv(a, n, MPI_INT, to, 21, b, n, MPI_INT, from, 21, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 21, "Isendrecv status");
        for (int i = 0; i < n; i++)
            CHECK(b[i] == from * 1000000 + i, "Isendrecv n=%d [%d]", n, i);
        MPI_OK(MPI_Isendrecv_replace(a, n, MPI_INT, to, 22, from, 22, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, &st));
        int cnt;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == n, "Isendrecv_replace count %d", cnt);
        for (int i = 0; i < n; i++)
            CHECK(a[i] == from * 1000000 + i, "Isendrecv_replace n=%d [%d]", n, i);
    }
    free(a);
    free(b);
}

/* An Issend must not complete before the receiver matched it. */
static void ssend_waits_for_match(void)
{
    if (t_size < 2)
        return;
    int x = 42, go = 1;
    for (int big = 0; big < 2; big++) {
        size_t n = big ? 1 << 20 : 4;
        char *buf = calloc(1, n);
        if (t_rank == 0) {
            MPI_Request r;
            int flag = 0;
            MPI_OK(MPI_Issend(buf, (int)n, MPI_BYTE, 1, 50, MPI_COMM_WORLD, &r));
            for (int i = 0; i < 2000 && !flag; i++)
                MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "Issend (%zu bytes) completed before the receive was posted", n);
            MPI_OK(MPI_Send(&go, 1, MPI_INT, 1, 51, MPI_COMM_WORLD));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else if (t_rank == 1) {
            MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Recv(buf, (int)n, MPI_BYTE, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        free(buf);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    ring_modes();
    self_messages();
    proc_null();
    counts();
    sendrecv_forms();
    ssend_waits_for_match();
    return check_mpi_finalize("p2p_basic");
}
