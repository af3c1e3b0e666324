# Helpers for shell tests (sourced).  top_builddir/top_srcdir come from the
# test harness (test/Makefile.inc).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
MPIRUN="$top_builddir/runtime/mpirun"

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
pass() { echo "PASS"; exit 0; }

# mpirun with a time limit, so a hang fails instead of blocking the suite.
run_mpi() { timeout -k 5 "${RUN_TIMEOUT:-60}" "$MPIRUN" "$@"; }

# No rank processes or shared-memory segments of ours are left.
check_clean() {
    sleep 0.2
    left=$(ls /dev/shm 2>/dev/null | grep '^rail-')
    [ -z "$left" ] || fail "left in /dev/shm: $left"
}
