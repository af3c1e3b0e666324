/*
 * Windows on device memory (test/devmem.h: the fake device under
 * RAIL_ACCEL=host,fake, or TEST_DEVMEM=cuda): Win_create over a device
 * buffer; Put from host and from device origin buffers into the next
 * rank's device window, Get from it into a device buffer, Accumulate SUM
 * and Fetch_and_op on it, under fence and under lock_all + flush.  The
 * fake device faults on any host access, so a library path that touches
 * the window with the CPU cannot pass.  Skipped (with the reason) where
 * no device memory can be had.
 */
#include "rma_test.h"
#include "test/devmem.h"

#define DN 1024

static void dev_set(int *dev, int r, int salt)
{
    int h[DN];
    for (int i = 0; i < DN; i++)
        h[i] = r * 100000 + salt * 1000 + i % 1000;
    MPI_OK(devmem_memcpy(dev, h, sizeof(h)));
}

static void dev_expect(const int *dev, const char *what, int (*want)(int, int), int r)
{
    int h[DN];
    MPI_OK(devmem_memcpy(h, dev, sizeof(h)));
    for (int i = 0; i < DN; i++)
        if (!EXPECT(h[i] == want(r, i), "%s: [%d] = %d, want %d", what, i, h[i], want(r, i)))
            return;
}

static int put_val(int from, int i) { return -(from * 7 + i); }
static int base_val(int r, int i) { return r * 100000 + 1000 + i % 1000; }
static int acc_val(int r, int i) { return base_val(r, i) + 2 * put_val((r + t_size - 1) % t_size, i); }

static void round_trip(MPI_Win win, int *wdev, int *odev, bool passive)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size, h[DN], one = 5, old = 0;
    for (int i = 0; i < DN; i++)
        h[i] = put_val(t_rank, i);
    MPI_OK(devmem_memcpy(odev, h, sizeof(h)));
    /* 1: put from a host buffer, then an accumulate of the device copy, twice the value */
    dev_set(wdev, t_rank, 1);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (passive)
        MPI_OK(MPI_Win_lock_all(0, win));
    else
        MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Accumulate(h, DN, MPI_INT, to, 0, DN, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(odev, DN, MPI_INT, to, 0, DN, MPI_INT, MPI_SUM, win));
    if (passive) {
        MPI_OK(MPI_Win_flush(to, win));
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, to, DN - 1, MPI_NO_OP, win));
        MPI_OK(MPI_Win_unlock_all(win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Win_fence(0, win));
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, to, DN - 1, MPI_NO_OP, win));
        MPI_OK(MPI_Win_fence(0, win));
    }
    EXPECT(old == acc_val(to, DN - 1), "fetch_and_op no_op: %d, want %d", old,
           acc_val(to, DN - 1));
    dev_expect(wdev, passive ? "accumulate, lock_all" : "accumulate, fence", acc_val, t_rank);
    /* 2: put the device buffer, get it back into the device buffer */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (passive)
        MPI_OK(MPI_Win_lock_all(0, win));
    else
        MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(odev, DN, MPI_INT, to, 0, DN, MPI_INT, win));
    if (passive)
        MPI_OK(MPI_Win_flush(to, win));
    else
        MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Get(odev, DN, MPI_INT, to, 0, DN, MPI_INT, win));
    if (passive)
        MPI_OK(MPI_Win_unlock_all(win));
    else
        MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    dev_expect(odev, "get back", put_val, t_rank);
    dev_expect(wdev, "put", put_val, from);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    int *wdev = NULL, *odev = NULL;
    int ok = devmem_malloc(DN * sizeof(int), (void **)&wdev) == MPI_SUCCESS &&
             devmem_malloc(DN * sizeof(int), (void **)&odev) == MPI_SUCCESS;
    int all = 0;
    MPI_OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    if (!all)
        check_mpi_skip("%s", devmem_why());
    MPI_Win win;
    MPI_OK(MPI_Win_create(wdev, DN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                          &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    round_trip(win, wdev, odev, false);
    round_trip(win, wdev, odev, true);
    MPI_OK(MPI_Win_free(&win));
    devmem_free(wdev);
    devmem_free(odev);
    return check_mpi_finalize("rma_device");
}
