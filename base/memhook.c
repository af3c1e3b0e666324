/*
 * Memory hooks: libmpi interposes the calls that give memory back to the
 * kernel or replace a mapping (mmap over a fixed address, munmap, mremap,
 * madvise DONTNEED/FREE/REMOVE, shmdt), records the range in a lock-free
 * ring, and then makes the system call itself.  Registration caches
 * (base/rcache.c) drain the ring before every lookup.  See base/rcache.h.
 *
 * The ring holds the last RAIL_MEMHOOK_RING releases; a reader that fell
 * further behind, or that finds a slot another writer has not finished,
 * is told to drop everything (always safe: registrations are made again).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/rail.h"
#include "base/rcache.h"

#define RAIL_MEMHOOK_RING 256


typedef struct memhook_slot {
    _Atomic uint64_t seq; /* n + 1 once release number n is written here */
    _Atomic uintptr_t lo, hi;
} memhook_slot_t;

static memhook_slot_t memhook_ring[RAIL_MEMHOOK_RING];
static _Atomic uint64_t memhook_next;

void rail_memhook_release(const void *addr, size_t len)
{
    if (len == 0)
        return;
    uintptr_t lo = (uintptr_t)addr;
    uintptr_t hi = lo + len < lo ? UINTPTR_MAX : lo + len;
    uint64_t n = atomic_fetch_add_explicit(&memhook_next, 1, memory_order_acq_rel);
    memhook_slot_t *s = &memhook_ring[n % RAIL_MEMHOOK_RING];
    atomic_store_explicit(&s->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->lo, lo, memory_order_relaxed);
    atomic_store_explicit(&s->hi, hi, memory_order_relaxed);
    atomic_store_explicit(&s->seq, n + 1, memory_order_release);
}

uint64_t rail_memhook_count(void)
{
    return atomic_load_explicit(&memhook_next, memory_order_acquire);
}

/* Read slot n as a seqlock: false when it is not (or no longer) release n. */
static bool memhook_read(uint64_t n, uintptr_t *lo, uintptr_t *hi)
{
    memhook_slot_t *s = &memhook_ring[n % RAIL_MEMHOOK_RING];
    if (atomic_load_explicit(&s->seq, memory_order_acquire) != n + 1)
        return false;
    *lo = atomic_load_explicit(&s->lo, memory_order_relaxed);
    *hi = atomic_load_explicit(&s->hi, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&s->seq, memory_order_relaxed) == n + 1;
}

void rail_memhook_drain(uint64_t *seen, rail_memhook_fn fn, void *arg)
{
    uint64_t end = rail_memhook_count();
    if (end - *seen > RAIL_MEMHOOK_RING) {
        fn(arg, 0, UINTPTR_MAX);
        *seen = end;
        return;
    }
    for (uint64_t n = *seen; n < end; n++) {
        uintptr_t lo, hi;
        if (!memhook_read(n, &lo, &hi)) {
            fn(arg, 0, UINTPTR_MAX);
            break;
        }
        fn(arg, lo, hi);
    }
    *seen = end;
}

/* ---- the interposed calls (exported from libmpi, see mpi/Makefile.inc) */

RAIL_EXPORT int munmap(void *addr, size_t len)
{
    rail_memhook_release(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

RAIL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (flags & MAP_FIXED)
        rail_memhook_release(addr, len);
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

RAIL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

RAIL_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
        rail_memhook_release(new_addr, new_len);
    }
    rail_memhook_release(old, old_len);
    return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

RAIL_EXPORT int madvise(void *addr, size_t len, int advice)
{
    if (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE)
        rail_memhook_release(addr, len);
    return (int)syscall(SYS_madvise, addr, len, advice);
}

/* The segment's size is not known here: everything above addr is
 * released (shmdt is rare; registrations are made again). */
RAIL_EXPORT int shmdt(const void *addr)
{
    rail_memhook_release(addr, UINTPTR_MAX - (uintptr_t)addr);
    return (int)syscall(SYS_shmdt, addr);
}
