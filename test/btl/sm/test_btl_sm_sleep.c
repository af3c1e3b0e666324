/*
 * Sleeping and waking: 8 processes pinned to 2 CPUs wait the way the
 * progress engine does when oversubscribed, but without yielding first
 * (poll twice, then sleep_prepare / sleep_block / sleep_finish).  A token goes round the ring
 * many times (at any moment 7 ranks sleep), then every rank sends checked
 * messages to every other.  A lost wakeup costs a whole futex time-out
 * (2 s), so the test requires that no sleep lasts that long, that ranks did
 * sleep, and that the whole run ends well within its time limit.  Run with
 * the node marked oversubscribed (wake_mode set at creation), unmarked
 * (wake_mode switched on by the first sleep), and without fast boxes.
 * Last, sleep_wake: another thread ends a 10 s sleep_block at once.
 */
#include "test/btl/sm/sm_test.h"
#include "btl/sm/sm.h"
#include "runtime/rte.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOKEN_TAG 7
#define COUNT_TAG 8
#define LAPS 300
#define EACH 200
#define TIMEOUT_MS 2000

static volatile long tokens, counts;
static long sleeps, long_sleeps, all_sleeps;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void token_recv(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len)
{
    tokens++;
}

static void count_recv(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len)
{
    long n;
    memcpy(&n, hdr, sizeof(n));
    all_sleeps += n;
    counts++;
}

static void wait_until(btl_module_t *m, volatile long *counter, long target)
{
    int idle = 0;
    while (*counter < target) {
        /* Sleep as soon as one poll finds nothing: the path under test. */
        if (m->progress(m)) {
            idle = 0;
        } else if (++idle < 2) {
            continue;
        } else if (m->sleep_prepare(m)) {
            double t0 = now();
            m->sleep_block(m, TIMEOUT_MS);
            m->sleep_finish(m);
            long_sleeps += now() - t0 > 0.9 * TIMEOUT_MS / 1000.0;
            sleeps++;
            idle = 0;
        }
    }
}

static void send_token(btl_module_t *m, btl_endpoint_t *ep, long lap)
{
    sm_test_send(m, ep, TOKEN_TAG, &lap, sizeof(lap), NULL, 0);
}

static int sleep_main(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = sm_test_init(&eps);
    int next = (rank + 1) % size;

    sm_test_msg_init(m);
    btl_register_recv(TOKEN_TAG, token_recv);
    btl_register_recv(COUNT_TAG, count_recv);
    double t0 = now();
    for (long lap = 0; lap < LAPS; lap++) {
        if (rank == 0)
            send_token(m, eps[next], lap);
        wait_until(m, &tokens, lap + 1);
        if (rank != 0)
            send_token(m, eps[next], lap);
    }
    double t1 = now();
    for (int i = 0; i < EACH; i++)
        for (int k = 1; k < size; k++)
            sm_test_msg_send(m, eps[(rank + k) % size], (rank + k) % size, (size_t)(i % 7) * 300);
    wait_until(m, &sm_test_received, (long)EACH * (size - 1));
    double t2 = now();
    CHECK(long_sleeps == 0, "%ld sleeps ran into the %d ms time-out (lost wakeups)", long_sleeps,
          TIMEOUT_MS);
    if (rank != 0) {
        sm_test_send(m, eps[0], COUNT_TAG, &sleeps, sizeof(sleeps), NULL, 0);
    } else {
        wait_until(m, &counts, size - 1);
        printf("  ring: %.1f us per hop; all-to-all: %.0f messages/s per rank; "
               "%ld sleeps in all\n",
               (t1 - t0) * 1e6 / (LAPS * size), EACH * (size - 1) / (t2 - t1),
               all_sleeps + sleeps);
        CHECK(all_sleeps + sleeps > 0, "nobody slept");
    }
    sm_test_fini(m, eps);
    return 0;
}

static void *waker(void *arg)
{
    btl_module_t *m = arg;
    usleep(100 * 1000);
    m->sleep_wake(m);
    return NULL;
}

/* Rank 0 sleeps with nothing to come; a thread of its own wakes it. */
static int wake_main(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = sm_test_init(&eps);
    if (rank == 0) {
        pthread_t t;
        CHECK(m->sleep_wake != NULL, "no sleep_wake");
        while (!m->sleep_prepare(m)) /* the first one turns wake_mode on */
            m->sleep_finish(m);
        CHECK(pthread_create(&t, NULL, waker, m) == 0, "pthread_create");
        double t0 = now();
        m->sleep_block(m, 10000);
        double dt = now() - t0;
        m->sleep_finish(m);
        pthread_join(t, NULL);
        CHECK(dt > 0.05 && dt < 5, "sleep_block returned after %.3f s", dt);
    }
    sm_test_fini(m, eps);
    return 0;
}

int main(void)
{
    static const struct { const char *name, *env; bool over; } configs[] = {
        {"sleep: oversubscribed", "", true},
        {"sleep: wake mode on first sleep", "", false},
        {"sleep: fifo only", "RAIL_BTL_SM_FBOX_SIZE=0 RAIL_BTL_SM_FRAG_COUNT=8", true},
    };
    for (size_t c = 0; c < RAIL_ARRAY_SIZE(configs); c++) {
        sm_test_opts_t o = {.env = configs[c].env, .oversubscribed = configs[c].over,
                            .kill_rank = -1, .timeout_s = 30, .cpus = 2};
        sm_test_run(configs[c].name, 8, sleep_main, NULL, &o);
    }
    sm_test_opts_t o = {.kill_rank = -1, .timeout_s = 30};
    sm_test_run("sleep_wake from another thread", 2, wake_main, NULL, &o);
    return check_report("test_btl_sm_sleep");
}
