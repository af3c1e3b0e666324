/*
 * Partitioned communication: a ring of partitioned sends started many
 * times, partitions marked ready one by one (out of order), by range and
 * by list, MPI_Parrived polled until the data is there; small and large
 * (rendezvous) messages; matching in the order of the initializations;
 * MPI_PROC_NULL; a wildcard user receive posted
 * meanwhile never takes partitioned data; and the errors (partition out of
 * range, marked twice, wrong direction, request not started).  Under
 * MPI_THREAD_MULTIPLE, threads fill and mark the partitions of one send.
 */
#include "p2p_test.h"
#include <pthread.h>

enum { PARTS = 8 };

static void ring(MPI_Count count, int rounds, int how)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    size_t bytes = (size_t)PARTS * (size_t)count * sizeof(int);
    int *sbuf = calloc(1, bytes ? bytes : 1), *rbuf = calloc(1, bytes ? bytes : 1);
    MPI_Request s, r;
    MPI_OK(MPI_Psend_init(sbuf, PARTS, count, MPI_INT, to, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(rbuf, PARTS, count, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int k = 0; k < rounds; k++) {
        memset(rbuf, 0xee, bytes);
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Start(&s));
        for (int p = PARTS - 1; p >= 0; p--) {   /* fill and mark in reverse order */
            for (MPI_Count i = 0; i < count; i++)
                sbuf[p * count + i] = t_rank * 1000000 + k * 10000 + p * 100 + (int)(i % 97);
            if (how == 0)
                MPI_OK(MPI_Pready(p, s));
        }
        if (how == 1) {
            MPI_OK(MPI_Pready_range(0, PARTS / 2 - 1, s));
            MPI_OK(MPI_Pready_range(PARTS / 2, PARTS - 1, s));
        } else if (how == 2) {
            int odd[PARTS / 2], even[PARTS / 2];
            for (int i = 0; i < PARTS / 2; i++)
                odd[i] = 2 * i + 1, even[i] = 2 * i;
            MPI_OK(MPI_Pready_list(PARTS / 2, odd, s));
            MPI_OK(MPI_Pready_list(PARTS / 2, even, s));
        }
        for (int p = 0; p < PARTS; p++) {
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Parrived(r, p, &flag));
            for (MPI_Count i = 0; i < count; i++)
                CHECK(rbuf[p * count + i] == from * 1000000 + k * 10000 + p * 100 + (int)(i % 97),
                      "count %lld round %d partition %d element %lld: %d", (long long)count, k, p,
                      (long long)i, rbuf[p * count + i]);
        }
        MPI_Status st;
        MPI_OK(MPI_Wait(&r, &st));
        int n;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 7 && n == PARTS * count,
              "receive status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, n);
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    }
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
    CHECK(s == MPI_REQUEST_NULL && r == MPI_REQUEST_NULL, "Request_free did not reset");
    free(sbuf);
    free(rbuf);
}

/* A wildcard-tag receive posted before partitioned traffic only gets the
 * ordinary message sent afterwards. */
static void no_crosstalk(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    int got = -1, mine = t_rank, x[PARTS], y[PARTS];
    MPI_Request any, s, r;
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD, &any));
    MPI_OK(MPI_Psend_init(x, PARTS, 1, MPI_INT, to, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(y, PARTS, 1, MPI_INT, from, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    MPI_OK(MPI_Startall(1, &r));
    MPI_OK(MPI_Startall(1, &s));
    for (int p = 0; p < PARTS; p++) {
        x[p] = 50 + p;
        MPI_OK(MPI_Pready(p, s));
    }
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    for (int p = 0; p < PARTS; p++)
        CHECK(y[p] == 50 + p, "partition %d: %d", p, y[p]);
    int flag = 1;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));   /* everyone's partitioned traffic is done */
    MPI_OK(MPI_Test(&any, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a wildcard receive took partitioned data (%d)", got);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));   /* everyone has looked before anyone sends */
    MPI_OK(MPI_Send(&mine, 1, MPI_INT, to, 9, MPI_COMM_WORLD));
    MPI_Status st;
    MPI_OK(MPI_Wait(&any, &st));
    CHECK(got == from && st.MPI_TAG == 9, "wildcard receive got %d tag %d", got, st.MPI_TAG);
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
}

/* Matching follows the order of the initialization calls, not of the
 * starts: three sends with one tag, started and completed last-initialized
 * first, still land in the receives initialized in the same order as the
 * sends (small and rendezvous sizes, on a duplicate communicator that is
 * freed afterwards, with its record of initializations). */
static void init_order(int count)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int *x[3], *y[3];
    MPI_Request s[3], r[3];
    for (int i = 0; i < 3; i++) {
        x[i] = malloc((size_t)PARTS * (size_t)count * sizeof(int));
        y[i] = calloc((size_t)PARTS * (size_t)count, sizeof(int));
        MPI_OK(MPI_Psend_init(x[i], PARTS, count, MPI_INT, to, 3, c, MPI_INFO_NULL, &s[i]));
        MPI_OK(MPI_Precv_init(y[i], PARTS, count, MPI_INT, from, 3, c, MPI_INFO_NULL, &r[i]));
    }
    MPI_OK(MPI_Startall(3, r));
    for (int i = 2; i >= 0; i--) {
        MPI_OK(MPI_Start(&s[i]));
        for (int e = 0; e < PARTS * count; e++)
            x[i][e] = 1000 * i + e;
        MPI_OK(MPI_Pready_range(0, PARTS - 1, s[i]));
        MPI_OK(MPI_Wait(&s[i], MPI_STATUS_IGNORE));
    }
    MPI_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++) {
        for (int e = 0; e < PARTS * count; e++)
            if (y[i][e] != 1000 * i + e) {
                CHECK(0, "receive %d (count %d), element %d: %d, want %d", i, count, e, y[i][e],
                      1000 * i + e);
                break;
            }
        MPI_OK(MPI_Request_free(&s[i]));
        MPI_OK(MPI_Request_free(&r[i]));
        free(x[i]);
        free(y[i]);
    }
    MPI_OK(MPI_Comm_free(&c));
}

static void proc_null(void)
{
    int b[4];
    MPI_Request s, r;
    MPI_OK(MPI_Psend_init(b, 4, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(b, 4, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    MPI_OK(MPI_Start(&s));
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Pready_range(0, 3, s));
    MPI_Status st;
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL receive: source %d", st.MPI_SOURCE);
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
}

typedef struct {
    MPI_Request s;
    int *buf, first, round;
} marker_t;

static void *mark_two(void *arg)
{
    marker_t *m = arg;
    for (int p = m->first; p < m->first + 2; p++) {
        m->buf[p] = t_rank * 100 + m->round * 10 + p;
        MPI_OK(MPI_Pready(p, m->s));
    }
    return NULL;
}

static void threads(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    int sbuf[PARTS], rbuf[PARTS];
    MPI_Request s, r;
    MPI_OK(MPI_Psend_init(sbuf, PARTS, 1, MPI_INT, to, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(rbuf, PARTS, 1, MPI_INT, from, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int k = 0; k < 20; k++) {
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Start(&s));
        pthread_t th[PARTS / 2];
        marker_t m[PARTS / 2];
        for (int i = 0; i < PARTS / 2; i++) {
            m[i] = (marker_t){ s, sbuf, 2 * i, k };
            CHECK(pthread_create(&th[i], NULL, mark_two, &m[i]) == 0, "pthread_create");
        }
        for (int i = 0; i < PARTS / 2; i++)
            pthread_join(th[i], NULL);
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int p = 0; p < PARTS; p++)
            CHECK(rbuf[p] == from * 100 + k * 10 + p, "threads: round %d partition %d: %d", k, p,
                  rbuf[p]);
    }
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
}

static void errors(void)
{
    int b[4], flag;
    MPI_Request s, r, plain;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Psend_init(b, 4, 1, MPI_INT, t_rank, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(b, 4, 1, MPI_INT, t_rank, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    MPI_FAILS(MPI_Pready(0, s), MPI_ERR_REQUEST);             /* not started */
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Start(&s));
    MPI_FAILS(MPI_Pready(4, s), MPI_ERR_ARG);
    MPI_FAILS(MPI_Pready(-1, s), MPI_ERR_ARG);
    MPI_FAILS(MPI_Pready_range(2, 1, s), MPI_ERR_ARG);
    int bad[2] = { 1, 9 };
    MPI_FAILS(MPI_Pready_list(2, bad, s), MPI_ERR_ARG);       /* nothing marked */
    MPI_FAILS(MPI_Pready(0, r), MPI_ERR_REQUEST);             /* a receive */
    MPI_FAILS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST);    /* a send */
    MPI_FAILS(MPI_Parrived(r, 4, &flag), MPI_ERR_ARG);
    MPI_OK(MPI_Pready(1, s));
    MPI_FAILS(MPI_Pready(1, s), MPI_ERR_ARG);                 /* twice */
    MPI_OK(MPI_Pready_list(3, (int[]){ 0, 2, 3 }, s));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Irecv(b, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &plain));
    MPI_FAILS(MPI_Pready(0, plain), MPI_ERR_REQUEST);         /* not partitioned */
    MPI_OK(MPI_Wait(&plain, MPI_STATUS_IGNORE));
    MPI_FAILS(MPI_Psend_init(b, -1, 1, MPI_INT, t_rank, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &plain),
              MPI_ERR_ARG);
    MPI_FAILS(MPI_Precv_init(b, 4, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &plain), MPI_ERR_RANK);
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
    ring(1, 20, 0);
    ring(1000, 5, 1);       /* 32 KB: rendezvous on sm */
    ring(40000, 3, 2);      /* 1.28 MB */
    ring(0, 3, 0);
    no_crosstalk();
    init_order(1);
    init_order(4000);       /* 128 KB per message: rendezvous */
    proc_null();
    if (provided == MPI_THREAD_MULTIPLE)
        threads();
    errors();
    return check_mpi_finalize("p2p_part");
}
