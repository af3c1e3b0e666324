/*
 * Benchmark (not a test): MPI_Pack of a vector of 64-byte blocks (stride
 * 128 bytes) against memcpy of the same number of bytes, at several sizes,
 * and the cost of one small MPI_Pack call.  Run as a singleton or under
 * mpirun -n 1:
 *     test/dtype/bench_pack [seconds per point, default 0.2]
 * Prints GB/s of packed data and the ratio to memcpy.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double rate(double bytes, double secs)
{
    return bytes / secs / 1e9;
}

/* Repeat fn until `budget` seconds have passed; seconds per call. */
#define TIME(budget, stmt)                                                                         \
    ({                                                                                             \
        long reps_ = 0, batch_ = 1;                                                                \
        double t0_ = MPI_Wtime(), t_ = 0;                                                          \
        while ((t_ = MPI_Wtime() - t0_) < (budget)) {                                              \
            for (long k_ = 0; k_ < batch_; k_++) {                                                 \
                stmt;                                                                              \
            }                                                                                      \
            reps_ += batch_;                                                                       \
            batch_ *= 2;                                                                           \
        }                                                                                          \
        t_ / reps_;                                                                                \
    })

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double budget = argc > 1 ? atof(argv[1]) : 0.2;
    const size_t block = 64, stride = 128;
    const size_t sizes[] = {4096, 65536, 1 << 20, 16 << 20};
    size_t max = sizes[sizeof(sizes) / sizeof(sizes[0]) - 1];
    char *src = malloc(max / block * stride), *dst = malloc(max), *csrc = malloc(max);
    memset(src, 1, max / block * stride);
    memset(csrc, 2, max);
    memset(dst, 0, max);
    printf("%-10s %12s %12s %8s\n", "bytes", "MPI_Pack", "memcpy", "ratio");
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t bytes = sizes[s];
        MPI_Datatype v;
        MPI_Type_vector((int)(bytes / block), (int)block, (int)stride, MPI_BYTE, &v);
        MPI_Type_commit(&v);
        double tp = TIME(budget, {
            int pos = 0;
            MPI_Pack(src, 1, v, dst, (int)bytes, &pos, MPI_COMM_SELF);
        });
        double tm = TIME(budget, {
            memcpy(dst, csrc, bytes);
            __asm__ volatile("" ::: "memory");
        });
        printf("%-10zu %9.2f GB/s %7.2f GB/s %7.0f%%\n", bytes, rate((double)bytes, tp),
               rate((double)bytes, tm), 100.0 * tm / tp);
        MPI_Type_free(&v);
    }
    /* One 64-byte block: the per-call cost. */
    MPI_Datatype one;
    MPI_Type_vector(1, 64, 128, MPI_BYTE, &one);
    MPI_Type_commit(&one);
    double t1 = TIME(budget, {
        int pos = 0;
        MPI_Pack(src, 1, one, dst, 64, &pos, MPI_COMM_SELF);
    });
    MPI_Datatype two;
    MPI_Type_vector(2, 64, 128, MPI_BYTE, &two);
    MPI_Type_commit(&two);
    double t2 = TIME(budget, {
        int pos = 0;
        MPI_Pack(src, 1, two, dst, 128, &pos, MPI_COMM_SELF);
    });
    printf("one MPI_Pack call: %.0f ns (1 block), %.0f ns (2 blocks of a vector)\n", t1 * 1e9,
           t2 * 1e9);
    MPI_Type_free(&one);
    MPI_Type_free(&two);
    free(src), free(dst), free(csrc);
    MPI_Finalize();
    return 0;
}
