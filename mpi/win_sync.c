/* MPI_Win_fence, post/start/complete/wait/test, lock/unlock, lock_all,
 * flush family, sync: the rank checks, then osc's epoch checks and the
 * window's component. */
#include "mpi/mpi_err.h"
#include "osc/osc.h"
#include "mpi/binding/gen/mpi_impl.h"

#define WIN_ASSERTS (MPI_MODE_NOCHECK | MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT | \
                     MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED)

static int win_check_assert(int assert)
{
    if (assert & ~WIN_ASSERTS)
        return obj_errf(MPI_ERR_ASSERT, "invalid assertion 0x%x", (unsigned)assert);
    return MPI_SUCCESS;
}

/* MPI_SUCCESS for a valid rank, 1 for MPI_PROC_NULL (nothing to do). */
static int win_check_rank(obj_win_t *win, int rank)
{
    if (rank == MPI_PROC_NULL)
        return 1;
    if (rank < 0 || rank >= win->osc->size)
        return obj_errf(MPI_ERR_RANK, "invalid rank %d (window of %d ranks)", rank,
                        win->osc->size);
    return MPI_SUCCESS;
}

int mpii_win_fence(int assert, obj_win_t *win)
{
    int rc = win_check_assert(assert);
    return rc ? rc : osc_fence(win->osc, assert);
}

int mpii_win_post(obj_group_t *group, int assert, obj_win_t *win)
{
    int rc = win_check_assert(assert);
    return rc ? rc : osc_post(win->osc, group, assert);
}

int mpii_win_start(obj_group_t *group, int assert, obj_win_t *win)
{
    int rc = win_check_assert(assert);
    return rc ? rc : osc_start(win->osc, group, assert);
}

int mpii_win_complete(obj_win_t *win)
{
    return osc_complete(win->osc);
}

int mpii_win_wait(obj_win_t *win)
{
    int flag;
    return osc_wait(win->osc, true, &flag);
}

int mpii_win_test(obj_win_t *win, int *flag)
{
    return osc_wait(win->osc, false, flag);
}

int mpii_win_lock(int lock_type, int rank, int assert, obj_win_t *win)
{
    int rc = win_check_assert(assert);
    if (rc == MPI_SUCCESS && (rc = win_check_rank(win, rank)) == MPI_SUCCESS)
        rc = osc_lock(win->osc, lock_type, rank, assert);
    return rc == 1 ? MPI_SUCCESS : rc;
}

int mpii_win_unlock(int rank, obj_win_t *win)
{
    int rc = win_check_rank(win, rank);
    if (rc == MPI_SUCCESS)
        rc = osc_unlock(win->osc, rank);
    return rc == 1 ? MPI_SUCCESS : rc;
}

int mpii_win_lock_all(int assert, obj_win_t *win)
{
    int rc = win_check_assert(assert);
    return rc ? rc : osc_lock_all(win->osc, assert);
}

int mpii_win_unlock_all(obj_win_t *win)
{
    return osc_unlock_all(win->osc);
}

int mpii_win_flush(int rank, obj_win_t *win)
{
    int rc = win_check_rank(win, rank);
    if (rc == MPI_SUCCESS)
        rc = osc_flush(win->osc, rank, false);
    return rc == 1 ? MPI_SUCCESS : rc;
}

int mpii_win_flush_all(obj_win_t *win)
{
    return osc_flush(win->osc, -1, false);
}

int mpii_win_flush_local(int rank, obj_win_t *win)
{
    int rc = win_check_rank(win, rank);
    if (rc == MPI_SUCCESS)
        rc = osc_flush(win->osc, rank, true);
    return rc == 1 ? MPI_SUCCESS : rc;
}

int mpii_win_flush_local_all(obj_win_t *win)
{
    return osc_flush(win->osc, -1, true);
}

int mpii_win_sync(obj_win_t *win)
{
    return win->osc->ops->sync(win->osc);
}
