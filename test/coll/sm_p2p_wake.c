/*
 * A process asleep in a coll sm wait still answers point-to-point traffic
 * (coll/sm/sm_wait.c, rail_progress_sleep_on).  World rank 0 makes NMSG
 * buffered sends of one int to rank 1 and enters MPI_Barrier; rank 1 lets
 * it fall asleep there (100 ms), then receives them all and joins the
 * barrier.  Past rank 0's eager credits (128) each message goes by
 * rendezvous, which rank 0 must answer.  Waits sleep at once
 * (RAIL_COLL_SM_SPIN_COUNT=0, RAIL_COLL_SM_YIELD_COUNT=0 unless given).
 * Rank 0's sleeps in the barrier must be ended by rank 1's traffic
 * (coll_sm_sleep_p2p_wakes), few by their timeout (coll_sm_sleep_timeouts):
 * asleep on coll sm's futex alone, rank 0 answered once per 5 ms timeout,
 * 19.3-19.6 s here (one timeout per message), against 0.3-0.7 s now.  Other ranks only
 * join the barriers.  Every value is checked.  Skipped (77) where the
 * kernel lacks futex_waitv (Linux 5.16): the sleep then waits on its futex
 * alone.
 */
#include "coll_test.h"
#include "test/pvar.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NMSG 4000

static unsigned long long wakes(void)
{
    return pvar_count("coll_sm_sleep_p2p_wakes");
}

static void report(double dt, unsigned long long w, unsigned long long to)
{
    printf("sm_p2p_wake: %d buffered sends in %.3f s; rank 0's sleeps in the barrier: %llu "
           "ended by rank 1's traffic, %llu by their timeout\n", NMSG, dt, w, to);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    setenv("RAIL_COLL_SM_SPIN_COUNT", "0", 0);
    setenv("RAIL_COLL_SM_YIELD_COUNT", "0", 0);
    t_init(&argc, &argv);
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
#ifdef SYS_futex_waitv
    int waitv = syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0) == 0 || errno != ENOSYS;
#else
    int waitv = 0;
#endif
    if (!waitv)
        check_mpi_skip("the kernel has no futex_waitv");

    /* buffered sends */
    int size = NMSG * (MPI_BSEND_OVERHEAD + (int)sizeof(int));
    void *pool = malloc((size_t)size);
    CHECK(pool != NULL, "malloc");
    MPI_OK(MPI_Buffer_attach(pool, size));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    unsigned long long w0 = wakes(), to0 = pvar_count("coll_sm_sleep_timeouts");
    double t0 = t_now();
    if (t_rank == 0 && t_size > 1) {
        for (int i = 0; i < NMSG; i++) {
            int v = 3 * i + 1;
            MPI_OK(MPI_Bsend(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
        }
    } else if (t_rank == 1) {
        usleep(100 * 1000);
        for (int i = 0; i < NMSG; i++) {
            int v = -1;
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == 3 * i + 1, "message %d: %d, expected %d", i, v, 3 * i + 1);
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0 && t_size > 1) {
        unsigned long long w = wakes() - w0, to = pvar_count("coll_sm_sleep_timeouts") - to0;
        report(t_now() - t0, w, to);
        CHECK(w > 0, "no sleep of rank 0 in the barrier was ended by rank 1's traffic");
        CHECK(to < NMSG / 4, "%llu of rank 0's sleeps in the barrier ended by their timeout",
              to);
    }
    void *addr;
    int got;
    MPI_OK(MPI_Buffer_detach(&addr, &got));
    CHECK(addr == pool && got == size, "detach gave %p/%d", addr, got);
    free(pool);

    MPI_OK(MPI_T_finalize());
    MPI_OK(MPI_Finalize());
    return 0;
}
