#!/bin/bash
# A failing rank ends the whole job: a segfault (status 139, within one second
# of the death, reported with rank, host, pid and signal), rte_abort(7)
# (status 7), a nonzero exit before finalizing (status 5), an exit with 0
# without finalizing (warned about, job not failed by itself), a rank that
# dies holding /dev/shm segments; then no process, temp file or /dev/shm
# entry of the job may remain.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/common.sh"

uptime_now() { cut -d' ' -f1 /proc/uptime; }

for np in 2 3 4 8; do
    victim=$((np - 1))
    run 60 -n "$np" "$RTE_TEST" segv "$victim"
    end=$(uptime_now)
    expect_rc 139 "segv np=$np" || continue
    line=$(grep '^SEGV ' "$WORK/out")
    pid=$(echo "$line" | awk '{print $5}')
    died=$(echo "$line" | awk '{print $7}')
    expect_err "^mpirun: rank $victim \(host [^,]+, pid $pid\) exited on signal 11 \(Segmentation fault\)" \
        "segv np=$np report"
    # The job must be over within one second of the death.
    if [ -n "$died" ] && awk -v a="$died" -v b="$end" 'BEGIN { exit !(b - a > 1.0) }'; then
        fail "segv np=$np: mpirun returned $(awk -v a="$died" -v b="$end" 'BEGIN { print b - a }') s after the rank died (limit 1 s)"
    fi
    expect_clean "segv np=$np"
done

for np in 2 3 8; do
    run 60 -n "$np" "$RTE_TEST" abort 1 7
    expect_rc 7 "abort np=$np"
    expect_err "rank 1 \(host [^,]+, pid [0-9]+\) called MPI_Abort with code 7" "abort np=$np report"
    expect_err "deliberate abort" "abort np=$np message"
    [ "$ELAPSED_MS" -lt 10000 ] || fail "abort np=$np took $ELAPSED_MS ms"
    expect_clean "abort np=$np"

    run 60 -n "$np" "$RTE_TEST" exit 0 5
    expect_rc 5 "exit 5 np=$np"
    expect_err "rank 0 \(host [^,]+, pid [0-9]+\) exited with status 5 before MPI_Finalize" "exit 5 np=$np report"
    expect_clean "exit 5 np=$np"
done

# After MPI_Finalize a nonzero exit is still a failure, reported as such.
for np in 1 3; do
    run 60 -n "$np" "$RTE_TEST" exitafter $((np - 1)) 3
    expect_rc 3 "exit 3 after finalize np=$np"
    expect_err "rank $((np - 1)) \(host [^,]+, pid [0-9]+\) exited with status 3 after MPI_Finalize" \
        "exit after finalize np=$np report"
    expect_clean "exit after finalize np=$np"
done

# Exit with 0 without finalizing: a warning; the others fail their fence
# (libpmix drops the departed rank) and are then ended by the test's timeout.
run 60 -n 2 --timeout 2 "$RTE_TEST" exit 1 0
expect_err "rank 1 \(host [^,]+, pid [0-9]+\) exited with status 0 without calling MPI_Finalize" "exit 0 warning"
expect_rc 124 "exit 0 without finalize, the other rank stuck"
expect_clean "exit 0"

# A program that is no MPI program at all: plain exits are fine, a failing one fails.
run 30 -n 3 /bin/true
expect_rc 0 "/bin/true"
run 30 -n 3 /bin/false
expect_rc 1 "/bin/false" && expect_err "rank [0-2] \(host [^,]+, pid [0-9]+\) exited with status 1$" "/bin/false report"
run 30 -n 2 ./no-such-program-here
expect_rc 127 "missing program" && expect_err "cannot run './no-such-program-here'" "missing program report"
expect_clean "plain programs"

# Shared memory named by the rule of rte.h is removed when the job dies.
for np in 2 4; do
    run 60 -n "$np" "$RTE_TEST" shm 0
    expect_rc 139 "shm np=$np"
    [ "$(count_out '^SHM rank')" -eq "$np" ] || { fail "shm np=$np: segments not created"; show shm; }
    for f in $(grep '^SHM rank' "$WORK/out" | awk '{print $5}'); do
        [ -e "$f" ] && fail "shm np=$np: $f left behind"
    done
    expect_clean "shm np=$np"
done
finish
