/* 10,000 dup/free cycles (and split/free, idup/free) without running out
 * of context ids or leaking objects; exhausting the context ids gives an
 * error, not a hang, and freeing makes them usable again. */
#include "comm_test.h"

#include <stdlib.h>

static int rank, size;

static void cycles(int n)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 1000 == 0)
            ring_check(c);
        MPI_OK(MPI_Comm_free(&c));
    }
    double t1 = MPI_Wtime();
    for (int i = 0; i < n / 10; i++) {
        MPI_Comm c;
        MPI_Request rq;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, 0, &c));
        MPI_OK(MPI_Comm_free(&c));
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Comm_free(&c));
    }
    if (rank == 0)
        printf("%d dup/free cycles: %.1f us each; %d split+idup cycles: %.1f us each\n", n,
               (t1 - t0) / n * 1e6, n / 10, (MPI_Wtime() - t1) / (n / 10) * 1e6);
}

/* Hold many communicators at once, then run out of context ids on
 * MPI_COMM_SELF (no messages: quick). */
static void exhaust(void)
{
    int max = 9000, n = 0, rc = MPI_SUCCESS;
    MPI_Comm *held = malloc((size_t)max * sizeof(*held));
    CHECK(held != NULL, "out of memory");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    while (n < max && (rc = MPI_Comm_dup(MPI_COMM_SELF, &held[n])) == MPI_SUCCESS)
        n++;
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(n < max && cls == MPI_ERR_INTERN, "after %d dups: class %d (expected MPI_ERR_INTERN)",
          n, cls);
    CHECK(n > 8000, "only %d communicators before running out", n);
    MPI_OK(MPI_Comm_free(&held[n / 2]));
    MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &held[n / 2]));   /* a freed id is usable again */
    ring_check(held[n / 2]);
    for (int i = 0; i < n; i++)
        MPI_OK(MPI_Comm_free(&held[i]));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    free(held);
    /* And collective creation works again afterwards. */
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    ring_check(c);
    MPI_OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int comms = live("comm"), groups = live("group");
    cycles(10000);
    exhaust();
    int now = live_settled("comm", comms);
    CHECK(now == comms, "%d communicators left (were %d)", now, comms);
    CHECK(live("group") == groups, "%d groups left (were %d)", live("group"), groups);
    MPI_Finalize();
    return 0;
}
