#!/bin/sh
# btl tcp between two network namespaces joined by a veth pair.
#
# Makes two namespaces with private addresses (10.201.N.1/24 and
# 10.201.N.2/24, N from the pid, which exist only inside them), runs one
# rank in each with `ip netns exec`, checks messages of 0 B to 3 MiB both
# ways, then measures throughput at 1 MiB fragments over the btl and over a
# plain TCP socket, and latency.  The numbers (and the CPU time per GB of
# each end) are printed, never judged.
# Nothing is run from the root namespace against those addresses.  The
# namespaces are deleted however the test ends.
#
# Exit status: 0 pass, 1 fail, 77 skip (not root, no `ip netns`).
# Environment: BENCH (path of bench_btl_tcp), NETNS_TOTAL (bytes per run,
# default 512m), NETNS_REPS (default 3).

skip() { echo "SKIP: $*"; exit 77; }

if [ "$(id -u 2>/dev/null)" != 0 ]; then skip "not root (network namespaces need CAP_SYS_ADMIN)"; fi
command -v ip >/dev/null 2>&1 || skip "the ip command (iproute2) is not installed"
ip netns list >/dev/null 2>&1 || skip "ip netns is not available"

here=$(cd "$(dirname "$0")" && pwd)
bench=${BENCH:-}
for b in "$bench" "${top_builddir:-.}/test/btl/tcp/bench_btl_tcp" "$here/bench_btl_tcp"; do
    if [ -n "$b" ] && [ -x "$b" ]; then bench=$b; break; fi
done
[ -x "$bench" ] || { echo "FAIL: bench_btl_tcp not found (set BENCH)"; exit 1; }
total=${NETNS_TOTAL:-512m}
reps=${NETNS_REPS:-3}

id=$$
net=$((id % 200 + 20))
ns1=rail-tcp-$id-a
ns2=rail-tcp-$id-b
if1=rtc${id}a
if2=rtc${id}b
dir=$(mktemp -d /tmp/rail-tcp-netns-XXXXXX) || exit 1

p0=
p1=
cleanup() {
    for p in $p0 $p1; do kill "$p" 2>/dev/null; done
    ip netns del "$ns1" 2>/dev/null
    ip netns del "$ns2" 2>/dev/null
    ip link del "$if1" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

ip netns add "$ns1" 2>"$dir/err" || skip "cannot create a network namespace: $(cat "$dir/err")"
ip netns add "$ns2" || exit 1
ip link add "$if1" type veth peer name "$if2" || skip "cannot create a veth pair"
ip link set "$if1" netns "$ns1" && ip link set "$if2" netns "$ns2" || exit 1
ip -n "$ns1" addr add "10.201.$net.1/24" dev "$if1" || exit 1
ip -n "$ns2" addr add "10.201.$net.2/24" dev "$if2" || exit 1
ip -n "$ns1" link set lo up && ip -n "$ns1" link set "$if1" up || exit 1
ip -n "$ns2" link set lo up && ip -n "$ns2" link set "$if2" up || exit 1
echo "namespaces $ns1 (10.201.$net.1) and $ns2 (10.201.$net.2), veth $if1 - $if2"

# run_pair NAME ARGS...: rank 0 in ns1, rank 1 in ns2, one job directory.
run_pair() {
    name=$1
    shift
    job="$dir/$name"
    mkdir -p "$job"
    # Both in the background: `wait` lets a signal's trap run at once.
    ip netns exec "$ns2" timeout 300 "$bench" --rank 1 --dir "$job" "$@" \
        >"$job/out.1" 2>"$job/err.1" &
    p1=$!
    ip netns exec "$ns1" timeout 300 "$bench" --rank 0 --dir "$job" "$@" \
        >"$job/out.0" 2>"$job/err.0" &
    p0=$!
    wait $p0
    r0=$?
    wait $p1
    r1=$?
    p0=
    p1=
    cat "$job/out.0" "$job/out.1"
    if [ $r0 -ne 0 ] || [ $r1 -ne 0 ]; then
        echo "FAIL: $name: rank 0 exited with $r0, rank 1 with $r1"
        cat "$job/err.0" "$job/err.1"
        return 1
    fi
    if [ -s "$job/err.0" ] || [ -s "$job/err.1" ]; then
        echo "FAIL: $name: unexpected messages:"
        cat "$job/err.0" "$job/err.1"
        return 1
    fi
    return 0
}

status=0
run_pair check check || status=1
# Throughput at 1 MiB fragments: plain socket, btl polling, btl sleeping on
# its wait_fd when idle (as the progress engine does), twice, interleaved;
# then the btl at its default fragment size (256 KiB).
for round in 1 2; do
    run_pair plain$round --addr "10.201.$net.2" --total "$total" --reps "$reps" plain || status=1
    run_pair spin$round --total "$total" --reps "$reps" bw || status=1
    run_pair sleep$round --total "$total" --reps "$reps" --sleep bw || status=1
done
run_pair frag256k --total "$total" --reps "$reps" --frag 256k --sleep bw || status=1
run_pair lat --reps "$reps" --iters 5000 --sleep lat || status=1
run_pair latspin --reps "$reps" --iters 5000 lat || status=1
run_pair plainlat --addr "10.201.$net.2" --reps "$reps" --iters 5000 plainlat || status=1
[ $status -eq 0 ] && echo "PASS: btl tcp across network namespaces"
exit $status
