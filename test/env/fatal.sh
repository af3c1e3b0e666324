#!/bin/sh
# A fatal MPI error: the job ends at once, with the call named and a nonzero
# status; nothing is left behind.
. "${top_srcdir:-.}/test/env/lib.sh"
for np in 1 2 4; do
    start=$(date +%s)
    out=$(run_mpi -n $np "$top_builddir/test/env/fatal" 2>&1)
    rc=$?
    took=$(( $(date +%s) - start ))
    echo "$out"
    [ $rc -ne 0 ] || fail "np=$np: job exited 0 after a fatal error"
    echo "$out" | grep -q "MPI_Comm_get_attr" || fail "np=$np: message does not name the call"
    echo "$out" | grep -q "survived" && fail "np=$np: the erring rank went on"
    [ $took -lt 10 ] || fail "np=$np: took ${took}s to end the job"
    check_clean
done
pass
