/*
 * The progress engine: one per process.
 *
 * Whatever must be polled to move communication forward registers a
 * callback here: the btl base (all btl modules), the pml's pending-send
 * queue and deferred releases, context-id agreement (obj/comm_ctxid.c) and
 * the nonblocking-collective schedules.
 * rail_progress() runs every callback once.
 *
 * Waiting.  rail_progress_wait(done, arg) polls until done(arg) is true, in
 * three phases:
 *   1. spin:  progress + cpu_relax, progress_spin_count idle polls;
 *   2. yield: progress + sched_yield(), progress_yield_count idle polls;
 *   3. sleep: ask every sleeper (a btl module's wait fd and/or futex hooks)
 *             whether work is pending (prepare); if none, block in the
 *             kernel until a peer wakes us or progress_sleep_timeout_ms
 *             passes; then finish and poll again.
 * An "idle poll" is one whose progress found nothing to do; any event
 * restarts the phases.  When the node is oversubscribed (more local ranks
 * than CPUs) the budgets are the *_oversub parameters: a short spin, then
 * many sched_yield() polls (the rank we wait for gets our CPU at once, which
 * on 8 ranks / 2 cores gives a few microseconds per message where futex
 * sleeping gives tens), and only after a long idle stretch a real sleep.
 * Otherwise a wait spins, then yields, and sleeps after progress_idle_sleep_ms
 * of idleness.
 *
 * Threads.  Under MPI_THREAD_MULTIPLE the engine and everything it drives
 * (pml matching, btl calls) run inside one process-wide recursive critical
 * section, RAIL_CS_ENTER/RAIL_CS_EXIT (no-ops otherwise: one predictable
 * branch).  rail_progress() only try-locks it: a thread that finds it busy
 * returns at once and re-checks its own completion flag, so waiting threads
 * do not convoy.  Only one thread at a time sleeps in the btls' hooks; the
 * others nap briefly.  Completions made by one thread for another call
 * rail_progress_wake(), which wakes the sleeper (cheap when nobody sleeps).
 *
 * Layering: base knows nothing of btls or the rte; the pml hands the engine
 * what it needs (oversubscription, thread level, sleepers).
 */
#ifndef BASE_PROGRESS_H
#define BASE_PROGRESS_H

#include "base/rail.h"
#include <pthread.h>
#include <stdbool.h>

/* ------------------------------------------------ critical section */

extern bool rail_progress_mt;                 /* MPI_THREAD_MULTIPLE in effect */
extern pthread_mutex_t rail_progress_cs;      /* recursive */

#define RAIL_CS_ENTER()                                                                            \
    do {                                                                                           \
        if (RAIL_UNLIKELY(rail_progress_mt))                                                       \
            pthread_mutex_lock(&rail_progress_cs);                                                 \
    } while (0)
#define RAIL_CS_EXIT()                                                                             \
    do {                                                                                           \
        if (RAIL_UNLIKELY(rail_progress_mt))                                                       \
            pthread_mutex_unlock(&rail_progress_cs);                                               \
    } while (0)

/* ------------------------------------------------ callbacks */

/* Returns the number of events handled (0: nothing to do). */
typedef int (*rail_progress_fn_t)(void *arg);

enum {
    /* The callback must be polled: while it is registered, waits never
     * block in the kernel for longer than 1 ms (e.g. accel events that no
     * file descriptor signals). */
    RAIL_PROGRESS_POLL = 1 << 0,
};

int rail_progress_register(rail_progress_fn_t fn, void *arg, unsigned flags);
/* Same, with a work indicator: fn is skipped (not called) while *pending is
 * 0, which keeps idle sources off the polling loop. */
int rail_progress_register_lazy(rail_progress_fn_t fn, void *arg, unsigned flags,
                                const int *pending);
void rail_progress_unregister(rail_progress_fn_t fn, void *arg);

/* While holds are taken (+1 / -1), waits never block in the kernel for
 * longer than 1 ms: for work that no peer will wake us for (sends queued
 * because a transport was full). */
void rail_progress_hold_poll(int delta);

/* Run every callback once; the number of events handled. */
int rail_progress(void);

/* ------------------------------------------------ sleepers */

/* What a source of events offers for sleeping (a btl module): a file
 * descriptor that becomes readable when work arrives (-1: none), and/or
 * futex-style hooks: prepare() announces the sleep and returns false when
 * work is already pending; block() sleeps until woken or timeout_ms;
 * finish() ends the announcement; wake() (optional) makes a block() of this
 * process return early. */
typedef struct rail_progress_sleeper {
    int fd;
    bool (*prepare)(void *ctx);
    void (*block)(void *ctx, int timeout_ms);
    void (*finish)(void *ctx);
    void (*wake)(void *ctx);
    void *ctx;
    /* Optional: the shared futex word block() waits on and the value it
     * waits while the word holds (rail_progress_sleep_on). */
    uint32_t *(*futex)(void *ctx, uint32_t *val);
} rail_progress_sleeper_t;

int rail_progress_add_sleeper(const rail_progress_sleeper_t *s);
void rail_progress_remove_sleeper(void *ctx);

/* ------------------------------------------------ waiting */

typedef bool (*rail_progress_cond_t)(void *arg);

/* Progress until done(arg) is true (checked before the first poll). */
void rail_progress_wait(rail_progress_cond_t done, void *arg);

/* Sleep outside rail_progress_wait, on a shared futex word of the caller's
 * (coll sm's flags): until *word != val or a FUTEX_WAKE on it, timeout_ns,
 * or, as in rail_progress_wait's sleep, work arriving for this process
 * through a btl (its futex word and *word together, futex_waitv).  Without
 * that (no such btl, a file descriptor to watch as well, another thread
 * of this process sleeping in the btls, a kernel before 5.16) it waits on
 * *word alone.  Returns at once when a btl has work pending.  While poll
 * callbacks or holds are in effect the timeout is at most 1 ms.  Returns
 * how the sleep ended (RAIL_SLEEP_*). */
enum {
    RAIL_SLEEP_WOKEN,      /* *word changed or was woken */
    RAIL_SLEEP_TIMEOUT,    /* timeout_ns passed */
    RAIL_SLEEP_P2P,        /* a btl had work pending, or its traffic woke us */
};
int rail_progress_sleep_on(uint32_t *word, uint32_t val, long timeout_ns);

/* Wake threads of this process sleeping in rail_progress_wait because a
 * completion they may wait for happened outside progress. */
void rail_progress_wake(void);

/* ------------------------------------------------ setup */

int rail_progress_register_params(void);
/* oversubscribed: more local ranks than CPUs; thread_multiple: the CS is
 * real.  Idempotent (reference counted with finalize). */
int rail_progress_init(bool oversubscribed, bool thread_multiple);
/* After start-up learned more (runtime/rte_kernel.c): the node turned out
 * oversubscribed once the ranks of hosts sharing its kernel are counted,
 * and whether other hosts of the job share our kernel.  In either case a
 * wait that depends on a file descriptor (a socket-based btl) blocks on it
 * after progress_spin_count_kernel idle polls instead of spinning. */
void rail_progress_set_load(bool oversubscribed, bool shared_kernel);
int rail_progress_finalize(void);

/* Parameters (read by the pml and tests). */
extern int rail_progress_spin_count;
extern int rail_progress_yield_count;

#endif
