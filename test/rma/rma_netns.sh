#!/bin/bash
# One-sided communication between two network-namespace hosts: the ranks
# of one host reach the other's windows over btl tcp only (shared memory
# within a host).  rma_ops on Win_allocate and dynamic windows (every op x
# every synchronisation), rma_atomic (concurrent accumulates, lock
# contention) and rma_passive (1 MiB Get from a computing target) at 1+1
# and 2+2 ranks.  mpirun runs inside the first namespace; the namespaces
# are removed even on failure.  Skipped (77) when not root or without
# `ip netns`.  Helpers: test/runtime/common.sh.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../runtime/common.sh"

D=$top_builddir/test/rma
for p in rma_ops rma_atomic rma_passive; do
    [ -x "$D/$p" ] || skip "no $p at $D/$p"
done

A=rn$$a B=rn$$b
two_hosts $A $B 10.217.1

# rma_run WHAT PROGRAM MPIRUN-ARGS...: run it, check its verdict and that
# nothing of the job is left.
rma_run() {
    local what=$1 prog=$2
    shift 2
    run 240 "${AGENT[@]}" "$@" "$D/$prog"
    if [ "$RC" = 77 ]; then
        expect_clean "$what"
        skip "$what: $(grep -m1 '^SKIP' "$WORK/out")"
    fi
    if expect_rc 0 "$what"; then
        expect_out "^$prog: passed at np " "$what: passed"
    fi
    expect_clean "$what"
}

for hosts in "$A:1,$B:1" "$A:2,$B:2"; do
    for f in allocate dynamic; do
        RMA_OPS_FLAVOR=$f rma_run "rma_ops $f on $hosts" rma_ops --host "$hosts" -x RMA_OPS_FLAVOR
    done
    rma_run "rma_atomic on $hosts" rma_atomic --host "$hosts"
done
rma_run "rma_passive on $A:1,$B:1" rma_passive --host "$A:1,$B:1"
grep "^RMA_PASSIVE" "$WORK/out" | sed 's/^/# /'
finish
