/*
 * The memory-type table: a sorted array of known memory ranges, read without
 * locks under a sequence counter (seqlock) and written, rarely (allocation,
 * free, first sight of a cuda allocation), under a mutex.
 *
 * Readers never see freed memory: an array that is replaced by a bigger one
 * is kept on a retired list until accel_memtab_fini, and arrays only grow
 * (doubling), so at most as much again is held.  Entry fields are read with
 * relaxed atomic loads; a reader that raced with a writer retries.
 *
 * The table also keeps the lowest and highest address it covers, so a host
 * pointer outside that span (the common case: fake places its memory in one
 * reserved window, cuda in the driver's) costs two compares.
 */
#include "accel/accel_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>

typedef struct memtab_array {
    struct memtab_array *retired_next;
    size_t cap;
    accel_range_t e[];
} memtab_array_t;

static struct {
    _Atomic unsigned seq;
    _Atomic(memtab_array_t *) arr;
    _Atomic size_t n;
    _Atomic uintptr_t lo, hi;       /* span covered: [lo, hi) */
    pthread_mutex_t lock;
    memtab_array_t *retired;
} memtab = { .lock = PTHREAD_MUTEX_INITIALIZER };

#define LOAD(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)
#define STORE(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)

static void range_load(const accel_range_t *src, accel_range_t *dst)
{
    dst->base = LOAD(src->base);
    dst->size = LOAD(src->size);
    dst->id = LOAD(src->id);
    dst->cookie = LOAD(src->cookie);
    dst->device = LOAD(src->device);
    dst->type = LOAD(src->type);
    dst->component = LOAD(src->component);
}

static void range_store(accel_range_t *dst, const accel_range_t *src)
{
    STORE(dst->base, src->base);
    STORE(dst->size, src->size);
    STORE(dst->id, src->id);
    STORE(dst->cookie, src->cookie);
    STORE(dst->device, src->device);
    STORE(dst->type, src->type);
    STORE(dst->component, src->component);
}

/* Index of the last entry whose base is <= addr, or -1. */
static long memtab_search(const memtab_array_t *a, size_t n, uintptr_t addr)
{
    long lo = 0, hi = (long)n - 1, found = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (LOAD(a->e[mid].base) <= addr) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

bool accel_memtab_find(uintptr_t addr, accel_range_t *out)
{
    for (;;) {
        unsigned s = atomic_load_explicit(&memtab.seq, memory_order_acquire);
        if (RAIL_UNLIKELY(s & 1u))
            continue;
        bool found = false;
        if (addr >= atomic_load_explicit(&memtab.lo, memory_order_relaxed) &&
            addr < atomic_load_explicit(&memtab.hi, memory_order_relaxed)) {
            memtab_array_t *a = atomic_load_explicit(&memtab.arr, memory_order_relaxed);
            size_t n = atomic_load_explicit(&memtab.n, memory_order_relaxed);
            if (a != NULL) {
                long i = memtab_search(a, RAIL_MIN(n, a->cap), addr);
                if (i >= 0) {
                    range_load(&a->e[i], out);
                    found = addr - out->base < out->size;
                }
            }
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&memtab.seq, memory_order_relaxed) == s)
            return found;
    }
}

/* Writers: called with the lock held, between write_begin and write_end. */
static void write_begin(void)
{
    unsigned s = atomic_load_explicit(&memtab.seq, memory_order_relaxed);
    atomic_store_explicit(&memtab.seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void write_end(void)
{
    memtab_array_t *a = atomic_load_explicit(&memtab.arr, memory_order_relaxed);
    size_t n = atomic_load_explicit(&memtab.n, memory_order_relaxed);
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    if (n > 0) {
        lo = a->e[0].base;
        for (size_t i = 0; i < n; i++)
            hi = RAIL_MAX(hi, a->e[i].base + a->e[i].size);
    }
    atomic_store_explicit(&memtab.lo, lo, memory_order_relaxed);
    atomic_store_explicit(&memtab.hi, hi, memory_order_relaxed);
    unsigned s = atomic_load_explicit(&memtab.seq, memory_order_relaxed);
    atomic_store_explicit(&memtab.seq, s + 1, memory_order_release);
}

static int memtab_reserve(size_t want)
{
    memtab_array_t *a = atomic_load_explicit(&memtab.arr, memory_order_relaxed);
    if (a != NULL && a->cap >= want)
        return MPI_SUCCESS;
    size_t cap = a != NULL ? a->cap * 2 : 64;
    while (cap < want)
        cap *= 2;
    memtab_array_t *b = calloc(1, sizeof(*b) + cap * sizeof(b->e[0]));
    if (b == NULL)
        return MPI_ERR_NO_MEM;
    b->cap = cap;
    size_t n = atomic_load_explicit(&memtab.n, memory_order_relaxed);
    if (a != NULL) {
        memcpy(b->e, a->e, n * sizeof(a->e[0]));
        a->retired_next = memtab.retired;
        memtab.retired = a;
    }
    /* Published outside a write section: the contents equal the old array's. */
    atomic_store_explicit(&memtab.arr, b, memory_order_release);
    return MPI_SUCCESS;
}

/* Delete entries [i, j) by shifting the tail left (inside a write section). */
static void memtab_delete(memtab_array_t *a, size_t i, size_t j)
{
    size_t n = atomic_load_explicit(&memtab.n, memory_order_relaxed);
    for (size_t k = j; k < n; k++)
        range_store(&a->e[i + k - j], &a->e[k]);
    atomic_store_explicit(&memtab.n, n - (j - i), memory_order_relaxed);
}

int accel_memtab_insert(const accel_range_t *r)
{
    pthread_mutex_lock(&memtab.lock);
    size_t n = atomic_load_explicit(&memtab.n, memory_order_relaxed);
    int rc = memtab_reserve(n + 1);
    if (rc != MPI_SUCCESS) {
        pthread_mutex_unlock(&memtab.lock);
        return rc;
    }
    memtab_array_t *a = atomic_load_explicit(&memtab.arr, memory_order_relaxed);
    uintptr_t end = r->base + r->size;
    /* First entry that ends after r starts, then all that start before r ends. */
    size_t i = 0;
    while (i < n && a->e[i].base + a->e[i].size <= r->base)
        i++;
    size_t j = i;
    while (j < n && a->e[j].base < end)
        j++;
    write_begin();
    if (j > i)
        memtab_delete(a, i, j);
    n = atomic_load_explicit(&memtab.n, memory_order_relaxed);
    for (size_t k = n; k > i; k--)
        range_store(&a->e[k], &a->e[k - 1]);
    range_store(&a->e[i], r);
    atomic_store_explicit(&memtab.n, n + 1, memory_order_relaxed);
    write_end();
    pthread_mutex_unlock(&memtab.lock);
    return MPI_SUCCESS;
}

bool accel_memtab_remove(uintptr_t base, accel_range_t *out)
{
    bool found = false;
    pthread_mutex_lock(&memtab.lock);
    memtab_array_t *a = atomic_load_explicit(&memtab.arr, memory_order_relaxed);
    size_t n = atomic_load_explicit(&memtab.n, memory_order_relaxed);
    long i = a != NULL ? memtab_search(a, n, base) : -1;
    if (i >= 0 && a->e[i].base == base) {
        if (out != NULL)
            *out = a->e[i];
        write_begin();
        memtab_delete(a, (size_t)i, (size_t)i + 1);
        write_end();
        found = true;
    }
    pthread_mutex_unlock(&memtab.lock);
    return found;
}

void accel_memtab_remove_component(int component)
{
    pthread_mutex_lock(&memtab.lock);
    memtab_array_t *a = atomic_load_explicit(&memtab.arr, memory_order_relaxed);
    size_t n = atomic_load_explicit(&memtab.n, memory_order_relaxed);
    write_begin();
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (a->e[i].component != component)
            range_store(&a->e[k++], &a->e[i]);
    atomic_store_explicit(&memtab.n, k, memory_order_relaxed);
    write_end();
    pthread_mutex_unlock(&memtab.lock);
}

void accel_memtab_fini(void)
{
    pthread_mutex_lock(&memtab.lock);
    write_begin();
    memtab_array_t *a = atomic_load_explicit(&memtab.arr, memory_order_relaxed);
    atomic_store_explicit(&memtab.arr, NULL, memory_order_relaxed);
    atomic_store_explicit(&memtab.n, 0, memory_order_relaxed);
    write_end();
    free(a);
    while (memtab.retired != NULL) {
        memtab_array_t *next = memtab.retired->retired_next;
        free(memtab.retired);
        memtab.retired = next;
    }
    pthread_mutex_unlock(&memtab.lock);
}

void accel_memtab_atfork_prepare(void)
{
    pthread_mutex_lock(&memtab.lock);
}

void accel_memtab_atfork_parent(void)
{
    pthread_mutex_unlock(&memtab.lock);
}

void accel_memtab_atfork_child(void)
{
    pthread_mutex_unlock(&memtab.lock);
}
