#!/bin/bash
# Point-to-point between two network-namespace hosts (one rank each) over
# btl tcp: the hosts share this machine's kernel, so a wait for the peer's
# socket must block after a short spin (progress_kernel_blocks grows on
# both ranks; base/progress.c), and with progress_mode=spin it must not.
# mpirun runs inside the first namespace; the namespaces are removed.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../runtime/common.sh"

PROG=$top_builddir/test/p2p/p2p_kernel_wait
[ -x "$PROG" ] || skip "no p2p_kernel_wait at $PROG"

A=pn$$a B=pn$$b
two_hosts $A $B 10.216.1

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
