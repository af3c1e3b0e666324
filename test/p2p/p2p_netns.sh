#!/bin/bash
# Point-to-point between two network-namespace hosts (one rank each) over
# btl tcp: the hosts share this machine's kernel, so a wait for the peer's
# socket must block after a short spin (progress_kernel_blocks grows on
# both ranks; base/progress.c), and with progress_mode=spin it must not.
# mpirun runs inside the first namespace; the namespaces are removed.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../runtime/common.sh"

PROG=$top_builddir/test/p2p/p2p_kernel_wait
[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "the ip command (iproute2) is missing"
[ -x "$RAILD" ] || skip "no raild at $RAILD"
[ -x "$PROG" ] || skip "no p2p_kernel_wait at $PROG"

A=pn$$a B=pn$$b
NETNS=""
remove_namespaces() {
    for ns in $NETNS; do ip netns del "$ns" 2>/dev/null; done
}
EXTRA_CLEANUP=remove_namespaces
for ns in $A $B; do
    ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
    NETNS="$NETNS $ns"
    ip -n "$ns" link set lo up || skip "cannot configure namespace $ns"
done
ip link add "v$$ab" type veth peer name "v$$ba" &&
    ip link set "v$$ab" netns "$A" && ip link set "v$$ba" netns "$B" &&
    ip -n "$A" addr add 10.216.1.1/24 dev "v$$ab" && ip -n "$B" addr add 10.216.1.2/24 dev "v$$ba" &&
    ip -n "$A" link set "v$$ab" up && ip -n "$B" link set "v$$ba" up ||
    skip "cannot create a veth pair"

RUN_PREFIX="ip netns exec $A"
AGENT=(--launch-agent "ip netns exec {host}")

run 60 "${AGENT[@]}" --host "$A:1,$B:1" "$PROG"
if expect_rc 0 "defaults"; then
    expect_out "^p2p_kernel_wait: passed at np 2" "defaults: passed"
    for r in 0 1; do
        expect_out "^KERNEL_WAIT rank $r blocks [1-9][0-9]*$" "defaults: rank $r blocked in the kernel"
    done
fi
expect_clean "defaults"

run 60 "${AGENT[@]}" --host "$A:1,$B:1" --param progress_mode=spin "$PROG"
if expect_rc 0 "progress_mode=spin"; then
    for r in 0 1; do
        expect_out "^KERNEL_WAIT rank $r blocks 0$" "progress_mode=spin: rank $r never blocked"
    done
fi
expect_clean "progress_mode=spin"
finish
