/*
 * Windows on (fake) device memory (osc, issue 53): a window made by
 * MPI_Win_create over device memory, and device origin/result buffers.
 * Put, get, accumulate (SUM and REPLACE), fetch_and_op and
 * compare_and_swap under fence and lock; the am component stages through
 * host memory with accel copies (the fake device faults on any host
 * load or store, so a CPU touch fails the test).  Run with
 * RAIL_ACCEL=host,fake (test/tests.conf).
 */
#define CHECK_MPI
#include <mpi.h>
#include <string.h>
#include "test/check.h"
#include "test/devmem.h"

#define N 256

int main(int argc, char **argv)
{
    int rank, size;
    int64_t *dwin, *dorig, host[N], back[N];
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (devmem_malloc(N * sizeof(int64_t), (void **)&dwin) != MPI_SUCCESS)
        check_mpi_skip("no device memory: %s", devmem_why());
    CHECK_OK(devmem_malloc(N * sizeof(int64_t), (void **)&dorig));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < N; i++)
        host[i] = rank * 1000 + i;
    CHECK_OK(devmem_memcpy(dorig, host, sizeof host));
    memset(back, 0, sizeof back);
    CHECK_OK(devmem_memcpy(dwin, back, sizeof back));
    MPI_OK(MPI_Win_create(dwin, N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(dorig, N, MPI_INT64_T, right, 0, N, MPI_INT64_T, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK_OK(devmem_memcpy(back, dwin, sizeof back));
    for (int i = 0; i < N; i++)
        EXPECT(back[i] == left * 1000 + i, "device put [%d] = %lld", i, (long long)back[i]);
    MPI_OK(MPI_Accumulate(dorig, N, MPI_INT64_T, right, 0, N, MPI_INT64_T, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Get(dorig, N, MPI_INT64_T, left, 0, N, MPI_INT64_T, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_OK(devmem_memcpy(back, dorig, sizeof back));
    int ll = (left + size - 1) % size;
    for (int i = 0; i < N; i++)
        EXPECT(back[i] == 2 * (ll * 1000 + i), "device get after accumulate [%d] = %lld", i,
               (long long)back[i]);
    int64_t one = 1, old = -1, zero = 0;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Accumulate(&zero, 1, MPI_INT64_T, right, 5, 1, MPI_INT64_T, MPI_REPLACE, win));
    MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, right, 5, MPI_SUM, win));
    MPI_OK(MPI_Win_flush(right, win));
    EXPECT(old == 0, "fetch_and_op on a device window: old %lld", (long long)old);
    int64_t seven = 7, cmp = 1;
    MPI_OK(MPI_Compare_and_swap(&seven, &cmp, &old, MPI_INT64_T, right, 5, win));
    MPI_OK(MPI_Win_unlock(right, win));
    EXPECT(old == 1, "compare_and_swap old %lld", (long long)old);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(devmem_memcpy(back, dwin, sizeof back));
    EXPECT(back[5] == 7, "compare_and_swap on a device window: %lld", (long long)back[5]);
    MPI_OK(MPI_Win_free(&win));
    devmem_free(dwin);
    devmem_free(dorig);
    return check_mpi_finalize("osc_device");
}
