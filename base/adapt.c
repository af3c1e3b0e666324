/*
 * Choosing between two paths by measured time (see adapt.h).
 *
 * Per class, an estimate of each path's time per byte, from the transfers
 * the caller timed: the first two of each path (the lower counts), then
 * every 8th transfer of the faster path, or every one where timing costs
 * nothing (a moving average; a sample counts at most twice the estimate,
 * so one transfer that lost its CPU moves it by at most a quarter, while a
 * real change gets through in a few samples), and a transfer of the slower
 * path once every 64 x (how many times slower it was) transfers, at most
 * every 1024 (its estimate becomes that sample, at most twice the old
 * one).  So
 * a machine whose cost of moving cache lines between cores changes from
 * one minute to the next (docs/performance.md) gets the better path back
 * within a few hundred calls, and a path five times slower costs about
 * 1.5% while it is checked.
 */
#include "base/adapt.h"
#include "base/rail.h"

#include <time.h>

#define ADAPT_EXPLORE 2
#define ADAPT_EVERY 8
#define ADAPT_PROBE_BASE 64
#define ADAPT_PROBE_MAX 1024

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

static int adapt_best(const rail_adapt_t *a)
{
    return a->est[1] < a->est[0] ? 1 : 0;
}

int rail_adapt_pick(rail_adapt_t *a, bool *measure)
{
    *measure = true;
    for (int p = 0; p < 2; p++)
        if (a->runs[p] < ADAPT_EXPLORE)
            return p;
    int best = adapt_best(a);
    double every = ADAPT_PROBE_BASE * a->est[!best] / a->est[best];
    if (++a->since >= (every < ADAPT_PROBE_MAX ? (uint32_t)every : ADAPT_PROBE_MAX)) {
        a->since = 0;
        return !best;
    }
    *measure = a->since % ADAPT_EVERY == 0;
    return best;
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
    else
        *e = RAIL_MIN(x, 2 * *e);
    a->runs[path]++;
}
