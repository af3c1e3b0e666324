/* The progress engine: callbacks, waiting, sleeping (see progress.h). */
#include "base/rail.h"
#include "base/progress.h"
#include "base/atomic.h"
#include "base/futex.h"
#include "base/log.h"
#include "base/param.h"
#include "base/pvar.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_SYS_EPOLL_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

#define PROGRESS_MAX_CBS 32
#define PROGRESS_MAX_SLEEPERS 16

bool rail_progress_mt;
pthread_mutex_t rail_progress_cs = PTHREAD_MUTEX_INITIALIZER;   /* made recursive by init */

typedef struct progress_cb {
    rail_progress_fn_t fn;
    void *arg;
    const int *pending;     /* NULL: always call */
    unsigned flags;
} progress_cb_t;

static progress_cb_t cbs[PROGRESS_MAX_CBS];
static int n_cbs;
static int n_poll_cbs;          /* callbacks registered with RAIL_PROGRESS_POLL */
static int n_poll_holds;        /* rail_progress_hold_poll() */

static rail_progress_sleeper_t sleepers[PROGRESS_MAX_SLEEPERS];
static int n_sleepers;
static int n_fd_sleepers, n_block_sleepers;
static int epfd = -1, wake_fd = -1;
static int sleep_token;         /* 1 while a thread sleeps in the sleepers' hooks */
static int n_sleeping;          /* threads blocked in the kernel (for wake) */
static int init_count;
static bool oversub;
static bool kernel_shared;      /* hosts of the job share our kernel (rail_progress_set_load) */
static uint64_t n_blocks;       /* waits that blocked in the kernel (MPI_T) */

/* Parameters. */
int rail_progress_spin_count;
int rail_progress_yield_count;
static int spin_count_oversub, yield_count_oversub, spin_count_kernel;
static int idle_sleep_ms, sleep_timeout_ms, mt_nap_us;
static const char *progress_mode;
static bool spin_only;          /* progress_mode=spin */

/* ------------------------------------------------------------ callbacks */

int rail_progress_register(rail_progress_fn_t fn, void *arg, unsigned flags)
{
    return rail_progress_register_lazy(fn, arg, flags, NULL);
}

int rail_progress_register_lazy(rail_progress_fn_t fn, void *arg, unsigned flags,
                                const int *pending)
{
    int rc = MPI_SUCCESS;
    RAIL_CS_ENTER();
    if (n_cbs == PROGRESS_MAX_CBS) {
        rail_error("progress: more than %d progress callbacks", PROGRESS_MAX_CBS);
        rc = MPI_ERR_INTERN;
    } else {
        cbs[n_cbs++] = (progress_cb_t){ fn, arg, pending, flags };
        if (flags & RAIL_PROGRESS_POLL)
            n_poll_cbs++;
    }
    RAIL_CS_EXIT();
    return rc;
}

void rail_progress_unregister(rail_progress_fn_t fn, void *arg)
{
    RAIL_CS_ENTER();
    for (int i = 0; i < n_cbs; i++) {
        if (cbs[i].fn == fn && cbs[i].arg == arg) {
            if (cbs[i].flags & RAIL_PROGRESS_POLL)
                n_poll_cbs--;
            memmove(&cbs[i], &cbs[i + 1], (size_t)(n_cbs - i - 1) * sizeof(cbs[0]));
            n_cbs--;
            break;
        }
    }
    RAIL_CS_EXIT();
}

static inline int run_callbacks(void)
{
    int n = 0;
    for (int i = 0; i < n_cbs; i++) {
        const progress_cb_t *c = &cbs[i];
        if (c->pending && rail_atomic_load_relaxed(c->pending) == 0)
            continue;
        n += c->fn(c->arg);
    }
    return n;
}

int rail_progress(void)
{
    if (RAIL_UNLIKELY(rail_progress_mt)) {
        if (pthread_mutex_trylock(&rail_progress_cs) != 0)
            return 0;   /* another thread is progressing */
        int n = run_callbacks();
        pthread_mutex_unlock(&rail_progress_cs);
        return n;
    }
    return run_callbacks();
}

void rail_progress_hold_poll(int delta)
{
    rail_atomic_add_fetch(&n_poll_holds, delta);
}

/* ------------------------------------------------------------ sleepers */

int rail_progress_add_sleeper(const rail_progress_sleeper_t *s)
{
    int rc = MPI_SUCCESS;
    RAIL_CS_ENTER();
    if (n_sleepers == PROGRESS_MAX_SLEEPERS) {
        rc = MPI_ERR_INTERN;
        goto out;
    }
    sleepers[n_sleepers++] = *s;
    if (s->block)
        n_block_sleepers++;
#ifdef HAVE_SYS_EPOLL_H
    if (s->fd >= 0 && epfd >= 0) {
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, s->fd, &ev) == 0)
            n_fd_sleepers++;
        else
            rail_warn("progress: cannot watch fd %d: %s", s->fd, strerror(errno));
    }
#endif
out:
    RAIL_CS_EXIT();
    return rc;
}

void rail_progress_remove_sleeper(void *ctx)
{
    RAIL_CS_ENTER();
    for (int i = 0; i < n_sleepers; i++) {
        if (sleepers[i].ctx != ctx)
            continue;
        if (sleepers[i].block)
            n_block_sleepers--;
#ifdef HAVE_SYS_EPOLL_H
        if (sleepers[i].fd >= 0 && epfd >= 0 &&
            epoll_ctl(epfd, EPOLL_CTL_DEL, sleepers[i].fd, NULL) == 0)
            n_fd_sleepers--;
#endif
        memmove(&sleepers[i], &sleepers[i + 1], (size_t)(n_sleepers - i - 1) * sizeof(sleepers[0]));
        n_sleepers--;
        break;
    }
    RAIL_CS_EXIT();
}

void rail_progress_wake(void)
{
    if (RAIL_LIKELY(rail_atomic_load_acquire(&n_sleeping) == 0))
        return;
    if (wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t RAIL_UNUSED w = write(wake_fd, &one, sizeof(one));
    }
    for (int i = 0; i < n_sleepers; i++)
        if (sleepers[i].wake)
            sleepers[i].wake(sleepers[i].ctx);
}

static void drain_wake_fd(void)
{
    uint64_t v;
    if (wake_fd >= 0)
        while (read(wake_fd, &v, sizeof(v)) > 0)
            ;
}

static void epoll_block(int timeout_ms)
{
#ifdef HAVE_SYS_EPOLL_H
    struct epoll_event ev[8];
    if (epfd >= 0) {
        if (epoll_wait(epfd, ev, 8, timeout_ms) > 0)
            drain_wake_fd();
        return;
    }
#endif
    struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void nap_us(int us)
{
    struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000L };
    nanosleep(&ts, NULL);
}

static bool polling(void)
{
    return n_poll_cbs > 0 || rail_atomic_load_relaxed(&n_poll_holds) > 0;
}

/* Take the sleep token (MPI_THREAD_MULTIPLE: one sleeper in the btls). */
static bool token_take(void)
{
    int expect = 0;
    return !rail_progress_mt || rail_atomic_cas(&sleep_token, &expect, 1);
}

/* Announce the sleep to the sleepers (the btls) and to rail_progress_wake;
 * true when one has work pending.  *prepared: how many to finish. */
static bool sleepers_prepare(int *prepared)
{
    bool pending = false;
    int n = 0;
    if (rail_progress_mt)
        pthread_mutex_lock(&rail_progress_cs);
    for (; n < n_sleepers; n++) {
        rail_progress_sleeper_t *s = &sleepers[n];
        if (s->prepare && !s->prepare(s->ctx)) {
            pending = true;
            n++;   /* finish() follows every prepare(), whatever it returned */
            break;
        }
    }
    rail_atomic_add_fetch(&n_sleeping, 1);
    rail_atomic_fence();
    if (rail_progress_mt)
        pthread_mutex_unlock(&rail_progress_cs);
    *prepared = n;
    return pending;
}

static void sleepers_finish(int prepared)
{
    rail_atomic_sub_fetch(&n_sleeping, 1);
    if (rail_progress_mt)
        pthread_mutex_lock(&rail_progress_cs);
    for (int i = 0; i < prepared && i < n_sleepers; i++)
        if (sleepers[i].finish)
            sleepers[i].finish(sleepers[i].ctx);
    if (rail_progress_mt) {
        pthread_mutex_unlock(&rail_progress_cs);
        rail_atomic_store_release(&sleep_token, 0);
    }
}

/* Block in the kernel once, unless work is pending or done() came true. */
static void sleep_once(rail_progress_cond_t done, void *arg)
{
    int timeout = sleep_timeout_ms;
    if (polling())
        timeout = 1;
    if (!token_take()) {
        nap_us(mt_nap_us);
        return;
    }
    int prepared;
    bool pending = sleepers_prepare(&prepared);
    if (!pending && !done(arg)) {
        n_blocks++;
        if (n_block_sleepers == 0) {
            epoll_block(timeout);
        } else {
            rail_progress_sleeper_t *b = NULL;
            for (int i = 0; i < n_sleepers && !b; i++)
                if (sleepers[i].block)
                    b = &sleepers[i];
            /* Several kinds of sources: alternate, with a short block each. */
            bool mixed = n_block_sleepers > 1 || n_fd_sleepers > 0;
            if (mixed || (rail_progress_mt && !b->wake))
                timeout = RAIL_MIN(timeout, 1);
            b->block(b->ctx, timeout);
            if (mixed)
                epoll_block(0);
        }
    }
    sleepers_finish(prepared);
}

/* ------------------------------------------------------------ sleep_on */

static int waitv_missing;       /* futex_waitv returned ENOSYS */

/* Wait on two shared futex words at once: 0 woken or a word differs, -1
 * with errno (ENOSYS: no futex_waitv; ETIMEDOUT). */
static long futex_wait2(uint32_t *a, uint32_t av, uint32_t *b, uint32_t bv, long timeout_ns)
{
#if defined(SYS_futex_waitv) && defined(FUTEX_32)
    struct futex_waitv w[2];
    memset(w, 0, sizeof(w));
    w[0].val = av;
    w[0].uaddr = (uintptr_t)a;
    w[0].flags = FUTEX_32;
    w[1].val = bv;
    w[1].uaddr = (uintptr_t)b;
    w[1].flags = FUTEX_32;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ns / 1000000000L;
    ts.tv_nsec += timeout_ns % 1000000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return syscall(SYS_futex_waitv, w, 2u, 0u, &ts, CLOCK_MONOTONIC);
#else
    (void)a, (void)av, (void)b, (void)bv, (void)timeout_ns;
    errno = ENOSYS;
    return -1;
#endif
}

static int wait_word(uint32_t *word, uint32_t val, long timeout_ns)
{
    struct timespec ts = {timeout_ns / 1000000000L, timeout_ns % 1000000000L};
    if (rail_futex(word, FUTEX_WAIT, val, &ts) != 0 && errno == ETIMEDOUT)
        return RAIL_SLEEP_TIMEOUT;
    return RAIL_SLEEP_WOKEN;
}

int rail_progress_sleep_on(uint32_t *word, uint32_t val, long timeout_ns)
{
    if (polling())
        timeout_ns = RAIL_MIN(timeout_ns, 1000000L);
    /* the one btl that sleeps on a futex word, and nothing else to watch */
    rail_progress_sleeper_t *b = NULL;
    if (n_block_sleepers == 1 && n_fd_sleepers == 0 &&
        !rail_atomic_load_relaxed(&waitv_missing))
        for (int i = 0; i < n_sleepers && !b; i++)
            if (sleepers[i].block)
                b = &sleepers[i];
    if (!b || !b->futex || !token_take())
        return wait_word(word, val, timeout_ns);
    int prepared, how = RAIL_SLEEP_P2P;
    if (!sleepers_prepare(&prepared)) {
        uint32_t bval;
        uint32_t *bword = b->futex(b->ctx, &bval);
        long r = bword ? futex_wait2(word, val, bword, bval, timeout_ns) : -1;
        if (!bword || (r < 0 && errno == ENOSYS)) {
            if (bword)
                rail_atomic_store_relaxed(&waitv_missing, 1);
            how = wait_word(word, val, timeout_ns);
        } else if (r < 0) {
            /* EAGAIN: a word differed already */
            how = errno == ETIMEDOUT ? RAIL_SLEEP_TIMEOUT
                  : rail_atomic_load_relaxed(word) != val ? RAIL_SLEEP_WOKEN
                                                          : RAIL_SLEEP_P2P;
        } else {
            how = r == 1 ? RAIL_SLEEP_P2P : RAIL_SLEEP_WOKEN;   /* the index woken */
        }
    }
    sleepers_finish(prepared);
    return how;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void rail_progress_wait(rail_progress_cond_t done, void *arg)
{
    if (done(arg))
        return;
    /* Progress through a file descriptor (a socket, a provider's wait
     * object) needs the kernel's network work, which runs on our CPUs when
     * they are all taken or when other hosts of the job share our kernel:
     * spinning there delays the very work we wait for.  Such a wait
     * blocks on the descriptors after a short spin.  Where a futex
     * sleeper (btl sm) is present too, a block would watch one kind at a
     * time (sleep_once alternates): the yield phase serves both. */
    const bool kernel_wait = !spin_only && (oversub || kernel_shared) && n_fd_sleepers > 0 &&
                             n_block_sleepers == 0;
    const int spin = kernel_wait ? spin_count_kernel
                     : oversub   ? spin_count_oversub
                                 : rail_progress_spin_count;
    const int yield = kernel_wait ? 0 : oversub ? yield_count_oversub : rail_progress_yield_count;
    int idle = 0;
    uint64_t idle_since = 0;
    for (;;) {
        if (rail_progress() > 0) {
            idle = 0;
            idle_since = 0;
            if (done(arg))
                return;
            continue;
        }
        if (done(arg))
            return;
        idle++;
        if (idle <= spin || spin_only) {
            if (idle > 64)
                rail_cpu_relax();
            continue;
        }
        if (yield < 0 || idle <= spin + yield) {
            if (!oversub && idle_sleep_ms >= 0 && (idle & 255) == 0) {
                uint64_t t = now_ms();
                if (idle_since == 0)
                    idle_since = t;
                else if (t - idle_since >= (uint64_t)idle_sleep_ms)
                    sleep_once(done, arg);
            }
            sched_yield();
            continue;
        }
        sleep_once(done, arg);
    }
}

/* ------------------------------------------------------------ setup */

int rail_progress_register_params(void)
{
    rail_param_register_string("progress_mode", "auto", "auto|spin|sleep",
                               "How waits behave: auto (spin, then yield, then sleep; sleep early "
                               "when the node is oversubscribed), spin (never yield or sleep), "
                               "sleep (behave as if oversubscribed)",
                               RAIL_PARAM_LEVEL_TUNER, &progress_mode);
    rail_param_register_int("progress_spin_count", 2000,
                            "Idle progress polls a wait spins before it starts yielding the CPU",
                            RAIL_PARAM_LEVEL_TUNER, &rail_progress_spin_count);
    rail_param_register_int("progress_yield_count", -1,
                            "Idle polls with sched_yield() before a wait sleeps (-1: until "
                            "progress_idle_sleep_ms of idleness)",
                            RAIL_PARAM_LEVEL_TUNER, &rail_progress_yield_count);
    rail_param_register_int("progress_spin_count_oversub", 10,
                            "Idle polls a wait spins when the node is oversubscribed",
                            RAIL_PARAM_LEVEL_TUNER, &spin_count_oversub);
    rail_param_register_int("progress_yield_count_oversub", 10000,
                            "Idle polls with sched_yield() before a wait sleeps when the node is "
                            "oversubscribed",
                            RAIL_PARAM_LEVEL_TUNER, &yield_count_oversub);
    /* Principle: each idle poll of a socket-based transport is a system
     * call (about a microsecond), and a message through the kernel's
     * network stack takes ten or more: spin about that long, then block. */
    rail_param_register_int("progress_spin_count_kernel", 20,
                            "Idle polls a wait spins before it blocks on the transports' file "
                            "descriptors, when it depends on them and the node is oversubscribed "
                            "or shares its kernel with other hosts of the job",
                            RAIL_PARAM_LEVEL_TUNER, &spin_count_kernel);
    rail_param_register_int("progress_idle_sleep_ms", 100,
                            "Milliseconds of idleness after which a wait sleeps in the kernel "
                            "even when the node is not oversubscribed (-1: never)",
                            RAIL_PARAM_LEVEL_TUNER, &idle_sleep_ms);
    rail_param_register_int("progress_sleep_timeout_ms", 100,
                            "Longest single block in the kernel while waiting",
                            RAIL_PARAM_LEVEL_DEV, &sleep_timeout_ms);
    static const rail_pvar_counter_t counters[] = {
        {"progress_kernel_blocks", "Times a wait blocked in the kernel (epoll, futex) for work",
         &n_blocks},
    };
    rail_pvar_register_counters(counters, 1);
    rail_param_register_int("progress_mt_nap_us", 50,
                            "Microseconds a waiting thread naps while another thread of the "
                            "process sleeps on the transports (MPI_THREAD_MULTIPLE)",
                            RAIL_PARAM_LEVEL_DEV, &mt_nap_us);
    /* Read at the start of every wait: they may change while MPI runs. */
    static const char *const dynamic[] = {
        "progress_spin_count", "progress_yield_count", "progress_spin_count_oversub",
        "progress_yield_count_oversub", "progress_spin_count_kernel", "progress_idle_sleep_ms",
    };
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(dynamic); i++)
        rail_param_set_flags(dynamic[i], RAIL_PARAM_F_DYNAMIC);
    return MPI_SUCCESS;
}

int rail_progress_init(bool oversubscribed, bool thread_multiple)
{
    if (init_count++ > 0)
        return MPI_SUCCESS;
    rail_progress_register_params();
    oversub = oversubscribed;
    if (progress_mode && strcmp(progress_mode, "sleep") == 0)
        oversub = true;
    spin_only = progress_mode && strcmp(progress_mode, "spin") == 0;
    if (spin_only)
        oversub = false;
    if (sleep_timeout_ms < 1)
        sleep_timeout_ms = 1;
    if (thread_multiple) {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(&rail_progress_cs, &a);
        pthread_mutexattr_destroy(&a);
    }
    rail_progress_mt = thread_multiple;
#ifdef HAVE_SYS_EPOLL_H
    epfd = epoll_create1(EPOLL_CLOEXEC);
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epfd >= 0 && wake_fd >= 0) {
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
        epoll_ctl(epfd, EPOLL_CTL_ADD, wake_fd, &ev);
    }
#endif
    return MPI_SUCCESS;
}

void rail_progress_set_load(bool oversubscribed, bool shared_kernel)
{
    bool by_mode = progress_mode && strcmp(progress_mode, "auto") != 0;
    if (!by_mode)
        oversub = oversubscribed;
    kernel_shared = shared_kernel;
}

int rail_progress_finalize(void)
{
    if (init_count == 0 || --init_count > 0)
        return MPI_SUCCESS;
    n_cbs = n_poll_cbs = 0;
    n_sleepers = n_fd_sleepers = n_block_sleepers = 0;
    if (epfd >= 0)
        close(epfd);
    if (wake_fd >= 0)
        close(wake_fd);
    epfd = wake_fd = -1;
    rail_progress_mt = false;
    return MPI_SUCCESS;
}
