/*
 * Micro-benchmark of the memory-type lookup, the question every send,
 * receive and reduction asks.  Prints ns per lookup and fails only on gross
 * regressions (a lock, a system call or a driver call on the host path):
 *   host only        accel_memory_type() inline: one load and one branch;
 *   fake active      a host pointer: the memtab's span check;
 *                    a fake pointer among 256 allocations: binary search;
 *   cuda (mock)      a host pointer: memtab miss plus the host-page cache.
 */
#include "config.h"
#include "accel/accel_internal.h"
#include "test/accel/accel_test.h"
#include "mpi-ext.h"

#include <time.h>

#define ITERS 20000000L

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ns per accel_memory_type over `n` pointers; the barrier makes every
 * iteration reload the active flag, as separate call sites would. */
static double bench(void *const *ptrs, int n, accel_mem_type_t want)
{
    long hits = 0;
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        for (long i = 0; i < ITERS; i++) {
            __asm__ volatile("" ::: "memory");
            hits += accel_memory_type(ptrs[i & (n - 1)]) == want;
        }
        best = RAIL_MIN(best, (now() - t0) * 1e9 / ITERS);
    }
    CHECK(hits == 3 * ITERS);
    return best;
}

/* The same loop without the lookup: what the numbers above include. */
static double bench_loop(void *const *ptrs, int n)
{
    long hits = 0;
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        for (long i = 0; i < ITERS; i++) {
            __asm__ volatile("" ::: "memory");
            hits += ptrs[i & (n - 1)] != NULL;
        }
        best = RAIL_MIN(best, (now() - t0) * 1e9 / ITERS);
    }
    CHECK(hits == 3 * ITERS);
    return best;
}

static void report(const char *what, double ns, double limit)
{
    printf("%-44s %7.2f ns/lookup%s\n", what, ns, ns > limit ? "  ** too slow **" : "");
    EXPECT(ns <= limit, "%s: %.2f ns/lookup, at most %.0f allowed", what, ns, limit);
}

int main(int argc, char **argv)
{
    static char host[64][4096];
    void *hp[64], *dp[256];
    for (int i = 0; i < 64; i++)
        hp[i] = host[i] + i;

    if (argc > 1 && strcmp(argv[1], "cuda") == 0) {
        test_select("host,cuda");
        CHECK_OK(accel_init());
        if (!accel_component_active(accel_component_index("cuda")))
            check_skip("lookups with the mock driver: no cuda component");
        report("cuda active (mock driver), host pointer", bench(hp, 64, ACCEL_MEM_HOST), 200);
        CHECK_OK(accel_finalize());
        return check_report("test_accel_bench cuda");
    }

    printf("%-44s %7.2f ns/iteration (included below)\n", "loop alone", bench_loop(hp, 64));
    test_select("host");
    CHECK_OK(accel_init());
    report("host only, host pointer", bench(hp, 64, ACCEL_MEM_HOST), 20);
    CHECK_OK(accel_finalize());

    test_select("host,fake");
    CHECK_OK(accel_init());
    for (int i = 0; i < 256; i++)
        CHECK_OK(MPIX_Fake_device_malloc(1000 + i, &dp[i]));
    report("fake active, host pointer", bench(hp, 64, ACCEL_MEM_HOST), 100);
    report("fake active, fake pointer (256 allocations)", bench(dp, 256, ACCEL_MEM_DEVICE), 300);
    for (int i = 0; i < 256; i++)
        CHECK_OK(MPIX_Fake_device_free(dp[i]));
    CHECK_OK(accel_finalize());

#if defined(RAIL_HAVE_CUDA) && defined(TEST_MOCK_CUDA_DIR)
    const char *env[] = { "LD_LIBRARY_PATH=" TEST_MOCK_CUDA_DIR, NULL };
    fflush(stdout);
    int rc = test_run_self(argv[0], "cuda", env, NULL);
    EXPECT(rc == 0 || rc == TEST_SKIP, "the run on the mock driver exited %d", rc);
#endif
    return check_report("test_accel_bench");
}
