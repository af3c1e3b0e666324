/*
 * Choosing between two ways of moving data by the time each took before
 * (base/adapt.c): coll sm's segment or single copy, the pml's pipeline or
 * get.  Which wins depends on the machine and, on the 2-core VMs it was
 * measured on, on the minute: moving a cache line between the cores costs
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

#define RAIL_ADAPT_PATHS 3         /* at most; rail_adapt_pick chooses between two */

typedef struct rail_adapt {
    float est[RAIL_ADAPT_PATHS];   /* ns per byte of each path (0: not measured) */
    uint32_t since;                /* transfers since a slower path was last tried */
    uint32_t runs[RAIL_ADAPT_PATHS]; /* measured transfers of each path */
    uint8_t n;                     /* paths chosen between (set by the picks; 0 means 2) */
    uint8_t retry;                 /* with three: the slower path the next retry takes */
    uint8_t burst;                 /* transfers of the current retry still to come */
    uint8_t burst_path;            /* ... on this path */
    uint8_t fresh;                 /* bit p: path p's next sample starts a retry */
} rail_adapt_t;

/* CLOCK_MONOTONIC in nanoseconds (one clock for every process of a node). */
uint64_t rail_now_ns(void);
/* The size class of `bytes`: 0 .. RAIL_ADAPT_CLASSES - 1. */
int rail_adapt_class(size_t bytes);
/* The path the next transfer of the class takes, and whether the caller
 * should time it (when timing costs something: every 8th transfer of the
 * faster path; always while exploring and when trying the slower one). */
int rail_adapt_pick(rail_adapt_t *a, bool *measure);
/* The same between n (2 or 3) paths; the slower ones take turns at the
 * retries. */
int rail_adapt_pick_n(rail_adapt_t *a, int n, bool *measure);
/* The same, the faster path timed once in `period` transfers instead of
 * 8 (where timing a call costs much against the call itself). */
int rail_adapt_pick_every(rail_adapt_t *a, int n, unsigned period, bool *measure);
/* A timed transfer: `ns` for `bytes` on `path`. */
void rail_adapt_record(rail_adapt_t *a, int path, size_t bytes, uint64_t ns);

#endif
