/*
 * An MPI program for btl verbs' scripts (test_btl_verbs_fault.sh,
 * test_btl_verbs_netns.sh):
 *   verbs_job ring        every rank sends 100 small and 4 large (4 MiB,
 *                         the rendezvous's RDMA read) messages to the next
 *                         rank and checks what the previous one sent;
 *                         prints "RING OK rank R" and "jobid=J";
 *   verbs_job die R       the ring once, then rank R kills itself (SIGKILL)
 *                         while the others wait for a message from it;
 *   verbs_job remap       the ring, then rank 1 sends 4 MiB to rank 0 from
 *                         an mmap'd buffer, unmaps it, maps new memory at
 *                         the same address and sends other bytes from it:
 *                         rank 0 must receive the new bytes (the
 *                         registration cache dropped the old registration;
 *                         the emulated HCA would refuse a stale one);
 *                         prints "REMAP OK".
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int ring(int rank, int size)
{
    const int big = 4 << 20, next = (rank + 1) % size, prev = (rank + size - 1) % size;
    char *s = malloc(big), *r = malloc(big);
    int bad = 0;
    for (int i = 0; i < 104 && s && r; i++) {
        int len = i < 100 ? 1 + i * 37 : big;
        for (int k = 0; k < len; k++)
            s[k] = (char)(rank * 31 + i + k);
        MPI_Sendrecv(s, len, MPI_CHAR, next, i, r, len, MPI_CHAR, prev, i, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (int k = 0; k < len; k++)
            bad += r[k] != (char)(prev * 31 + i + k);
    }
    free(s);
    free(r);
    return bad;
}

static int remap(int rank)
{
    const size_t len = 4 << 20;
    int bad = 0;
    if (rank == 1) {
        char *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (int round = 0; round < 2 && b != MAP_FAILED; round++) {
            memset(b, 'a' + round, len);
            MPI_Send(b, (int)len, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
            bad += munmap(b, len) != 0;
            if (round == 0)
                bad += mmap(b, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != b;
        }
    } else if (rank == 0) {
        char *r = malloc(len);
        for (int round = 0; round < 2 && r; round++) {
            MPI_Recv(r, (int)len, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t k = 0; k < len; k++)
                bad += r[k] != 'a' + round;
        }
        free(r);
        printf("REMAP %s\n", bad ? "FAILED" : "OK");
    }
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *ns = getenv("PMIX_NAMESPACE");
    if (rank == 0 && ns)
        printf("jobid=%s\n", strncmp(ns, "rail.", 5) == 0 ? ns + 5 : ns);
    int bad = ring(rank, size);
    printf("RING %s rank %d\n", bad ? "FAILED" : "OK", rank);
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "remap") == 0 && size > 1)
        bad += remap(rank);
    if (argc > 2 && strcmp(argv[1], "die") == 0) {
        int victim = atoi(argv[2]), x;
        if (rank == victim)
            raise(SIGKILL);
        MPI_Recv(&x, 1, MPI_INT, victim, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return bad != 0;
}
