/*
 * One-sided errors (osc, issue 53), on a window whose errhandler returns:
 * MPI_ERR_RMA_SYNC (put outside an epoch, unlock without lock, complete
 * without start, wait without post, a second lock, flush without lock,
 * request-based ops under fence), MPI_ERR_RMA_RANGE (beyond the target
 * window, nothing written), MPI_ERR_RANK, MPI_ERR_RMA_FLAVOR (attach on a
 * non-dynamic window, shared_query on a non-shared one),
 * MPI_ERR_RMA_ATTACH (overlap, detach of unattached memory), MPI_ERR_WIN
 * (a freed handle), MPI_ERR_OP (a user op in accumulate), MPI_ERR_SIZE /
 * MPI_ERR_DISP at creation.  The window still works afterwards.
 */
#define CHECK_MPI
#include <mpi.h>
#include <string.h>
#include "test/check.h"

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

int main(int argc, char **argv)
{
    int rank, size, buf[8] = {0}, v[16] = {0};
    MPI_Win win, dyn, freed;
    MPI_Request rq;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_FAILS(MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
    MPI_FAILS(MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
              MPI_ERR_DISP);
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int right = (rank + 1) % size;
    MPI_FAILS(MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MPI_FAILS(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    MPI_FAILS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    MPI_FAILS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    MPI_FAILS(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
    MPI_FAILS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    MPI_FAILS(MPI_Win_lock(99, right, 0, win), MPI_ERR_LOCKTYPE);
    MPI_FAILS(MPI_Win_fence(0x7, win), MPI_ERR_ASSERT);

    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_FAILS(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    MPI_FAILS(MPI_Put(v, 9, MPI_INT, right, 0, 9, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MPI_FAILS(MPI_Put(v, 1, MPI_INT, right, 8, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MPI_FAILS(MPI_Get(v, 2, MPI_INT, right, 7, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MPI_FAILS(MPI_Put(v, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MPI_FAILS(MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    MPI_FAILS(MPI_Put(v, 2, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    MPI_Op uop;
    MPI_Op_create(user_fn, 1, &uop);
    MPI_FAILS(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, uop, win), MPI_ERR_OP);
    MPI_Op_free(&uop);
    MPI_OK(MPI_Put(v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        EXPECT(buf[i] == 0, "a refused operation wrote buf[%d] = %d", i, buf[i]);

    MPI_OK(MPI_Win_fence(0, win));
    MPI_FAILS(MPI_Rput(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq), MPI_ERR_RMA_SYNC);
    MPI_OK(MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_CONFLICT);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    MPI_FAILS(MPI_Win_attach(win, v, sizeof v), MPI_ERR_RMA_FLAVOR);
    MPI_Aint sz;
    int du;
    void *p;
    MPI_FAILS(MPI_Win_shared_query(win, 0, &sz, &du, &p), MPI_ERR_RMA_FLAVOR);

    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    MPI_OK(MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_attach(dyn, v, sizeof v));
    MPI_FAILS(MPI_Win_attach(dyn, v + 4, 4), MPI_ERR_RMA_ATTACH);
    MPI_FAILS(MPI_Win_detach(dyn, buf), MPI_ERR_RMA_ATTACH);
    /* outside the target's attached memory: found at the target, reported
     * by the unlock, nothing written */
    MPI_Aint far;
    MPI_Get_address(buf, &far);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, dyn));
    MPI_OK(MPI_Put(v, 1, MPI_INT, rank, far, 1, MPI_INT, dyn));
    MPI_FAILS(MPI_Win_unlock(rank, dyn), MPI_ERR_RMA_RANGE);
    MPI_OK(MPI_Win_detach(dyn, v));
    MPI_OK(MPI_Win_free(&dyn));

    /* the window still works */
    MPI_OK(MPI_Win_fence(0, win));
    int one = 1;
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, right, 3, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    EXPECT(buf[3] == 1, "accumulate after errors: %d", buf[3]);
    freed = win;
    MPI_OK(MPI_Win_free(&win));
    MPI_FAILS(MPI_Win_fence(0, freed), MPI_ERR_WIN);
    return check_mpi_finalize("osc_errors");
}
