/*
 * Choosing between two or three paths by measured time (see adapt.h).
 *
 * Per class, an estimate of each path's time per byte, from the transfers
 * the caller timed: the first three of each path, the paths taking turns
 * (the lowest counts), then
 * every 8th transfer of the fastest path, or every one where timing costs
 * nothing (a moving average; a sample counts at most twice the estimate,
 * so one transfer that lost its CPU moves it by at most a quarter, while a
 * real change gets through in a few samples), and a retry of a slower path
 * once every 128 x (how many times slower it was) transfers, at most every
 * 1024 (the first three retries of each slower path sooner, after 16, 64
 * and 256: warm-ups outlast exploration): three transfers in a row (the first may still find
 * the caches as the fastest path left them), whose best sample becomes its
 * estimate (at most twice the old one).  With three paths the slower two take turns.
 * So a machine whose cost of moving cache lines between cores changes
 * from one minute to the next (docs/performance.md) gets the better path
 * back within a few hundred calls, and a path five times slower costs
 * about 2% while it is checked.
 */
#include "base/adapt.h"
#include "base/rail.h"

#include <time.h>

#define ADAPT_EXPLORE 3
#define ADAPT_EVERY 8
#define ADAPT_PROBE_BASE 128
#define ADAPT_PROBE_MAX 1024
#define ADAPT_BURST 3
#define ADAPT_FIRST_RETRY 16
#define ADAPT_EARLY_ROUNDS 3           /* retries at 16, 64 and 256 calls */

uint64_t rail_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int rail_adapt_class(size_t bytes)
{
    int b = 0;
    for (size_t v = bytes >> RAIL_ADAPT_LOG2_MIN; v > 1 && b < RAIL_ADAPT_CLASSES - 1; v >>= 1)
        b++;
    return b;
}

static int adapt_n(const rail_adapt_t *a)
{
    return a->n ? a->n : 2;
}

static int adapt_best(const rail_adapt_t *a)
{
    int best = 0;
    for (int p = 1; p < adapt_n(a); p++)
        if (a->est[p] < a->est[best])
            best = p;
    return best;
}

int rail_adapt_pick_n(rail_adapt_t *a, int n, bool *measure)
{
    return rail_adapt_pick_every(a, n, ADAPT_EVERY, measure);
}

int rail_adapt_pick_every(rail_adapt_t *a, int n, unsigned period, bool *measure)
{
    *measure = true;
    a->n = (uint8_t)RAIL_MIN(RAIL_MAX(n, 2), RAIL_ADAPT_PATHS);
    /* exploring: the path measured least, so the paths take turns and the
     * first calls of a size class, which run slow whatever the path (cold
     * buffers, a peer still arriving: np 2 1 MiB allgathers 150-340 us for
     * 4 calls, then 75-100), do not all fall on one path */
    int least = 0;
    for (int p = 1; p < a->n; p++)
        if (a->runs[p] < a->runs[least])
            least = p;
    if (a->runs[least] < ADAPT_EXPLORE)
        return least;
    if (a->burst) {
        a->burst--;
        return a->burst_path;
    }
    int best = adapt_best(a);
    /* The slower path whose turn it is: with two, the other one. */
    int other = a->retry % (a->n - 1);
    if (other >= best)
        other++;
    double every = ADAPT_PROBE_BASE * a->est[other] / a->est[best];
    /* each slower path's first retries come early, 16, 64 and 256 calls
     * apart: exploration's samples, and even a first retry's, may still
     * carry a warm-up (np 2 allgathers of 512 KiB blocks: each of the
     * first six calls faster than the one before, whatever the path, so
     * the path explored last won at 51 us against the segment's 40; np 2
     * allreduce of 512 KiB: the segment's six first calls at 0.31 ns per
     * byte, later 0.08, so single copy at 0.12 stayed chosen for 300
     * calls: 65 us against 40-48) */
    int round = a->retry / (a->n - 1);
    if (round < ADAPT_EARLY_ROUNDS)
        every = RAIL_MIN(every, (double)(ADAPT_FIRST_RETRY << (2 * round)));
    if (++a->since >= (every < ADAPT_PROBE_MAX ? (uint32_t)every : ADAPT_PROBE_MAX)) {
        a->since = 0;
        a->retry++;
        a->burst = ADAPT_BURST - 1;
        a->burst_path = (uint8_t)other;
        a->fresh |= (uint8_t)(1u << other);
        return other;
    }
    *measure = a->since % (period ? period : 1) == 0;
    return best;
}

int rail_adapt_pick(rail_adapt_t *a, bool *measure)
{
    return rail_adapt_pick_n(a, 2, measure);
}

void rail_adapt_record(rail_adapt_t *a, int path, size_t bytes, uint64_t ns)
{
    float x = (float)ns / (float)(bytes ? bytes : 1), *e = &a->est[path];
    if (x <= 0)
        x = 1e-6f;
    if (a->runs[path] == 0)
        *e = x;
    else if (a->runs[path] < ADAPT_EXPLORE)
        *e = RAIL_MIN(*e, x);
    else if (path == adapt_best(a))
        *e = 0.75f * *e + 0.25f * RAIL_MIN(x, 2 * *e);
    else if (a->fresh & (1u << path))
        *e = RAIL_MIN(x, 2 * *e);      /* a retry's first sample replaces the estimate */
    else
        *e = RAIL_MIN(*e, x);          /* ... and the burst's others can only lower it */
    a->fresh &= (uint8_t)~(1u << path);
    a->runs[path]++;
}
