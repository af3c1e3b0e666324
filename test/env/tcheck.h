/* Tiny assertion helpers for MPI test programs. */
#ifndef TEST_TCHECK_H
#define TEST_TCHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int tcheck_rank(void)
{
    int init = 0, fin = 0, rank = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", tcheck_rank(), __FILE__,       \
                    __LINE__, #cond);                                                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* An MPI call that must succeed. */
#define MPI_OK(call)                                                                               \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            char s_[MPI_MAX_ERROR_STRING];                                                         \
            int l_;                                                                                \
            MPI_Error_string(rc_, s_, &l_);                                                        \
            CHECK(0, "%s returned %d (%s)", #call, rc_, s_);                                       \
        }                                                                                          \
    } while (0)

/* An MPI call that must fail with the given error class. */
#define MPI_FAILS(call, cls)                                                                       \
    do {                                                                                           \
        int rc_ = (call), c_ = -1;                                                                 \
        MPI_Error_class(rc_, &c_);                                                                 \
        CHECK(c_ == (cls), "%s returned class %d, expected %s (%d)", #call, c_, #cls, (cls));      \
    } while (0)

#endif
