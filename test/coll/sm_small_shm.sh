#!/bin/bash
# coll sm in a small /dev/shm (containers often get 64 MiB): a segment must
# shrink to fit (fewer, then smaller buffers; at most a quarter of what is
# free) rather than fail.  mpirun runs in a private mount namespace whose
# /dev/shm is a fresh tmpfs of 48 MiB, which the btl sm segments share
# (about 37 MiB of it at np 8); test/coll/sm_stress must pass there with
# every communicator served by sm (it checks segments appear and are
# reused) and without "cannot create" warnings.  At np 16 and 24 the btl sm
# segments must shrink too (fewer FIFO buffers, smaller rings): 4 MiB of
# frags each would have needed 64 and 96 MiB, and btl sm would have been
# disabled on the processes that found no room; sm_stress and p2p_large
# (rendezvous pipelined through the few frags) pass there with neither
# "cannot create" nor "disabled".  In a roomy tmpfs filled after a
# segment was made, the first collective that needs its buffers ends the
# job with a message (sm_room).  Skipped (77) when not root or without
# unshare.  Helpers: test/runtime/common.sh.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../runtime/common.sh"

SM_STRESS=${RAIL_TEST_SM_STRESS:-$top_builddir/test/coll/sm_stress}
P2P_LARGE=$top_builddir/test/p2p/p2p_large
SM_ROOM=$top_builddir/test/coll/sm_room
[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs in a mount namespace"
command -v unshare >/dev/null || skip "the unshare command (util-linux) is missing"
[ -x "$SM_STRESS" ] || skip "no sm_stress at $SM_STRESS"
[ -x "$P2P_LARGE" ] || skip "no p2p_large at $P2P_LARGE"
[ -x "$SM_ROOM" ] || skip "no sm_room at $SM_ROOM"

cat >"$WORK/smallshm" <<'EOS'
#!/bin/sh
mount -t tmpfs -o size=${SHM_SIZE:-48m} tmpfs /dev/shm || exit 99
exec "$@"
EOS
chmod +x "$WORK/smallshm"
unshare -m --propagation private "$WORK/smallshm" true 2>/dev/null ||
    skip "cannot mount a tmpfs in a private mount namespace"
RUN_PREFIX="unshare -m --propagation private $WORK/smallshm"

for np in 4 8; do
    # (where /dev/shm is this small, segments allocate every buffer up front)
    COLLTEST_QUICK=1 SM_EXPECT_RESERVED=1 run 240 -np "$np" "$SM_STRESS"
    [ "$RC" -eq 0 ] || fail "np $np: sm_stress failed (rc $RC): $OUT $ERR"
    echo "$OUT" | grep -q "sm_stress: passed at np $np" || fail "np $np: no pass line: $OUT"
    echo "$ERR" | grep -q "cannot create" && fail "np $np: a segment did not fit: $ERR"
done
# /dev/shm filled after a segment was made, before its buffers were
# allocated (a roomy tmpfs: they are left to their first use): the job
# ends with a message, neither SIGBUS nor a hang (test/coll/sm_room.c)
for np in 2 3; do
    SHM_SIZE=512m run 60 -np "$np" "$SM_ROOM"
    echo "$OUT" | grep -q "filled" || fail "np $np: sm_room did not fill /dev/shm: $OUT $ERR"
    [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] ||
        fail "np $np: sm_room: exit status $RC (a hang, or success): $OUT $ERR"
    echo "$ERR" | grep -q "no room left" || fail "np $np: sm_room: no message: $ERR"
    echo "$ERR" | grep -qi "bus error\|SIGBUS\|signal 7" && fail "np $np: sm_room: SIGBUS: $ERR"
    [ "$ELAPSED_MS" -lt 30000 ] || fail "np $np: sm_room took $ELAPSED_MS ms"
done
for np in 16 24; do
    for prog in "$SM_STRESS" "$P2P_LARGE"; do
        COLLTEST_QUICK=1 run 240 -np "$np" "$prog"
        [ "$RC" -eq 0 ] || fail "np $np: ${prog##*/} failed (rc $RC): $OUT $ERR"
        echo "$OUT" | grep -q "passed at np $np" || fail "np $np: ${prog##*/}: no pass line: $OUT"
        echo "$ERR" | grep -q "cannot create\|disabled" &&
            fail "np $np: ${prog##*/}: a segment did not fit: $ERR"
    done
done
finish
