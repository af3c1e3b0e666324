#!/bin/bash
# A job in a container with a CPU quota: under a fake cgroup tree
# (rte_cgroup_root) whose cpu.max allows one CPU, every rank counts one CPU
# on the node and 2 ranks are oversubscribed; with "max" the cpuset counts.
# The same with cgroup v1's cpu.cfs_quota_us.  rte_cgroup_test checks the
# quota reading itself.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/common.sh"

FAKE="$WORK/cgroup"
# fake_v2 QUOTA: a v2 tree whose cpu.max is "QUOTA 100000"
fake_v2() {
    rm -rf "$FAKE" && mkdir -p "$FAKE/proc/self" "$FAKE/sys/fs/cgroup/job" || exit 1
    echo "0::/job" >"$FAKE/proc/self/cgroup"
    echo "$1 100000" >"$FAKE/sys/fs/cgroup/job/cpu.max"
}

# job NP NODE_CPUS OVERSUBSCRIBED WHAT
job() {
    RAIL_RTE_CGROUP_ROOT=$FAKE run 60 -n "$1" "$RTE_TEST" info
    expect_rc 0 "$4" || return
    [ "$(count_out " node_cpus=$2 oversubscribed=$3 ")" -eq "$1" ] ||
        { fail "$4: every rank should see node_cpus=$2 oversubscribed=$3"; show "$4"; }
    expect_clean "$4"
}

fake_v2 100000
job 2 1 1 "v2 quota of 1 CPU, np 2"
job 1 1 0 "v2 quota of 1 CPU, np 1"

fake_v2 max
node=$NCPUS
job 2 "$node" "$([ 2 -gt "$node" ] && echo 1 || echo 0)" "v2 max, np 2"

rm -rf "$FAKE" && mkdir -p "$FAKE/proc/self" "$FAKE/sys/fs/cgroup/cpu,cpuacct/job" || exit 1
echo "4:cpu,cpuacct:/job" >"$FAKE/proc/self/cgroup"
echo 80000 >"$FAKE/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us"
echo 100000 >"$FAKE/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us"
job 2 1 1 "v1 quota of 0.8 CPU, np 2"
finish
