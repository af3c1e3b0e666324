#!/bin/bash
# Rails between network-namespace hosts (test/rails/common.sh): 3 hosts,
# 2 rails each (each rail its own bridge) plus a frontend fe0, 2 ranks per
# host (the stream on all 3 hosts, the other checks on the first 2),
# mpirun inside host 1 with rte_if_include=fe0.
#   alignment   railinfo --rails puts local rank i on rail i; the stream
#               makes no cross-rail connection (MPI_T btl_rail_cross_rail 0
#               on every rank) and both rails carry the data
#               (/sys/class/net/*/statistics/tx_bytes)
#   frontend    fe0 carries only the launcher's bytes, not the data
#   uneven      a host with one rail: a warning naming the host and the
#               interfaces, cross-rail connections counted, data intact
#   bad input   btl_rails naming no interface, a rail link down at start-up,
#               rte_if_include matching nothing: clear messages
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../runtime/common.sh"
. "$(dirname "$0")/common.sh"

PROG=$top_builddir/test/rails/rails_stream
INFO=$top_builddir/tools/railinfo
[ -x "$PROG" ] || skip "no rails_stream at $PROG"
[ -x "$INFO" ] || skip "no railinfo at $INFO"

rail_hosts 3 2
H1=${RAILNS}1 H2=${RAILNS}2
HOSTS=$(rail_hosts_list 2 2)
HOSTS3=$(rail_hosts_list 3 2)
FE=(--param rte_if_include=fe0)
MB=$((1024 * 1024))

run 30 "${AGENT[@]}" --host "$HOSTS" "${FE[@]}" "$INFO" --rails
if expect_rc 0 "railinfo --rails"; then
    expect_out "^rank [0-9] on $H1 \(local rank 0\): 2 rail\(s\); this process on rail 0" \
        "railinfo: local rank 0 on rail 0"
    expect_out "^rank [0-9] on $H2 \(local rank 1\): 2 rail\(s\); this process on rail 1" \
        "railinfo: local rank 1 on rail 1"
    expect_out "^  rail 1: rail1 10\.218\.2\.2/24" "railinfo: rail1 is rail 1"
    [ "$(count_out 'fe0')" -eq 4 ] || fail "railinfo: fe0 must appear only as the frontend"
fi
expect_clean "railinfo --rails"

# Alignment and frontend separation: 10 rounds of 1 MiB between every pair
# of 6 ranks on 3 hosts.
declare -A before
for h in 1 2 3; do for i in rail0 rail1 fe0; do before[$h,$i]=$(tx_bytes $h $i); done; done
run 90 "${AGENT[@]}" --host "$HOSTS3" "${FE[@]}" "$PROG" 10 $MB
if expect_rc 0 "stream"; then
    [ "$(count_out '^RAILS rank [0-9] rounds 10 cross 0$')" -eq 6 ] ||
        { fail "stream: every rank must report 0 cross-rail connections"; show "stream"; }
fi
expect_clean "stream"
for h in 1 2 3; do
    for i in rail0 rail1 fe0; do
        d=$(($(tx_bytes $h $i) - before[$h,$i]))
        note "host $h $i sent $d bytes"
        case $i in
        rail*) [ "$d" -gt $((10 * MB)) ] || fail "alignment: host $h $i carried only $d bytes" ;;
        fe0) [ "$d" -lt $((2 * MB)) ] || fail "frontend: host $h fe0 carried $d bytes of data" ;;
        esac
    done
done

# Bad input: a rail name that matches nothing.
run 30 "${AGENT[@]}" --host "$HOSTS" "${FE[@]}" --param btl_rails=rail0,nosuch "$PROG" 2 4096
expect_rc 0 "btl_rails with an unknown name"
expect_err "btl_rails entries \"nosuch\" match no backend interface" "unknown rail named"
expect_clean "btl_rails with an unknown name"

# Bad input: a frontend that matches nothing ends the launch with a message.
run 30 "${AGENT[@]}" --host "$HOSTS" --param rte_if_include=nosuch0 "$PROG" 2 4096
[ "$RC" -ne 0 ] || fail "rte_if_include=nosuch0: the job must not start"
expect_err "rte_if_include=nosuch0: matches no interface" "rte_if_include matching nothing"
expect_clean "rte_if_include matching nothing"

# A rail link down at start-up (host 2's rail1 loses carrier): said, naming
# the interface; host 2 then has one rail, and the job still runs.
ip -n "$SW" link set "${SWPORT[2,1]}" down
run 60 "${AGENT[@]}" --host "$HOSTS" "${FE[@]}" "$PROG" 4 $((256 * 1024))
if expect_rc 0 "rail1 down at start-up"; then
    expect_err "interface rail1 is up but its link is down" "link down named"
    expect_err "uneven rails: host $H2 has 1 rail\(s\) \(rail0\), this host has 2 \(rail0,rail1\)" \
        "uneven rails named"
    expect_out "^RAILS rank 1 rounds 4 cross [1-9]" "cross-rail connections counted"
fi
expect_clean "rail1 down at start-up"
ip -n "$SW" link set "${SWPORT[2,1]}" up
finish
