/*
 * A checksummed stream between every pair of ranks, for the rails tests
 * (test/rails/ scripts): each round every rank sends one message of SIZE bytes
 * to every other rank (tag = round) and runs an allreduce; every byte and
 * every sum is checked, and at the end no stray message (a duplicate) may
 * be left to receive.  Prints the MPI_T counters btl_rail_cross_rail and
 * btl tcp's failover counters.
 *
 *   rails_stream [ROUNDS [SIZE [PAUSE_MS]]]   (defaults 10, 256 KiB, 0)
 *
 * PAUSE_MS between rounds lets a test take a link down mid-stream.
 */
#define CHECK_MPI
#include "test/check.h"
#include "test/pvar.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint32_t rails_word(int src, int dst, int round, size_t i)
{
    uint32_t x = (uint32_t)(src * 7919 + dst * 104729 + round * 15485863) ^ (uint32_t)i;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    return x ^ (x >> 15);
}

static void rails_fill(uint32_t *buf, size_t words, int src, int dst, int round)
{
    for (size_t i = 0; i < words; i++)
        buf[i] = rails_word(src, dst, round, i);
}

static size_t rails_bad_words(const uint32_t *buf, size_t words, int src, int dst, int round)
{
    size_t bad = 0;
    for (size_t i = 0; i < words; i++)
        bad += buf[i] != rails_word(src, dst, round, i);
    return bad;
}

/* One round: a message to and from every other rank, then an allreduce. */
static void rails_round(int rank, int size, int round, size_t words, uint32_t *sbuf,
                        uint32_t *rbuf, MPI_Request *reqs)
{
    int n = 0;
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        MPI_OK(MPI_Irecv(rbuf + (size_t)p * words, (int)words, MPI_UINT32_T, p, round,
                         MPI_COMM_WORLD, &reqs[n++]));
    }
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        rails_fill(sbuf + (size_t)p * words, words, rank, p, round);
        MPI_OK(MPI_Isend(sbuf + (size_t)p * words, (int)words, MPI_UINT32_T, p, round,
                         MPI_COMM_WORLD, &reqs[n++]));
    }
    MPI_OK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        size_t bad = rails_bad_words(rbuf + (size_t)p * words, words, p, rank, round);
        CHECK(bad == 0, "round %d: %zu of %zu words from rank %d are wrong", round, bad, words,
              p);
    }
    long long v[64], sum[64];
    for (int i = 0; i < 64; i++)
        v[i] = (long long)(rank + 1) * (round + i + 1);
    MPI_OK(MPI_Allreduce(v, sum, 64, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 64; i++)
        CHECK(sum[i] == (long long)size * (size + 1) / 2 * (round + i + 1),
              "round %d: allreduce element %d is %lld", round, i, sum[i]);
}

int main(int argc, char **argv)
{
    int provided, rank, size, flag;
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    size_t bytes = argc > 2 ? strtoul(argv[2], NULL, 0) : 256 << 10;
    int pause_ms = argc > 3 ? atoi(argv[3]) : 0;
    size_t words = (bytes + 3) / 4;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    uint32_t *sbuf = malloc((size_t)size * words * 4), *rbuf = malloc((size_t)size * words * 4);
    MPI_Request *reqs = malloc(2 * (size_t)size * sizeof(*reqs));
    CHECK(sbuf && rbuf && reqs, "out of memory");
    for (int r = 0; r < rounds; r++) {
        rails_round(rank, size, r, words, sbuf, rbuf, reqs);
        if (pause_ms > 0) {
            struct timespec ts = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int r = 0; r < rounds; r++) {   /* (MPI_ANY_TAG also sees the library's own) */
        MPI_Status st;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, r, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a message of round %d from rank %d is left over (delivered twice?)", r,
              st.MPI_SOURCE);
    }
    printf("RAILS rank %d rounds %d cross %llu\n", rank, rounds,
           pvar_count("btl_rail_cross_rail"));
    printf("FAILOVER rank %d failovers %llu recoveries %llu resent %llu dups %llu\n", rank,
           pvar_count("btl_tcp_failovers"), pvar_count("btl_tcp_recoveries"),
           pvar_count("btl_tcp_frames_resent"), pvar_count("btl_tcp_duplicates_dropped"));
    fflush(stdout);
    free(sbuf);
    free(rbuf);
    free(reqs);
    int rc = check_mpi_finalize("rails_stream");
    MPI_OK(MPI_T_finalize());
    return rc;
}
