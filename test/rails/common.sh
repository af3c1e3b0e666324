# Namespace hosts with several rails (sourced after test/runtime/common.sh).
#
# rail_hosts NHOSTS NRAILS [RAILS_OF_HOST_2 ...]: namespaces $H1..$HN (host
# i is "$RAILNS$i") and one switch namespace $SW holding a bridge per rail
# (each rail its own switch) and one for the frontend.  Host i gets rail
# interfaces rail0..rail<NRAILS-1> (fewer where RAILS_OF_HOST_i says so:
# uneven hosts), rail r at 10.218.<r+1>.<i>/24, and the frontend fe0 at
# 10.218.100.<i>/24.  The addresses exist only inside the namespaces;
# mpirun runs inside host 1 (RUN_PREFIX).  Everything is removed at exit.
# SWPORT[i,r] names the switch-side end of host i's rail r (take it down to
# cut the link: the host side loses carrier, as with a pulled cable).
declare -A SWPORT
rail_hosts() {
    local nh=$1 nr=$2 h r nrh ns
    shift 2
    [ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
    command -v ip >/dev/null || skip "the ip command (iproute2) is missing"
    [ -x "$RAILD" ] || skip "no raild at $RAILD"
    RAILNS="rl$$h"
    SW="rl$$sw"
    NETNS=""
    EXTRA_CLEANUP=remove_namespaces
    ip netns add "$SW" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
    NETNS="$SW"
    for r in $(seq 0 $((nr - 1))) fe; do
        ip -n "$SW" link add "br$r" type bridge && ip -n "$SW" link set "br$r" up ||
            skip "cannot create a bridge in a namespace"
    done
    for h in $(seq 1 "$nh"); do
        ns="$RAILNS$h"
        ip netns add "$ns" || skip "cannot create namespace $ns"
        NETNS="$NETNS $ns"
        ip -n "$ns" link set lo up
        nrh=$nr
        [ "$h" -ge 2 ] && [ -n "${1:-}" ] && { nrh=$1; shift; }
        for r in $(seq 0 $((nrh - 1))) fe; do
            rail_port "$ns" "$h" "$r" || skip "cannot create a veth pair"
        done
    done
    RUN_PREFIX="ip netns exec ${RAILNS}1"
    AGENT=(--launch-agent "ip netns exec {host}")
}

# rail_port NS H R: host H's interface for rail R (or fe) on the bridge.
rail_port() {
    local ns=$1 h=$2 r=$3 name net
    if [ "$r" = fe ]; then name=fe0; net=100; else name=rail$r; net=$((r + 1)); fi
    ip link add "a$$h${h}r$r" type veth peer name "b$$h${h}r$r" || return 1
    ip link set "a$$h${h}r$r" netns "$ns" && ip link set "b$$h${h}r$r" netns "$SW" &&
        ip -n "$ns" link set "a$$h${h}r$r" name "$name" &&
        ip -n "$ns" addr add "10.218.$net.$h/24" dev "$name" &&
        ip -n "$ns" link set "$name" up &&
        ip -n "$SW" link set "b$$h${h}r$r" master "br$r" &&
        ip -n "$SW" link set "b$$h${h}r$r" up || return 1
    SWPORT[$h,$r]="b$$h${h}r$r"
}

# Bytes host H sent on interface IF so far.
tx_bytes() {
    ip netns exec "$RAILNS$1" cat "/sys/class/net/$2/statistics/tx_bytes"
}

# rail_hosts_list N PER: "--host" value for N hosts with PER slots each.
rail_hosts_list() {
    local h out=""
    for h in $(seq 1 "$1"); do out="$out${out:+,}$RAILNS$h:$2"; done
    echo "$out"
}
