#!/bin/sh
# make check-gpu: the device-buffer tests with real CUDA memory
# (TEST_DEVMEM=cuda, test/devmem.h) and the library's default accel list
# (host,cuda), then bench/gpu at np 2 and at np 4 (coll sm's own device
# path on and off).  Needs a GPU and its driver; exits 77
# with the reason where there is none (CI has none: its `make check` runs
# the same tests on the fake device and on the test's mock driver).  Each
# run is limited to GPU_CHECK_TIMEOUT seconds (default 120; on an H200 the
# slowest took 17 s, see docs/performance.md).
# The point-to-point and sm_ops runs also check that large device messages
# and a 1 MiB device bcast went device to device by IPC (P2P_DEVICE_IPC,
# SM_EXPECT_DEVICE_IPC).  Several processes on one GPU: with the MPS daemon
# running (nvidia-cuda-mps-control -d) small device messages cost ~10x
# less than with each process's own context (docs/performance.md).
# A bundle made by tools/gpu-bundle.sh runs it with MPIRUN (the installed
# mpirun), TESTBIN (its test programs) and GPU_BENCH (bench/gpu, built).
top_builddir=${top_builddir:-.}
mpirun=${MPIRUN:-$top_builddir/runtime/mpirun}
testbin=${TESTBIN:-$top_builddir/test}
limit=${GPU_CHECK_TIMEOUT:-120}
pass=0
fail=0
failed=""
# A run that exits 77 (test/check.h's "SKIP: reason") is neither a pass
# nor hidden: it is listed by name and reason before the last line, and
# check-gpu fails, as a device path it was to check went unchecked.  The
# parts a passing run skipped ("SKIP: part: reason") are listed too.
skip=0
skips=""
out=$(mktemp "${TMPDIR:-/tmp}/check-gpu.XXXXXX") || exit 99
trap 'rm -f "$out"' EXIT

run() { # np "VAR=value ..." test
    np=$1 vars=$2 prog=$3
    echo "=== $prog np=$np [$vars]"
    # shellcheck disable=SC2086
    env TEST_DEVMEM=cuda COLLTEST_DEVICE=1 $vars timeout -k 5 "$limit" \
        "$mpirun" -n "$np" "$testbin/$prog" >"$out" 2>&1
    rc=$?
    cat "$out"
    why=$(sed -n 's/^SKIP: //p' "$out" | sort -u)
    if [ "$rc" -eq 0 ]; then
        pass=$((pass + 1))
        [ -z "$why" ] || skips="$skips
$(echo "$why" | sed "s|^|SKIP: $prog np=$np [$vars]: |")"
    elif [ "$rc" -eq 77 ]; then
        skip=$((skip + 1))
        why=$(echo "$why" | awk 'NF { printf "%s%s", n++ ? "; " : "", $0 }')
        skips="$skips
SKIP: $prog np=$np [$vars]: ${why:-exit status 77, no reason given}"
    else
        fail=$((fail + 1))
        failed="$failed $prog@$np"
        echo "FAIL: $prog np=$np [$vars]: exit status $rc"
    fi
}

env TEST_DEVMEM=cuda "$mpirun" -n 1 "$testbin/dtype/dtype_device"
rc=$?
if [ "$rc" -eq 77 ]; then
    echo "check-gpu: SKIPPED (no usable GPU: see the line above)"
    exit 77
fi
run 2 "" dtype/dtype_device
run 2 "P2P_DEVICE_IPC=yes" p2p/p2p_device
run 3 "P2P_DEVICE_IPC=yes" p2p/p2p_device
run 2 "RAIL_PML_RNDV_GET=0" p2p/p2p_device
run 2 "RAIL_BTL=self,tcp" p2p/p2p_device
run 2 "" coll/coll_device_scratch
run 4 "" coll/coll_device_scratch
run 2 "COLLTEST_QUICK=1" coll/coll_move
run 2 "COLLTEST_QUICK=1" coll/coll_reduce
run 2 "" coll/coll_overlap
run 4 "" coll/coll_neighbor
run 2 "COLLTEST_QUICK=1 SM_EXPECT_DEVICE_IPC=yes SM_EXPECT_DEVICE_DIRECT=yes" coll/sm_ops
run 4 "COLLTEST_QUICK=1 SM_EXPECT_DEVICE_IPC=yes SM_EXPECT_DEVICE_DIRECT=yes" coll/sm_ops
run 3 "COLLTEST_DEVICE=2 RAIL_COLL_SM_REDUCE_MIN=0 RAIL_COLL_SM_ALLREDUCE_PAIR_MAX=0 COLLTEST_QUICK=1" coll/sm_ops
run 4 "RAIL_COLL=tuned,basic RAIL_COLL_TUNED_REDUCE_ALGORITHM=rabenseifner RAIL_COLL_TUNED_ALLREDUCE_ALGORITHM=ring" coll/tuned_reduce
run 3 "RAIL_COLL=tuned,basic" coll/tuned_move
run 4 "RAIL_COLL_HAN_SPLIT_NODES=2 HANTEST_EXPECT=1 COLLTEST_QUICK=1" coll/han_ops
run 3 "" coll/coll_threads
# the device-buffer benchmark (results checked; times for the record)
bench=${GPU_BENCH:-}
if [ -z "$bench" ]; then
    bench="$top_builddir/bench-gpu"
    "$top_builddir/tools/mpicc" -O2 -I"${top_srcdir:-.}" -o "$bench" "${top_srcdir:-.}/bench/gpu.c" ||
        bench=""
fi
if [ -n "$bench" ]; then
    echo "=== bench/gpu np=2"
    if timeout -k 5 "$limit" "$mpirun" -n 2 "$bench"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); failed="$failed bench/gpu"
    fi
    # np 4 up to 16 MiB, coll sm's own device path on and off (the next
    # component's IPC messages) in turn
    for ipc in 1 0; do
        echo "=== bench/gpu np=4 [RAIL_COLL_SM_DEVICE_IPC=$ipc]"
        if RAIL_COLL_SM_DEVICE_IPC=$ipc timeout -k 5 "$limit" "$mpirun" -n 4 "$bench" 16777216; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1)); failed="$failed bench/gpu@4[$ipc]"
        fi
    done
    [ -n "${GPU_BENCH:-}" ] || rm -f "$bench"
else
    fail=$((fail + 1)); failed="$failed bench/gpu(build)"
fi
[ -z "$skips" ] || echo "Skipped, not passed ($skip runs; parts of passing runs):$skips"
echo "check-gpu: $pass passed, $fail failed${failed:+:$failed} ($skip skipped)"
[ "$fail" -eq 0 ] && [ "$skip" -eq 0 ]
