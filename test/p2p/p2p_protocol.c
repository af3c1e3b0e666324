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
 */
#include "p2p_test.h"

#define MSG (256 * 1024)
#define ONE_BY_ONE 12
#define WINDOW 8
#define N_MSGS (ONE_BY_ONE + WINDOW + 2)

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
        free(sbuf);
        free(rbuf);
    }

    MPI_OK(MPI_T_pvar_handle_free(session, &h_get));
    MPI_OK(MPI_T_pvar_handle_free(session, &h_pipe));
    MPI_OK(MPI_T_pvar_session_free(&session));
    int rc = t_finish();
    MPI_T_finalize();
    return rc;
}
