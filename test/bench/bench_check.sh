#!/bin/sh
# The benchmarks build with our mpicc, run under our mpirun and validate
# their data at small sizes (timings are never checked).
. "${top_srcdir:-.}/test/env/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
out="$top_builddir/bench-results/check"
RAIL_MPICC="$top_builddir/tools/mpicc" RAIL_MPIRUN="$top_builddir/runtime/mpirun" \
    timeout -k 5 600 python3 "$top_srcdir/bench/run_bench.py" --check --mpi rail --out "$out"
rc=$?
[ $rc -eq 0 ] && pass
[ $rc -eq 77 ] && skip "the benchmark driver found nothing to run"
fail "bench/run_bench.py --check exited with $rc"
