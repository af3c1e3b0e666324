/*
 * Device buffers: ping-pong between ranks 0 and 1 (MPI_Send, and MPI_Isend
 * with MPI_Wait: small device messages from MPI_Send are buffered, from
 * MPI_Isend they go by IPC; pml_device_eager_max), allreduce (MPI_FLOAT,
 * MPI_SUM), bcast, allgather, alltoall, reduce_scatter_block (MPI_FLOAT,
 * MPI_SUM), gather (to rank 0) and an allreduce in place (MPI_FLOAT,
 * MPI_MAX, so that repeating it keeps the result) with every user buffer in
 * device memory (SIZE: the whole of a buffer; blocks of SIZE / np),
 * next to the device's own copy bandwidth (a device-to-device copy in one
 * process), which bounds what moving the data between two processes on one
 * GPU can reach.  Every result is checked.
 *
 *   mpirun -np 2 bench/gpu [max_bytes]     (default 64 MiB)
 *
 * Buffers come from test/devmem.h: real CUDA memory by default
 * (TEST_DEVMEM=cuda), the fake device with TEST_DEVMEM=fake and
 * RAIL_ACCEL=host,fake.  Exits 77 with the reason where there is no device.
 * Not run by run_bench.py (no peer here is GPU-aware); build it with
 * mpicc -I<source root> bench/gpu.c.
 */
#include <mpi.h>
#include "test/devmem.h"

static int rank, np;

static void die(const char *what)
{
    fprintf(stderr, "[rank %d] gpu bench: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define OK(call)                                                                                   \
    do {                                                                                           \
        if ((call) != MPI_SUCCESS)                                                                 \
            die(#call);                                                                            \
    } while (0)

static int iters_for(size_t bytes)
{
    size_t it = bytes ? ((size_t)512 << 20) / bytes : 1000;
    return it < 5 ? 5 : it > 1000 ? 1000 : (int)it;
}

/* The slowest rank's time per call of fn over its iterations, after two
 * untimed calls. */
static double timed(void (*fn)(size_t), size_t bytes, int iters)
{
    fn(bytes);
    fn(bytes);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        fn(bytes);
    t = (MPI_Wtime() - t) / iters;
    double worst = 0;
    OK(MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return worst;
}

static char *da, *db, *h;

static void copy_once(size_t n)
{
    OK(devmem_memcpy(db, da, n));
}

static void pingpong(size_t n)
{
    if (rank == 0) {
        OK(MPI_Send(da, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
        OK(MPI_Recv(db, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (rank == 1) {
        OK(MPI_Recv(db, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(db, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD));
    }
}

/* the same with MPI_Isend + MPI_Wait and MPI_Irecv + MPI_Wait */
static void pingpong_nb(size_t n)
{
    MPI_Request q;
    if (rank == 0) {
        OK(MPI_Isend(da, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Irecv(db, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else if (rank == 1) {
        OK(MPI_Irecv(db, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Isend(db, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    }
}

static void allreduce(size_t n)
{
    OK(MPI_Allreduce(da, db, (int)(n / sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
}

static void bcast(size_t n)
{
    OK(MPI_Bcast(da, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD));
}

static void allgather(size_t n)
{
    size_t per = n / (size_t)np;
    OK(MPI_Allgather(da, (int)per, MPI_BYTE, db, (int)per, MPI_BYTE, MPI_COMM_WORLD));
}

static void alltoall(size_t n)
{
    size_t per = n / (size_t)np;
    OK(MPI_Alltoall(da, (int)per, MPI_BYTE, db, (int)per, MPI_BYTE, MPI_COMM_WORLD));
}

static void reduce_scatter(size_t n)
{
    size_t per = n / (size_t)np / sizeof(float);
    OK(MPI_Reduce_scatter_block(da, db, (int)per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
}

static void gather(size_t n)
{
    size_t per = n / (size_t)np;
    OK(MPI_Gather(da, (int)per, MPI_BYTE, db, (int)per, MPI_BYTE, 0, MPI_COMM_WORLD));
}

static void allreduce_in_place(size_t n)
{
    OK(MPI_Allreduce(MPI_IN_PLACE, db, (int)(n / sizeof(float)), MPI_FLOAT, MPI_MAX,
                     MPI_COMM_WORLD));
}

/* the device's own reduction (MPI_Reduce_local, db += da) of the block a
 * reduce_scatter_block gives each process, in every process at once: the
 * kernel's speed, which bounds the reductions */
static void reduce_local(size_t n)
{
    size_t per = n / (size_t)np / sizeof(float);
    OK(MPI_Reduce_local(da, db, (int)per, MPI_FLOAT, MPI_SUM));
}

/* da = rank + 1 (as floats) everywhere */
static void fill(size_t n)
{
    float *f = (float *)h;
    for (size_t i = 0; i < n / sizeof(float); i++)
        f[i] = (float)(rank + 1) + (float)(i % 7);
    OK(devmem_memcpy(da, h, n));
}

static void expect_floats(const char *what, size_t n, float (*want)(size_t))
{
    OK(devmem_memcpy(h, db, n));
    const float *f = (const float *)h;
    for (size_t i = 0; i < n / sizeof(float); i++)
        if (f[i] != want(i)) {
            char m[160];
            snprintf(m, sizeof(m), "%s of %zu bytes: [%zu] = %g, want %g", what, n, i, f[i],
                     want(i));
            die(m);
        }
}

static float want_sum(size_t i)
{
    return (float)np * (float)(np + 1) / 2 + (float)np * (float)(i % 7);
}

static float want_mine(size_t i)
{
    return (float)(rank + 1) + (float)(i % 7);
}

static float want_max(size_t i)
{
    return (float)np + (float)(i % 7);
}

static float want_root(size_t i)
{
    return 1.0f + (float)(i % 7);
}

int main(int argc, char **argv)
{
    setenv("TEST_DEVMEM", "cuda", 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)64 << 20;
    max = (max + 4095) / 4096 * 4096;
    int ok = devmem_malloc(max, (void **)&da) == MPI_SUCCESS &&
             devmem_malloc(max, (void **)&db) == MPI_SUCCESS;
    int all = 0;
    OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all) {
        if (rank == 0)
            printf("gpu bench: SKIPPED: %s\n", devmem_why());
        MPI_Finalize();
        return 77;
    }
    h = malloc(max);
    if (h == NULL)
        die("out of host memory");
    if (rank == 0)
        printf("# gpu bench: np %d, device buffers (%s); times per call, GB/s = bytes / time\n"
               "# %-10s %12s %12s %12s %12s %12s %12s %12s %12s %12s %12s %12s\n",
               np, devmem_is_cuda() ? "cuda" : "fake", "bytes", "copy us", "pingpong us",
               "allreduce us", "bcast us", "allgather us", "alltoall us", "red_scat us",
               "red_local us", "gather us", "allred_ip us", "pp_isend us");
    for (size_t n = 8; n <= max; n *= n < 4096 ? 8 : 4) {
        int it = iters_for(n);
        fill(max);
        double tc = 0, tp = 0, tn = 0, ta, tb, tg, tx, tr, tl, tgt, ti;
        if (rank == 0) {
            /* the device's own copy (one process; others wait) */
            copy_once(n);
            double t = MPI_Wtime();
            for (int i = 0; i < it; i++)
                copy_once(n);
            tc = (MPI_Wtime() - t) / it;
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (np >= 2) {
            tp = timed(pingpong, n, it) / 2;
            if (rank == 0)
                expect_floats("pingpong", n & ~(size_t)3, want_mine);
            memset(h, 0, n);   /* the echo must come again */
            OK(devmem_memcpy(db, h, n));
            tn = timed(pingpong_nb, n, it) / 2;
            if (rank == 0)
                expect_floats("nonblocking pingpong", n & ~(size_t)3, want_mine);
        }
        fill(max);
        ta = timed(allreduce, n, it);
        expect_floats("allreduce", n & ~(size_t)3, want_sum);
        tb = timed(bcast, n, it);
        if (rank != 0) {
            char *t = db;
            db = da;
            expect_floats("bcast", n & ~(size_t)3, want_root);
            db = t;
        }
        fill(max);
        tg = timed(allgather, n, it);
        size_t per = n / (size_t)np;
        if (per % sizeof(float) == 0 && per > 0) {
            OK(devmem_memcpy(h, db, per * (size_t)np));
            for (int r = 0; r < np; r++)
                for (size_t j = 0; j < per / sizeof(float); j++) {
                    float got = ((const float *)(h + per * (size_t)r))[j];
                    if (got != (float)(r + 1) + (float)(j % 7))
                        die("allgather: wrong block");
                }
        }
        fill(max);
        tx = timed(alltoall, n, it);
        if (per % sizeof(float) == 0 && per > 0) {
            /* block r: rank r's block `rank` */
            OK(devmem_memcpy(h, db, per * (size_t)np));
            size_t pf = per / sizeof(float);
            for (int r = 0; r < np; r++)
                for (size_t j = 0; j < pf; j++) {
                    float got = ((const float *)(h + per * (size_t)r))[j];
                    if (got != (float)(r + 1) + (float)(((size_t)rank * pf + j) % 7))
                        die("alltoall: wrong block");
                }
        }
        fill(max);
        tr = timed(reduce_scatter, n, it);
        if (per % sizeof(float) == 0 && per > 0) {
            OK(devmem_memcpy(h, db, per));
            size_t pf = per / sizeof(float);
            for (size_t j = 0; j < pf; j++)
                if (((const float *)h)[j] != want_sum((size_t)rank * pf + j))
                    die("reduce_scatter_block: wrong result");
        }
        /* db holds my block of the sum: one more db += da adds my input's
         * first block to it (checked), then the timed calls */
        size_t pf = per / sizeof(float);
        if (pf > 0) {
            reduce_local(n);
            OK(devmem_memcpy(h, db, pf * sizeof(float)));
            for (size_t j = 0; j < pf; j++)
                if (((const float *)h)[j] !=
                    want_sum((size_t)rank * pf + j) + (float)(rank + 1) + (float)(j % 7))
                    die("reduce_local: wrong result");
        }
        tl = timed(reduce_local, n, it);
        fill(max);
        tgt = timed(gather, n, it);
        if (rank == 0 && per % sizeof(float) == 0 && per > 0) {
            OK(devmem_memcpy(h, db, per * (size_t)np));
            for (int r = 0; r < np; r++)
                for (size_t j = 0; j < per / sizeof(float); j++)
                    if (((const float *)(h + per * (size_t)r))[j] !=
                        (float)(r + 1) + (float)(j % 7))
                        die("gather: wrong block");
        }
        OK(devmem_memcpy(db, da, max));
        ti = timed(allreduce_in_place, n, it);
        expect_floats("allreduce in place", n & ~(size_t)3, want_max);
        if (rank == 0) {
            double gb = (double)n / 1e9;
            printf("  %-10zu %12.2f %12.2f %12.2f %12.2f %12.2f %12.2f %12.2f %12.2f %12.2f %12.2f"
                   " %12.2f",
                   n, tc * 1e6, tp * 1e6, ta * 1e6, tb * 1e6, tg * 1e6, tx * 1e6, tr * 1e6,
                   tl * 1e6, tgt * 1e6, ti * 1e6, tn * 1e6);
            if (n >= ((size_t)1 << 20))
                printf("   GB/s: copy %.1f pingpong %.1f allreduce %.1f", gb / tc,
                       np >= 2 ? gb / tp : 0.0, gb / ta);
            printf("\n");
            fflush(stdout);
        }
    }
    devmem_free(da);
    devmem_free(db);
    free(h);
    MPI_Finalize();
    return 0;
}
