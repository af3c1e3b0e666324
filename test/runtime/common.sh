# Helpers of the runtime tests (sourced, bash).  Each test prints PASS, FAIL
# or SKIP and exits 0, 1 or 77 (automake).  The build tree comes from
# $abs_top_builddir / $top_builddir (set by the test harness), else the
# current directory.  Every mpirun runs under `timeout`; after each run the
# test checks that nothing of the job is left: no process carrying the test's
# tag in its environment, nothing in the private TMPDIR (the node servers'
# PMIx directories), no /dev/shm/rail-<jobid>-* entry.

TEST_NAME=${RAILTEST_NAME:-$(basename "$0" .sh)}
top_builddir=${abs_top_builddir:-${top_builddir:-$PWD}}
MPIRUN=${RAIL_TEST_MPIRUN:-$top_builddir/runtime/mpirun}
RAILD=${RAIL_TEST_RAILD:-$top_builddir/runtime/raild}
RTE_TEST=${RAIL_TEST_RTE:-$top_builddir/test/runtime/rte_test}
NCPUS=$(nproc 2>/dev/null || echo 1)
fails=0

skip() {
    echo "SKIP: $TEST_NAME: $*"
    exit 77
}

fail() {
    echo "FAIL: $TEST_NAME: $*"
    fails=$((fails + 1))
}

note() {
    echo "# $*"
}

finish() {
    if [ "$fails" -gt 0 ]; then
        echo "FAIL: $TEST_NAME ($fails checks failed)"
        exit 1
    fi
    echo "PASS: $TEST_NAME"
    exit 0
}

[ -x "$MPIRUN" ] || skip "no mpirun at $MPIRUN (set top_builddir)"
[ -x "$RTE_TEST" ] || skip "no rte_test at $RTE_TEST (set top_builddir)"
command -v timeout >/dev/null || skip "the timeout command is missing"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/railtest.XXXXXX") || exit 1
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
# Every command a test starts gets RAILTEST_TAG=$TAG in its environment (not
# the test shell itself, whose helpers would match).
TAG="t$$x$RANDOM"
common_cleanup() {
    # Last resort: end whatever a failed test left behind, by pid.
    for p in $(tagged_pids); do kill -9 "$p" 2>/dev/null; done
    rm -rf "$WORK"
    [ -n "${EXTRA_CLEANUP:-}" ] && eval "$EXTRA_CLEANUP"
}
trap common_cleanup EXIT

# Pids of live processes whose environment carries our tag.
tagged_pids() {
    grep -lsxzF "RAILTEST_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null |
        sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p'
}

# run LIMIT ARGS...: mpirun ARGS under timeout; sets RC, ELAPSED_MS, OUT, ERR.
# Stdin comes from $STDIN (default /dev/null); the command line starts with
# the words of $RUN_PREFIX (e.g. "ip netns exec ns1").
run() {
    local limit=$1 t0 t1
    shift
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    RAILTEST_TAG=$TAG timeout -k 3 "$limit" ${RUN_PREFIX:-} "$MPIRUN" "$@" <"${STDIN:-/dev/null}" \
        >"$WORK/out" 2>"$WORK/err"
    RC=$?
    t1=$(date +%s%N)
    ELAPSED_MS=$(((t1 - t0) / 1000000))
    OUT=$(cat "$WORK/out")
    ERR=$(cat "$WORK/err")
}

show() {
    echo "--- mpirun $* (status $RC, ${ELAPSED_MS} ms)"
    sed 's/^/  out| /' "$WORK/out" | head -40
    sed 's/^/  err| /' "$WORK/err" | head -40
}

expect_rc() {
    local want=$1 what=$2
    if [ "$RC" != "$want" ]; then
        fail "$what: exit status $RC, expected $want"
        show "$what"
        return 1
    fi
    return 0
}

expect_out() { # pattern, description: grep -E in stdout
    if ! grep -qE -- "$1" "$WORK/out"; then
        fail "$2: no line matching '$1' on stdout"
        show "$2"
        return 1
    fi
}

expect_err() {
    if ! grep -qE -- "$1" "$WORK/err"; then
        fail "$2: no line matching '$1' on stderr"
        show "$2"
        return 1
    fi
}

count_out() {
    grep -cE -- "$1" "$WORK/out"
}

# Nothing of the last job may remain.
expect_clean() {
    local what=$1 pids jobid left
    # The ranks are gone when mpirun returns; allow the kernel a moment to reap.
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        pids=$(tagged_pids)
        [ -z "$pids" ] && break
        sleep 0.1
    done
    if [ -n "$pids" ]; then
        fail "$what: processes left behind: $(echo $pids)"
        ps -o pid,ppid,stat,cmd -p "$(echo $pids | tr ' ' ',')" 2>/dev/null | sed 's/^/  /'
        for p in $pids; do kill -9 "$p" 2>/dev/null; done
    fi
    left=$(ls -A "$TMPDIR")
    if [ -n "$left" ]; then
        fail "$what: temp files left in TMPDIR: $left"
        rm -rf "${TMPDIR:?}"/*
    fi
    for jobid in $(grep -oE 'jobid=[A-Za-z0-9._]+' "$WORK/out" | sort -u | cut -d= -f2); do
        left=$(ls /dev/shm 2>/dev/null | grep "^rail-$jobid-")
        [ -n "$left" ] && fail "$what: /dev/shm entries left: $left"
    done
}

# two_hosts A B NET: network namespaces A and B joined by a veth pair,
# NET.1 in A and NET.2 in B (NET like 10.216.1, a /24 that exists only
# inside them); mpirun then runs inside A (RUN_PREFIX) with AGENT as its
# launch agent.  The namespaces are removed when the test ends.  Skips
# when it cannot make them (not root, no iproute2).
two_hosts() {
    local a=$1 b=$2 net=$3 ns
    [ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
    command -v ip >/dev/null || skip "the ip command (iproute2) is missing"
    [ -x "$RAILD" ] || skip "no raild at $RAILD"
    NETNS=""
    EXTRA_CLEANUP=remove_namespaces
    for ns in $a $b; do
        ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
        NETNS="$NETNS $ns"
        ip -n "$ns" link set lo up || skip "cannot configure namespace $ns"
    done
    ip link add "v$$ab" type veth peer name "v$$ba" &&
        ip link set "v$$ab" netns "$a" && ip link set "v$$ba" netns "$b" &&
        ip -n "$a" addr add "$net.1/24" dev "v$$ab" && ip -n "$b" addr add "$net.2/24" dev "v$$ba" &&
        ip -n "$a" link set "v$$ab" up && ip -n "$b" link set "v$$ba" up ||
        skip "cannot create a veth pair"
    RUN_PREFIX="ip netns exec $a"
    AGENT=(--launch-agent "ip netns exec {host}")
}

# two_hosts_ifname A B NAME: rename the veth ends two_hosts A B made to NAME
# on both hosts, so that one interface name (a libfabric provider's
# FI_TCP_IFACE) holds on each.
two_hosts_ifname() {
    local a=$1 b=$2 name=$3
    ip -n "$a" link set "v$$ab" down && ip -n "$a" link set "v$$ab" name "$name" &&
        ip -n "$a" link set "$name" up && ip -n "$b" link set "v$$ba" down &&
        ip -n "$b" link set "v$$ba" name "$name" && ip -n "$b" link set "$name" up ||
        skip "cannot rename the veth ends to $name"
}

remove_namespaces() {
    for ns in $NETNS; do ip netns del "$ns" 2>/dev/null; done
}
