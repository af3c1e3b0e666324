/*
 * rte_cgroup_cpu_limit against fake cgroup trees (v2, v1, both, a
 * container's view, nested limits), built under a temporary directory that
 * stands for /.  Then rte_init as a singleton under such a tree: the node's
 * CPUs are the cpuset's, capped by the quota (the rte_cgroup_root
 * parameter names the tree).  No launcher needed.  test/runtime/rte_cgroup.sh
 * runs a job under such a tree.
 */
#include "base/rail.h"
#include "base/param.h"
#include "runtime/rte.h"
#include "test/check.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[256];

/* Write text to top/<case>/<rel>, making the directories on the way. */
static void put(const char *dir, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    for (char *p = path + strlen(top) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            perror(path);
            exit(1);
        }
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* A fresh case directory. */
static const char *tree(const char *name)
{
    static char dir[512];
    snprintf(dir, sizeof(dir), "%s/%s", top, name);
    if (mkdir(dir, 0755) != 0) {
        perror(dir);
        exit(1);
    }
    return dir;
}

static void expect(const char *what, const char *root, int want)
{
    int got = rte_cgroup_cpu_limit(root);
    EXPECT(got == want, "%s: %d CPUs, expected %d", what, got, want);
}

static void v2_cases(void)
{
    const char *d = tree("v2");
    put(d, "proc/self/cgroup", "0::/job\n");
    put(d, "sys/fs/cgroup/job/cpu.max", "150000 100000\n");
    expect("v2 quota of 1.5 CPUs", d, 2);

    d = tree("v2max");
    put(d, "proc/self/cgroup", "0::/job\n");
    put(d, "sys/fs/cgroup/job/cpu.max", "max 100000\n");
    expect("v2 max", d, 0);

    d = tree("v2nested");
    put(d, "proc/self/cgroup", "0::/a/b/c\n");
    put(d, "sys/fs/cgroup/a/b/c/cpu.max", "max 100000\n");
    put(d, "sys/fs/cgroup/a/b/cpu.max", "300000 100000\n");
    put(d, "sys/fs/cgroup/a/cpu.max", "50000 100000\n");
    expect("v2 ancestor's limit", d, 1);

    /* a container: /proc shows the host's path, /sys/fs/cgroup is its own cgroup */
    d = tree("v2container");
    put(d, "proc/self/cgroup", "0::/system.slice/docker-abc.scope\n");
    put(d, "sys/fs/cgroup/cpu.max", "250000 100000\n");
    expect("v2 container view", d, 3);

    d = tree("v2period");
    put(d, "proc/self/cgroup", "0::/\n");
    put(d, "sys/fs/cgroup/cpu.max", "200000 50000\n");
    expect("v2 quota of 4 CPUs in 50 ms periods", d, 4);
}

static void v1_cases(void)
{
    const char *d = tree("v1");
    put(d, "proc/self/cgroup", "5:memory:/job\n3:cpu,cpuacct:/job\n2:cpuset:/\n");
    put(d, "sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "150000\n");
    put(d, "sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
    expect("v1 quota of 1.5 CPUs", d, 2);

    d = tree("v1none");
    put(d, "proc/self/cgroup", "3:cpu,cpuacct:/job\n");
    put(d, "sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "-1\n");
    put(d, "sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
    expect("v1 quota -1", d, 0);

    /* mounted as /sys/fs/cgroup/cpu, not under the controller list's name */
    d = tree("v1cpu");
    put(d, "proc/self/cgroup", "3:cpuacct,cpu:/job\n");
    put(d, "sys/fs/cgroup/cpu/job/cpu.cfs_quota_us", "50000\n");
    put(d, "sys/fs/cgroup/cpu/job/cpu.cfs_period_us", "100000\n");
    expect("v1 mounted at cpu", d, 1);

    /* cpuacct alone is not the cpu controller */
    d = tree("v1acct");
    put(d, "proc/self/cgroup", "2:cpuacct:/job\n");
    put(d, "sys/fs/cgroup/cpuacct/job/cpu.cfs_quota_us", "50000\n");
    put(d, "sys/fs/cgroup/cpuacct/job/cpu.cfs_period_us", "100000\n");
    expect("v1 cpuacct only", d, 0);
}

static void other_cases(void)
{
    /* a host mounting both: v1's cpu without a quota, v2's unified with one */
    const char *d = tree("hybrid");
    put(d, "proc/self/cgroup", "1:cpu:/\n0::/job\n");
    put(d, "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
    put(d, "sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    put(d, "sys/fs/cgroup/unified/job/cpu.max", "700000 100000\n");
    expect("hybrid, v2 limit", d, 7);

    d = tree("nothing");
    expect("no /proc/self/cgroup", d, 0);
    put(d, "proc/self/cgroup", "0::/job\n");
    expect("no cgroup files", d, 0);

    d = tree("garbage");
    put(d, "proc/self/cgroup", "junk\n0::/job\n");
    put(d, "sys/fs/cgroup/job/cpu.max", "lots\n");
    expect("malformed files", d, 0);
}

static int cpuset_count(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
}

/* rte_init under a fake tree whose quota allows `quota` CPUs (0: "max"). */
static int singleton(const char *name, int quota)
{
    char text[64];
    const char *d = tree(name);
    put(d, "proc/self/cgroup", "0::/job\n");
    if (quota)
        snprintf(text, sizeof(text), "%d 100000\n", quota * 100000 - 50000);
    else
        snprintf(text, sizeof(text), "max 100000\n");
    put(d, "sys/fs/cgroup/job/cpu.max", text);
    if (rte_register_params() != MPI_SUCCESS ||
        rail_param_set("rte_cgroup_root", d, RAIL_PARAM_SRC_API) != MPI_SUCCESS ||
        rte_init() != MPI_SUCCESS) {
        FAIL("rte_init under %s", name);
        return 0;
    }
    int n = rte_info.node_cpus;
    rte_finalize();
    return n;
}

int main(void)
{
    snprintf(top, sizeof(top), "%s/rte_cgroup.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(top) != NULL, "mkdtemp %s: %s", top, strerror(errno));
    v2_cases();
    v1_cases();
    other_cases();

    int cpus = cpuset_count();
    int n = singleton("init_max", 0);
    EXPECT(n == cpus, "quota max: node_cpus %d, expected the cpuset's %d", n, cpus);
    n = singleton("init_1", 1);   /* 0.5 CPUs: 1 */
    EXPECT(n == 1, "quota of 0.5 CPUs: node_cpus %d, expected 1", n);
    n = singleton("init_2", 2);   /* 1.5 CPUs: 2 */
    EXPECT(n == RAIL_MIN(cpus, 2), "quota of 1.5 CPUs, %d in the cpuset: node_cpus %d, expected %d",
           cpus, n, RAIL_MIN(cpus, 2));

    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", top);
    return check_report("rte_cgroup_test");
}
