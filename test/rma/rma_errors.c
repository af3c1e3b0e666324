/*
 * Bad RMA input answered through the window's errhandler
 * (MPI_ERRORS_RETURN), never a crash, hang or silent write: an operation
 * outside any epoch and Win_unlock without Win_lock, Win_complete without
 * Win_start, a second lock of the same target (MPI_ERR_RMA_SYNC); an
 * operation beyond the target's window (MPI_ERR_RMA_RANGE), and the window
 * left untouched; a bad target rank (MPI_ERR_RANK), count (MPI_ERR_COUNT),
 * datatype (MPI_ERR_TYPE) and a user op in an accumulate (MPI_ERR_OP);
 * Win_attach on a window not made by Win_create_dynamic
 * (MPI_ERR_RMA_FLAVOR); MPI_WIN_NULL (MPI_ERR_WIN); negative sizes
 * (MPI_ERR_SIZE); a user errhandler on the window is called with the
 * window and the code.  Win_allocate_shared across nodes
 * (MPI_ERR_RMA_SHARED) needs several nodes: not tested here.
 */
#include "rma_test.h"

/* As MPI_FAILS, but counted and the test goes on (to see every miss). */
static void expect_class(int rc, int cls, const char *call, const char *cls_name, int line)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    EXPECT(c == cls, "line %d: %s returned class %d, expected %s (%d)", line, call, c, cls_name,
           cls);
}
#define EXPECT_FAILS(call, cls) expect_class((call), (cls), #call, #cls, __LINE__)

static int handler_calls, handler_code;
static MPI_Win handler_win;

static void count_errors(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_win = *win;
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

static void sync_errors(rma_win_t *w)
{
    int t = (t_rank + 1) % t_size, v = 7;
    EXPECT_FAILS(MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, w->win), MPI_ERR_RMA_SYNC);
    EXPECT_FAILS(MPI_Get(&v, 1, MPI_INT, t, 0, 1, MPI_INT, w->win), MPI_ERR_RMA_SYNC);
    EXPECT_FAILS(MPI_Accumulate(&v, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, w->win), MPI_ERR_RMA_SYNC);
    EXPECT_FAILS(MPI_Win_unlock(t, w->win), MPI_ERR_RMA_SYNC);
    EXPECT_FAILS(MPI_Win_flush(t, w->win), MPI_ERR_RMA_SYNC);
    EXPECT_FAILS(MPI_Win_unlock_all(w->win), MPI_ERR_RMA_SYNC);
    EXPECT_FAILS(MPI_Win_complete(w->win), MPI_ERR_RMA_SYNC);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w->win));
    EXPECT_FAILS(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w->win), MPI_ERR_RMA_SYNC);
    MPI_OK(MPI_Win_unlock(t, w->win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static int zero(int r, int i)
{
    (void)r, (void)i;
    return 0;
}

static void argument_errors(rma_win_t *w)
{
    int t = (t_rank + 1) % t_size, v[4] = { -1, -1, -1, -1 }, got[RMA_N];
    MPI_Op op;
    MPI_OK(MPI_Op_create(user_sum, 1, &op));
    rma_win_fill(w, zero);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w->win));
    EXPECT_FAILS(MPI_Put(v, 1, MPI_INT, t, RMA_N, 1, MPI_INT, w->win), MPI_ERR_RMA_RANGE);
    EXPECT_FAILS(MPI_Put(v, 4, MPI_INT, t, RMA_N - 2, 4, MPI_INT, w->win), MPI_ERR_RMA_RANGE);
    EXPECT_FAILS(MPI_Get(v, 1, MPI_INT, t, -1, 1, MPI_INT, w->win), MPI_ERR_RMA_RANGE);
    EXPECT_FAILS(MPI_Accumulate(v, 2, MPI_INT, t, RMA_N - 1, 2, MPI_INT, MPI_SUM, w->win),
              MPI_ERR_RMA_RANGE);
    EXPECT_FAILS(MPI_Put(v, 1, MPI_INT, t_size, 0, 1, MPI_INT, w->win), MPI_ERR_RANK);
    EXPECT_FAILS(MPI_Put(v, -1, MPI_INT, t, 0, -1, MPI_INT, w->win), MPI_ERR_COUNT);
    EXPECT_FAILS(MPI_Get(v, 1, MPI_DATATYPE_NULL, t, 0, 1, MPI_INT, w->win), MPI_ERR_TYPE);
    EXPECT_FAILS(MPI_Accumulate(v, 1, MPI_INT, t, 0, 1, MPI_INT, op, w->win), MPI_ERR_OP);
    MPI_OK(MPI_Put(v, 0, MPI_INT, MPI_PROC_NULL, RMA_N * 2, 0, MPI_INT, w->win));
    MPI_OK(MPI_Win_unlock(t, w->win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    rma_win_read(w, got);
    for (int i = 0; i < RMA_N; i++)
        if (!EXPECT(got[i] == 0, "window[%d] = %d after refused operations", i, got[i]))
            break;
    MPI_OK(MPI_Op_free(&op));
}

static void object_errors(rma_win_t *w)
{
    MPI_Win bad = MPI_WIN_NULL, made;
    int x[4], *p = NULL;
    EXPECT_FAILS(MPI_Win_attach(w->win, x, sizeof(x)), MPI_ERR_RMA_FLAVOR);
    EXPECT_FAILS(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_FAILS(MPI_Win_lock_all(0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_FAILS(MPI_Put(x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_FAILS(MPI_Win_free(&bad), MPI_ERR_WIN);
    EXPECT_FAILS(MPI_Win_create(x, -4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &made), MPI_ERR_SIZE);
    EXPECT_FAILS(MPI_Win_allocate(-4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &made), MPI_ERR_SIZE);
}

static void user_handler(rma_win_t *w)
{
    MPI_Errhandler eh;
    int v = 0;
    MPI_OK(MPI_Win_create_errhandler(count_errors, &eh));
    MPI_OK(MPI_Win_set_errhandler(w->win, eh));
    MPI_OK(MPI_Errhandler_free(&eh));
    int rc = MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, w->win), cls = -1;
    MPI_Error_class(handler_code, &cls);
    EXPECT(handler_calls == 1 && handler_win == w->win && cls == MPI_ERR_RMA_SYNC,
           "user errhandler: %d calls, class %d", handler_calls, cls);
    EXPECT(rc != MPI_SUCCESS, "the call still returns the error");
    MPI_OK(MPI_Win_call_errhandler(w->win, MPI_ERR_OTHER));
    EXPECT(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "Win_call_errhandler");
    MPI_OK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    rma_win_t w;
    rma_win_open(&w, RMA_ALLOCATE);
    sync_errors(&w);
    argument_errors(&w);
    object_errors(&w);
    user_handler(&w);
    rma_win_close(&w);
    return check_mpi_finalize("rma_errors");
}
