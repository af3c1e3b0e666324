/* An error under MPI_ERRORS_ARE_FATAL (the default) ends the whole job with
 * a message naming the call.  Run by fatal.sh; rank 1 (or 0 alone) errs,
 * the others wait in a call that only the job's end can interrupt. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, v;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == (size > 1 ? 1 : 0)) {
        MPI_Comm_get_attr(MPI_COMM_WORLD, 987654, &v, &v);
        printf("rank %d survived a fatal error\n", rank);
        return 3;
    }
    sleep(30);
    MPI_Finalize();
    return 0;
}
