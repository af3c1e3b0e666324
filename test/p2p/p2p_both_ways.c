/* Large messages both ways at once (pml_rndv_both_ways): a receiver that
 * is itself sending such messages to the same process takes the get,
 * untimed (MPI_T counter pml_rndv_recv_both_ways), where the receiver of
 * a stream one way keeps choosing by time.
 *
 * Ranks pair up (0-1, 2-3, ...; an odd last rank only takes part in the
 * barriers).  Both ways, each side posts two 256 KiB sends (A, B), receives
 * the other's A, then passes a 0-byte handshake, then receives B: its own B
 * cannot complete before the other side is past the handshake, so when
 * each side matches the other's A, one of its own sends is still in
 * flight.  One way, the lower rank sends ROUNDS messages and the higher
 * receives them.  Every byte is checked.  P2P_BOTH_WAYS says what the
 * counter must show (RAIL_PML_RNDV_BOTH_WAYS of the variant):
 *   get    A of every round both ways counted, nothing one way
 *   time   nothing
 *   unset  (auto, by the kernel copy's probe) nothing one way
 * A get counted both ways copies alone: where btl sm would share a get of
 * 256 KiB with its sender (btl_sm_get_shared), it shares at most the gets
 * not counted both ways.
 * The counts hold where messages of 256 KiB are chosen between the get and
 * the pipeline: btl sm with every rank on a CPU of its own (with more
 * ranks the pml takes the get for them anyway); elsewhere only the data
 * are checked. */
#include "p2p_test.h"
#include "../pvar.h"

#include <unistd.h>

#define MSG (256 * 1024)
#define ROUNDS 6

/* One round both ways with `peer`: sends A and B, receives A, handshake,
 * receives B. */
static void both_ways(int peer, int round, unsigned char *sa, unsigned char *sb,
                      unsigned char *r)
{
    MPI_Request q[2];
    t_fill(sa, MSG, t_rank, 2 * round);
    t_fill(sb, MSG, t_rank, 2 * round + 1);
    MPI_OK(MPI_Isend(sa, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Isend(sb, MSG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Recv(r, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    t_expect(r, MSG, peer, 2 * round, "message A");
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 3, NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    MPI_OK(MPI_Recv(r, MSG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    t_expect(r, MSG, peer, 2 * round + 1, "message B");
    MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    const char *want = getenv("P2P_BOTH_WAYS");
    const char *btl = getenv("RAIL_BTL");
    /* the pml chooses for 256 KiB host messages only over btl sm with a CPU
     * per rank (pml_rndv_get_min's auto) */
    const int counted = (!btl || strstr(btl, "sm")) && !getenv("RAIL_PML_RNDV_GET_MIN") &&
                        !getenv("RAIL_PML_RNDV_GET") && t_size <= sysconf(_SC_NPROCESSORS_ONLN);
    int peer = t_rank ^ 1;
    unsigned char *sa = malloc(MSG), *sb = malloc(MSG), *r = malloc(MSG);
    CHECK(sa && sb && r, "out of memory");
    t_barrier();
    if (peer < t_size) {
        unsigned long long before = pvar_count("pml_rndv_recv_both_ways");
        const unsigned long long gets0 = pvar_count("pml_rndv_recv_get"),
                                 shared0 = pvar_count("btl_sm_get_shared");
        for (int i = 0; i < ROUNDS; i++)
            both_ways(peer, i, sa, sb, r);
        unsigned long long n = pvar_count("pml_rndv_recv_both_ways") - before;
        const unsigned long long gets = pvar_count("pml_rndv_recv_get") - gets0,
                                 shared = pvar_count("btl_sm_get_shared") - shared0;
        CHECK(n <= gets && shared <= gets - n,
              "both ways: %llu of %llu gets shared with the sender, %llu of them both ways", shared,
              gets, n);
        if (counted && want && strcmp(want, "get") == 0)
            CHECK(n >= ROUNDS && n <= 2 * ROUNDS,
                  "both ways: %llu messages counted by pml_rndv_recv_both_ways, want %d to %d", n,
                  ROUNDS, 2 * ROUNDS);
        if (want && strcmp(want, "time") == 0)
            CHECK(n == 0, "both ways with pml_rndv_both_ways=time: %llu messages counted", n);

        before = pvar_count("pml_rndv_recv_both_ways");
        for (int i = 0; i < ROUNDS; i++) {
            if (t_rank < peer) {
                t_fill(sa, MSG, t_rank, 100 + i);
                MPI_OK(MPI_Send(sa, MSG, MPI_BYTE, peer, 4, MPI_COMM_WORLD));
            } else {
                MPI_OK(MPI_Recv(r, MSG, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                t_expect(r, MSG, peer, 100 + i, "one way");
            }
        }
        n = pvar_count("pml_rndv_recv_both_ways") - before;
        CHECK(n == 0, "one way: %llu messages counted by pml_rndv_recv_both_ways", n);
    }
    free(sa);
    free(sb);
    free(r);
    MPI_OK(MPI_T_finalize());
    return check_mpi_finalize("p2p_both_ways");
}
