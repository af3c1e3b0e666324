/*
 * The registration cache: memory registrations a network btl made with its
 * device (libfabric's fi_mr_reg, verbs' ibv_reg_mr), kept for reuse.
 * Registering pins pages and talks to the device: tens of microseconds,
 * as much as a rendezvous of 1 MiB takes on a fast link.  A program that
 * sends from the same buffer again (the common case) registers it once.
 *
 * A registration stays valid while the memory under it stays mapped.  The
 * cache hears of memory going back to the kernel through base/memhook.c:
 * munmap, mremap, madvise (DONTNEED, FREE, REMOVE) and shmdt called by the
 * program or any library are interposed by libmpi and queue the range;
 * the next rail_rcache_get drains the queue and drops every registration
 * overlapping a released range (deregistered at once when unused, else
 * when its last user puts it).  glibc's own free() unmaps without going
 * through the interposed symbol, so while a cache exists malloc is told
 * never to unmap or trim (rcache_malloc_hold): a freed buffer stays mapped,
 * its registration stays valid, and the next malloc reuses it.  Memory
 * malloc took by mmap before the first cache existed is not covered; a
 * transfer then fails with the device's protection error rather than move
 * stale bytes on devices that check (the fake verbs HCA does).
 *
 * Entries are kept most-recently-used first; unused ones beyond
 * rcache_max_unused are deregistered, oldest first.  The caller serialises
 * get and put (the progress engine's critical section); the hooks may run
 * on any thread.
 */
#ifndef BASE_RCACHE_H
#define BASE_RCACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rail_rcache rail_rcache_t;

/* First member of the owner's registration struct. */
typedef struct rail_rcache_reg {
    uintptr_t base; /* page aligned, covers the range that was asked for */
    size_t len;
} rail_rcache_reg_t;

typedef struct rail_rcache_ops {
    size_t reg_size; /* sizeof the owner's struct (starts with rail_rcache_reg_t) */
    /* Register [reg->base, reg->base + reg->len) with the device:
     * MPI_SUCCESS or an MPI error class. */
    int (*mem_reg)(void *ctx, rail_rcache_reg_t *reg);
    int (*mem_dereg)(void *ctx, rail_rcache_reg_t *reg);
} rail_rcache_ops_t;

/* Parameters (rcache_enable, rcache_max_unused, rcache_malloc_hold). */
int rail_rcache_register_params(void);

/* MPI_T counters <name>_rcache_hits, _misses, _invalidations and
 * _evictions, for a cache owner called name ("btl_ofi"); call from the
 * owner's register_params so that MPI_T sees them before MPI_Init.
 * rail_rcache_create registers them too. */
int rail_rcache_register_pvars(const char *name);

/* NULL when out of memory or when more than RAIL_RCACHE_MAX_OWNERS names
 * are in use. */
#define RAIL_RCACHE_MAX_OWNERS 8
rail_rcache_t *rail_rcache_create(const char *name, const rail_rcache_ops_t *ops, void *ctx);

/* A registration covering [base, base + len), found or made, held until
 * rail_rcache_put.  With rcache_enable=0 every get registers and every
 * put deregisters.  The owner's error from mem_reg is returned as is. */
int rail_rcache_get(rail_rcache_t *c, const void *base, size_t len, rail_rcache_reg_t **reg);
void rail_rcache_put(rail_rcache_t *c, rail_rcache_reg_t *reg);

/* Deregister everything (registrations still held are deregistered too)
 * and free the cache. */
void rail_rcache_destroy(rail_rcache_t *c);

/* ---- base/memhook.c: what the interposed calls report */

/* Memory [addr, addr + len) goes back to the kernel (called before the
 * system call).  Lock-free, async-signal-safe. */
void rail_memhook_release(const void *addr, size_t len);

/* Released ranges since *seen, one call of fn per range (or one call with
 * addr NULL when more were released than the queue holds: drop
 * everything); *seen is advanced. */
typedef void (*rail_memhook_fn)(void *arg, uintptr_t lo, uintptr_t hi);
void rail_memhook_drain(uint64_t *seen, rail_memhook_fn fn, void *arg);
/* The number of releases so far (compare with a saved *seen). */
uint64_t rail_memhook_count(void);

#endif
