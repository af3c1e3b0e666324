/*
 * Choosing between two ways of moving data by the time each took before
 * (base/adapt.c): coll sm's segment or single copy, the pml's pipeline or
 * get.  Which wins depends on the machine and, on the 2-core VMs we
 * measure on, on the minute: moving a cache line between the cores costs
 * 0.05 us or 0.15-0.2 us from one minute to the next, and two-copy paths
 * through shared memory suffer most (docs/performance.md).
 *
 * The caller keeps one rail_adapt_t per kind of transfer and size class
 * (rail_adapt_class: powers of two from 16 KiB), asks rail_adapt_pick
 * which path the next transfer takes (0 or 1, the caller's meaning), and
 * reports the times it measured with rail_adapt_record.
 */
#ifndef BASE_ADAPT_H
#define BASE_ADAPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAIL_ADAPT_LOG2_MIN 14     /* size classes: < 32 KiB, < 64 KiB, ... */
#define RAIL_ADAPT_CLASSES 12      /* the last one open-ended (32 MiB and more) */

typedef struct rail_adapt {
    float est[2];                  /* ns per byte of each path (0: not measured) */
    uint32_t since;                /* transfers since the slower path was last tried */
    uint32_t runs[2];              /* measured transfers of each path */
} rail_adapt_t;

/* CLOCK_MONOTONIC in nanoseconds (one clock for every process of a node). */
uint64_t rail_now_ns(void);
/* The size class of `bytes`: 0 .. RAIL_ADAPT_CLASSES - 1. */
int rail_adapt_class(size_t bytes);
/* The path the next transfer of the class takes, and whether the caller
 * should time it (when timing costs something: every 8th transfer of the
 * faster path; always while exploring and when trying the slower one). */
int rail_adapt_pick(rail_adapt_t *a, bool *measure);
/* A timed transfer: `ns` for `bytes` on `path`. */
void rail_adapt_record(rail_adapt_t *a, int path, size_t bytes, uint64_t ns);

#endif
