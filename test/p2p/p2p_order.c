/*
 * Ordering: MPI's non-overtaking rule per (source, destination,
 * communicator), with messages of mixed protocols (eager, rendezvous),
 * specific and wildcard receives (MPI_ANY_SOURCE, MPI_ANY_TAG), and a flood
 * of unexpected messages that exhausts the eager credits.
 */
#include "p2p_test.h"

#define NMSG 300
#define BIG 70000   /* above every btl's eager limit */

static size_t size_of(int i)
{
    return (i % 17 == 5) ? BIG : (size_t)(4 + (i % 5) * 100);
}

/* Every rank sends NMSG messages to every rank (itself too) with tags
 * 0..2; each receiver drains them with specific-source/specific-tag
 * receives for tag 0, ANY_TAG for the others, checking sequence order. */
static void all_to_all_ordered(void)
{
    int n = t_size * NMSG;
    MPI_Request *sreq = malloc(sizeof(MPI_Request) * (size_t)n);
    char **sbuf = malloc(sizeof(char *) * (size_t)n);
    for (int d = 0; d < t_size; d++) {
        for (int i = 0; i < NMSG; i++) {
            int k = d * NMSG + i;
            size_t len = size_of(i);
            sbuf[k] = malloc(len);
            t_fill(sbuf[k], len, t_rank, i);
            memcpy(sbuf[k], &i, sizeof(int));
            MPI_OK(MPI_Isend(sbuf[k], (int)len, MPI_BYTE, d, i % 3, MPI_COMM_WORLD, &sreq[k]));
        }
    }
    char *rbuf = malloc(BIG);
    /* tag 0 from each source in order, by source */
    for (int s = 0; s < t_size; s++) {
        for (int i = 0; i < NMSG; i += 3) {
            MPI_Status st;
            MPI_OK(MPI_Recv(rbuf, BIG, MPI_BYTE, s, 0, MPI_COMM_WORLD, &st));
            int seq;
            memcpy(&seq, rbuf, sizeof seq);
            CHECK(seq == i, "from %d tag 0: got seq %d, expected %d", s, seq, i);
            int cnt;
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
            CHECK(cnt == (int)size_of(i), "count %d", cnt);
        }
    }
    /* the rest with ANY_SOURCE / ANY_TAG: per source, sequence numbers grow */
    int *last = malloc(sizeof(int) * (size_t)t_size);
    for (int s = 0; s < t_size; s++)
        last[s] = -1;
    int rest = t_size * (NMSG - (NMSG + 2) / 3);
    for (int k = 0; k < rest; k++) {
        MPI_Status st;
        MPI_OK(MPI_Recv(rbuf, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int seq;
        memcpy(&seq, rbuf, sizeof seq);
        CHECK(st.MPI_TAG == seq % 3 && st.MPI_TAG != 0, "tag %d for seq %d", st.MPI_TAG, seq);
        CHECK(seq > last[st.MPI_SOURCE], "from %d: seq %d after %d (overtaken)", st.MPI_SOURCE,
              seq, last[st.MPI_SOURCE]);
        last[st.MPI_SOURCE] = seq;
        int cnt;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == (int)size_of(seq), "count %d for seq %d", cnt, seq);
        char tmp[8];
        memcpy(tmp, rbuf, 4);
        memset(rbuf, 0, 4);
        t_fill(rbuf, 4, st.MPI_SOURCE, seq); /* the first int was overwritten by seq */
        t_expect(rbuf, (size_t)cnt, st.MPI_SOURCE, seq, "any-source message");
    }
    MPI_OK(MPI_Waitall(n, sreq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < n; k++)
        free(sbuf[k]);
    free(sbuf);
    free(sreq);
    free(rbuf);
    free(last);
    t_barrier();
}

/* Receives posted in an order mixing ANY_SOURCE and specific ones must be
 * matched in posting order. */
static void posted_order(void)
{
    if (t_size < 2)
        return;
    int go = 0;
    if (t_rank == 1) {
        int v[4] = { 0, 1, 2, 3 };
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 4; i++)
            MPI_OK(MPI_Send(&v[i], 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    } else if (t_rank == 0) {
        int r[4] = { -1, -1, -1, -1 };
        MPI_Request q[4];
        MPI_OK(MPI_Irecv(&r[0], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &q[0]));
        MPI_OK(MPI_Irecv(&r[1], 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &q[1]));
        MPI_OK(MPI_Irecv(&r[2], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q[2]));
        MPI_OK(MPI_Irecv(&r[3], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[3]));
        MPI_OK(MPI_Send(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD));
        MPI_OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++)
            CHECK(r[i] == i, "receive %d got %d", i, r[i]);
        /* only now may the others send to us again (barrier) */
        for (int p = 2; p < t_size; p++)
            MPI_OK(MPI_Send(&go, 1, MPI_INT, p, 8, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    t_barrier();
}

/* Rank 1 floods rank 0 with small messages before rank 0 receives any:
 * the sender runs out of eager credits and must still deliver all of them,
 * in order. */
static void flood(void)
{
    if (t_size < 2)
        return;
    enum { N = 5000 };
    if (t_rank == 1) {
        MPI_Request *q = malloc(sizeof(MPI_Request) * N);
        for (int i = 0; i < N; i++)
            MPI_OK(MPI_Isend(&i, 0, MPI_INT, 0, 9, MPI_COMM_WORLD, &q[i]));
        /* blocking standard sends too */
        for (int i = 0; i < 300; i++)
            MPI_OK(MPI_Send(&i, 1, MPI_INT, 0, 10, MPI_COMM_WORLD));
        MPI_OK(MPI_Waitall(N, q, MPI_STATUSES_IGNORE));
        free(q);
    } else if (t_rank == 0) {
        int flag = 0;
        /* let the flood arrive (unexpected) */
        for (int i = 0; i < 20000; i++)
            MPI_OK(MPI_Iprobe(1, 10, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) {
            MPI_Status st;
            MPI_OK(MPI_Recv(NULL, 0, MPI_INT, 1, 9, MPI_COMM_WORLD, &st));
        }
        for (int i = 0; i < 300; i++) {
            int v = -1;
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == i, "flood: got %d, expected %d", v, i);
        }
    }
    t_barrier();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    all_to_all_ordered();
    posted_order();
    flood();
    return check_mpi_finalize("p2p_order");
}
