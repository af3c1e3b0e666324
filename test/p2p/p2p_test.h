/* Helpers for the point-to-point tests (test/p2p). */
#ifndef TEST_P2P_TEST_H
#define TEST_P2P_TEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_rank, t_size;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", t_rank, __FILE__, __LINE__,    \
                    #cond);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            fflush(stderr);                                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define MPI_OK(call)                                                                               \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            char s_[MPI_MAX_ERROR_STRING];                                                         \
            int l_ = 0;                                                                            \
            MPI_Error_string(rc_, s_, &l_);                                                        \
            CHECK(0, "%s returned %d (%s)", #call, rc_, s_);                                       \
        }                                                                                          \
    } while (0)

#define MPI_FAILS(call, cls)                                                                       \
    do {                                                                                           \
        int rc_ = (call), c_ = -1;                                                                 \
        MPI_Error_class(rc_, &c_);                                                                 \
        CHECK(c_ == (cls), "%s returned class %d, expected %s (%d)", #call, c_, #cls, (cls));      \
    } while (0)

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

static inline int t_finish_(const char *file)
{
    t_barrier();
    if (t_rank == 0)
        printf("%s: passed at np %d\n", file, t_size);
    MPI_Finalize();
    return 0;
}
#define t_finish() t_finish_(__FILE__)

#endif
