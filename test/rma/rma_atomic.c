/*
 * Atomicity of accumulates (MPI-4.1 12.7.1: per basic element) with every
 * rank at once on the same elements, checked exactly: Accumulate SUM from
 * all ranks into every rank's window; Fetch_and_op SUM and Get_accumulate
 * SUM tickets (the fetched values of all ranks together are exactly
 * 0..n*ITER-1, each once); a Compare_and_swap retry loop; Accumulate MAX
 * and REPLACE (each element ends as one rank's value).  Then lock
 * contention: every rank increments a counter at rank 0 ITER times by
 * Get + flush + Put under an exclusive lock.
 */
#include "rma_test.h"

#define ITER 100
#define NACC 8

static void zero(MPI_Win win, int *base, int n)
{
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t_rank, 0, win));
    for (int i = 0; i < n; i++)
        base[i] = 0;
    MPI_OK(MPI_Win_unlock(t_rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void read_mine(MPI_Win win, const int *base, int *out, int n)
{
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t_rank, 0, win));
    memcpy(out, base, (size_t)n * sizeof(int));
    MPI_OK(MPI_Win_unlock(t_rank, win));
}

/* Zero the window, v[] = rank + 1, and open a lock_all epoch. */
static void start_all(MPI_Win win, int *base, int *v)
{
    zero(win, base, NACC);
    for (int i = 0; i < NACC; i++)
        v[i] = t_rank + 1;
    MPI_OK(MPI_Win_lock_all(0, win));
}

static void acc_sum_all(MPI_Win win, int *base)
{
    int one[NACC], got[NACC];
    start_all(win, base, one);
    for (int k = 0; k < ITER; k++)
        for (int t = 0; t < t_size; t++)
            MPI_OK(MPI_Accumulate(one, NACC, MPI_INT, t, 0, NACC, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock_all(win));
    read_mine(win, base, got, NACC);
    int want = ITER * t_size * (t_size + 1) / 2;
    for (int i = 0; i < NACC; i++)
        EXPECT(got[i] == want, "accumulate sum: element %d = %d, want %d", i, got[i], want);
}

/* Every rank takes ITER tickets from rank 0's element 0 (fetch_and_op or
 * get_accumulate): all tickets together must be 0..n*ITER-1. */
static void tickets(MPI_Win win, int *base, bool gacc)
{
    int one = 1, mine[ITER], got[NACC], *all = NULL;
    zero(win, base, NACC);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < ITER; k++) {
        if (gacc)
            MPI_OK(MPI_Get_accumulate(&one, 1, MPI_INT, &mine[k], 1, MPI_INT, 0, 0, 1, MPI_INT,
                                      MPI_SUM, win));
        else
            MPI_OK(MPI_Fetch_and_op(&one, &mine[k], MPI_INT, 0, 0, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    read_mine(win, base, got, NACC);
    if (t_rank == 0)
        all = calloc((size_t)t_size * ITER, sizeof(int));
    MPI_OK(MPI_Gather(mine, ITER, MPI_INT, all, ITER, MPI_INT, 0, MPI_COMM_WORLD));
    if (t_rank != 0)
        return;
    char *seen = calloc((size_t)t_size * ITER, 1);
    for (int i = 0; i < t_size * ITER; i++) {
        int v = all[i];
        if (!EXPECT(v >= 0 && v < t_size * ITER && !seen[v], "%s ticket %d out of range or twice",
                    gacc ? "get_accumulate" : "fetch_and_op", v))
            break;
        seen[v] = 1;
    }
    EXPECT(got[0] == t_size * ITER, "tickets: counter %d, want %d", got[0], t_size * ITER);
    free(seen);
    free(all);
}

/* Increment rank 0's element 1 by a compare-and-swap retry loop. */
static void cas_loop(MPI_Win win, int *base)
{
    int got[NACC];
    zero(win, base, NACC);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < ITER; k++) {
        int old = 0, seen = -1;
        MPI_OK(MPI_Fetch_and_op(NULL, &old, MPI_INT, 0, 1, MPI_NO_OP, win));
        MPI_OK(MPI_Win_flush(0, win));
        for (;;) {
            int next = old + 1;
            MPI_OK(MPI_Compare_and_swap(&next, &old, &seen, MPI_INT, 0, 1, win));
            MPI_OK(MPI_Win_flush(0, win));
            if (seen == old)
                break;
            old = seen;
        }
    }
    MPI_OK(MPI_Win_unlock_all(win));
    read_mine(win, base, got, NACC);
    if (t_rank == 0)
        EXPECT(got[1] == t_size * ITER, "compare_and_swap: counter %d, want %d", got[1],
               t_size * ITER);
}

static void max_and_replace(MPI_Win win, int *base)
{
    int v[NACC], got[NACC];
    start_all(win, base, v);
    for (int t = 0; t < t_size; t++) {
        MPI_OK(MPI_Accumulate(v, NACC / 2, MPI_INT, t, 0, NACC / 2, MPI_INT, MPI_MAX, win));
        MPI_OK(MPI_Accumulate(v, NACC / 2, MPI_INT, t, NACC / 2, NACC / 2, MPI_INT, MPI_REPLACE,
                              win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    read_mine(win, base, got, NACC);
    for (int i = 0; i < NACC / 2; i++)
        EXPECT(got[i] == t_size, "accumulate max: element %d = %d, want %d", i, got[i], t_size);
    for (int i = NACC / 2; i < NACC; i++)
        EXPECT(got[i] >= 1 && got[i] <= t_size, "accumulate replace: element %d = %d", i, got[i]);
}

/* Exclusive-lock contention: read-modify-write of a counter at rank 0. */
static void lock_counter(MPI_Win win, int *base)
{
    int got[NACC];
    zero(win, base, NACC);
    for (int k = 0; k < ITER; k++) {
        int c = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_OK(MPI_Get(&c, 1, MPI_INT, 0, 2, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(0, win));
        c++;
        MPI_OK(MPI_Put(&c, 1, MPI_INT, 0, 2, 1, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(0, win));
    }
    read_mine(win, base, got, NACC);
    if (t_rank == 0)
        EXPECT(got[2] == t_size * ITER, "exclusive lock counter %d, want %d", got[2],
               t_size * ITER);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    int *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(NACC * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    acc_sum_all(win, base);
    tickets(win, base, false);
    tickets(win, base, true);
    cas_loop(win, base);
    max_and_replace(win, base);
    lock_counter(win, base);
    MPI_OK(MPI_Win_free(&win));
    return check_mpi_finalize("rma_atomic");
}
