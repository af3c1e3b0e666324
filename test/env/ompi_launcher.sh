#!/bin/sh
# Ranks run unchanged under another PMIx server: Debian's Open MPI mpirun.
. "${top_srcdir:-.}/test/env/lib.sh"
command -v mpirun.openmpi >/dev/null 2>&1 || skip "Open MPI's mpirun (openmpi-bin) is not installed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent=false
for np in 1 3; do
    out=$(timeout -k 5 60 mpirun.openmpi --oversubscribe -n $np "$top_builddir/examples/hello" 2>&1)
    rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "np=$np: exit status $rc"
    n=$(echo "$out" | grep -c "^Hello from rank [0-9]* of $np on ")
    [ "$n" -eq $np ] || fail "np=$np: $n greetings"
done
check_clean
pass
