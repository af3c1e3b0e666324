/*
 * What the RMA tests (test/rma) share: the job's rank and size, windows of
 * every creation flavor over RMA_N ints per rank, the displacement of an
 * element in a target's window, and the local update of one's own window
 * inside a lock epoch (so that the update is also right in the separate
 * memory model).  Written to MPI-4.1 chapter 12 only: the programs build
 * and pass against the peer MPIs as well.
 */
#ifndef TEST_RMA_TEST_H
#define TEST_RMA_TEST_H

#define CHECK_MPI
#include "test/check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RMA_N 16 /* ints in each rank's window */

static int t_rank, t_size;

/* How a test window was made (rma_win_open). */
enum rma_flavor { RMA_CREATE, RMA_ALLOCATE, RMA_SHARED, RMA_DYNAMIC, RMA_NFLAVORS };

static const char *const rma_flavor_names[] = { "create", "allocate", "allocate_shared",
                                                "dynamic" };

typedef struct {
    MPI_Win win;
    enum rma_flavor flavor;
    int *base;      /* this rank's RMA_N ints */
    MPI_Aint *addr; /* dynamic: every rank's base address (else NULL) */
} rma_win_t;

/* MPI_Init, rank and size; a window must be possible (a library without
 * one-sided communication fails here, naming the error). */
static __attribute__((unused)) void rma_init(int *argc, char ***argv)
{
    int x = 0;
    MPI_Win probe;
    MPI_OK(MPI_Init(argc, argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_create(&x, sizeof(x), 1, MPI_INFO_NULL, MPI_COMM_SELF, &probe));
    MPI_OK(MPI_Win_free(&probe));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

/* A window over RMA_N ints per rank, of the given flavor, errors returned. */
static __attribute__((unused)) void rma_win_open(rma_win_t *w, enum rma_flavor flavor)
{
    MPI_Aint bytes = RMA_N * (MPI_Aint)sizeof(int);
    memset(w, 0, sizeof(*w));
    w->flavor = flavor;
    switch (flavor) {
    case RMA_CREATE:
        w->base = calloc(RMA_N, sizeof(int));
        CHECK(w->base != NULL);
        MPI_OK(MPI_Win_create(w->base, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                              &w->win));
        break;
    case RMA_ALLOCATE:
        MPI_OK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->base,
                                &w->win));
        break;
    case RMA_SHARED:
        MPI_OK(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                       &w->base, &w->win));
        break;
    case RMA_DYNAMIC:
        w->base = calloc(RMA_N, sizeof(int));
        w->addr = calloc((size_t)t_size, sizeof(MPI_Aint));
        CHECK(w->base != NULL && w->addr != NULL);
        MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        MPI_OK(MPI_Win_attach(w->win, w->base, bytes));
        MPI_OK(MPI_Get_address(w->base, &w->addr[t_rank]));
        MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, w->addr, 1, MPI_AINT,
                             MPI_COMM_WORLD));
        break;
    default: CHECK(0, "flavor %d", (int)flavor);
    }
    MPI_OK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
}

static __attribute__((unused)) void rma_win_close(rma_win_t *w)
{
    if (w->flavor == RMA_DYNAMIC)
        MPI_OK(MPI_Win_detach(w->win, w->base));
    MPI_OK(MPI_Win_free(&w->win));
    if (w->flavor == RMA_CREATE || w->flavor == RMA_DYNAMIC)
        free(w->base);
    free(w->addr);
    w->base = NULL;
    w->addr = NULL;
}

/* The target displacement of element i in rank t's window. */
static __attribute__((unused)) MPI_Aint rma_disp(const rma_win_t *w, int t, int i)
{
    if (w->flavor == RMA_DYNAMIC)
        return MPI_Aint_add(w->addr[t], (MPI_Aint)i * (MPI_Aint)sizeof(int));
    return i;
}

/* Set this rank's window to f(rank, i) for every i, then a barrier: done
 * in an exclusive lock on oneself, so that the public copy has it. */
static __attribute__((unused)) void rma_win_fill(rma_win_t *w, int (*f)(int, int))
{
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t_rank, 0, w->win));
    for (int i = 0; i < RMA_N; i++)
        w->base[i] = f(t_rank, i);
    MPI_OK(MPI_Win_unlock(t_rank, w->win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Copy this rank's window into out[RMA_N] (after the others' epochs ended
 * and a barrier), in a shared lock on oneself. */
static __attribute__((unused)) void rma_win_read(rma_win_t *w, int *out)
{
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t_rank, 0, w->win));
    memcpy(out, w->base, RMA_N * sizeof(int));
    MPI_OK(MPI_Win_unlock(t_rank, w->win));
}

#endif
