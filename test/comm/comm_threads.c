/* Concurrent communicator creation under MPI_THREAD_MULTIPLE: each thread
 * duplicates and frees its own communicator in a loop, others run idup and
 * MPI_Comm_create_group (distinct tags) on one shared parent at the same
 * time, and create_group alongside dups of MPI_COMM_SELF; context ids must
 * neither clash nor leak. */
#include "comm_test.h"

#include <pthread.h>

#define NTHREADS 4
#define ITERS 200

static int rank, size;
static MPI_Comm base[NTHREADS];

static void *dup_loop(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < ITERS; i++) {
        MPI_Comm c;
        if (i % 2)
            MPI_OK(MPI_Comm_dup(base[t], &c));
        else {
            MPI_Request rq;
            MPI_OK(MPI_Comm_idup(base[t], &c, &rq));
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        if (i % 20 == 0)
            ring_check(c);
        MPI_OK(MPI_Comm_free(&c));
    }
    return NULL;
}

/* Every thread creates a communicator of all processes from MPI_COMM_WORLD
 * with its own tag, concurrently with the others. */
static void *group_loop(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Group g;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    for (int i = 0; i < ITERS / 10; i++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 100 + t, &c));
        ring_check(c);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Group_free(&g));
    return NULL;
}

/* MPI_Comm_create_group in every thread while another thread duplicates
 * MPI_COMM_SELF (one at a time: collective calls on one communicator are
 * ordered): a dup that only this process agrees on used to repeat its
 * agreement inside the critical section for ever while the windows it
 * waited for belonged to the others' agreements (hung at np 3-4). */
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;

static void *mixed_loop(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Group g;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    for (int i = 0; i < ITERS / 4; i++) {
        MPI_Comm c, s;
        MPI_OK(MPI_Comm_create_group(base[t], g, 200 + t, &c));
        MPI_OK(MPI_Barrier(c));
        MPI_OK(MPI_Comm_free(&c));
        pthread_mutex_lock(&self_lock);
        MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &s));
        pthread_mutex_unlock(&self_lock);
        MPI_OK(MPI_Barrier(s));
        MPI_OK(MPI_Comm_free(&s));
    }
    MPI_OK(MPI_Group_free(&g));
    return NULL;
}

static void run(void *(*fn)(void *))
{
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        CHECK(pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int comms = live("comm");
    for (int t = 0; t < NTHREADS; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base[t]));
    run(dup_loop);
    run(group_loop);
    run(mixed_loop);
    for (int t = 0; t < NTHREADS; t++)
        MPI_OK(MPI_Comm_free(&base[t]));
    int now = live_settled("comm", comms);
    CHECK(now == comms, "%d communicators left (were %d)", now, comms);
    MPI_Finalize();
    return 0;
}
