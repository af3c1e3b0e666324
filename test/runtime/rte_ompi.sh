#!/bin/bash
# The ranks under another PMIx server: Debian's Open MPI mpirun (ORTE on the
# same libpmix).  Skipped when mpirun.openmpi is not installed.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/common.sh"

OMPIRUN=$(command -v mpirun.openmpi) || skip "mpirun.openmpi (openmpi-bin) is not installed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

orun() {
    RAILTEST_TAG=$TAG timeout -k 3 60 "$OMPIRUN" --oversubscribe "$@" </dev/null >"$WORK/out" 2>"$WORK/err"
    RC=$?
}

for np in 1 2 4; do
    orun -n "$np" "$RTE_TEST" info
    expect_rc 0 "ompi info np=$np" || continue
    for r in $(seq 0 $((np - 1))); do
        expect_out "^INFO rank=$r size=$np local_rank=$r local_size=$np node_rank=$r node_id=0 num_nodes=1 appnum=0 .* singleton=0 " \
            "ompi info np=$np rank $r"
    done
    grep -q '^FAIL' "$WORK/out" && fail "ompi np=$np: $(grep '^FAIL' "$WORK/out" | head -2)"
    orun -n "$np" "$RTE_TEST" modex
    expect_rc 0 "ompi modex np=$np" && [ "$(count_out '^MODEX OK')" -eq "$np" ] || fail "ompi modex np=$np"
    orun -n "$np" "$RTE_TEST" modex direct
    expect_rc 0 "ompi direct modex np=$np" && [ "$(count_out '^MODEX OK')" -eq "$np" ] || fail "ompi direct modex np=$np"
    expect_clean "ompi np=$np"
done
orun -n 2 "$RTE_TEST" info : -n 1 "$RTE_TEST" info
expect_out "^INFO rank=2 size=3 .* appnum=1 " "ompi MPMD appnum"
# rte_abort under ORTE ends the job with the code.  (The others sleep: Open
# MPI 4.1's mpirun itself sometimes hangs or crashes when a rank aborts while
# the others are inside a PMIx fence.)
orun -n 3 "$RTE_TEST" abort 1 7 nofence
expect_rc 7 "ompi abort"
expect_clean "ompi abort"
finish
