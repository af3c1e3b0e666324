/*
 * The launcher's event loop: epoll over file descriptors, one-shot timers,
 * a queue other threads post work to (woken through an eventfd), child exits
 * and signals (through a signalfd).  Nothing here spins: epoll_wait sleeps
 * until something happens or the next timer is due.
 */
#include "runtime/launch.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct loop_fdent {
    loop_fd_fn fn;
    void *arg;
    bool used;
} loop_fdent_t;

typedef struct loop_timer {
    struct loop_timer *next;
    uint64_t id;
    double due;
    loop_fn fn;
    void *arg;
} loop_timer_t;

typedef struct loop_work {
    struct loop_work *next;
    loop_fn fn;
    void *arg;
} loop_work_t;

typedef struct loop_child {
    struct loop_child *next;
    pid_t pid;
    loop_child_fn fn;
    void *arg;
} loop_child_t;

static const int loop_signals[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

static struct {
    int epfd, wakefd, sigfd;
    loop_fdent_t *fds;
    int nfds;
    loop_timer_t *timers; /* sorted by due time */
    uint64_t next_timer_id;
    pthread_mutex_t lock; /* guards posted */
    loop_work_t *posted, *posted_tail;
    loop_child_t *children;
    loop_signal_fn on_signal;
    bool stop;
} L = { .epfd = -1, .wakefd = -1, .sigfd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

double loop_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void loop_on_wake(int fd, uint32_t events, void *arg)
{
    uint64_t v;
    loop_work_t *w;

    if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
        launch_msg("eventfd read: %s", strerror(errno));
    pthread_mutex_lock(&L.lock);
    w = L.posted;
    L.posted = L.posted_tail = NULL;
    pthread_mutex_unlock(&L.lock);
    while (w) {
        loop_work_t *next = w->next;
        w->fn(w->arg);
        free(w);
        w = next;
    }
}

static void loop_reap(void)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        for (loop_child_t **pp = &L.children; *pp; pp = &(*pp)->next) {
            loop_child_t *c = *pp;
            if (c->pid == pid) {
                *pp = c->next;
                c->fn(pid, status, c->arg);
                free(c);
                break;
            }
        }
    }
}

static void loop_on_signal(int fd, uint32_t events, void *arg)
{
    struct signalfd_siginfo si;
    bool chld = false;

    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if ((int)si.ssi_signo == SIGCHLD)
            chld = true;
        else if (L.on_signal)
            L.on_signal((int)si.ssi_signo);
    }
    if (chld)
        loop_reap();
}

int loop_init(loop_signal_fn on_signal)
{
    sigset_t set;

    sigemptyset(&set);
    for (size_t i = 0; i < sizeof(loop_signals) / sizeof(loop_signals[0]); i++)
        sigaddset(&set, loop_signals[i]);
    /* Blocked before libpmix starts its thread, so every thread inherits it. */
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);
    signal(SIGTTOU, SIG_IGN);
    L.on_signal = on_signal;
    L.epfd = epoll_create1(EPOLL_CLOEXEC);
    L.wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    L.sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (L.epfd < 0 || L.wakefd < 0 || L.sigfd < 0)
        return -1;
    if (loop_fd_add(L.wakefd, EPOLLIN, loop_on_wake, NULL) != 0 ||
        loop_fd_add(L.sigfd, EPOLLIN, loop_on_signal, NULL) != 0)
        return -1;
    return 0;
}

void loop_child_reset_signals(void)
{
    sigset_t none;
    sigemptyset(&none);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGTTIN, SIG_DFL);
    signal(SIGTTOU, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

int loop_fd_add(int fd, uint32_t events, loop_fd_fn fn, void *arg)
{
    struct epoll_event ev = { .events = events, .data.fd = fd };

    if (fd >= L.nfds) {
        int n = fd + 1 > L.nfds * 2 ? fd + 1 : L.nfds * 2;
        loop_fdent_t *f = realloc(L.fds, sizeof(*f) * (size_t)n);
        if (!f)
            return -1;
        memset(f + L.nfds, 0, sizeof(*f) * (size_t)(n - L.nfds));
        L.fds = f;
        L.nfds = n;
    }
    if (epoll_ctl(L.epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return -1;
    L.fds[fd] = (loop_fdent_t){ .fn = fn, .arg = arg, .used = true };
    return 0;
}

int loop_fd_mod(int fd, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.fd = fd };
    return epoll_ctl(L.epfd, EPOLL_CTL_MOD, fd, &ev);
}

void loop_fd_del(int fd)
{
    if (fd < 0 || fd >= L.nfds || !L.fds[fd].used)
        return;
    epoll_ctl(L.epfd, EPOLL_CTL_DEL, fd, NULL);
    L.fds[fd].used = false;
}

uint64_t loop_timer_add(double ms, loop_fn fn, void *arg)
{
    loop_timer_t *t = launch_xcalloc(1, sizeof(*t)), **pp = &L.timers;

    t->id = ++L.next_timer_id;
    t->due = loop_now_ms() + ms;
    t->fn = fn;
    t->arg = arg;
    while (*pp && (*pp)->due <= t->due)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
    return t->id;
}

void loop_timer_cancel(uint64_t id)
{
    for (loop_timer_t **pp = &L.timers; id && *pp; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            loop_timer_t *t = *pp;
            *pp = t->next;
            free(t);
            return;
        }
    }
}

void loop_post(loop_fn fn, void *arg)
{
    loop_work_t *w = launch_xcalloc(1, sizeof(*w));
    uint64_t one = 1;
    ssize_t rc;

    w->fn = fn;
    w->arg = arg;
    pthread_mutex_lock(&L.lock);
    if (L.posted_tail)
        L.posted_tail->next = w;
    else
        L.posted = w;
    L.posted_tail = w;
    pthread_mutex_unlock(&L.lock);
    rc = write(L.wakefd, &one, sizeof(one));
    (void)rc; /* EAGAIN only when the counter is huge: the loop is awake anyway */
}

void loop_child_watch(pid_t pid, loop_child_fn fn, void *arg)
{
    loop_child_t *c = launch_xcalloc(1, sizeof(*c));
    c->pid = pid;
    c->fn = fn;
    c->arg = arg;
    c->next = L.children;
    L.children = c;
    /* The child may have exited before it was watched; its SIGCHLD is pending
     * in the signalfd, so the next reap finds it. */
}

static void loop_run_timers(void)
{
    double now = loop_now_ms();
    while (L.timers && L.timers->due <= now) {
        loop_timer_t *t = L.timers;
        L.timers = t->next;
        t->fn(t->arg);
        free(t);
    }
}

int loop_run(void)
{
    struct epoll_event evs[64];

    L.stop = false;
    while (!L.stop) {
        int timeout = -1, n;
        loop_run_timers();
        if (L.stop)
            break;
        if (L.timers) {
            double d = L.timers->due - loop_now_ms();
            timeout = d <= 0 ? 0 : (int)d + 1;
        }
        n = epoll_wait(L.epfd, evs, 64, timeout);
        if (n < 0 && errno != EINTR)
            return -1;
        for (int i = 0; i < n && !L.stop; i++) {
            int fd = evs[i].data.fd;
            if (fd < L.nfds && L.fds[fd].used)
                L.fds[fd].fn(fd, evs[i].events, L.fds[fd].arg);
        }
    }
    return 0;
}

void loop_stop(void)
{
    L.stop = true;
}
