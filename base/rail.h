/*
 * Common definitions for all of Rail MPI's internal code.
 *
 * Status convention: internal functions return int, MPI_SUCCESS (0) on
 * success or an MPI error class from mpi.h.  Check with RAIL_CHECK, which
 * jumps to the function's single `fail:` label.
 */
#ifndef BASE_RAIL_H
#define BASE_RAIL_H

#include "config.h"
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <mpi.h>

#define RAIL_EXPORT __attribute__((visibility("default")))
#define RAIL_HIDDEN __attribute__((visibility("hidden")))
#define RAIL_LIKELY(x) __builtin_expect(!!(x), 1)
#define RAIL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RAIL_UNUSED __attribute__((unused))
#define RAIL_NORETURN __attribute__((noreturn))
#define RAIL_CACHELINE 64
#define RAIL_ALIGNED(n) __attribute__((aligned(n)))
#define RAIL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define RAIL_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RAIL_MAX(a, b) ((a) > (b) ? (a) : (b))
#define RAIL_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))

/* rc = expr; on failure jump to fail: (the function declares `int rc` and a fail label). */
#define RAIL_CHECK(expr)                                                                           \
    do {                                                                                           \
        rc = (expr);                                                                               \
        if (RAIL_UNLIKELY(rc != MPI_SUCCESS))                                                      \
            goto fail;                                                                             \
    } while (0)

/* Allocation that reports MPI_ERR_NO_MEM through the fail label. */
#define RAIL_CHECK_ALLOC(ptr)                                                                      \
    do {                                                                                           \
        if (RAIL_UNLIKELY((ptr) == NULL)) {                                                        \
            rc = MPI_ERR_NO_MEM;                                                                   \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

#endif
