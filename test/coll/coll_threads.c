/*
 * MPI_THREAD_MULTIPLE: threads of a process run blocking, nonblocking and
 * persistent collectives at the same time, each thread on its own
 * duplicate of MPI_COMM_WORLD (the schedule engine and the progress
 * callback are shared).  Skipped (77) without MPI_THREAD_MULTIPLE or
 * MPI_Comm_dup.
 *
 * COLLTEST_DEVICE=1: the threads also run large bcasts and allreduces on
 * device buffers (coll sm moves them device to device, from buffers opened
 * by IPC), every bcast of every thread from the same root buffer: each
 * communicator exports that allocation anew, and on the mock driver with
 * MOCK_CUDA_IPC_VARY=1 every export has new handle bytes, so one thread's
 * open finds the allocation mapped already while another thread copies
 * from that mapping (accel's IPC cache must not close a mapping in use).
 */
#include "coll_test.h"

#include <pthread.h>

#define NTHREADS 3
#define ITERS 150

typedef struct targ {
    int id;
    MPI_Comm comm;
    int *din, *dout;   /* device buffers of DEV_ELEMS ints (COLLTEST_DEVICE) */
} targ_t;

#define DEV_ELEMS (64 * 1024)   /* 256 KiB: from coll_sm_device_handoff_min */
static int *dev_shared;         /* every thread's bcast source at rank 0 */

static void device_round(targ_t *a, int it, int *h)
{
    int n = t_size;
    /* bcast from the one shared buffer */
    int *buf = t_rank == 0 ? dev_shared : a->dout;
    MPI_OK(MPI_Bcast(buf, DEV_ELEMS, MPI_INT, 0, a->comm));
    if (t_rank != 0) {
        MPI_OK(devmem_memcpy(h, a->dout, DEV_ELEMS * sizeof(int)));
        for (int i = 0; i < DEV_ELEMS; i++)
            if (h[i] != gen_int(0, i, 0))
                CHECK(0, "thread %d iteration %d: device bcast element %d is %d, expected %d",
                      a->id, it, i, h[i], gen_int(0, i, 0));
    }
    /* allreduce of the thread's own buffers */
    for (int i = 0; i < DEV_ELEMS; i++)
        h[i] = gen_int(t_rank + 10 * a->id, i, it);
    MPI_OK(devmem_memcpy(a->din, h, DEV_ELEMS * sizeof(int)));
    MPI_OK(MPI_Allreduce(a->din, a->dout, DEV_ELEMS, MPI_INT, MPI_SUM, a->comm));
    MPI_OK(devmem_memcpy(h, a->dout, DEV_ELEMS * sizeof(int)));
    for (int i = 0; i < DEV_ELEMS; i++) {
        int s = 0;
        for (int q = 0; q < n; q++)
            s += gen_int(q + 10 * a->id, i, it);
        if (h[i] != s)
            CHECK(0, "thread %d iteration %d: device allreduce element %d is %d, expected %d",
                  a->id, it, i, h[i], s);
    }
}

static void *worker(void *p)
{
    targ_t *a = p;
    int n = t_size, c = 257;
    int *in = malloc(sizeof(int) * (size_t)(c * n)), *out = malloc(sizeof(int) * (size_t)(c * n));
    int *h = t_device ? malloc(DEV_ELEMS * sizeof(int)) : NULL;
    if (t_device)
        MPI_OK(devmem_thread_enter());
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
        if (t_device && it % 5 == 0)
            device_round(a, it, h);
    }
    MPI_OK(MPI_Request_free(&pr));
    free(h);
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
    if (provided < MPI_THREAD_MULTIPLE)
        check_mpi_skip("MPI_THREAD_MULTIPLE not provided (%d)", provided);
    const char *dv = getenv("COLLTEST_DEVICE");
    t_device = dv != NULL && atoi(dv) != 0;
    if (t_device) {
        /* device buffers asked for: skip (77) where there is no such device */
        void *p = NULL;
        int ok = devmem_malloc(DEV_ELEMS * sizeof(int), &p) == MPI_SUCCESS, all = 0;
        MPI_OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        if (!all)
            check_mpi_skip("device buffers: %s", devmem_why());
        dev_shared = p;
        int *h = malloc(DEV_ELEMS * sizeof(int));
        for (int i = 0; i < DEV_ELEMS; i++)
            h[i] = gen_int(0, i, 0);
        MPI_OK(devmem_memcpy(dev_shared, h, DEV_ELEMS * sizeof(int)));
        free(h);
    }
    targ_t a[NTHREADS];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < NTHREADS; i++) {
        a[i].id = i;
        a[i].din = a[i].dout = NULL;
        if (t_device) {
            MPI_OK(devmem_malloc(DEV_ELEMS * sizeof(int), (void **)&a[i].din));
            MPI_OK(devmem_malloc(DEV_ELEMS * sizeof(int), (void **)&a[i].dout));
        }
        if (MPI_Comm_dup(MPI_COMM_WORLD, &a[i].comm) != MPI_SUCCESS)
            check_mpi_skip("MPI_Comm_dup is not available");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, &a[i]) == 0, "pthread_create");
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < NTHREADS; i++) {
        MPI_OK(MPI_Comm_free(&a[i].comm));
        if (t_device) {
            devmem_free(a[i].din);
            devmem_free(a[i].dout);
        }
    }
    if (t_device)
        devmem_free(dev_shared);
    if (t_rank == 0)
        printf("coll_threads: passed at np %d with %d threads%s\n", t_size, NTHREADS,
               t_device ? ", device buffers too" : "");
    MPI_OK(MPI_Finalize());
    return 0;
}
