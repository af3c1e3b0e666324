/* Start-up: the driver times "mpirun -n N ./init_finalize" as a whole. */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
