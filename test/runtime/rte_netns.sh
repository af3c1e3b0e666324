#!/bin/bash
# Several "hosts" on one machine: three network namespaces joined by veth
# pairs (addresses that exist only inside them).  mpirun runs INSIDE the first
# one with --host A:n,B:n,... --launch-agent 'ip netns exec {host}', so every
# host gets a raild that connects back over TCP and authenticates; nothing
# here ever connects from the root namespace.  Checks: ranks land on the
# right hosts (named as given), modex data crosses hosts (collecting fence
# and direct modex), failures on a remote host end the job within a second,
# stdin reaches a rank 0 behind raild, signals, --timeout, MPMD; then the
# namespaces are removed.  Skipped when not root or without `ip netns`.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/common.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "the ip command (iproute2) is missing"
[ -x "$RAILD" ] || skip "no raild at $RAILD"

A=rt$$a B=rt$$b C=rt$$c
NETNS=""
remove_namespaces() {
    for ns in $NETNS; do ip netns del "$ns" 2>/dev/null; done
}
EXTRA_CLEANUP=remove_namespaces
for ns in $A $B $C; do
    ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
    NETNS="$NETNS $ns"
    ip -n "$ns" link set lo up || skip "cannot configure namespace $ns"
done
# A is the hub: A-B on 10.213.1.0/24, A-C on 10.213.2.0/24.
link() { # ns1 if1 addr1 ns2 if2 addr2
    ip link add "$2" type veth peer name "$5" &&
        ip link set "$2" netns "$1" && ip link set "$5" netns "$4" &&
        ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$4" addr add "$6/24" dev "$5" &&
        ip -n "$1" link set "$2" up && ip -n "$4" link set "$5" up
}
link $A "v$$ab" 10.213.1.1 $B "v$$ba" 10.213.1.2 || skip "cannot create veth pairs"
link $A "v$$ac" 10.213.2.1 $C "v$$ca" 10.213.2.3 || skip "cannot create veth pairs"

RUN_PREFIX="ip netns exec $A"
AGENT=(--launch-agent "ip netns exec {host}")

# Two hosts, two ranks each.
for mode in "" direct; do
    run 60 "${AGENT[@]}" --host $A:2,$B:2 "$RTE_TEST" modex $mode
    expect_rc 0 "2 hosts modex $mode" || continue
    for r in 0 1; do expect_out "^MODEX OK rank $r peers 4 remote 2 host $A$" "modex $mode rank $r on $A"; done
    for r in 2 3; do expect_out "^MODEX OK rank $r peers 4 remote 2 host $B$" "modex $mode rank $r on $B"; done
    expect_clean "2 hosts modex $mode"
done

# Three hosts of different sizes; node ids, local ranks, names.
run 60 "${AGENT[@]}" --host $A:1,$B:2,$C:1 "$RTE_TEST" info
expect_rc 0 "3 hosts info"
expect_out "^INFO rank=0 size=4 local_rank=0 local_size=1 node_rank=0 node_id=0 num_nodes=3 .* host=$A .* peers=0$" "3 hosts rank 0"
expect_out "^INFO rank=1 size=4 local_rank=0 local_size=2 node_rank=0 node_id=1 num_nodes=3 .* host=$B .* peers=1,2$" "3 hosts rank 1"
expect_out "^INFO rank=2 size=4 local_rank=1 local_size=2 node_rank=1 node_id=1 num_nodes=3 .* host=$B .* peers=1,2$" "3 hosts rank 2"
expect_out "^INFO rank=3 size=4 local_rank=0 local_size=1 node_rank=0 node_id=2 num_nodes=3 .* host=$C .* peers=3$" "3 hosts rank 3"
grep -q '^FAIL' "$WORK/out" && fail "3 hosts info: $(grep '^FAIL' "$WORK/out" | head -2)"
# The three namespaces share this machine's kernel: every rank counts all 4.
[ "$(count_out '^INFO .* kernel_size=4 peers=')" -eq 4 ] ||
    fail "3 hosts info: every rank should count the 4 ranks on its kernel"
expect_clean "3 hosts info"

# Round-robin mapping and 8 ranks over three hosts.
run 60 "${AGENT[@]}" --host $A:3,$B:3,$C:2 --map-by node -n 8 "$RTE_TEST" modex
expect_rc 0 "8 ranks map-by node" && [ "$(count_out '^MODEX OK')" -eq 8 ] || fail "8 ranks map-by node"
for r in 0 3 6; do expect_out "^MODEX OK rank $r .* host $A$" "map-by node rank $r on $A"; done
for r in 1 4 7; do expect_out "^MODEX OK rank $r .* host $B$" "map-by node rank $r on $B"; done
for r in 2 5; do expect_out "^MODEX OK rank $r .* host $C$" "map-by node rank $r on $C"; done
expect_clean "map-by node"

# A segfault on a remote host ends the job within a second.
run 60 "${AGENT[@]}" --host $A:2,$B:2 "$RTE_TEST" segv 3
end=$(cut -d' ' -f1 /proc/uptime)
expect_rc 139 "remote segv"
pid=$(grep '^SEGV ' "$WORK/out" | awk '{print $5}')
died=$(grep '^SEGV ' "$WORK/out" | awk '{print $7}')
expect_err "^mpirun: rank 3 \(host $B, pid $pid\) exited on signal 11 \(Segmentation fault\)" "remote segv report"
if [ -n "$died" ] && awk -v a="$died" -v b="$end" 'BEGIN { exit !(b - a > 1.0) }'; then
    fail "remote segv: the job ended $(awk -v a="$died" -v b="$end" 'BEGIN { print b - a }') s after the death"
fi
expect_clean "remote segv"

run 60 "${AGENT[@]}" --host $A:1,$B:1,$C:1 "$RTE_TEST" abort 2 7
expect_rc 7 "remote abort" && expect_err "rank 2 \(host $C, pid [0-9]+\) called MPI_Abort with code 7" "remote abort report"
expect_clean "remote abort"
run 60 "${AGENT[@]}" --host $A:1,$B:1 "$RTE_TEST" exit 1 5
expect_rc 5 "remote exit 5" && expect_err "rank 1 \(host $B, pid [0-9]+\) exited with status 5 before MPI_Finalize" "remote exit report"
expect_clean "remote exit"

# stdin to rank 0 when it runs under raild (forwarded by mpirun, with flow control).
seq 1 300000 >"$WORK/big"
STDIN="$WORK/big"
run 60 "${AGENT[@]}" --host $A:2,$B:1 "$RTE_TEST" stdin
STDIN=
expect_rc 0 "remote stdin" && expect_out "^STDIN rank 0 bytes $(wc -c <"$WORK/big") lines 300000$" "stdin through raild"
[ "$(count_out '^STDIN rank [12] bytes 0 lines 0$')" -eq 2 ] || fail "remote stdin: other ranks must read /dev/null"
expect_clean "remote stdin"

# --timeout, output options and environment across hosts, MPMD.
run 60 "${AGENT[@]}" --host $A:1,$B:1 --timeout 1 "$RTE_TEST" sleep 60
expect_rc 124 "remote timeout" && expect_err "2 ranks still running: 0 \(host $A, pid [0-9]+\), 1 \(host $B, pid [0-9]+\)" "remote timeout report"
expect_clean "remote timeout"
run 60 "${AGENT[@]}" --host $A:1,$B:1 --tag-output -x RT_X=1 --param foo=bar "$RTE_TEST" env RT_X RAIL_FOO
expect_rc 0 "remote env"
expect_out '^\[1,1\]<stdout>: ENV rank 1 RT_X=1$' "-x on a remote host"
expect_out '^\[1,1\]<stdout>: ENV rank 1 RAIL_FOO=bar$' "--param on a remote host"
run 60 "${AGENT[@]}" --host $A:1,$B:2 -n 1 "$RTE_TEST" info : -n 2 "$RTE_TEST" info
expect_rc 0 "remote MPMD" && expect_out "^INFO rank=2 size=3 .* appnum=1 .* host=$B " "MPMD across hosts"
expect_clean "remote options"

# SIGTERM to mpirun reaches the remote ranks too.
# shellcheck disable=SC2086
RAILTEST_TAG=$TAG timeout 30 ip netns exec $A "$MPIRUN" "${AGENT[@]}" --host $A:1,$B:2 "$RTE_TEST" sleep 60 \
    >"$WORK/out" 2>"$WORK/err" </dev/null &
bg=$!
for _ in $(seq 100); do [ "$(count_out '^SLEEP')" -eq 3 ] && break; sleep 0.1; done
mp=$(grep -lsxzF "RAILTEST_TAG=$TAG" /proc/[0-9]*/environ | sed -n 's|/proc/\([0-9]*\)/environ|\1|p' |
    while read -r p; do [ "$(cat /proc/$p/comm 2>/dev/null)" = mpirun ] && echo "$p"; done | head -1)
[ -n "$mp" ] && kill -TERM "$mp"
wait "$bg"
RC=$?
expect_rc 143 "remote SIGTERM"
expect_clean "remote SIGTERM"

# A launch agent that fails: a clear message, no hang.
run 60 --launch-agent "/bin/false {host}" --host $A:1,$B:1 "$RTE_TEST" info
[ "$RC" -ne 0 ] && expect_err "could not start raild on" "failing launch agent" || fail "failing agent: status $RC"
[ "$ELAPSED_MS" -lt 10000 ] || fail "failing agent took $ELAPSED_MS ms"
expect_clean "failing agent"
finish
