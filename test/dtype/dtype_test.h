/* Helpers for the datatype and operation tests (test/dtype). */
#ifndef TEST_DTYPE_TEST_H
#define TEST_DTYPE_TEST_H

#define CHECK_MPI 1
#include "test/check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_rank, t_size;

/* MPI_Init, errors returned (datatype and op errors go to MPI_COMM_SELF's
 * handler, communicator ones to the communicator's). */
static inline void t_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

/* Size, extent and true extent of a type in one check. */
#define CHECK_BOUNDS(t, size_, lb_, extent_, tlb_, textent_)                                       \
    do {                                                                                           \
        MPI_Count s_, l_, e_, tl_, te_;                                                            \
        MPI_OK(MPI_Type_size_c((t), &s_));                                                         \
        MPI_OK(MPI_Type_get_extent_c((t), &l_, &e_));                                              \
        MPI_OK(MPI_Type_get_true_extent_c((t), &tl_, &te_));                                       \
        CHECK(s_ == (size_) && l_ == (lb_) && e_ == (extent_) && tl_ == (tlb_) &&                  \
                  te_ == (textent_),                                                               \
              "%s: size %lld lb %lld extent %lld true lb %lld true extent %lld, expected "         \
              "%lld %lld %lld %lld %lld",                                                          \
              #t, (long long)s_, (long long)l_, (long long)e_, (long long)tl_, (long long)te_,     \
              (long long)(size_), (long long)(lb_), (long long)(extent_), (long long)(tlb_),       \
              (long long)(textent_));                                                              \
    } while (0)

#endif
