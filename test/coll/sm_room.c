/*
 * coll sm when /dev/shm fills up after a communicator's segment was made
 * (ROOM in coll/sm/sm_segment.c); run by sm_small_shm.sh in a private
 * tmpfs, never in the real /dev/shm.  The segment is made by small
 * collectives, whose slots it allocates; with the tmpfs roomy, each
 * process's buffers are left to their first use.  Rank 0 then fills the
 * tmpfs to its last MiB, and an allreduce of 1 MiB needs the buffers: the
 * job must end at once with "no room left", not die of SIGBUS nor hang.
 */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int me, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        struct statvfs v;
        int fd = open("/dev/shm/sm_room_fill", O_CREAT | O_RDWR, 0600);
        if (fd < 0 || statvfs("/dev/shm", &v) != 0) {
            perror("sm_room: /dev/shm");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        off_t fill = (off_t)(v.f_bavail * v.f_frsize) - (1 << 20);
        int err = fill > 0 ? posix_fallocate(fd, 0, fill) : 0;
        if (err) {
            fprintf(stderr, "sm_room: cannot fill /dev/shm: %s\n", strerror(err));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        close(fd);
        printf("sm_room: /dev/shm filled\n");
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    enum { N = 256 * 1024 };
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        a[i] = i;
    MPI_Allreduce(a, b, N, MPI_INT, MPI_SUM, d);
    printf("sm_room: the allreduce of 1 MiB completed\n");
    free(a);
    free(b);
    MPI_Comm_free(&d);
    MPI_Finalize();
    return 0;
}
