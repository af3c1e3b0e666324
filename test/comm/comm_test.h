/* Helpers shared by the communicator tests (test/comm). */
#ifndef TEST_COMM_COMM_TEST_H
#define TEST_COMM_COMM_TEST_H

#define CHECK_MPI 1
#include "test/check.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Live objects of a kind (MPIX_Live_objects, in mpi-ext.h). */
int MPIX_Live_objects(const char *kind, int *count);

static inline int live(const char *kind)
{
    int n = -1;
    MPI_OK(MPIX_Live_objects(kind, &n));
    return n;
}

/* Live objects of a kind once the library has let go of what completed
 * requests held (the pml drops its communicator references at the next
 * progress call): polls with MPI_Iprobe until the count is `want` or a
 * while has passed. */
static inline int live_settled(const char *kind, int want)
{
    int n = live(kind), flag;
    for (int i = 0; i < 1000 && n != want; i++) {
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
        n = live(kind);
    }
    return n;
}

/* Exit 77 (skipped) unless the job has at least n processes. */
static inline void need_procs(int n)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < n)
        check_mpi_skip("needs at least %d processes", n);
}

/* A message round on comm: each process sends its rank to (rank + 1) and
 * checks what (rank - 1) sent; on an intercommunicator rank r of one group
 * talks with rank r % remote_size of the other. */
static inline void ring_check(MPI_Comm comm)
{
    int rank, size, inter;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    MPI_OK(MPI_Comm_test_inter(comm, &inter));
    if (inter) {
        /* Each process sends to rank (rank % remote size) of the other group
         * and receives from every remote rank r with r % size == rank. */
        int rsize, got = -1;
        MPI_OK(MPI_Comm_remote_size(comm, &rsize));
        MPI_Request rq;
        MPI_OK(MPI_Isend(&rank, 1, MPI_INT, rank % rsize, 11, comm, &rq));
        for (int r = rank; r < rsize; r += size) {
            MPI_OK(MPI_Recv(&got, 1, MPI_INT, r, 11, comm, MPI_STATUS_IGNORE));
            CHECK(got == r, "intercommunicator message from remote rank %d carried %d", r, got);
        }
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        return;
    }
    int got = -1;
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT,
                        (rank + size - 1) % size, 7, comm, MPI_STATUS_IGNORE));
    CHECK(got == (rank + size - 1) % size, "ring on a communicator of %d: got %d", size, got);
}

#endif
