/*
 * One-sided basics (osc, issue 53): put, get and accumulate under fence,
 * lock/unlock, lock_all + flush and post/start/complete/wait, on
 * contiguous and derived datatypes at both ends; get_accumulate,
 * fetch_and_op, compare_and_swap and the request forms; concurrent
 * accumulates from every rank on the same elements (atomicity) and
 * exclusive-lock contention.  Runs at any number of ranks.
 */
#define CHECK_MPI
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include "test/check.h"

#define N 1024
static int rank, size;

static int64_t val(int r, int i, int seq) { return (int64_t)r * 100000 + i * 7 + seq; }

/* Ring: every rank puts N values into its right neighbour under fence,
 * then gets them back from its left neighbour. */
static void fence_put_get(void)
{
    int64_t *mem, src[N], back[N];
    MPI_Win win;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &mem, &win));
    memset(mem, 0, N * sizeof(int64_t));
    for (int i = 0; i < N; i++)
        src[i] = val(rank, i, 1);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_OK(MPI_Put(src, N, MPI_INT64_T, right, 0, N, MPI_INT64_T, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        EXPECT(mem[i] == val(left, i, 1), "fence put: mem[%d] = %lld", i, (long long)mem[i]);
    MPI_OK(MPI_Get(back, N, MPI_INT64_T, left, 0, N, MPI_INT64_T, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < N; i++)
        EXPECT(back[i] == val(left == 0 ? size - 1 : left - 1, i, 1), "fence get [%d]", i);
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
}

/* Derived types: a strided target (every other element) from a
 * contiguous origin, and back into a strided origin. */
static void derived(void)
{
    int buf[2 * N], src[N], got[3 * N];
    MPI_Win win;
    MPI_Datatype vec, vec3;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_vector(N, 1, 3, MPI_INT, &vec3));
    MPI_OK(MPI_Type_commit(&vec3));
    for (int i = 0; i < 2 * N; i++)
        buf[i] = -1;
    for (int i = 0; i < N; i++)
        src[i] = rank * 10000 + i;
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(src, N, MPI_INT, right, 0, 1, vec, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        EXPECT(buf[2 * i] == left * 10000 + i, "derived put [%d] = %d", 2 * i, buf[2 * i]);
        EXPECT(buf[2 * i + 1] == -1, "derived put wrote a gap at %d", 2 * i + 1);
    }
    memset(got, 0, sizeof got);
    MPI_OK(MPI_Get(got, 1, vec3, left, 0, 1, vec, win));
    MPI_OK(MPI_Win_fence(0, win));
    int ll = (left + size - 1) % size;
    for (int i = 0; i < N; i++)
        EXPECT(got[3 * i] == ll * 10000 + i && got[3 * i + 1] == 0, "derived get [%d]", i);
    /* accumulate through the vector: every rank adds to rank 0 */
    MPI_OK(MPI_Accumulate(src, N, MPI_INT, 0, 1, 1, vec, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    if (rank == 0) {
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += r * 10000 + i;
            EXPECT(buf[2 * i + 1] == want - 1, "derived accumulate [%d] = %d, want %d", i,
                   buf[2 * i + 1], want - 1);
        }
    }
    MPI_OK(MPI_Win_free(&win));
    MPI_Type_free(&vec);
    MPI_Type_free(&vec3);
}

/* Every rank adds to the same elements of rank 0, under shared locks:
 * accumulates are atomic per element. */
static void atomic_accumulate(void)
{
    int64_t *mem;
    MPI_Win win;
    const int reps = 50;
    MPI_OK(MPI_Win_allocate(16 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, 16 * sizeof(int64_t));
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t one[16];
    for (int i = 0; i < 16; i++)
        one[i] = rank + 1;
    for (int k = 0; k < reps; k++) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MPI_OK(MPI_Accumulate(one, 16, MPI_INT64_T, 0, 0, 16, MPI_INT64_T, MPI_SUM, win));
        MPI_OK(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        int64_t want = (int64_t)reps * size * (size + 1) / 2;
        for (int i = 0; i < 16; i++)
            EXPECT(mem[i] == want, "concurrent accumulate [%d] = %lld, want %lld", i,
                   (long long)mem[i], (long long)want);
        MPI_OK(MPI_Win_unlock(0, win));
    }
    MPI_OK(MPI_Win_free(&win));
}

/* lock_all + fetch_and_op: every rank takes tickets from rank 0's
 * counter; all tickets differ and the counter ends at size * reps. */
static void fetch_and_op_tickets(void)
{
    int64_t *mem, one = 1, t, none;
    MPI_Win win;
    const int reps = 40;
    MPI_OK(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &mem, &win));
    *mem = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t *mine = malloc(reps * sizeof(int64_t)), *all = malloc((size_t)size * reps * 8);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < reps; k++) {
        MPI_OK(MPI_Fetch_and_op(&one, &t, MPI_INT64_T, 0, 0, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win));
        mine[k] = t;
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Allgather(mine, reps, MPI_INT64_T, all, reps, MPI_INT64_T, MPI_COMM_WORLD);
    char *seen = calloc((size_t)size * reps, 1);
    for (int i = 0; i < size * reps; i++) {
        if (EXPECT(all[i] >= 0 && all[i] < size * reps, "ticket %lld", (long long)all[i]))
            seen[all[i]]++;
    }
    for (int i = 0; i < size * reps; i++)
        EXPECT(seen[i] == 1, "ticket %d taken %d times", i, seen[i]);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_OK(MPI_Fetch_and_op(NULL, &none, MPI_INT64_T, 0, 0, MPI_NO_OP, win));
    MPI_OK(MPI_Win_unlock(0, win));
    EXPECT(none == (int64_t)size * reps, "counter after NO_OP fetch: %lld", (long long)none);
    free(seen);
    free(mine);
    free(all);
    MPI_OK(MPI_Win_free(&win));
}

/* compare_and_swap as a mutex on rank 0, guarding a read-modify-write of
 * a plain put/get counter at the last rank (exclusive-lock contention). */
static void cas_mutex(void)
{
    int *mem;
    MPI_Win win;
    const int reps = 10;
    int last = size - 1;
    MPI_OK(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                            &win));
    mem[0] = mem[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < reps; k++) {
        int zero = 0, me = rank + 1, old;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        do {
            MPI_OK(MPI_Compare_and_swap(&me, &zero, &old, MPI_INT, 0, 0, win));
            MPI_OK(MPI_Win_flush(0, win));
        } while (old != 0);
        MPI_OK(MPI_Win_unlock(0, win));
        int c;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, win));
        MPI_OK(MPI_Get(&c, 1, MPI_INT, last, 1, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(last, win));
        c++;
        MPI_OK(MPI_Put(&c, 1, MPI_INT, last, 1, 1, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(last, win));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MPI_OK(MPI_Compare_and_swap(&zero, &me, &old, MPI_INT, 0, 0, win));
        MPI_OK(MPI_Win_unlock(0, win));
        EXPECT(old == me, "mutex held by %d, not by me (%d)", old, me);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == last) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win));
        EXPECT(mem[1] == size * reps, "counter %d, want %d", mem[1], size * reps);
        MPI_OK(MPI_Win_unlock(last, win));
    }
    MPI_OK(MPI_Win_free(&win));
}

/* get_accumulate and the request forms under lock_all. */
static void requests(void)
{
    double *mem, in[8], res[8], got[8];
    MPI_Win win;
    MPI_Request rq[4];
    int right = (rank + 1) % size;
    MPI_OK(MPI_Win_allocate(32 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &mem, &win));
    for (int i = 0; i < 32; i++)
        mem[i] = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        in[i] = 0.5 * i;
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Rput(in, 8, MPI_DOUBLE, right, 0, 8, MPI_DOUBLE, win, &rq[0]));
    MPI_OK(MPI_Raccumulate(in, 8, MPI_DOUBLE, right, 8, 8, MPI_DOUBLE, MPI_SUM, win, &rq[1]));
    MPI_OK(MPI_Rget_accumulate(in, 8, MPI_DOUBLE, res, 8, MPI_DOUBLE, right, 16, 8, MPI_DOUBLE,
                               MPI_MAX, win, &rq[2]));
    MPI_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 8; i++)
        EXPECT(res[i] == right, "get_accumulate old [%d] = %g", i, res[i]);
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Rget(got, 8, MPI_DOUBLE, right, 8, 8, MPI_DOUBLE, win, &rq[3]));
    MPI_OK(MPI_Wait(&rq[3], MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        EXPECT(got[i] == right + 0.5 * i, "raccumulate [%d] = %g", i, got[i]);
    /* MPI_NO_OP: the origin arguments are ignored, MPI_DATATYPE_NULL included */
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, got, 8, MPI_DOUBLE, right, 16, 8,
                              MPI_DOUBLE, MPI_NO_OP, win));
    MPI_OK(MPI_Win_flush_all(win));
    for (int i = 0; i < 8; i++)
        EXPECT(got[i] == (0.5 * i > right ? 0.5 * i : right), "get_accumulate MAX [%d]", i);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        EXPECT(mem[i] == 0.5 * i, "rput [%d] = %g", i, mem[i]);
    MPI_OK(MPI_Win_free(&win));
}

/* Post/start/complete/wait in a ring, with Win_test polling. */
static void pscw(void)
{
    int buf[4] = {0}, v[4];
    MPI_Win win;
    MPI_Group world, to, from;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &right, &to);
    MPI_Group_incl(world, 1, &left, &from);
    MPI_OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 4; i++)
            v[i] = rank * 10 + round + i;
        MPI_OK(MPI_Win_post(from, 0, win));
        MPI_OK(MPI_Win_start(to, 0, win));
        MPI_OK(MPI_Put(v, 4, MPI_INT, right, 0, 4, MPI_INT, win));
        MPI_OK(MPI_Win_complete(win));
        int flag = 0;
        if (round == 1) {
            while (!flag)
                MPI_OK(MPI_Win_test(win, &flag));
        } else {
            MPI_OK(MPI_Win_wait(win));
        }
        for (int i = 0; i < 4; i++)
            EXPECT(buf[i] == left * 10 + round + i, "pscw round %d [%d] = %d", round, i, buf[i]);
    }
    MPI_OK(MPI_Win_free(&win));
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    MPI_Group_free(&world);
}

/* Big transfers: several messages per operation. */
static void large(void)
{
    size_t n = 600000;
    char *mem, *src = malloc(n), *back = malloc(n);
    MPI_Win win;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Win_allocate((MPI_Aint)n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (size_t i = 0; i < n; i++)
        src[i] = (char)(i * 13 + rank);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Put(src, (int)n, MPI_CHAR, right, 0, (int)n, MPI_CHAR, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win));
    MPI_OK(MPI_Get(back, (int)n, MPI_CHAR, left, 0, (int)n, MPI_CHAR, win));
    MPI_OK(MPI_Win_unlock(left, win));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += back[i] != (char)(i * 13 + ((left + size - 1) % size));
    EXPECT(bad == 0, "large put/get: %zu bytes differ", bad);
    MPI_OK(MPI_Win_free(&win));
    free(src);
    free(back);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fence_put_get();
    derived();
    atomic_accumulate();
    fetch_and_op_tickets();
    cas_mutex();
    requests();
    pscw();
    large();
    return check_mpi_finalize("osc_basic");
}
