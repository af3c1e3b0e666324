/*
 * MPI_THREAD_MULTIPLE: threads of a process run blocking, nonblocking and
 * persistent collectives at the same time, each thread on its own
 * duplicate of MPI_COMM_WORLD (the schedule engine and the progress
 * callback are shared).  Skipped (77) without MPI_THREAD_MULTIPLE or
 * MPI_Comm_dup.
 */
#include "coll_test.h"

#include <pthread.h>

#define NTHREADS 3
#define ITERS 150

typedef struct targ {
    int id;
    MPI_Comm comm;
} targ_t;

static void *worker(void *p)
{
    targ_t *a = p;
    int n = t_size, c = 257;
    int *in = malloc(sizeof(int) * (size_t)(c * n)), *out = malloc(sizeof(int) * (size_t)(c * n));
    MPI_Request pr;
    int pin = 0, pout = 0;
    MPI_OK(MPI_Allreduce_init(&pin, &pout, 1, MPI_INT, MPI_SUM, a->comm, MPI_INFO_NULL, &pr));
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < c; i++)
            in[i] = gen_int(t_rank + 10 * a->id, i, it);
        MPI_Request r;
        if (it % 2) {
            MPI_OK(MPI_Iallreduce(in, out, c, MPI_INT, MPI_SUM, a->comm, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Allreduce(in, out, c, MPI_INT, MPI_SUM, a->comm));
        }
        for (int i = 0; i < c; i++) {
            int s = 0;
            for (int q = 0; q < n; q++)
                s += gen_int(q + 10 * a->id, i, it);
            CHECK(out[i] == s, "thread %d iteration %d: element %d is %d, expected %d", a->id, it,
                  i, out[i], s);
        }
        pin = it + a->id;
        MPI_OK(MPI_Start(&pr));
        MPI_OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        CHECK(pout == n * (it + a->id), "thread %d persistent allreduce: %d", a->id, pout);
        for (int j = 0; j < n; j++)
            in[j] = t_rank * 1000 + j + it;
        MPI_OK(MPI_Ialltoall(in, 1, MPI_INT, out, 1, MPI_INT, a->comm, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int j = 0; j < n; j++)
            CHECK(out[j] == j * 1000 + t_rank + it, "thread %d alltoall block %d", a->id, j);
        if (it % 16 == 0)
            MPI_OK(MPI_Barrier(a->comm));
    }
    MPI_OK(MPI_Request_free(&pr));
    free(in);
    free(out);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
    if (provided < MPI_THREAD_MULTIPLE) {
        MPI_Finalize();
        return 77;
    }
    targ_t a[NTHREADS];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < NTHREADS; i++) {
        a[i].id = i;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &a[i].comm) != MPI_SUCCESS) {
            MPI_Finalize();
            return 77;
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, &a[i]) == 0, "pthread_create");
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < NTHREADS; i++)
        MPI_OK(MPI_Comm_free(&a[i].comm));
    if (t_rank == 0)
        printf("coll_threads: passed at np %d with %d threads\n", t_size, NTHREADS);
    MPI_OK(MPI_Finalize());
    return 0;
}
