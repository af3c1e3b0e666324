/*
 * Nothing left in /dev/shm:
 *  - the segments exist between init and wire-up, and are gone as soon as
 *    every local peer has mapped them (before finalize);
 *  - a rank killed with SIGKILL before wire-up leaves its files, named
 *    rail-<jobid>-*, which the launcher-style sweep removes;
 *  - a rank killed in the middle of an exchange leaves nothing;
 *  - a rank that exits without finalize unlinks its segment (atexit);
 *  - a leftover file of a crashed job with the same name does not stop init.
 */
#include "test/btl/sm/sm_test.h"
#include "btl/sm/sm.h"
#include "runtime/rte.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int count_here(void) { return sm_test_shm_count(rte_info.jobid); }

static int unlink_main(int rank, int size, void *arg)
{
    btl_module_t *mods[1];
    btl_endpoint_t **eps = calloc((size_t)size, sizeof(*eps));
    btl_proc_t *procs = calloc((size_t)size, sizeof(*procs));
    int n = 1;

    CHECK(btl_sm_component.register_params() == MPI_SUCCESS, "params");
    CHECK(btl_sm_component.init(mods, &n) == MPI_SUCCESS && n == 1, "init");
    CHECK(rte_fence(true) == MPI_SUCCESS, "fence");
    CHECK(count_here() == size, "%d segments after init, expected %d", count_here(), size);
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    for (int i = 0; i < size; i++)
        procs[i] = (btl_proc_t){.rank = i, .local = true};
    CHECK(mods[0]->add_procs(mods[0], size, procs, eps) == MPI_SUCCESS, "add_procs");
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    CHECK(count_here() == 0, "%d segments left after wire-up", count_here());
    sm_test_msg_init(mods[0]);
    for (int k = 1; k < size; k++)
        sm_test_msg_send(mods[0], eps[(rank + k) % size], (rank + k) % size, 100);
    sm_test_progress_until(mods[0], &sm_test_received, size - 1);
    free(procs);
    sm_test_fini(mods[0], eps);
    return 0;
}

/* Rank 1 dies right after init; the others wait for it in the fence. */
static int early_crash_main(int rank, int size, void *arg)
{
    btl_module_t *mods[1];
    int n = 1;
    CHECK(btl_sm_component.register_params() == MPI_SUCCESS, "params");
    CHECK(btl_sm_component.init(mods, &n) == MPI_SUCCESS && n == 1, "init");
    if (rank == 1)
        kill(getpid(), SIGKILL);
    rte_fence(true);
    pause();
    return 0;
}

/* Ranks exchange until the parent kills rank 1; then they stop. */
static int midrun_main(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = sm_test_init(&eps);
    sm_test_msg_init(m);
    for (long i = 0;; i++) {
        sm_test_msg_send(m, eps[(rank + 1) % size], (rank + 1) % size, (size_t)(i % 5) * 1000);
        m->progress(m);
    }
    return 0;
}

/* exit() after init, without finalize: the atexit hook unlinks. */
static int exit_main(int rank, int size, void *arg)
{
    btl_module_t *mods[1];
    int n = 1;
    CHECK(btl_sm_component.register_params() == MPI_SUCCESS, "params");
    CHECK(btl_sm_component.init(mods, &n) == MPI_SUCCESS && n == 1, "init");
    return 0;
}

/* A file with our segment's name exists already. */
static int stale_main(int rank, int size, void *arg)
{
    char name[256];
    snprintf(name, sizeof(name), "/" RTE_SHM_PREFIX "%s-sm-%d", rte_info.jobid, rank);
    int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 123) == 0, "stale file");
    close(fd);
    btl_endpoint_t **eps;
    btl_module_t *m = sm_test_init(&eps);
    sm_test_fini(m, eps);
    return 0;
}

static void crash_case(const char *name, sm_test_fn fn, int kill_after_ms, int expect_left)
{
    sm_test_opts_t o = {.kill_rank = kill_after_ms ? 1 : -1, .kill_after_ms = kill_after_ms,
                        .expect_failure = true, .timeout_s = 10};
    int rc = sm_test_run(name, 3, fn, NULL, &o);
    int left = sm_test_shm_count(sm_test_jobid);
    int removed = sm_test_shm_cleanup(sm_test_jobid);
    int after = sm_test_shm_count(sm_test_jobid);
    bool ok = rc == 0 && after == 0 && (expect_left < 0 ? left > 0 : left == expect_left);
    char what[256];
    snprintf(what, sizeof(what), "%s: %d files after the crash, %d removed by the sweep, %d left",
             name, left, removed, after);
    check_case(what, ok);
}

int main(void)
{
    sm_test_opts_t o = {.kill_rank = -1};
    for (int n = 2; n <= 8; n *= 2)
        sm_test_run("unlink after wire-up, none after finalize", n, unlink_main, NULL, &o);
    sm_test_run("unlink after wire-up, none after finalize", 3, unlink_main, NULL, &o);
    sm_test_run("exit without finalize", 3, exit_main, NULL, &o);
    sm_test_run("stale segment replaced", 3, stale_main, NULL, &o);
    crash_case("SIGKILL before wire-up", early_crash_main, 0, -1);
    crash_case("SIGKILL mid-run", midrun_main, 500, 0);
    return check_report("test_btl_sm_cleanup");
}
