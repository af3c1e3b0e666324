/*
 * btl ofi's registration cache (run with RAIL_BTL=self,ofi, tests.conf):
 * rank 0 sends 4 MiB twice from one mmap()ed buffer to rank 1 (every
 * large message by the get, so the sender registers its buffer): one
 * miss, then one hit (MPI_T btl_ofi_rcache_*).  Then it unmaps the
 * buffer, maps new memory at the same address with other bytes and sends
 * again: rank 1 must receive the new bytes, and the invalidation counter
 * must have moved.
 */
#define CHECK_MPI
#include "test/check.h"
#include "test/pvar.h"

#include <string.h>
#include <sys/mman.h>

#define LEN (4u << 20)

static void fill(unsigned char *b, int round)
{
    for (size_t i = 0; i < LEN; i++)
        b[i] = (unsigned char)(i * 7 + round * 31 + (i >> 12));
}

static void sender(void)
{
    unsigned char *b = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(b != MAP_FAILED, "mmap");
    fill(b, 0);
    unsigned long long miss0 = pvar_count("btl_ofi_rcache_misses");
    unsigned long long hit0 = pvar_count("btl_ofi_rcache_hits");
    MPI_OK(MPI_Send(b, LEN, MPI_BYTE, 1, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Send(b, LEN, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
    EXPECT(pvar_count("btl_ofi_rcache_misses") - miss0 == 1, "misses %llu -> %llu", miss0,
           pvar_count("btl_ofi_rcache_misses"));
    EXPECT(pvar_count("btl_ofi_rcache_hits") - hit0 >= 1, "hits %llu -> %llu", hit0,
           pvar_count("btl_ofi_rcache_hits"));
    unsigned long long inv0 = pvar_count("btl_ofi_rcache_invalidations");
    CHECK(munmap(b, LEN) == 0, "munmap");
    unsigned char *c = mmap(b, LEN, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(c == b, "new memory at the same address (got %p for %p)", (void *)c, (void *)b);
    fill(c, 1);
    MPI_OK(MPI_Send(c, LEN, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
    EXPECT(pvar_count("btl_ofi_rcache_invalidations") > inv0, "invalidations stayed at %llu",
           inv0);
    munmap(c, LEN);
}

static void receiver(void)
{
    unsigned char *b = malloc(LEN), *want = malloc(LEN);
    CHECK(b && want, "out of memory");
    for (int round = 0; round < 3; round++) {
        memset(b, 0, LEN);
        MPI_OK(MPI_Recv(b, LEN, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fill(want, round < 2 ? 0 : 1);
        EXPECT(memcmp(b, want, LEN) == 0, "message %d: wrong bytes%s", round,
               round == 2 ? " (stale registration of the unmapped buffer?)" : "");
    }
    free(b);
    free(want);
}

int main(int argc, char **argv)
{
    int rank, size, idx;
    MPI_OK(MPI_Init(&argc, &argv));
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (MPI_T_pvar_get_index("btl_ofi_rcache_hits", MPI_T_PVAR_CLASS_COUNTER, &idx) != MPI_SUCCESS)
        check_mpi_skip("no btl_ofi_rcache counters (btl ofi not built)");
    if (size < 2)
        check_mpi_skip("needs 2 processes");
    if (rank == 0)
        sender();
    else if (rank == 1)
        receiver();
    MPI_T_finalize();
    return check_mpi_finalize("ofi_rcache");
}
