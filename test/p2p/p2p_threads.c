/*
 * MPI_THREAD_MULTIPLE stress: several threads per rank send and receive at
 * once, to every rank (itself included), with eager and rendezvous sizes,
 * one tag per thread, then ANY_SOURCE + ANY_TAG receives and matched probes
 * racing across threads.  Exits 77 when the library does not
 * provide MPI_THREAD_MULTIPLE.  P2P_THREADS_BIG=BYTES sets the rendezvous
 * size (default 100000; with RAIL_PML_RNDV_GET_MIN=1 and 300000, btl sm
 * shares the gets with their senders).
 */
#include "p2p_test.h"
#include <pthread.h>

#define T 4
static int iters = 60;
static size_t big = 100000;   /* the rendezvous messages' size */
#define M 40

typedef struct msg {
    int src, thread, seq;
} msg_t;

static size_t len_of(int seq)
{
    return seq % 25 == 7 ? big : sizeof(msg_t) + (size_t)(seq % 7) * 40;
}

static void *phase1(void *arg)
{
    int t = (int)(intptr_t)arg;
    int n = t_size;
    char **rb = malloc(sizeof(char *) * (size_t)n), **sb = malloc(sizeof(char *) * (size_t)n);
    MPI_Request *q = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    int *last = malloc(sizeof(int) * (size_t)n);
    int *got = calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        rb[i] = malloc(big);
        sb[i] = malloc(big);
        last[i] = -1;
    }
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < n; i++)
            MPI_OK(MPI_Irecv(rb[i], (int)big, MPI_BYTE, i, t, MPI_COMM_WORLD, &q[i]));
        for (int d = 0; d < n; d++) {
            msg_t m = { t_rank, t, it };
            size_t len = len_of(it + d);
            memset(sb[d], it & 0xff, len);
            memcpy(sb[d], &m, sizeof m);
            MPI_OK(MPI_Isend(sb[d], (int)len, MPI_BYTE, d, t, MPI_COMM_WORLD, &q[n + d]));
        }
        MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t)n);
        MPI_OK(MPI_Waitall(2 * n, q, st));
        for (int i = 0; i < n; i++) {
            msg_t m;
            memcpy(&m, rb[i], sizeof m);
            int cnt;
            MPI_OK(MPI_Get_count(&st[i], MPI_BYTE, &cnt));
            CHECK(m.thread == t && m.src == st[i].MPI_SOURCE && st[i].MPI_TAG == t,
                  "thread %d got message of thread %d from %d (status %d)", t, m.thread, m.src,
                  st[i].MPI_SOURCE);
            CHECK(cnt == (int)len_of(m.seq + t_rank), "length %d for seq %d", cnt, m.seq);
            CHECK(m.seq > last[m.src], "thread %d: from %d seq %d after %d", t, m.src, m.seq,
                  last[m.src]);
            last[m.src] = m.seq;
            got[m.src]++;
        }
        free(st);
    }
    for (int i = 0; i < n; i++) {
        CHECK(got[i] == iters, "thread %d: %d messages from %d, expected %d", t, got[i], i, iters);
        free(rb[i]);
        free(sb[i]);
    }
    free(rb);
    free(sb);
    free(q);
    free(last);
    free(got);
    return NULL;
}

static long long sums[T];

static void *phase2(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Request q[M];
    msg_t out[M];
    for (int k = 0; k < M; k++) {
        out[k] = (msg_t){ t_rank, t, k };
        int d = (t_rank + t + k) % t_size;
        MPI_OK(MPI_Isend(&out[k], sizeof(msg_t), MPI_BYTE, d, 1000 + t, MPI_COMM_WORLD, &q[k]));
    }
    long long sum = 0;
    for (int k = 0; k < M; k++) {
        msg_t m;
        MPI_Status st;
        if (t == 0) {
            MPI_Message msg;
            MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
            MPI_OK(MPI_Mrecv(&m, sizeof m, MPI_BYTE, &msg, &st));
        } else if (t == 1) {
            int flag = 0;
            MPI_Message msg;
            while (!flag)
                MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
            MPI_OK(MPI_Mrecv(&m, sizeof m, MPI_BYTE, &msg, &st));
        } else {
            MPI_OK(MPI_Recv(&m, sizeof m, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                            &st));
        }
        CHECK(st.MPI_SOURCE == m.src && st.MPI_TAG == 1000 + m.thread, "phase 2 status: thread %d k %d: status source %d tag %d, message src %d thread %d seq %d", t, k, st.MPI_SOURCE, st.MPI_TAG, m.src, m.thread, m.seq);
        sum += (long long)m.src * 1000003 + m.thread * 1009 + m.seq;
    }
    MPI_OK(MPI_Waitall(M, q, MPI_STATUSES_IGNORE));
    sums[t] = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
    if (provided < MPI_THREAD_MULTIPLE)
        check_mpi_skip("MPI_THREAD_MULTIPLE not provided (%d)", provided);
    if (t_size > 4)
        iters = 25;
    if (getenv("P2P_THREADS_BIG"))
        big = (size_t)atol(getenv("P2P_THREADS_BIG"));
    if (big < sizeof(msg_t))
        big = sizeof(msg_t);
    pthread_t th[T];
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, phase1, (void *)(intptr_t)t);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    t_barrier();
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, phase2, (void *)(intptr_t)t);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    long long sum = 0, want = 0;
    for (int t = 0; t < T; t++)
        sum += sums[t];
    /* the message of thread t, index k reaches (src + t + k) % size */
    for (int t = 0; t < T; t++)
        for (int k = 0; k < M; k++) {
            int src = ((t_rank - t - k) % t_size + t_size) % t_size;
            want += (long long)src * 1000003 + t * 1009 + k;
        }
    CHECK(sum == want, "phase 2 checksum %lld, expected %lld", sum, want);
    /* No closing barrier: its messages could be taken by another rank's
     * ANY_TAG receives of phase 2.  Every rank checked its own share. */
    printf("p2p_threads.c: rank %d passed at np %d\n", t_rank, t_size);
    MPI_Finalize();
    return 0;
}
