# Helpers for shell tests (sourced).  top_builddir/top_srcdir come from the
# test harness (test/Makefile.inc).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
MPIRUN="$top_builddir/runtime/mpirun"

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
pass() { echo "PASS"; exit 0; }

# mpirun with a time limit, so a hang fails instead of blocking the suite;
# each job gets a job id of its own (RAILRT_JOBID) so that check_clean looks
# only at this test's shared-memory segments.
run_mpi() {
    RAILRT_JOBID=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
    export RAILRT_JOBID
    timeout -k 5 "${RUN_TIMEOUT:-60}" "$MPIRUN" "$@"
}

# No shared-memory segments of the last job are left.
check_clean() {
    sleep 0.2
    [ -n "${RAILRT_JOBID:-}" ] || return 0
    left=$(ls /dev/shm 2>/dev/null | grep "^rail-$RAILRT_JOBID-")
    [ -z "$left" ] || fail "left in /dev/shm: $left"
}
