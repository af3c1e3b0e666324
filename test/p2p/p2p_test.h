/* Helpers for the point-to-point tests (test/p2p). */
#ifndef TEST_P2P_TEST_H
#define TEST_P2P_TEST_H

#define CHECK_MPI 1
#include "test/check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_rank, t_size;

static inline void t_init(int *argc, char ***argv)
{
    MPI_OK(MPI_Init(argc, argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
}

/* Deterministic byte pattern for message (who, seq). */
static inline unsigned char t_byte(int who, int seq, size_t i)
{
    return (unsigned char)((i * 131u + (unsigned)who * 17u + (unsigned)seq * 7u + 3u) & 0xff);
}

static inline void t_fill(void *buf, size_t n, int who, int seq)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = t_byte(who, seq, i);
}

static inline void t_expect(const void *buf, size_t n, int who, int seq, const char *what)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        CHECK(p[i] == t_byte(who, seq, i), "%s: byte %zu of %zu is %d, expected %d", what, i, n,
              p[i], t_byte(who, seq, i));
}

/* A barrier made of point-to-point messages (collectives may not exist). */
static inline void t_barrier(void)
{
    int z = 0;
    if (t_size == 1)
        return;
    for (int d = 1; d < t_size; d <<= 1) {
        int to = (t_rank + d) % t_size, from = (t_rank - d + t_size) % t_size;
        MPI_OK(MPI_Sendrecv(&z, 0, MPI_INT, to, 32000, &z, 0, MPI_INT, from, 32000, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
    }
}

#endif
