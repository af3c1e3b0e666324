/*
 * Waits that depend on the kernel block (base/progress.c): pairs of ranks
 * ping-pong 200 small messages; each prints how often its waits blocked in
 * the kernel (the MPI_T counter progress_kernel_blocks) and whether it
 * counts hosts of the job on its kernel.  test/p2p/p2p_netns.sh runs it
 * between namespace hosts, where every wait for the peer's socket must
 * block after a short spin, and with progress_mode=spin, where none may.
 */
#define CHECK_MPI
#include "test/check.h"
#include "test/pvar.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    unsigned long long before = pvar_count("progress_kernel_blocks");
    char buf[8] = {0};
    for (int i = 0; peer < size && i < 200; i++) {
        if (rank & 1) {
            MPI_OK(MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(buf[0] == (char)i, "message %d carried %d", i, buf[0]);
            MPI_OK(MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
        } else {
            buf[0] = (char)i;
            MPI_OK(MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    }
    unsigned long long blocks = pvar_count("progress_kernel_blocks") - before;
    printf("KERNEL_WAIT rank %d blocks %llu\n", rank, blocks);
    fflush(stdout);
    int rc = check_mpi_finalize("p2p_kernel_wait");
    MPI_OK(MPI_T_finalize());
    return rc;
}
