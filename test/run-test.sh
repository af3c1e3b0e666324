#!/bin/sh
# Test driver for `make check` (automake LOG_COMPILER).
#
# A test listed in $RAILTEST_MPI_TESTS is an MPI program: it runs under the
# build tree's mpirun at each rank count of its entry in test/tests.conf
# (default 1 2 3 4 8), once per environment variant given there.  Anything
# else runs as is.  Exit status follows automake: 0 pass, 77 skip, else fail.
# After every MPI run, nothing of the job may be left in /dev/shm.

prog="$1"
shift
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
name=$(echo "$prog" | sed 's|^\./||; s|^'"$top_builddir"'/||')

is_mpi=no
for t in $RAILTEST_MPI_TESTS; do
    [ "$t" = "$name" ] && is_mpi=yes
done
if [ "$is_mpi" = no ]; then
    exec "$prog" "$@"
fi

# Entry of this test in test/tests.conf:
#   <name> | np=1 2 4 | env=A=1 B=2;np=2,4 C=3 | timeout=60
# (the variant C=3 at np 2 and 4 only).
conf=$(grep -E "^$name[[:space:]]*(\||$)" "$top_srcdir/test/tests.conf" 2>/dev/null | head -n 1)
field() { echo "$conf" | tr '|' '\n' | sed -n "s/^[[:space:]]*$1=\(.*[^[:space:]]\)[[:space:]]*\$/\1/p"; }
nps=$(field np)
envs=$(field env)
limit=$(field timeout)
nps=${nps:-${RAIL_TEST_NP:-1 2 3 4 8}}
limit=${limit:-120}
[ -n "$envs" ] || envs="-"

mpirun="$top_builddir/runtime/mpirun"
# One MPI job at a time under `make -j check` ($RAILTEST_MPI_LOCK, set by
# the Makefile; empty or 0: none).  Two oversubscribed jobs side by side
# each wait for the other's processes to give the cores back, and a
# sleeping waiter woken behind a busy process waits for its time slice:
# sm_ops at np 8 took 61 s beside two busy loops against 5 s alone.  The
# lock is taken before the clock and the time limit start.
lock=${RAILTEST_MPI_LOCK:-}
[ "$lock" = 0 ] && lock=
if [ -n "$lock" ] && { ! command -v flock >/dev/null 2>&1 || ! (: >>"$lock") 2>/dev/null; }; then
    lock=
fi
ran=0
skipped=0
IFS_SAVE=$IFS
IFS=';'
set -f
for variant in $envs; do
    IFS=$IFS_SAVE
    # A variant may name its own rank counts first: "np=1,2,3,4 A=1 B=2".
    vnps=$nps
    case "$variant" in
    np=*)
        vnps=$(echo "${variant%% *}" | sed 's/^np=//; s/,/ /g')
        case "$variant" in
        *" "*) variant=${variant#* } ;;
        *) variant="-" ;;
        esac
        ;;
    esac
    for np in $vnps; do
        envdesc=""
        [ "$variant" = "-" ] || envdesc=" [$variant]"
        echo "=== $name np=$np$envdesc"
        # A job id of our own, so that only this job's segments are checked
        # (other tests run at the same time).
        RAILRT_JOBID=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
        export RAILRT_JOBID
        [ -z "$lock" ] || { exec 9>>"$lock" && flock 9; } || lock=
        t0=$(date +%s%N)
        if [ "$variant" = "-" ]; then
            timeout -k 5 "$limit" "$mpirun" -n "$np" "$prog" "$@" 9>&-
        else
            # shellcheck disable=SC2086
            env $variant timeout -k 5 "$limit" "$mpirun" -n "$np" "$prog" "$@" 9>&-
        fi
        rc=$?
        t1=$(date +%s%N)
        [ -z "$lock" ] || exec 9>&-
        # wall time of this run, for finding slow variants in CI's logs
        echo "--- np=$np: $(( (t1 - t0) / 1000000000 )).$(( (t1 - t0) / 100000000 % 10 )) s"
        left=$(ls /dev/shm 2>/dev/null | grep "^rail-$RAILRT_JOBID-")
        if [ "$rc" -eq 77 ]; then
            skipped=$((skipped + 1))
            continue
        fi
        if [ "$rc" -ne 0 ]; then
            [ "$rc" -eq 124 ] && echo "FAIL: $name np=$np$envdesc timed out after ${limit}s"
            echo "FAIL: $name np=$np$envdesc exited with status $rc"
            exit 1
        fi
        if [ -n "$left" ]; then
            echo "FAIL: $name np=$np$envdesc left shared-memory segments in /dev/shm:"
            echo "$left"
            exit 1
        fi
        ran=$((ran + 1))
    done
    IFS=';'
done
IFS=$IFS_SAVE
if [ "$ran" -eq 0 ] && [ "$skipped" -gt 0 ]; then
    exit 77
fi
exit 0
