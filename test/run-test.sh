#!/bin/sh
# Test driver for `make check` (automake LOG_COMPILER).
#
# A test listed in $RAILTEST_MPI_TESTS is an MPI program: it runs under the
# build tree's mpirun at each rank count of its entry in test/tests.conf
# (default 1 2 3 4 8), once per environment variant given there.  Anything
# else runs as is.  Exit status follows automake: 0 pass, 77 skip, else fail.
# After every MPI run, nothing of the job may be left in /dev/shm.
#
# A run that cannot happen here exits 77 and says why on a line
# "SKIP: reason" (test/check.h); a run that passes may also say
# "SKIP: part: reason" of a part it could not check.  Such runs are never
# counted as passes: the log ends with one line per variant and reason,
# "SKIP: <test> [<variant>] np <counts>: <reason>", which test/skipped.sh
# lists at the end of `make check`; the program's own lines read "skip:".
# The test is skipped (77) when no run passed, and passes when every run
# that happened passed.

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
# Each run's output (shown after the run) and the skipped runs, one line
# each: variant <tab> np <tab> reason.
out=$(mktemp "${TMPDIR:-/tmp}/run-test.XXXXXX") || exit 99
skips=$(mktemp "${TMPDIR:-/tmp}/run-test.XXXXXX") || exit 99
trap 'rm -f "$out" "$skips"' EXIT
# skip_note VARIANT NP REASON...
skip_note() {
    v=$1 n=$2
    shift 2
    printf '%s\t%s\t%s\n' "$v" "$n" "$*" >>"$skips"
}
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
        # RAILTEST_NEEDS=MACRO in a variant: run only where config.h defines
        # MACRO (a component configure may leave out: RAIL_HAVE_VERBS).
        need=$(echo " $variant" | sed -n 's/.* RAILTEST_NEEDS=\([A-Za-z0-9_]*\).*/\1/p')
        if [ -n "$need" ] && ! grep -q "^#define $need 1" "$top_builddir/config.h" 2>/dev/null; then
            skipped=$((skipped + 1))
            skip_note "$variant" "$np" "$need is not defined by configure (component not built)"
            continue
        fi
        # A job id of our own, so that only this job's segments are checked
        # (other tests run at the same time).
        RAILRT_JOBID=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
        export RAILRT_JOBID
        [ -z "$lock" ] || { exec 9>>"$lock" && flock 9; } || lock=
        t0=$(date +%s%N)
        if [ "$variant" = "-" ]; then
            timeout -k 5 "$limit" "$mpirun" -n "$np" "$prog" "$@" >"$out" 2>&1 9>&-
        else
            # shellcheck disable=SC2086
            env $variant timeout -k 5 "$limit" "$mpirun" -n "$np" "$prog" "$@" >"$out" 2>&1 9>&-
        fi
        rc=$?
        t1=$(date +%s%N)
        [ -z "$lock" ] || exec 9>&-
        sed 's/^SKIP: /skip: /' "$out"
        # wall time of this run, for finding slow variants in CI's logs
        echo "--- np=$np: $(( (t1 - t0) / 1000000000 )).$(( (t1 - t0) / 100000000 % 10 )) s"
        left=$(ls /dev/shm 2>/dev/null | grep "^rail-$RAILRT_JOBID-")
        why=$(sed -n 's/^SKIP: //p' "$out" | sort -u)
        if [ "$rc" -eq 77 ]; then
            skipped=$((skipped + 1))
            why=$(echo "$why" | awk 'NF { printf "%s%s", n++ ? "; " : "", $0 }')
            skip_note "$variant" "$np" "${why:-exit status 77, no reason given}"
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
        # parts of a passing run that could not be checked here
        echo "$why" | while IFS= read -r w; do
            [ -z "$w" ] || skip_note "$variant" "$np" "$w"
        done
        ran=$((ran + 1))
    done
    IFS=';'
done
IFS=$IFS_SAVE
# One line per variant and reason, its rank counts together.
awk -F '\t' -v name="$name" '
    { key = $1 FS $3
      if (!(key in nps)) { order[++n] = key; nps[key] = $2 } else nps[key] = nps[key] " " $2 }
    END { for (i = 1; i <= n; i++) {
              split(order[i], k, FS)
              printf "SKIP: %s%s np %s: %s\n", name, k[1] == "-" ? "" : " [" k[1] "]", nps[order[i]], k[2]
          } }' "$skips"
if [ "$ran" -eq 0 ] && [ "$skipped" -gt 0 ]; then
    exit 77
fi
exit 0
