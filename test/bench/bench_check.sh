#!/bin/sh
# The benchmarks build with our mpicc, run under our mpirun and validate
# their data at small sizes (timings are never checked).  collbound, the
# collectives' memory-bandwidth bound, runs every operation it models (and
# with -k, copies by the kernel, every copying one where this machine allows
# cross-memory attach), and the driver reports Rail MPI's times as multiples
# of both.
. "${top_srcdir:-.}/test/env/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
out="$top_builddir/bench-results/check"
RAIL_MPICC="$top_builddir/tools/mpicc" RAIL_MPIRUN="$top_builddir/runtime/mpirun" \
    timeout -k 5 600 python3 "$top_srcdir/bench/run_bench.py" --check --mpi rail --out "$out"
rc=$?
[ $rc -eq 77 ] && skip "the benchmark driver found nothing to run"
[ $rc -eq 0 ] || fail "bench/run_bench.py --check exited with $rc"

cb="$out/build/collbound"
${CC:-cc} -O2 -o "$cb" "$top_srcdir/bench/collbound.c" || fail "bench/collbound.c does not build"
for b in bcast reduce allreduce reduce_scatter allgather gather scatter alltoall; do
    for n in 1 3; do
        got=$(timeout -k 5 60 "$cb" -b $b -n $n -s 8:16K -t 1 -T 1 | grep -c "^RESULT bench=$b np=$n ")
        [ "$got" = 12 ] || fail "collbound -b $b -n $n: $got results for the 12 sizes 8 B-16 KiB"
    done
done
"$cb" -b nosuch -n 2 >/dev/null 2>&1 && fail "collbound accepted an unknown operation"
"$cb" -k -b allreduce -n 2 >/dev/null 2>&1 && fail "collbound accepted -k for a reduction"
# -k, the kernel's single copy: where this machine lets a process read another's memory
cma=no
timeout -k 5 60 "$cb" -k -b bcast -n 2 -s 4K:4K -t 1 -i 1 >/dev/null 2>&1 && cma=yes
for b in bcast allgather gather scatter alltoall; do
    for n in 1 3; do
        [ $cma = yes ] || break
        got=$(timeout -k 5 60 "$cb" -k -b $b -n $n -s 8:16K -t 1 -T 1 | grep -c "^RESULT bench=$b np=$n ")
        [ "$got" = 12 ] || fail "collbound -k -b $b -n $n: $got results for the 12 sizes 8 B-16 KiB"
    done
done

bound="$top_builddir/bench-results/check-bound"
RAIL_MPICC="$top_builddir/tools/mpicc" RAIL_MPIRUN="$top_builddir/runtime/mpirun" \
    timeout -k 5 300 python3 "$top_srcdir/bench/run_bench.py" --mpi rail --bench allreduce,alltoall \
    --np 2 --sizes 64K:128K --reps 1 --trials 1 --target-ms 1 --out "$bound" >"$bound.log" 2>&1 ||
    fail "a timed run with the bound failed (log: $bound.log)"
for b in allreduce alltoall; do
    grep -A 6 "^#### $b, np=2" "$bound/summary.md" | grep -Eq '^\| 128K \| [0-9.]+ \| [0-9.]+x \|$' ||
        fail "$bound/summary.md has no bound row for $b at 128K"
done
if [ $cma = yes ]; then
    sed -n '/^### Single-copy bound by the kernel/,$p' "$bound/summary.md" | grep -A 6 "^#### alltoall, np=2" |
        grep -Eq '^\| 128K \| [0-9.]+ \| [0-9.]+x \|$' ||
        fail "$bound/summary.md has no single-copy bound row for alltoall at 128K"
fi
pass
