/*
 * Unit test of the choice between two paths by measured time (base/adapt.c,
 * with coll sm's classes; no MPI job): size classes, each path tried twice
 * first (the lower sample kept), the faster path afterwards
 * with every 8th call timed, the slower one retried at an interval that
 * grows with how much slower it was (capped), a lone slow sample moving
 * the faster path's estimate by at most a quarter, and a lasting change
 * of the machine turning the choice around.  Exit 0: pass; 1: fail.
 */
#include "coll/sm/coll_sm.h"

#include "test/unit_check.h"

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
    CHECK(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, 1) == &m.adapt[0][0], "tiny: class 0");
    CHECK(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, 32767) == &m.adapt[0][0], "< 32 KiB: class 0");
    CHECK(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, 32768) == &m.adapt[0][1], "32 KiB: class 1");
    CHECK(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, BYTES) == &m.adapt[0][6], "1 MiB: class 6");
    CHECK(coll_sm_adapt_of(&m, COLL_SM_ADAPT_BCAST, (size_t)1 << 40) ==
              &m.adapt[0][RAIL_ADAPT_CLASSES - 1],
          "huge: the last class");
}

static void test_policy(void)
{
    rail_adapt_t a = {0};
    const uint64_t cma_fast[2] = {400000, 100000};   /* segment 4x slower */
    int timed = 0, p[4];
    /* exploration: the segment twice, then single copy twice, all timed */
    for (int i = 0; i < 4; i++)
        p[i] = call(&a, cma_fast, &timed);
    CHECK(p[0] == SEG && p[1] == SEG && p[2] == CMA && p[3] == CMA,
          "exploration order %d %d %d %d", p[0], p[1], p[2], p[3]);
    CHECK(timed == 4, "exploration calls are timed (%d)", timed);
    /* then single copy, the segment tried again once in 64 x 4 = 256 calls */
    int seg = 0, first_seg = -1;
    timed = 0;
    for (int i = 1; i <= 512; i++)
        if (call(&a, cma_fast, &timed) == SEG && seg++ == 0)
            first_seg = i;
    CHECK(seg == 2 && first_seg == 256, "the slower path: %d calls, first at %d (want 2, 256)",
          seg, first_seg);
    CHECK(timed >= 60 && timed <= 70, "about every 8th call timed: %d of 512", timed);

    /* a lone slow sample of the faster path: at most a quarter up */
    float before = a.est[CMA];
    rail_adapt_record(&a, CMA, BYTES, 100000000);
    CHECK(a.est[CMA] <= 1.26f * before, "one outlier moved the estimate %g -> %g", before,
          a.est[CMA]);
    a.est[CMA] = before;

    /* the machine changes: single copy now 8x slower than the segment */
    const uint64_t seg_fast[2] = {100000, 800000};
    int last = -1;
    for (int i = 0; i < 2000; i++)
        last = call(&a, seg_fast, &timed);
    CHECK(last == SEG, "after a lasting change the segment wins (est seg %g cma %g)",
          a.est[SEG], a.est[CMA]);
    /* a huge gap: the slower path is still tried at least every 1024 calls */
    a.est[CMA] = 1000 * a.est[SEG];
    a.since = 0;
    int tried = 0;
    for (int i = 0; i < 1024; i++) {
        bool measure;
        tried += rail_adapt_pick(&a, &measure) == CMA;
    }
    CHECK(tried == 1, "capped retry interval: %d tries in 1024 calls", tried);
}

int main(void)
{
    test_classes();
    test_policy();
    if (failures) {
        printf("sm_adapt_unit: %d failures\n", failures);
        return 1;
    }
    printf("sm_adapt_unit: passed\n");
    return 0;
}
