#!/bin/bash
# coll han across real "hosts": two network namespaces joined by a veth pair
# (addresses that exist only inside them).  Our mpirun runs INSIDE the first
# namespace with --host A:n,B:m --launch-agent 'ip netns exec {host}', so
# the job spans two nodes whose processes talk over TCP between the
# namespaces and through shared memory within each; nothing here connects
# from the root namespace.  test/coll/han_ops checks every han operation
# (HANTEST_EXPECT=1: han must serve MPI_COMM_WORLD), and coll_han_verbose
# must report the two nodes.  Runs: 2+2 ranks, 3+2 ranks
# mapped round-robin (a node's ranks are not consecutive), 1+3 ranks, 2+2
# ranks with every collective checked first (coll_check).
# HAN_NETNS_BTL=ofi (han_netns_ofi.sh) or =verbs (han_netns_verbs.sh): the
# same runs with that btl between the hosts (ofi: the tcp provider, every
# registration in the strictest mode; verbs: the emulated HCA), checking
# that it carried the other host's ranks.
# The namespaces go away even on failure (trap).  Skipped (77) when not root
# or without `ip netns`.  Helpers: test/runtime/common.sh.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../runtime/common.sh"

HAN_OPS=${RAIL_TEST_HAN_OPS:-$top_builddir/test/coll/han_ops}
[ -x "$HAN_OPS" ] || skip "no han_ops at $HAN_OPS"

A=hn$$a B=hn$$b
net=10.214.$(($$ % 200 + 20))
two_hosts $A $B $net
VIA=tcp BTL=()
case ${HAN_NETNS_BTL:-tcp} in
tcp) ;;
ofi)
    grep -q "define RAIL_HAVE_OFI 1" "$top_builddir/config.h" || skip "built without libfabric"
    two_hosts_ifname $A $B rofi0
    export FI_TCP_IFACE=rofi0
    AGENT+=(-x FI_TCP_IFACE)
    VIA=ofi BTL=(--param btl=self,sm,ofi --param btl_ofi_provider=tcp --param btl_ofi_mr_strict=1) ;;
verbs)
    grep -q "define RAIL_HAVE_VERBS 1" "$top_builddir/config.h" || skip "built without rdma-core"
    VIA=verbs BTL=(--param btl=self,sm,verbs --param btl_verbs_fake=1
                   --param btl_verbs_roce_subnet=$net.0/24) ;;
*) fail "HAN_NETNS_BTL=$HAN_NETNS_BTL: not tcp, ofi or verbs"; finish ;;
esac

# han_run WHAT SIZES MPIRUN-ARGS...: run han_ops, check it, its report and
# that nothing is left in /dev/shm.
han_run() {
    local what=$1 sizes=$2 jobid
    shift 2
    jobid=hn$$x$RANDOM
    RAILRT_JOBID=$jobid HANTEST_EXPECT=1 COLLTEST_QUICK=1 run 180 "${AGENT[@]}" \
        -x HANTEST_EXPECT -x COLLTEST_QUICK --param coll_han_verbose=1 --param btl_verbose=2 \
        "${BTL[@]}" "$@" "$HAN_OPS"
    expect_rc 0 "$what" || return
    grep -qE "btl: rank [0-9]+ via $VIA" "$WORK/out" "$WORK/err" ||
        { fail "$what: the other host was not reached via $VIA"; show "$what"; }
    expect_out "^han_ops: passed at np " "$what: han_ops passed"
    expect_out "^han_ops: han serves MPI_COMM_WORLD" "$what: han served MPI_COMM_WORLD"
    grep -qE "coll han: communicator MPI_COMM_WORLD .* 2 nodes of $sizes processes; node-local collectives: [a-z]+, leaders: [a-z]+" \
        "$WORK/out" "$WORK/err" || { fail "$what: no han report for 2 nodes of $sizes"; show "$what"; }
    expect_clean "$what"
    left=$(ls /dev/shm 2>/dev/null | grep "^rail-$jobid-")
    [ -z "$left" ] || fail "$what: left in /dev/shm: $left"
}

han_run "2+2 ranks" "2,2" --host "$A:2,$B:2"
han_run "3+2 ranks by node" "3,2" --host "$A:3,$B:2" --map-by node -n 5
[ "$VIA" = tcp ] || finish   # the transport variants: the runs above
han_run "1+3 ranks" "1,3" --host "$A:1,$B:3"
# every collective checked first (coll_check): its exchanges cross the
# hosts too, and matching calls must pass it
han_run "2+2 ranks, checked" "2,2" --host "$A:2,$B:2" --param coll_check=1

# No transport between the hosts: a clear error at start-up naming both.
run 60 "${AGENT[@]}" --host "$A:1,$B:1" --param btl=self,sm "$HAN_OPS"
[ "$RC" != 0 ] || fail "btl=self,sm across 2 hosts: the job succeeded"
expect_err "no transport reaches rank (1 on host $B from rank 0 on host $A|0 on host $A from rank 1 on host $B)" \
    "btl=self,sm across 2 hosts: the error names both hosts"
expect_clean "btl=self,sm across 2 hosts"
finish
