/*
 * Errors with MPI_ERRORS_RETURN: truncation (eager and rendezvous,
 * blocking and nonblocking, MPI_ERR_IN_STATUS from Waitall), invalid
 * ranks, tags, counts, datatypes, communicators, buffers and requests, and
 * buffered sends without (enough) buffer space (MPI_ERR_BUFFER).
 */
#include "p2p_test.h"

static void truncation(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    size_t lens[] = { 100, 6000, 1 << 20 };
    for (int k = 0; k < 3; k++) {
        size_t n = lens[k], small = n / 2;
        char *s = malloc(n), *r = malloc(n);
        t_fill(s, n, t_rank, k);
        memset(r, 0, n);
        MPI_Request q;
        MPI_Status st;
        /* blocking receive */
        MPI_OK(MPI_Isend(s, (int)n, MPI_BYTE, to, 70, MPI_COMM_WORLD, &q));
        st.MPI_ERROR = -1;
        MPI_FAILS(MPI_Recv(r, (int)small, MPI_BYTE, from, 70, MPI_COMM_WORLD, &st),
                  MPI_ERR_TRUNCATE);
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        t_expect(r, small, from, k, "truncated data");
        CHECK(r[small] == 0, "wrote past the receive buffer");
        int cnt;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 70 && cnt == (int)small,
              "truncated status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
        /* nonblocking receive: Wait returns the error */
        MPI_OK(MPI_Isend(s, (int)n, MPI_BYTE, to, 71, MPI_COMM_WORLD, &q));
        MPI_Request rq;
        MPI_OK(MPI_Irecv(r, (int)small, MPI_BYTE, from, 71, MPI_COMM_WORLD, &rq));
        MPI_FAILS(MPI_Wait(&rq, &st), MPI_ERR_TRUNCATE);
        CHECK(rq == MPI_REQUEST_NULL, "failed request not freed");
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        /* Waitall: MPI_ERR_IN_STATUS, the failing one's MPI_ERROR set */
        MPI_Request two[2];
        MPI_Status sts[2];
        MPI_OK(MPI_Irecv(r, (int)small, MPI_BYTE, from, 72, MPI_COMM_WORLD, &two[0]));
        MPI_OK(MPI_Isend(s, (int)n, MPI_BYTE, to, 72, MPI_COMM_WORLD, &two[1]));
        MPI_FAILS(MPI_Waitall(2, two, sts), MPI_ERR_IN_STATUS);
        int c0, c1;
        MPI_Error_class(sts[0].MPI_ERROR, &c0);
        MPI_Error_class(sts[1].MPI_ERROR, &c1);
        CHECK(c0 == MPI_ERR_TRUNCATE && c1 == MPI_SUCCESS, "statuses' errors %d %d", c0, c1);
        free(s);
        free(r);
    }
}

static void bad_arguments(void)
{
    int x = 0;
    MPI_Request q;
    MPI_FAILS(MPI_Send(&x, 1, MPI_INT, t_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    MPI_FAILS(MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    MPI_FAILS(MPI_Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    MPI_FAILS(MPI_Recv(&x, 1, MPI_INT, t_size + 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              MPI_ERR_RANK);
    MPI_FAILS(MPI_Isend(&x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD, &q), MPI_ERR_TAG);
    MPI_FAILS(MPI_Send(&x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    MPI_FAILS(MPI_Irecv(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &q), MPI_ERR_TAG);
    MPI_FAILS(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Recv(&x, -3, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    /* MPI_DATATYPE_NULL is accepted only for nothing from MPI_PROC_NULL */
    MPI_FAILS(MPI_Recv(&x, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    MPI_FAILS(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              MPI_ERR_TYPE);
    MPI_FAILS(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    MPI_FAILS(MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_FAILS(MPI_Isend(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    /* MPI_Start of a request that is not persistent */
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, t_rank, 80, MPI_COMM_WORLD, &q));
    MPI_FAILS(MPI_Start(&q), MPI_ERR_REQUEST);
    MPI_OK(MPI_Send(&x, 1, MPI_INT, t_rank, 80, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    /* an active persistent request cannot be started again */
    MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, t_rank, 81, MPI_COMM_WORLD, &q));
    MPI_OK(MPI_Start(&q));
    MPI_FAILS(MPI_Start(&q), MPI_ERR_REQUEST);
    MPI_OK(MPI_Send(&x, 1, MPI_INT, t_rank, 81, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Request_free(&q));
    /* errors at the API do not break later communication */
    int y = 99;
    MPI_OK(MPI_Sendrecv(&y, 1, MPI_INT, t_rank, 82, &x, 1, MPI_INT, t_rank, 82, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    CHECK(x == 99, "communication after errors");
}

static void bsend_errors(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    int x = 1;
    /* nothing attached */
    MPI_FAILS(MPI_Bsend(&x, 1, MPI_INT, to, 90, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    /* a buffer too small for one message */
    char small[64 + MPI_BSEND_OVERHEAD];
    MPI_OK(MPI_Buffer_attach(small, sizeof small));
    char *big = malloc(1 << 20);
    MPI_FAILS(MPI_Bsend(big, 4096, MPI_BYTE, to, 90, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_FAILS(MPI_Buffer_attach(small, sizeof small), MPI_ERR_BUFFER); /* attached twice */
    void *p;
    int ps;
    MPI_OK(MPI_Buffer_detach(&p, &ps));
    CHECK(p == small && ps == (int)sizeof small, "detach");
    /* exhaustion: room for 3 rendezvous-size messages nobody receives yet
     * (the 4th waits a second for one of them to leave, then fails) */
    enum { M = 256 * 1024 };
    int bsize = 3 * (M + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc((size_t)bsize);
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));
    t_fill(big, M, t_rank, 5);
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Bsend(big, M, MPI_BYTE, to, 91, MPI_COMM_WORLD));
    MPI_FAILS(MPI_Bsend(big, M, MPI_BYTE, to, 91, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));   /* nobody receives before every 4th send failed */
    /* the data were copied: the user buffer may change */
    memset(big, 0, M);
    char *r = malloc(M);
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Recv(r, M, MPI_BYTE, from, 91, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        t_expect(r, M, from, 5, "bsend data");
    }
    /* detach waits until the buffered messages are out */
    MPI_OK(MPI_Buffer_detach(&p, &ps));
    CHECK(p == bbuf && ps == bsize, "detach after exhaustion");
    /* MPI-4.1: a communicator's own buffer, flush, and automatic buffers */
    MPI_OK(MPI_Comm_attach_buffer(MPI_COMM_WORLD, bbuf, bsize));
    t_fill(big, M, t_rank, 6);
    MPI_OK(MPI_Bsend(big, M, MPI_BYTE, to, 92, MPI_COMM_WORLD));
    MPI_Request fq;
    MPI_OK(MPI_Comm_iflush_buffer(MPI_COMM_WORLD, &fq));
    MPI_OK(MPI_Recv(r, M, MPI_BYTE, from, 92, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    t_expect(r, M, from, 6, "comm buffer data");
    MPI_OK(MPI_Wait(&fq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_flush_buffer(MPI_COMM_WORLD));
    MPI_OK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &p, &ps));
    CHECK(p == bbuf, "comm detach");
    MPI_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_Bsend(big, M, MPI_BYTE, to, 93, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_Recv(r, M, MPI_BYTE, from, 93, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Buffer_flush());
    MPI_OK(MPI_Buffer_detach(&p, &ps));
    CHECK(p == MPI_BUFFER_AUTOMATIC, "automatic detach");
    free(bbuf);
    free(big);
    free(r);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    truncation();
    t_barrier();
    bad_arguments();
    t_barrier();
    bsend_errors();
    return check_mpi_finalize("p2p_errors");
}
