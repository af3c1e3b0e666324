/*
 * The CPU time this process's cgroup may use, as a number of CPUs.
 *
 * A container (docker --cpus, a Kubernetes CPU limit) is often given a
 * quota of CPU time per period instead of fewer CPUs: its cpuset shows every
 * CPU of the host, but its processes together may keep only quota / period
 * of them busy.  Ranks that spin past that are stopped for the rest of each
 * period (100 ms by default), so the rte counts the smaller of the cpuset
 * and the quota as the node's CPUs.
 *
 * Where the limits are:
 *   cgroup v2  /proc/self/cgroup has "0::<path>"; the limit is cpu.max
 *              ("max <period>" or "<quota> <period>") in
 *              /sys/fs/cgroup<path> (/sys/fs/cgroup/unified<path> on a host
 *              that mounts both versions);
 *   cgroup v1  the line whose controller list holds "cpu" gives the path in
 *              the cpu hierarchy, mounted at /sys/fs/cgroup/<that list>
 *              (or /sys/fs/cgroup/cpu); the limit is cpu.cfs_quota_us (-1:
 *              none) over cpu.cfs_period_us.
 * A cgroup's limit binds everything below it, so each level from the
 * process's cgroup up to the hierarchy's root counts and the smallest limit
 * wins.  Levels whose directory is missing are skipped: a container without
 * its own cgroup namespace sees the host's path in /proc while its
 * /sys/fs/cgroup is its own cgroup, found as the root level.
 */
#include "base/rail.h"
#include "runtime/rte.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTE_CG_PATH 4096

/* The first line of a file, without its newline; false if unreadable. */
static bool rte_cg_read(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

static bool rte_cg_read_ll(const char *dir, const char *file, long long *v)
{
    char path[RTE_CG_PATH], line[64], *end;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path) ||
        !rte_cg_read(path, line, sizeof(line)))
        return false;
    *v = strtoll(line, &end, 10);
    return end != line;
}

/* CPUs, rounded up, that a quota of q per period p allows (0: no limit). */
static int rte_cg_cpus(long long q, long long p)
{
    if (q <= 0 || p <= 0)
        return 0;
    long long n = (q + p - 1) / p;
    return n > INT_MAX ? INT_MAX : (int)n;
}

/* cgroup v2: cpu.max of one cgroup directory. */
static int rte_cg_limit_v2(const char *dir)
{
    char path[RTE_CG_PATH], line[128], quota[32];
    long long period;
    if ((size_t)snprintf(path, sizeof(path), "%s/cpu.max", dir) >= sizeof(path) ||
        !rte_cg_read(path, line, sizeof(line)) ||
        sscanf(line, "%31s %lld", quota, &period) != 2 || strcmp(quota, "max") == 0)
        return 0;
    return rte_cg_cpus(strtoll(quota, NULL, 10), period);
}

/* cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us. */
static int rte_cg_limit_v1(const char *dir)
{
    long long q, p;
    if (!rte_cg_read_ll(dir, "cpu.cfs_quota_us", &q) || !rte_cg_read_ll(dir, "cpu.cfs_period_us", &p))
        return 0;
    return rte_cg_cpus(q, p);
}

/* The smallest limit from mount + path up to mount itself (0: none). */
static int rte_cg_walk(const char *mount, const char *path, int (*limit)(const char *))
{
    char dir[RTE_CG_PATH], rel[RTE_CG_PATH];
    int best = 0;
    snprintf(rel, sizeof(rel), "%s", path);
    for (;;) {
        char *slash = strrchr(rel, '/');
        if ((size_t)snprintf(dir, sizeof(dir), "%s%s", mount, rel) < sizeof(dir)) {
            int n = limit(dir);
            if (n > 0 && (best == 0 || n < best))
                best = n;
        }
        if (!slash)
            break;
        *slash = '\0';    /* "/a/b" -> "/a" -> "" (the mount itself) */
    }
    return best;
}

static int rte_cg_min(int a, int b)
{
    return a == 0 ? b : b == 0 ? a : RAIL_MIN(a, b);
}

/* Whether the comma-separated controller list holds "cpu". */
static bool rte_cg_has_cpu(const char *list)
{
    size_t n = strlen(list);
    for (const char *p = list; p < list + n; p += strcspn(p, ",") + 1)
        if (strncmp(p, "cpu", 3) == 0 && (p[3] == ',' || p[3] == '\0'))
            return true;
    return false;
}

int rte_cgroup_cpu_limit(const char *root)
{
    char path[RTE_CG_PATH], line[RTE_CG_PATH], mount[RTE_CG_PATH];
    const char *r = root ? root : "";
    int best = 0;
    if ((size_t)snprintf(path, sizeof(path), "%s/proc/self/cgroup", r) >= sizeof(path))
        return 0;
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *ctl = strchr(line, ':'), *cg = ctl ? strchr(ctl + 1, ':') : NULL;
        if (!cg)
            continue;
        *ctl++ = '\0';
        *cg++ = '\0';
        if (strcmp(line, "0") == 0 && *ctl == '\0') {
            for (int i = 0; i < 2; i++) {
                snprintf(mount, sizeof(mount), "%s/sys/fs/cgroup%s", r, i ? "/unified" : "");
                best = rte_cg_min(best, rte_cg_walk(mount, cg, rte_cg_limit_v2));
            }
        } else if (rte_cg_has_cpu(ctl)) {
            snprintf(mount, sizeof(mount), "%s/sys/fs/cgroup/%s", r, ctl);
            int n = rte_cg_walk(mount, cg, rte_cg_limit_v1);
            if (n == 0 && strcmp(ctl, "cpu") != 0) {
                snprintf(mount, sizeof(mount), "%s/sys/fs/cgroup/cpu", r);
                n = rte_cg_walk(mount, cg, rte_cg_limit_v1);
            }
            best = rte_cg_min(best, n);
        }
    }
    fclose(f);
    return best;
}
