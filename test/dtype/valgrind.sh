#!/bin/sh
# One small datatype test (dtype_pack: constructors, pack/unpack, external32,
# reductions on the way) under valgrind as a singleton, memcheck with full
# leak checking.  Fails on memory errors and on bytes definitely lost in
# Rail MPI's code; leaks whose stack lies entirely in the system's PMIx,
# hwloc or libevent libraries are reported but not counted.  Skips (77)
# when valgrind is not installed.
. "${top_srcdir:-.}/test/env/lib.sh"
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed"
prog="$top_builddir/test/dtype/dtype_pack"
[ -x "$prog" ] || fail "$prog is not built"
log=$(mktemp "${TMPDIR:-/tmp}/rail-valgrind.XXXXXX")
trap 'rm -f "$log"' EXIT
env -u PMIX_RANK -u PMIX_NAMESPACE -u PMIX_SERVER_URI41 -u PMIX_SERVER_URI4 \
    timeout 300 valgrind --leak-check=full --errors-for-leak-kinds=definite \
    --error-exitcode=1 --suppressions="$top_srcdir/test/dtype/valgrind.supp" \
    --log-file="$log" "$prog"
rc=$?
grep -E "definitely lost|indirectly lost|ERROR SUMMARY" "$log"
if [ $rc -ne 0 ]; then
    cat "$log"
    fail "valgrind found errors or definite leaks (exit $rc)"
fi
check_clean
pass
