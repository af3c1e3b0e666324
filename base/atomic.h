/* Atomics and memory ordering: thin names over the compiler builtins. */
#ifndef BASE_ATOMIC_H
#define BASE_ATOMIC_H

#include <stdint.h>

#define rail_atomic_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define rail_atomic_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define rail_atomic_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define rail_atomic_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define rail_atomic_fetch_add(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define rail_atomic_add_fetch(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define rail_atomic_sub_fetch(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)
#define rail_atomic_exchange(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define rail_atomic_cas(p, expected_ptr, desired)                                                   \
    __atomic_compare_exchange_n((p), (expected_ptr), (desired), 0, __ATOMIC_ACQ_REL,               \
                                __ATOMIC_ACQUIRE)
#define rail_atomic_fence() __atomic_thread_fence(__ATOMIC_SEQ_CST)

static inline void rail_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
