/*
 * Noncontiguous datatypes on CUDA memory take few device waits: the pieces
 * are queued as device-to-device copies through a staging buffer and waited
 * for once (accel/accel_dt.h), not copied and waited for one by one.  Runs
 * with the test's mock driver (TEST_DEVMEM=cuda and LD_LIBRARY_PATH on
 * test/accel/mock-cuda: "device" memory is host memory there, and the mock
 * counts every driver call); skipped (77) without it.  A vector of 1000
 * doubles with stride 2: MPI_Pack / MPI_Unpack, a ring of send/recv, a
 * bcast and an allgather (its own block by a local type-to-type copy); the
 * data and the untouched gaps are checked, and each operation may wait for
 * the device a few times, not once per block (1000).
 */
#include "test/dtype/dtype_test.h"
#include "test/devmem.h"

#define N 1000
#define MAX_WAITS 16

static long (*calls)(const char *);

static long waits(void)
{
    return calls("cuStreamSynchronize");
}

/* Device buffer of 2N doubles: even slots v0 + i/2 ... (the vector's
 * elements), odd slots `gap`. */
static void fill(double *d, double v0, double gap)
{
    static double h[2 * N];
    for (int i = 0; i < 2 * N; i++)
        h[i] = i % 2 ? gap : v0 + i / 2;
    MPI_OK(devmem_memcpy(d, h, sizeof(h)));
}

static void expect(const double *d, double v0, double gap, const char *what)
{
    static double h[2 * N];
    MPI_OK(devmem_memcpy(h, d, sizeof(h)));
    for (int i = 0; i < 2 * N; i++) {
        double want = i % 2 ? gap : v0 + i / 2;
        CHECK(h[i] == want, "%s: [%d] = %g, want %g", what, i, h[i], want);
    }
}

static void few_waits(long before, const char *what)
{
    long n = waits() - before;
    CHECK(n <= MAX_WAITS, "%s waited for the device %ld times (at most %d)", what, n, MAX_WAITS);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    double *a = NULL, *b = NULL;
    int ok = devmem_is_cuda() && devmem_malloc(sizeof(double) * 2 * N * t_size, (void **)&a) ==
                                     MPI_SUCCESS;
    if (ok) {
        calls = (long (*)(const char *))dlsym(RTLD_DEFAULT, "mock_cuda_calls");
        ok = calls != NULL;
    }
    int all = 0;
    MPI_OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all)
        check_mpi_skip("needs TEST_DEVMEM=cuda with the mock driver "
                       "(LD_LIBRARY_PATH=test/accel/mock-cuda)%s%s",
                       devmem_why()[0] ? ": " : "", devmem_why());
    MPI_OK(devmem_malloc(sizeof(double) * 2 * N * t_size, (void **)&b));
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &v));
    MPI_OK(MPI_Type_commit(&v));

    /* MPI_Pack from the device, MPI_Unpack back into it */
    static double packed[N];
    int pos = 0;
    fill(a, 100 * t_rank, -1);
    long w = waits();
    MPI_OK(MPI_Pack(a, 1, v, packed, sizeof(packed), &pos, MPI_COMM_WORLD));
    few_waits(w, "MPI_Pack");
    for (int i = 0; i < N; i++)
        CHECK(packed[i] == 100 * t_rank + i, "packed [%d] = %g", i, packed[i]);
    fill(b, 0, -2);
    for (int i = 0; i < N; i++)
        packed[i] = 7 + i;
    pos = 0;
    w = waits();
    MPI_OK(MPI_Unpack(packed, sizeof(packed), &pos, b, 1, v, MPI_COMM_WORLD));
    few_waits(w, "MPI_Unpack");
    expect(b, 7, -2, "MPI_Unpack");

    /* a ring of messages, device to device */
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    fill(b, 0, -3);
    w = waits();
    MPI_OK(MPI_Sendrecv(a, 1, v, to, 5, b, 1, v, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    few_waits(w, "MPI_Sendrecv");
    expect(b, 100 * from, -3, "MPI_Sendrecv");

    /* bcast from the last rank */
    fill(b, t_rank == t_size - 1 ? 55 : 0, -4);
    w = waits();
    MPI_OK(MPI_Bcast(b, 1, v, t_size - 1, MPI_COMM_WORLD));
    few_waits(w, "MPI_Bcast");
    expect(b, 55, -4, "MPI_Bcast");

    /* allgather: block r from rank r, own block copied locally */
    for (int r = 0; r < t_size; r++)
        fill(b + 2 * N * r, 0, -5);
    w = waits();
    MPI_OK(MPI_Allgather(a, 1, v, b, 1, v, MPI_COMM_WORLD));
    CHECK(waits() - w <= MAX_WAITS * t_size, "MPI_Allgather waited for the device %ld times",
          waits() - w);
    /* the vector's extent is 2N - 1 doubles: block r starts at (2N - 1) r */
    static double all_h[2 * N * 8];
    CHECK(t_size <= 8, "at most 8 ranks");
    MPI_OK(devmem_memcpy(all_h, b, sizeof(double) * 2 * N * t_size));
    for (int r = 0; r < t_size; r++)
        for (int i = 0; i < N; i++) {
            double got = all_h[(2 * N - 1) * r + 2 * i];
            CHECK(got == 100 * r + i, "MPI_Allgather block %d [%d] = %g", r, i, got);
        }

    MPI_OK(MPI_Type_free(&v));
    devmem_free(a);
    devmem_free(b);
    return check_mpi_finalize("dtype_device_mock");
}
