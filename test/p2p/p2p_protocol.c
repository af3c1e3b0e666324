/* Which rendezvous protocol large messages take, seen through the pml's
 * MPI_T counters pml_rndv_recv_get and pml_rndv_recv_pipelined.
 *
 * Ranks pair up (0-1, 2-3, ...; an odd last rank only counts) and exchange
 * 256 KiB messages both ways: one at a time, then a window in flight, then
 * two truncated ones; every byte is checked.  P2P_EXPECT says what the
 * counters of each receiver must show:
 *   get        every message by get       (RAIL_PML_RNDV_GET_MIN=1)
 *   pipeline   every message pipelined    (RAIL_PML_RNDV_GET=0, tcp)
 *   alternate  exactly half by each       (RAIL_PML_RNDV_ADAPT_ALTERNATE=1)
 *   adaptive   both tried, at least twice (the receiver's choice by time)
 *   unset      only that every message was counted once
 *
 * P2P_SHARE=yes|no (with RAIL_PML_RNDV_GET_MIN=1, sm): then 1 MiB messages
 * one way, checked, until the receiver's btl_sm_get_chunks_in counter shows
 * that the waiting sender wrote part of one (at most SHARE_TRIES messages:
 * it helps only when it is scheduled while the receiver copies; with more
 * ranks than CPUs btl sm does not ask, and only the data are checked); "no"
 * (RAIL_BTL_SM_GET_SHARE_MIN=0): SHARE_TRIES / 10 messages, no shared get.
 *
 * P2P_STREAM=yes|no: whether this process, as a sender, wrote fragments
 * with non-temporal stores (btl_sm_frags_streamed; "yes" only where the CPU
 * has AVX2): the receiver's alternation includes the streamed pipeline, and
 * RAIL_COPY_STREAM=always streams every fragment.
 */
#include "p2p_test.h"

#include <unistd.h>

#define MSG (256 * 1024)
#define ONE_BY_ONE 12
#define WINDOW 8
#define N_MSGS (ONE_BY_ONE + WINDOW + 2)
#define SHARE_MSG (1024 * 1024)
#define SHARE_TRIES 400

static MPI_T_pvar_session session;
static MPI_T_pvar_handle h_get, h_pipe;

static MPI_T_pvar_handle pvar_handle(const char *name)
{
    int idx = -1, count = 0;
    MPI_OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    MPI_T_pvar_handle h;
    MPI_OK(MPI_T_pvar_handle_alloc(session, idx, NULL, &h, &count));
    CHECK(count == 1, "%s: count %d", name, count);
    return h;
}

static unsigned long long pvar_read(const char *name);

static void check_stream(const char *want, unsigned long long before)
{
    unsigned long long n = pvar_read("btl_sm_frags_streamed") - before;
    __builtin_cpu_init();
    if (strcmp(want, "yes") == 0 && __builtin_cpu_supports("avx2"))
        CHECK(n > 0, "no fragment written with streaming stores");
    else if (strcmp(want, "no") == 0)
        CHECK(n == 0, "%llu fragments written with streaming stores", n);
}

static unsigned long long pvar_read(const char *name)
{
    MPI_T_pvar_handle h = pvar_handle(name);
    unsigned long long v = 0;
    MPI_OK(MPI_T_pvar_read(session, h, &v));
    MPI_OK(MPI_T_pvar_handle_free(session, &h));
    return v;
}

/* Shared gets (P2P_SHARE): lower rank sends, higher receives. */
static void shared_gets(int peer, int want)
{
    unsigned char *buf = malloc(SHARE_MSG);
    CHECK(buf, "out of memory");
    const unsigned long long gets0 = pvar_read("btl_sm_get_shared"),
                             in0 = pvar_read("btl_sm_get_chunks_in");
    int tries = want && t_size <= sysconf(_SC_NPROCESSORS_ONLN) ? SHARE_TRIES : SHARE_TRIES / 10;
    int i, more = 1;
    for (i = 0; i < tries && more; i++) {
        if (t_rank < peer) {
            t_fill(buf, SHARE_MSG, t_rank, 300 + i);
            MPI_OK(MPI_Send(buf, SHARE_MSG, MPI_BYTE, peer, 300, MPI_COMM_WORLD));
        } else {
            memset(buf, 0, SHARE_MSG);
            MPI_OK(MPI_Recv(buf, SHARE_MSG, MPI_BYTE, peer, 300, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            t_expect(buf, SHARE_MSG, peer, 300 + i, "shared get");
            more = !want || pvar_read("btl_sm_get_chunks_in") == in0;
        }
        if (t_rank < peer)
            MPI_OK(MPI_Recv(&more, 1, MPI_INT, peer, 301, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        else
            MPI_OK(MPI_Send(&more, 1, MPI_INT, peer, 301, MPI_COMM_WORLD));
    }
    if (t_rank > peer) {
        unsigned long long gets = pvar_read("btl_sm_get_shared") - gets0,
                           in = pvar_read("btl_sm_get_chunks_in") - in0;
        if (want && t_size <= sysconf(_SC_NPROCESSORS_ONLN))
            CHECK(in > 0 && gets >= 1, "%d messages of 1 MiB: the sender wrote none of them "
                  "(%llu shared gets)", i, gets);
        else
            CHECK(in == 0 && gets == 0, "%llu shared gets, %llu chunks written by the sender "
                  "with sharing off", gets, in);
    }
    free(buf);
}

static void counters(unsigned long long *get, unsigned long long *pipe)
{
    MPI_OK(MPI_T_pvar_read(session, h_get, get));
    MPI_OK(MPI_T_pvar_read(session, h_pipe, pipe));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    t_init(&argc, &argv);
    MPI_OK(MPI_T_pvar_session_create(&session));
    h_get = pvar_handle("pml_rndv_recv_get");
    h_pipe = pvar_handle("pml_rndv_recv_pipelined");
    const char *expect = getenv("P2P_EXPECT");

    int peer = t_rank ^ 1;
    if (peer < t_size) {
        unsigned char *sbuf = malloc((size_t)WINDOW * MSG), *rbuf = malloc((size_t)WINDOW * MSG);
        CHECK(sbuf && rbuf, "out of memory");
        unsigned long long g0, p0, g1, p1;
        counters(&g0, &p0);
        const unsigned long long streamed0 = pvar_read("btl_sm_frags_streamed");
        const int first = t_rank < peer;

        /* One at a time, both ways (a ping-pong; some receives by ANY_SOURCE). */
        for (int i = 0; i < ONE_BY_ONE; i++) {
            for (int turn = 0; turn < 2; turn++) {
                if ((turn == 0) == first) {
                    t_fill(sbuf, MSG, t_rank, i);
                    MPI_OK(MPI_Send(sbuf, MSG, MPI_BYTE, peer, i, MPI_COMM_WORLD));
                } else {
                    MPI_Status st;
                    memset(rbuf, 0, MSG);
                    MPI_OK(MPI_Recv(rbuf, MSG, MPI_BYTE, i % 3 ? peer : MPI_ANY_SOURCE, i,
                                    MPI_COMM_WORLD, &st));
                    int n = -1;
                    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
                    CHECK(n == MSG && st.MPI_SOURCE == peer, "count %d source %d", n,
                          st.MPI_SOURCE);
                    t_expect(rbuf, MSG, peer, i, "one by one");
                }
            }
        }

        /* A window in flight both ways at once. */
        MPI_Request rq[2 * WINDOW];
        for (int i = 0; i < WINDOW; i++) {
            memset(rbuf + (size_t)i * MSG, 0, MSG);
            MPI_OK(MPI_Irecv(rbuf + (size_t)i * MSG, MSG, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD,
                             &rq[i]));
        }
        for (int i = 0; i < WINDOW; i++) {
            t_fill(sbuf + (size_t)i * MSG, MSG, t_rank, 100 + i);
            MPI_OK(MPI_Isend(sbuf + (size_t)i * MSG, MSG, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD,
                             &rq[WINDOW + i]));
        }
        MPI_OK(MPI_Waitall(2 * WINDOW, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < WINDOW; i++)
            t_expect(rbuf + (size_t)i * MSG, MSG, peer, 100 + i, "window");

        /* Two truncated messages: the receive buffer is 3/4 of the message. */
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        const int part = MSG / 4 * 3;
        for (int i = 0; i < 2; i++) {
            t_fill(sbuf, MSG, t_rank, 200 + i);
            memset(rbuf, 0, MSG);
            MPI_Status st;
            int rc = MPI_Sendrecv(sbuf, MSG, MPI_BYTE, peer, 200 + i, rbuf, part, MPI_BYTE, peer,
                                  200 + i, MPI_COMM_WORLD, &st);
            int cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive returned class %d", cls);
            t_expect(rbuf, (size_t)part, peer, 200 + i, "truncated");
            CHECK(rbuf[part] == 0, "a truncated receive wrote beyond its buffer");
        }
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

        counters(&g1, &p1);
        unsigned long long got = g1 - g0, piped = p1 - p0;
        CHECK(got + piped == N_MSGS, "%llu by get + %llu pipelined, %d received", got, piped,
              N_MSGS);
        if (expect && strcmp(expect, "get") == 0)
            CHECK(piped == 0, "%llu messages pipelined, expected all by get", piped);
        else if (expect && strcmp(expect, "pipeline") == 0)
            CHECK(got == 0, "%llu messages by get, expected all pipelined", got);
        else if (expect && strcmp(expect, "alternate") == 0)
            CHECK(got == piped, "%llu by get and %llu pipelined, expected half each", got, piped);
        else if (expect && strcmp(expect, "adaptive") == 0)
            CHECK(got >= 2 && piped >= 2, "%llu by get and %llu pipelined: both not tried", got,
                  piped);
        else
            CHECK(!expect, "unknown P2P_EXPECT=%s", expect);
        if (getenv("P2P_STREAM"))
            check_stream(getenv("P2P_STREAM"), streamed0);
        const char *share = getenv("P2P_SHARE");
        if (share)
            shared_gets(peer, strcmp(share, "yes") == 0);
        free(sbuf);
        free(rbuf);
    }

    MPI_OK(MPI_T_pvar_handle_free(session, &h_get));
    MPI_OK(MPI_T_pvar_handle_free(session, &h_pipe));
    MPI_OK(MPI_T_pvar_session_free(&session));
    int rc = check_mpi_finalize("p2p_protocol");
    MPI_T_finalize();
    return rc;
}
