#!/bin/bash
# mpirun's features: --timeout (and MPIEXEC_TIMEOUT), stdin to rank 0, --tag-output, whole-line
# output, -x, --param, MPMD with appnum, --hostfile, SIGTERM forwarding,
# --version/--help/bad options, and no busy-waiting with 8 ranks on few cores.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/common.sh"

# --timeout: names the ranks still running, ends them, status 124.
run 30 --timeout 1 -n 3 "$RTE_TEST" sleep 60
expect_rc 124 "--timeout"
expect_err "timeout: the job ran for more than 1 s; 3 ranks still running: 0 \(host [^,]+, pid [0-9]+\), 1 .*, 2 " \
    "--timeout report"
[ "$ELAPSED_MS" -lt 5000 ] || fail "--timeout 1 took $ELAPSED_MS ms"
expect_clean "--timeout"
# MPIEXEC_TIMEOUT: the same limit from the environment; --timeout wins; a
# value that is not a number of seconds is refused.
MPIEXEC_TIMEOUT=1 run 30 -n 2 "$RTE_TEST" sleep 60
expect_rc 124 "MPIEXEC_TIMEOUT"
[ "$ELAPSED_MS" -lt 5000 ] || fail "MPIEXEC_TIMEOUT=1 took $ELAPSED_MS ms"
expect_clean "MPIEXEC_TIMEOUT"
MPIEXEC_TIMEOUT=600 run 30 --timeout 1 -n 2 "$RTE_TEST" sleep 60
expect_rc 124 "--timeout over MPIEXEC_TIMEOUT"
MPIEXEC_TIMEOUT=soon run 30 -n 1 "$RTE_TEST" sleep 0
[ "$RC" -ne 0 ] || fail "MPIEXEC_TIMEOUT=soon was accepted"
expect_err "bad MPIEXEC_TIMEOUT 'soon'" "MPIEXEC_TIMEOUT=soon message"

# stdin goes to rank 0 only (a pipe, then a regular file).
printf 'one\ntwo\nthree\n' >"$WORK/input"
seq 1 200000 >"$WORK/big"
for src in input big; do
    STDIN="$WORK/$src"
    run 30 -n 3 "$RTE_TEST" stdin
    STDIN=
    bytes=$(wc -c <"$WORK/$src")
    lines=$(wc -l <"$WORK/$src")
    expect_rc 0 "stdin $src" && expect_out "^STDIN rank 0 bytes $bytes lines $lines$" "stdin $src to rank 0"
    [ "$(count_out '^STDIN rank [12] bytes 0 lines 0$')" -eq 2 ] || fail "stdin $src: other ranks must read /dev/null"
done
bytes=$(seq 1 50000 | wc -c)
seq 1 50000 | RAILTEST_TAG=$TAG timeout 30 "$MPIRUN" -n 2 "$RTE_TEST" stdin >"$WORK/out" 2>"$WORK/err"
RC=$?
grep -q "^STDIN rank 0 bytes $bytes lines 50000\$" "$WORK/out" || { fail "stdin from a pipe"; cat "$WORK/out"; }
expect_clean "stdin"

# --tag-output, and lines of different ranks never mix.
run 30 -n 8 --tag-output "$RTE_TEST" print 50
expect_rc 0 "--tag-output"
bad=$(grep -cvE '^\[1,([0-7])\]<stdout>: LINE rank \1 number [0-9]+ end$' "$WORK/out")
[ "$bad" -eq 0 ] || { fail "--tag-output: $bad malformed lines"; grep -vE '^\[1,[0-7]\]<stdout>: LINE' "$WORK/out" | head; }
[ "$(wc -l <"$WORK/out")" -eq 400 ] || fail "--tag-output: $(wc -l <"$WORK/out") lines, expected 400"
run 30 -n 8 "$RTE_TEST" print 100
bad=$(grep -cvE '^LINE rank [0-7] number [0-9]+ end$' "$WORK/out")
[ "$bad" -eq 0 ] && [ "$(wc -l <"$WORK/out")" -eq 800 ] || fail "untagged output: $bad broken lines"
expect_clean "output"

# -x and --param reach every rank (also the second program of an MPMD line).
export FOO=from-env
run 30 -n 2 -x FOO -x BAR=set --param btl_sm_eager_limit=4k --param rail_coll=^tuned \
    "$RTE_TEST" env FOO BAR RAIL_BTL_SM_EAGER_LIMIT RAIL_COLL : -n 1 "$RTE_TEST" env FOO RAIL_COLL
expect_rc 0 "-x/--param"
for r in 0 1; do
    expect_out "^ENV rank $r FOO=from-env$" "-x FOO rank $r"
    expect_out "^ENV rank $r BAR=set$" "-x BAR=set rank $r"
    expect_out "^ENV rank $r RAIL_BTL_SM_EAGER_LIMIT=4k$" "--param rank $r"
    expect_out "^ENV rank $r RAIL_COLL=\^tuned$" "--param rail_ prefix rank $r"
done
expect_out "^ENV rank 2 FOO=from-env$" "-x in the second app"
expect_out "^ENV rank 2 RAIL_COLL=\^tuned$" "--param in the second app"

# MPMD: one namespace, contiguous ranks, appnum per program.
run 30 -n 1 "$RTE_TEST" info : -n 3 "$RTE_TEST" info : -n 2 "$RTE_TEST" info
expect_rc 0 "MPMD"
expect_out "^INFO rank=0 size=6 .* appnum=0 " "MPMD rank 0 appnum 0"
for r in 1 2 3; do expect_out "^INFO rank=$r size=6 .* appnum=1 " "MPMD rank $r appnum 1"; done
for r in 4 5; do expect_out "^INFO rank=$r size=6 .* appnum=2 " "MPMD rank $r appnum 2"; done
[ "$(grep -oE 'jobid=[^ ]+' "$WORK/out" | sort -u | wc -l)" -eq 1 ] || fail "MPMD: more than one job id"
run 30 -n 2 "$RTE_TEST" modex : -n 2 "$RTE_TEST" modex
[ "$(count_out '^MODEX OK')" -eq 4 ] || fail "MPMD modex"
expect_clean "MPMD"

# --hostfile with this host (names like the hostfile says).
printf '# test\nlocalhost slots=3\n' >"$WORK/hosts"
run 30 --hostfile "$WORK/hosts" "$RTE_TEST" info
expect_rc 0 "--hostfile" && [ "$(count_out '^INFO .* size=3 .* host=localhost ')" -eq 3 ] ||
    fail "--hostfile: 3 ranks on localhost expected"

# SIGTERM to mpirun is forwarded; the ranks end; status 128+15.
RAILTEST_TAG=$TAG timeout 30 "$MPIRUN" -n 3 "$RTE_TEST" sleep 60 >"$WORK/out" 2>"$WORK/err" </dev/null &
mp=$!
for _ in $(seq 50); do [ "$(count_out '^SLEEP')" -eq 3 ] && break; sleep 0.1; done
kill -TERM "$mp"
wait "$mp"
RC=$?
expect_rc 143 "SIGTERM"
expect_err "received signal 15" "SIGTERM report"
expect_clean "SIGTERM"

# No spinning: mpirun sleeps while 8 ranks sleep.
RAILTEST_TAG=$TAG timeout 30 "$MPIRUN" -n 8 "$RTE_TEST" sleep 3 >"$WORK/out" 2>"$WORK/err" </dev/null &
mp=$!
sleep 1
child=$(cat "/proc/$mp/task/$mp/children" 2>/dev/null | awk '{print $1}') # timeout's child: mpirun
ticks0=$(awk '{print $14 + $15}' "/proc/$child/stat" 2>/dev/null)
sleep 1.5
ticks1=$(awk '{print $14 + $15}' "/proc/$child/stat" 2>/dev/null)
wait "$mp"
RC=$?
expect_rc 0 "8 sleeping ranks"
[ -n "$ticks0" ] && [ -n "$ticks1" ] && [ $((ticks1 - ticks0)) -le 5 ] ||
    fail "mpirun used $((ticks1 - ticks0)) clock ticks in 1.5 s while the ranks slept (spinning?)"
expect_clean "no spin"

# Command line.
run 10 --version
expect_rc 0 "--version" && expect_out "^mpirun \(Rail MPI\) " "--version text"
run 10 --help
expect_rc 0 "--help" && expect_out "--launch-agent" "--help text"
run 10 --no-such-option "$RTE_TEST"
expect_rc 1 "unknown option" && expect_err "unknown option --no-such-option" "unknown option message"
run 10 -n 2
expect_rc 1 "no program" && expect_err "no program given" "no program message"
finish
