#!/bin/sh
# bench/tune_params.py re-measures a parameter marked measured on one
# machine: --list names each one's bench, --check runs the candidates at
# tiny sizes (one iteration) and prints the best value per size, and a
# parameter set by a principle is refused (timings are never checked).
. "${top_srcdir:-.}/test/env/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
tool="$top_srcdir/bench/tune_params.py"
out="$top_builddir/bench-results/tune-params-check"
rm -rf "$out" && mkdir -p "$out" || fail "cannot make $out"
export RAIL_MPICC="$top_builddir/tools/mpicc" RAIL_MPIRUN="$top_builddir/runtime/mpirun"
export RAIL_RAILINFO="$top_builddir/tools/railinfo"

python3 "$tool" --help >/dev/null || fail "--help failed"
python3 "$tool" --list >"$out/list" 2>&1 || fail "--list failed: $(cat "$out/list")"
grep -q '^btl_sm_eager_limit .*bench pingpong at np 2' "$out/list" ||
    fail "--list does not name btl_sm_eager_limit's bench: $(head -3 "$out/list")"
grep -q 'no bench named' "$out/list" && fail "a measured parameter names no bench: $(grep 'no bench' "$out/list")"

timeout -k 5 300 python3 "$tool" btl_sm_eager_limit --check --out "$out" >"$out/check" 2>&1
rc=$?
[ $rc -eq 77 ] && skip "tune_params.py --check: $(tail -1 "$out/check")"
[ $rc -eq 0 ] || fail "tune_params.py --check failed ($rc): $(tail -5 "$out/check")"
grep -q '^| size | best | us | .*\*16384' "$out/check" || fail "no table: $(head -5 "$out/check")"
[ "$(grep -cE '^\| (8|16|32|64) \| [0-9]+ \| ' "$out/check")" -eq 4 ] ||
    fail "expected a best value for sizes 8-64: $(cat "$out/check")"

python3 "$tool" pml_rndv_adapt_min --check >"$out/refused" 2>&1
[ $? -eq 2 ] && grep -q 'not measured' "$out/refused" ||
    fail "a parameter set by a principle was not refused: $(cat "$out/refused")"
pass
