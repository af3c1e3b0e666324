#!/bin/bash
# btl ofi across real "hosts": two network namespaces joined by a veth pair
# (two_hosts), its ends renamed rofi0 (so FI_TCP_IFACE=rofi0 holds on every
# host: the tcp provider binds only that interface).  Our mpirun runs INSIDE
# the first namespace with --launch-agent 'ip netns exec {host}'; nothing
# here connects from the root namespace.
#   - btl_ofi_provider=tcp: btl ofi (tcp;ofi_rxm) carries the traffic
#     between the hosts (btl_verbose=2 says "via ofi"), p2p_basic and
#     p2p_large pass, with btl_ofi_mr_strict=1 and every large message by
#     the get (fi_read);
#   - defaults: a software provider ranks below btl tcp, which carries it.
# The namespaces go away even on failure (trap).  Skipped (77) when not root
# or without `ip netns`.  Helpers: test/runtime/common.sh.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../../runtime/common.sh"

P2P=$top_builddir/test/p2p
[ -x "$P2P/p2p_basic" ] && [ -x "$P2P/p2p_large" ] || skip "no p2p tests in $P2P"

A=of$$a B=of$$b
two_hosts "$A" "$B" 10.215.1
# one interface name on both hosts, so that one FI_TCP_IFACE serves both
two_hosts_ifname "$A" "$B" rofi0
export FI_TCP_IFACE=rofi0
AGENT+=(-x FI_TCP_IFACE)

# ofi_run WHAT PROGRAM VIA MPIRUN-ARGS...: run a p2p test on 1+1 ranks,
# check it passed, that the peer on the other host went via VIA, and that
# nothing is left.
ofi_run() {
    local what=$1 prog=$2 via=$3
    shift 3
    run 240 "${AGENT[@]}" --host "$A:1,$B:1" --param btl_verbose=2 "$@" "$P2P/$prog"
    expect_rc 0 "$what" || return
    expect_out "^$prog: passed at np 2" "$what: $prog passed"
    grep -qE "btl: rank [01] via $via" "$WORK/out" "$WORK/err" ||
        { fail "$what: the other host was not reached via $via"; show "$what"; }
    expect_clean "$what"
}

OFI=(--param btl_ofi_provider=tcp --param btl_ofi_mr_strict=1)
ofi_run "p2p_basic over ofi" p2p_basic ofi "${OFI[@]}"
ofi_run "p2p_large over ofi, get" p2p_large ofi "${OFI[@]}" --param pml_rndv_get_min=1
grep -qE "btl ofi: using provider tcp;ofi_rxm" "$WORK/out" "$WORK/err" ||
    { fail "btl_verbose names no provider"; show "provider"; }
ofi_run "p2p_basic, defaults" p2p_basic tcp
grep -qE "btl ofi: .*ranks below btl tcp" "$WORK/out" "$WORK/err" ||
    { fail "defaults: no reason why the software provider was declined"; show "defaults"; }
finish
