/*
 * Unit test of the choice between paths by measured time (base/adapt.c,
 * with coll sm's classes; no MPI job): size classes, each path tried three
 * times first, in turns (the lowest sample kept), the faster path afterwards
 * with every 8th call timed, the slower one retried, three calls in a row,
 * three times soon (16, 64, 256 calls apart), then at an interval that
 * grows with how much slower it was
 * (capped), a lone slow sample moving the faster path's estimate by at
 * most a quarter, and a
 * lasting change of the machine turning the choice around.  Three paths
 * (the pml's): the two slower ones take turns at the retries, and a
 * retry's best sample becomes the estimate.  Exit 0: pass; 1: fail.
 */
#include "coll/sm/coll_sm.h"

#include "test/check.h"

#include <stdio.h>
#include <stdlib.h>

enum { SEG = COLL_SM_PATH_SEGMENT, CMA = COLL_SM_PATH_CMA };
#define BYTES ((size_t)1 << 20)

/* One call: pick, and when timed record `ns[path]`; returns the path. */
static int call(rail_adapt_t *a, const uint64_t ns[2], int *timed)
{
    bool measure;
    int p = rail_adapt_pick(a, &measure);
    if (measure) {
        rail_adapt_record(a, p, BYTES, ns[p]);
        (*timed)++;
    }
    return p;
}

static void test_classes(void)
{
    static coll_sm_module_t m;
    EXPECT(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, 1) == &m.adapt[0][0], "tiny: class 0");
    EXPECT(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, 32767) == &m.adapt[0][0], "< 32 KiB: class 0");
    EXPECT(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, 32768) == &m.adapt[0][1], "32 KiB: class 1");
    EXPECT(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, BYTES) == &m.adapt[0][6], "1 MiB: class 6");
    EXPECT(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, (size_t)1 << 40) ==
               &m.adapt[0][RAIL_ADAPT_CLASSES - 1],
           "huge: the last class");
}

static void test_policy(void)
{
    rail_adapt_t a = {0};
    const uint64_t cma_fast[2] = {400000, 100000};   /* segment 4x slower */
    int timed = 0, p[6];
    /* exploration: segment and single copy in turns, three each, all timed */
    for (int i = 0; i < 6; i++)
        p[i] = call(&a, cma_fast, &timed);
    EXPECT(p[0] == SEG && p[1] == CMA && p[2] == SEG && p[3] == CMA && p[4] == SEG && p[5] == CMA,
           "exploration order %d %d %d %d %d %d", p[0], p[1], p[2], p[3], p[4], p[5]);
    EXPECT(timed == 6, "exploration calls are timed (%d)", timed);
    /* the first calls of a class run slow whatever the path: taking turns
     * (and the lowest sample) keeps them from deciding */
    rail_adapt_t w = {0};
    const uint64_t cold[2] = {900000, 900000}, warm[2] = {100000, 150000};
    int t2 = 0;
    for (int i = 0; i < 6; i++)
        call(&w, i < 2 ? cold : warm, &t2);
    EXPECT(call(&w, warm, &t2) == SEG, "two cold first calls kept the faster segment out (%g %g)",
           w.est[SEG], w.est[CMA]);
    /* then single copy, the segment tried again in bursts of three calls:
     * the first three 16, 64 and 256 calls apart (a warm-up may outlast
     * exploration and a first retry), then once in 128 x 4 = 512 others:
     * calls 16-18, 82-84, 340-342 and 854-856 */
    int seg = 0, first_seg = -1, burst_ok = 1;
    timed = 0;
    for (int i = 1; i <= 1100; i++)
        if (call(&a, cma_fast, &timed) == SEG) {
            if (seg++ == 0)
                first_seg = i;
            burst_ok &= (i >= 16 && i <= 18) || (i >= 82 && i <= 84) ||
                        (i >= 340 && i <= 342) || (i >= 854 && i <= 856);
        }
    EXPECT(seg == 12 && first_seg == 16 && burst_ok,
           "the slower path: %d calls, first at %d (want 12 in four bursts, from 16)", seg,
           first_seg);
    EXPECT(timed >= 135 && timed <= 155, "about every 8th call timed, and the retries: %d of 1100",
           timed);

    /* a lone slow sample of the faster path: at most a quarter up */
    float before = a.est[CMA];
    rail_adapt_record(&a, CMA, BYTES, 100000000);
    EXPECT(a.est[CMA] <= 1.26f * before, "one outlier moved the estimate %g -> %g", before,
           a.est[CMA]);
    a.est[CMA] = before;

    /* the machine changes: single copy now 8x slower than the segment */
    const uint64_t seg_fast[2] = {100000, 800000};
    int last = -1;
    for (int i = 0; i < 2000; i++)
        last = call(&a, seg_fast, &timed);
    EXPECT(last == SEG, "after a lasting change the segment wins (est seg %g cma %g)", a.est[SEG],
           a.est[CMA]);
    /* timed once in 64 calls instead of 8 (rail_adapt_pick_every) */
    rail_adapt_t e = a;
    int timed64 = 0;
    for (int i = 0; i < 640; i++) {
        bool measure;
        if (rail_adapt_pick_every(&e, 2, 64, &measure) == SEG && measure)
            timed64++;
    }
    EXPECT(timed64 >= 9 && timed64 <= 11, "period 64: %d of 640 calls timed", timed64);
    /* a huge gap: the slower path is still tried at least every 1024 calls */
    a.est[CMA] = 1000 * a.est[SEG];
    a.since = 0;
    int tried = 0;
    for (int i = 0; i < 1024; i++) {
        bool measure;
        tried += rail_adapt_pick(&a, &measure) == CMA;
    }
    EXPECT(tried == 1, "capped retry interval: %d tries in 1024 calls", tried);
}

/* Three paths: exploration 0 1 2 0 1 2 0 1 2, then the fastest; the
 * slower two take turns; a retry whose first sample is slow keeps its best
 * one. */
static void test_three(void)
{
    rail_adapt_t a = {0};
    bool measure;
    int p[9], in_turn = 1;
    for (int i = 0; i < 9; i++) {
        p[i] = rail_adapt_pick_n(&a, 3, &measure);
        in_turn &= p[i] == i % 3 && measure;
        rail_adapt_record(&a, p[i], BYTES, p[i] == 2 ? 100000 : p[i] == 1 ? 400000 : 200000);
    }
    EXPECT(in_turn, "three paths explored in turns: %d %d %d %d %d %d %d %d %d", p[0], p[1], p[2],
           p[3], p[4], p[5], p[6], p[7], p[8]);
    int first[3] = {-1, -1, -1}, count[3] = {0, 0, 0};
    for (int i = 1; i <= 1200; i++) {
        int q = rail_adapt_pick_n(&a, 3, &measure);
        if (first[q] < 0)
            first[q] = i;
        count[q]++;
    }
    /* the slower two take turns; each one's first three retries come 16,
     * 64 and 256 calls after the previous retry (path 0 at 16, 100, 424;
     * path 1 at 34, 166, 682), then 128 x how many times slower: path 0
     * (2x) 256 calls later (940), path 1 (4x) 512 (1454, past the end) */
    EXPECT(first[0] == 16 && first[1] == 34 && count[0] == 12 && count[1] == 9,
           "slower paths take turns: first at %d and %d, %d and %d calls", first[0], first[1],
           count[0], count[1]);

    /* a retry burst of path 0: a slow first sample, then fast ones */
    rail_adapt_t b = a;
    b.since = 100000;
    int q = rail_adapt_pick_n(&b, 3, &measure);
    EXPECT(measure && (q == 0 || q == 1), "retry due: path %d", q);
    rail_adapt_record(&b, q, BYTES, 10000000);
    for (int i = 0; i < 2; i++) {
        int r = rail_adapt_pick_n(&b, 3, &measure);
        EXPECT(r == q && measure, "a burst of three: call %d took path %d", i + 2, r);
        rail_adapt_record(&b, r, BYTES, 50000);
    }
    EXPECT(rail_adapt_pick_n(&b, 3, &measure) == q, "the retried path, now fastest, is chosen");
}

int main(void)
{
    test_classes();
    test_policy();
    test_three();
    return check_report("sm_adapt_unit");
}
