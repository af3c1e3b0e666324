#!/bin/sh
# bench/coll_tune.py measures tuned's algorithms and writes a rules file;
# the tuned component then runs a collective under that file without
# complaint, while a file naming an unknown algorithm is ignored with a
# warning that says why (timings are never checked).
. "${top_srcdir:-.}/test/env/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
out="$top_builddir/bench-results/tune-check"
rm -rf "$out" && mkdir -p "$out" || fail "cannot make $out"
RAIL_MPICC="$top_builddir/tools/mpicc" RAIL_MPIRUN="$top_builddir/runtime/mpirun" \
    timeout -k 5 300 python3 "$top_srcdir/bench/coll_tune.py" --quick --ops allreduce,bcast \
    --reps 1 --trials 1 --target-ms 1 --out "$out" >"$out/tune.log" 2>&1 ||
    fail "bench/coll_tune.py failed (log: $out/tune.log)"
grep -q '"algorithm"' "$out/rules.json" 2>/dev/null || fail "no rules written to $out/rules.json"
prog="$out/build/rail/allreduce"
[ -x "$prog" ] || fail "coll_tune.py left no $prog"

# $1: rules file; output of a 3-rank allreduce under it in $out/run.log
run_with() {
    RAIL_COLL=tuned,basic,nbc RAIL_COLL_TUNED_RULES_FILE="$1" \
        timeout -k 5 120 "$top_builddir/runtime/mpirun" -n 3 "$prog" -s 8:64K -t 1 -T 1 \
        >"$out/run.log" 2>&1 || fail "allreduce under $1 failed (log: $out/run.log)"
}
run_with "$out/rules.json"
grep -q "rules file" "$out/run.log" && fail "written rules refused: $(grep 'rules file' "$out/run.log" | head -1)"
printf '{"allreduce": [{"comm_size": [1, null], "msg_size": [0, null], "algorithm": "no_such"}]}\n' \
    >"$out/bad.json"
run_with "$out/bad.json"
grep -q 'ignoring the rules file.*no algorithm "no_such"' "$out/run.log" ||
    fail "a bad rules file was not reported: $(head -3 "$out/run.log")"
pass
