/*
 * coll sm: choosing between the segment and single copy by measured time
 * (see coll_sm.h, ADAPTIVE SINGLE COPY).
 *
 * Per kind of operation and power-of-two size class, the deciding process
 * keeps an estimate of each path's time per byte, from calls it times
 * whole (a bcast root waits until every receiver is done): the first two
 * of each path (the lower counts), then every 8th call of the faster path
 * (a moving average; a sample counts at most twice the estimate, so one
 * call that lost its CPU moves it by at most a quarter, while a real
 * change gets through in a few samples), and a call of the slower path
 * once every 64 x (how many times slower it was) calls, at most every
 * 1024 (its estimate becomes that sample, at most twice the old one).  So
 * a machine whose cost of moving cache lines between cores changes from
 * one minute to the next (docs/performance.md) gets the better path back
 * within a few hundred calls, and a path five times slower costs about
 * 1.5% while it is checked.
 */
#include "coll/sm/coll_sm.h"

#include <time.h>

#define SM_ADAPT_EXPLORE 2
#define SM_ADAPT_EVERY 8
#define SM_ADAPT_PROBE_BASE 64
#define SM_ADAPT_PROBE_MAX 1024

uint64_t coll_sm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

coll_sm_adapt_t *coll_sm_adapt_of(coll_sm_module_t *m, int kind, size_t bytes)
{
    int b = 0;
    for (size_t v = bytes >> COLL_SM_ADAPT_LOG2_MIN; v > 1 && b < COLL_SM_ADAPT_CLASSES - 1; v >>= 1)
        b++;
    return &m->adapt[kind][b];
}

static int sm_adapt_best(const coll_sm_adapt_t *a)
{
    return a->est[COLL_SM_PATH_CMA] < a->est[COLL_SM_PATH_SEGMENT] ? COLL_SM_PATH_CMA
                                                                  : COLL_SM_PATH_SEGMENT;
}

int coll_sm_adapt_pick(coll_sm_adapt_t *a, bool *measure)
{
    *measure = true;
    for (int p = 0; p < 2; p++)
        if (a->runs[p] < SM_ADAPT_EXPLORE)
            return p;
    int best = sm_adapt_best(a);
    double every = SM_ADAPT_PROBE_BASE * a->est[!best] / a->est[best];
    if (++a->since >= (every < SM_ADAPT_PROBE_MAX ? (uint32_t)every : SM_ADAPT_PROBE_MAX)) {
        a->since = 0;
        return !best;
    }
    *measure = a->since % SM_ADAPT_EVERY == 0;
    return best;
}

void coll_sm_adapt_record(coll_sm_adapt_t *a, int path, size_t bytes, uint64_t ns)
{
    float x = (float)ns / (float)(bytes ? bytes : 1), *e = &a->est[path];
    if (x <= 0)
        x = 1e-6f;
    if (a->runs[path] == 0)
        *e = x;
    else if (a->runs[path] < SM_ADAPT_EXPLORE)
        *e = RAIL_MIN(*e, x);
    else if (path == sm_adapt_best(a))
        *e = 0.75f * *e + 0.25f * RAIL_MIN(x, 2 * *e);
    else
        *e = RAIL_MIN(x, 2 * *e);
    a->runs[path]++;
}
