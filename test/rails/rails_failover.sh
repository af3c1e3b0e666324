#!/bin/bash
# Failover between rails (btl/tcp/tcp_failover.c) with namespace hosts
# (test/rails/common.sh): 2 hosts, 2 rails each plus a frontend, one rank
# per host, both on rail 0; short timeouts (btl_tcp_user_timeout_ms).
#   failover    host 2's rail0 is taken down (ip link set dev rail0 down) in
#               the middle of a checksummed stream of messages and
#               allreduces, and brought back: every message arrives once
#               and intact (rails_stream checks each byte and that nothing
#               is left over), the job exits 0, MPI_T counts the failover
#               and the recovery onto rail0
#   no path     both of host 2's rails go down: the job ends within seconds
#               with a message naming both hosts and every path, leaving no
#               process, temp file or /dev/shm segment
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../runtime/common.sh"
. "$(dirname "$0")/common.sh"

PROG=$top_builddir/test/rails/rails_stream
[ -x "$PROG" ] || skip "no rails_stream at $PROG"

rail_hosts 2 2
H1=${RAILNS}1 H2=${RAILNS}2
HOSTS=$(rail_hosts_list 2 1)
P=(--param rte_if_include=fe0 --param btl_tcp_user_timeout_ms=1500
   --param btl_tcp_reconnect_ms=200 --param btl_verbose=1)

# run_rc_bg LIMIT ARGS...: run (common.sh) in the background; run_wait
# waits for it and sets RC, OUT and ERR.
run_rc() { run "$@"; echo "$RC" >"$WORK/rc"; }
run_rc_bg() { run_rc "$@" & BG=$!; }
run_wait() {
    wait "$BG"
    RC=$(cat "$WORK/rc")
    OUT=$(cat "$WORK/out")
    ERR=$(cat "$WORK/err")
}

# Failover and recovery: 120 rounds of 256 KiB with 80 ms pauses (~10 s).
run_rc_bg 60 "${AGENT[@]}" --host "$HOSTS" "${P[@]}" "$PROG" 120 $((256 * 1024)) 80
sleep 2.5
ip -n "$H2" link set dev rail0 down
note "host 2 rail0 down"
sleep 3
ip -n "$H2" link set dev rail0 up
note "host 2 rail0 up"
run_wait
if expect_rc 0 "failover"; then
    [ "$(count_out '^RAILS rank [01] rounds 120 ')" -eq 2 ] ||
        { fail "failover: both ranks must finish every round"; show "failover"; }
    expect_out "^FAILOVER rank [01] failovers [1-9]" "failover counted in MPI_T"
    expect_out "^FAILOVER rank [01] failovers [0-9]+ recoveries [1-9]" "recovery counted in MPI_T"
    expect_err "btl tcp: failover: the connection to rank [01] over 10\.218\.1\.[12]" \
        "failover logged at verbose level"
fi
expect_clean "failover"

# No path left: both rails of host 2 go down mid-stream.
run_rc_bg 60 "${AGENT[@]}" --host "$HOSTS" "${P[@]}" "$PROG" 400 $((64 * 1024)) 50
sleep 2.5
ip -n "$H2" link set dev rail0 down
ip -n "$H2" link set dev rail1 down
t0=$(date +%s)
run_wait
t1=$(date +%s)
[ "$RC" -ne 0 ] || fail "no path: the job must fail"
[ $((t1 - t0)) -le 20 ] || fail "no path: the job took $((t1 - t0)) s to end"
expect_err "no path left from ($H1|$H2) to rank [01] on ($H1|$H2): .*rail0 of .*rail1 of " \
    "no path: message names hosts and paths"
expect_clean "no path"
ip -n "$H2" link set dev rail0 up
ip -n "$H2" link set dev rail1 up
finish
