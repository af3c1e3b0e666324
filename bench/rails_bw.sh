#!/bin/bash
# Two rails against one, each link rate-limited with tc so that the link,
# not the CPU, is the bottleneck.  Two namespace hosts (test/rails/common.sh:
# a bridge per rail, a frontend fe0), 2 ranks per host, each rail limited to
# RATE (default 200mbit) on both hosts; test/rails/rails_stream moves ROUNDS
# rounds of SIZE bytes between every pair, once with btl_rails=rail0 (one
# rail) and once with both.  Prints the time ratio only (one rail / two;
# the times include the launch, about a second, so the ratio understates);
# the lead publishes numbers.  Needs root and iproute2; run from the build
# tree (top_builddir).  Without striping, two ranks per host are what puts
# both rails to work (one pair of processes stays on its rail).
#
#   bench/rails_bw.sh [RATE [ROUNDS [SIZE]]]
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
here=$(cd "$(dirname "$0")" && pwd)
TEST_NAME=rails_bw
. "$here/../test/runtime/common.sh"
. "$here/../test/rails/common.sh"

RATE=${1:-200mbit}
ROUNDS=${2:-20}
SIZE=${3:-1048576}
PROG=$top_builddir/test/rails/rails_stream
[ -x "$PROG" ] || skip "no rails_stream at $PROG (make check builds it)"
command -v tc >/dev/null || skip "no tc"

rail_hosts 2 2
for h in 1 2; do
    for r in 0 1; do
        ip netns exec "$RAILNS$h" tc qdisc add dev "rail$r" root tbf rate "$RATE" burst 256kb \
            latency 50ms || skip "tc cannot shape rail$r"
    done
done
HOSTS=$(rail_hosts_list 2 2)

timed() { # label, extra args: runs the stream, prints milliseconds
    run 300 "${AGENT[@]}" --host "$HOSTS" --param rte_if_include=fe0 "$@" "$PROG" "$ROUNDS" "$SIZE"
    [ "$RC" -eq 0 ] || { show "$*"; fail "the stream failed"; finish; }
    echo "$ELAPSED_MS"
}
one=$(timed --param btl_rails=rail0)
two=$(timed)
note "rate $RATE per rail, $ROUNDS rounds of $SIZE bytes between every pair of 4 ranks"
awk -v a="$one" -v b="$two" 'BEGIN { printf "rails_bw: two rails vs one: %.2fx faster\n", a / b }'
finish
