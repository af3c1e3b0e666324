/*
 * Passive target while the target computes: rank 1 spends 1 s in a loop
 * that makes no MPI call, while rank 0 locks its window (Win_allocate,
 * 1 MiB), Gets all of it and unlocks, then Puts 1 MiB to it under a second
 * lock.  The data must be right; the times are printed (the issue's
 * target is a Get done in < 10 ms over sm) but not judged here, because
 * an implementation may rightly wait for the target's next MPI call.
 * The other ranks wait in a barrier.  Needs 2 ranks (test/tests.conf).
 */
#include "rma_test.h"

#include <time.h>

#define BYTES (1 << 20)
#define NINT (BYTES / (int)sizeof(int))

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile double sink;

static void compute(double seconds)
{
    double t0 = now(), x = 1.0;
    while (now() - t0 < seconds)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

static void origin(MPI_Win win, int *buf)
{
    double t0 = now();
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
    MPI_OK(MPI_Get(buf, NINT, MPI_INT, 1, 0, NINT, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(1, win));
    double t_get = now() - t0;
    for (int i = 0; i < NINT; i++)
        if (!EXPECT(buf[i] == i * 3 + 1, "get: [%d] = %d", i, buf[i]))
            break;
    for (int i = 0; i < NINT; i++)
        buf[i] = -i;
    t0 = now();
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
    MPI_OK(MPI_Put(buf, NINT, MPI_INT, 1, 0, NINT, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(1, win));
    double t_put = now() - t0;
    printf("RMA_PASSIVE get_1MiB_ms %.3f put_1MiB_ms %.3f (target computing for 1000 ms)\n",
           t_get * 1e3, t_put * 1e3);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    if (t_size < 2)
        check_mpi_skip("needs a target and an origin: 2 ranks or more");
    int *base = NULL, *buf = malloc(BYTES);
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(BYTES, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t_rank, 0, win));
    for (int i = 0; i < NINT; i++)
        base[i] = i * 3 + 1;
    MPI_OK(MPI_Win_unlock(t_rank, win));
    memset(buf, 0, BYTES);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        origin(win, buf);
    else if (t_rank == 1)
        compute(1.0);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 1) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t_rank, 0, win));
        for (int i = 0; i < NINT; i++)
            if (!EXPECT(base[i] == -i, "put: [%d] = %d", i, base[i]))
                break;
        MPI_OK(MPI_Win_unlock(t_rank, win));
    }
    MPI_OK(MPI_Win_free(&win));
    free(buf);
    return check_mpi_finalize("rma_passive");
}
