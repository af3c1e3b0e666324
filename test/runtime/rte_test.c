/*
 * rte-level test program, run under a launcher by the test/runtime scripts.
 *
 *   rte_test info              print this rank's rte_info and check it
 *   rte_test modex [direct]    all-to-all business-card exchange (collecting
 *                              fence, or a non-collecting one + direct modex)
 *   rte_test hello             init, put, commit, fence, fence, finalize
 *   rte_test segv R            rank R dies of SIGSEGV, the others wait in a fence
 *                              (it prints the time, CLOCK_BOOTTIME = /proc/uptime)
 *   rte_test abort R CODE [nofence]   rank R calls rte_abort(CODE), the others
 *                              wait in a fence (or just sleep)
 *   rte_test exit R CODE       rank R exits with CODE before finalizing
 *   rte_test exitafter R CODE  every rank finalizes, then rank R exits with CODE
 *   rte_test shm R             every rank creates a /dev/shm segment, rank R
 *                              then dies of SIGSEGV
 *   rte_test sleep SECONDS     every rank sleeps, then finalizes
 *   rte_test stdin             rank 0 counts the bytes of its stdin, the others too
 *   rte_test env NAME...       print NAME=value for each NAME
 *   rte_test print LINES       print lines in two pieces each (line atomicity)
 *
 * Output lines start with a keyword the scripts grep for; failures print
 * "FAIL:" and exit 1.
 */
#include "base/rail.h"
#include "runtime/rte.h"

/* Failures (test/check.h) name the rank and go to stdout, where the
 * scripts look for lines starting FAIL. */
#define CHECK_RANK rte_info.rank
#include "test/check.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int test_info(void)
{
    char peers[4096] = "";
    size_t off = 0;
    bool me_in_peers = false;

    for (int i = 0; i < rte_info.local_size; i++) {
        int p = rte_info.local_peers[i];
        off += (size_t)snprintf(peers + off, sizeof(peers) - off, "%s%d", i ? "," : "", p);
        if (off >= sizeof(peers))
            off = sizeof(peers) - 1;
        if (p == rte_info.rank) {
            me_in_peers = true;
            EXPECT(i == rte_info.local_rank, "local_rank %d but index %d in local_peers",
                   rte_info.local_rank, i);
        }
        EXPECT(i == 0 || rte_info.local_peers[i - 1] < p, "local_peers not ascending");
        EXPECT(rte_node_of(p) == (int)rte_info.node_id, "local peer %d on node %d, I am on %u", p,
               rte_node_of(p), rte_info.node_id);
        EXPECT(strcmp(rte_hostname_of(p), rte_info.hostname) == 0,
               "local peer %d on host %s, I am on %s", p, rte_hostname_of(p), rte_info.hostname);
    }
    EXPECT(me_in_peers, "not in my own local_peers");
    EXPECT(rte_info.rank >= 0 && rte_info.rank < rte_info.size, "rank out of range");
    EXPECT(rte_info.local_size >= 1 && rte_info.local_size <= rte_info.size, "bad local_size");
    EXPECT(rte_info.num_nodes >= 1 && (int)rte_info.node_id < rte_info.num_nodes,
           "node_id %u of %d nodes", rte_info.node_id, rte_info.num_nodes);
    EXPECT(rte_info.universe_size >= 1, "universe %d", rte_info.universe_size);
    EXPECT(rte_info.num_cpus >= 1, "num_cpus %d", rte_info.num_cpus);
    EXPECT(rte_info.oversubscribed == (rte_info.local_size > rte_info.node_cpus),
           "oversubscribed %d with %d local ranks on %d CPUs", rte_info.oversubscribed,
           rte_info.local_size, rte_info.node_cpus);
    EXPECT(rte_info.jobid[0] != '\0', "empty jobid");
    for (int r = 0; r < rte_info.size; r++)
        EXPECT(rte_node_of(r) >= 0 && rte_node_of(r) < rte_info.num_nodes, "rte_node_of(%d) = %d",
               r, rte_node_of(r));
    /* Every host of these tests is a namespace of this machine: after the
     * exchange, all ranks of the job share our kernel. */
    CHECK_OK(rte_modex_commit());
    CHECK_OK(rte_fence(true));
    CHECK_OK(rte_kernel_update());
    EXPECT(rte_info.singleton || rte_info.kernel_size == rte_info.size,
           "kernel_size %d, but all %d ranks run on this kernel", rte_info.kernel_size,
           rte_info.size);
    EXPECT(rte_info.oversubscribed == (rte_info.kernel_size > rte_info.node_cpus),
           "oversubscribed %d with %d ranks on this kernel and %d CPUs", rte_info.oversubscribed,
           rte_info.kernel_size, rte_info.node_cpus);
    printf("INFO rank=%d size=%d local_rank=%d local_size=%d node_rank=%d node_id=%u "
           "num_nodes=%d appnum=%d universe=%d host=%s jobid=%s cpus=%d node_cpus=%d "
           "oversubscribed=%d singleton=%d kernel_size=%d peers=%s\n",
           rte_info.rank, rte_info.size, rte_info.local_rank, rte_info.local_size,
           rte_info.node_rank, rte_info.node_id, rte_info.num_nodes, rte_info.appnum,
           rte_info.universe_size, rte_info.hostname, rte_info.jobid, rte_info.num_cpus,
           rte_info.node_cpus, rte_info.oversubscribed, rte_info.singleton,
           rte_info.kernel_size, peers);
    CHECK_OK(rte_fence(false));
    return check_failures;
}

/* Card of rank r: text, then (1000 + 37 r) pattern bytes. */
static size_t card_len(int r)
{
    return 300 + 1000 + 37 * (size_t)r;
}

static void card_fill(unsigned char *buf, int r, const char *host, int node)
{
    memset(buf, 0, 300);
    snprintf((char *)buf, 300, "rank %d host %s node %d", r, host, node);
    for (size_t i = 300; i < card_len(r); i++)
        buf[i] = (unsigned char)(i * 7 + (size_t)r);
}

static int test_modex(bool collect)
{
    size_t mylen = card_len(rte_info.rank);
    unsigned char *mine = malloc(mylen), *want = malloc(card_len(rte_info.size));
    int remote = 0;

    card_fill(mine, rte_info.rank, rte_info.hostname, (int)rte_info.node_id);
    CHECK_OK(rte_modex_put("card", mine, mylen));
    CHECK_OK(rte_modex_put("small", &rte_info.rank, sizeof(int)));
    CHECK_OK(rte_modex_commit());
    CHECK_OK(rte_fence(collect));
    for (int k = 0; k < rte_info.size; k++) {
        int r = (rte_info.rank + k) % rte_info.size;
        void *data = NULL;
        size_t len = 0;
        CHECK_OK(rte_modex_get(r, "card", &data, &len));
        card_fill(want, r, rte_hostname_of(r), rte_node_of(r));
        EXPECT(len == card_len(r), "card of %d has %zu bytes, want %zu", r, len, card_len(r));
        EXPECT(len != card_len(r) || memcmp(data, want, len) == 0,
               "card of %d differs: got '%.80s' want '%.80s'", r, (char *)data, (char *)want);
        remote += rte_node_of(r) != (int)rte_info.node_id;
        free(data);
        CHECK_OK(rte_modex_get(r, "small", &data, &len));
        EXPECT(len == sizeof(int) && *(int *)data == r, "small value of %d wrong", r);
        free(data);
    }
    CHECK_OK(rte_fence(false));
    printf("MODEX %s rank %d peers %d remote %d host %s\n", check_failures ? "FAILED" : "OK",
           rte_info.rank, rte_info.size, remote, rte_info.hostname);
    free(mine);
    free(want);
    return check_failures;
}

/* Wait for a rank that will die: the launcher must end us.  The fence may
 * also fail early (libpmix drops a dead participant): then wait here. */
static void wait_in_fence(void)
{
    if (rte_fence(true) == MPI_SUCCESS)
        FAIL("fence completed although a rank died");
    for (;;)
        pause();
}

static int test_shm(int victim)
{
    char name[256];
    CHECK_OK(rte_shm_name(name, sizeof(name), "test"));
    snprintf(name + strlen(name), sizeof(name) - strlen(name), "-%d", rte_info.rank);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (EXPECT(fd >= 0, "shm_open(%s) failed", name))
        EXPECT(ftruncate(fd, 4096) == 0, "ftruncate failed");
    printf("SHM rank %d created /dev/shm%s\n", rte_info.rank, name);
    fflush(stdout);
    CHECK_OK(rte_fence(false));
    if (rte_info.rank == victim)
        raise(SIGSEGV);
    wait_in_fence();
    return 1;
}

static int test_stdin(void)
{
    char buf[65536];
    size_t total = 0, lines = 0;
    ssize_t n;
    while ((n = read(0, buf, sizeof(buf))) > 0) {
        total += (size_t)n;
        for (ssize_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
    }
    printf("STDIN rank %d bytes %zu lines %zu\n", rte_info.rank, total, lines);
    return 0;
}

static int test_print(int lines)
{
    for (int i = 0; i < lines; i++) {
        char a[64], b[64];
        snprintf(a, sizeof(a), "LINE rank %d ", rte_info.rank);
        snprintf(b, sizeof(b), "number %d end\n", i);
        if (write(1, a, strlen(a)) < 0 || (usleep(200), write(1, b, strlen(b))) < 0)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "info";
    int a1 = argc > 2 ? atoi(argv[2]) : 0, a2 = argc > 3 ? atoi(argv[3]) : 0;
    int rc = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    check_output = stdout;
    if (strcmp(mode, "noinit") == 0)
        return 0;
    CHECK_OK(rte_init());
    if (strcmp(mode, "info") == 0) {
        rc = test_info();
    } else if (strcmp(mode, "modex") == 0) {
        rc = test_modex(!(argc > 2 && strcmp(argv[2], "direct") == 0));
    } else if (strcmp(mode, "hello") == 0) {
        CHECK_OK(rte_modex_put("card", &rte_info.rank, sizeof(int)));
        CHECK_OK(rte_modex_commit());
        CHECK_OK(rte_fence(true));
        CHECK_OK(rte_fence(false));
    } else if (strcmp(mode, "segv") == 0) {
        if (rte_info.rank == a1) {
            struct timespec ts;
            clock_gettime(CLOCK_BOOTTIME, &ts);
            printf("SEGV rank %d pid %d at %ld.%03ld\n", rte_info.rank, (int)getpid(),
                   (long)ts.tv_sec, ts.tv_nsec / 1000000);
            fflush(stdout);
            raise(SIGSEGV);
        }
        wait_in_fence();
        rc = 1;
    } else if (strcmp(mode, "abort") == 0) {
        if (rte_info.rank == a1)
            rte_abort(a2, "rte_test: deliberate abort");
        if (argc > 4 && strcmp(argv[4], "nofence") == 0)
            for (;;)
                pause();
        wait_in_fence();
        rc = 1;
    } else if (strcmp(mode, "exit") == 0) {
        if (rte_info.rank == a1)
            exit(a2);
        wait_in_fence();
        rc = 1;
    } else if (strcmp(mode, "exitafter") == 0) {
        CHECK_OK(rte_fence(false));
        CHECK_OK(rte_finalize());
        return rte_info.rank == a1 ? a2 : 0;
    } else if (strcmp(mode, "shm") == 0) {
        rc = test_shm(a1);
    } else if (strcmp(mode, "sleep") == 0) {
        printf("SLEEP rank %d pid %d\n", rte_info.rank, (int)getpid());
        sleep((unsigned)a1);
    } else if (strcmp(mode, "stdin") == 0) {
        rc = test_stdin();
    } else if (strcmp(mode, "env") == 0) {
        for (int i = 2; i < argc; i++) {
            const char *v = getenv(argv[i]);
            printf("ENV rank %d %s=%s\n", rte_info.rank, argv[i], v ? v : "(unset)");
        }
    } else if (strcmp(mode, "print") == 0) {
        rc = test_print(a1);
    } else {
        FAIL("unknown mode %s", mode);
        rc = 1;
    }
    CHECK_OK(rte_finalize());
    return rc ? 1 : 0;
}
