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
# "cannot create" nor "disabled".  Skipped (77) when not root or without
# unshare.  Helpers: test/runtime/common.sh.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../runtime/common.sh"

SM_STRESS=${RAIL_TEST_SM_STRESS:-$top_builddir/test/coll/sm_stress}
P2P_LARGE=$top_builddir/test/p2p/p2p_large
[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs in a mount namespace"
command -v unshare >/dev/null || skip "the unshare command (util-linux) is missing"
[ -x "$SM_STRESS" ] || skip "no sm_stress at $SM_STRESS"
[ -x "$P2P_LARGE" ] || skip "no p2p_large at $P2P_LARGE"

cat >"$WORK/smallshm" <<'EOS'
#!/bin/sh
mount -t tmpfs -o size=48m tmpfs /dev/shm || exit 99
exec "$@"
EOS
chmod +x "$WORK/smallshm"
unshare -m --propagation private "$WORK/smallshm" true 2>/dev/null ||
    skip "cannot mount a tmpfs in a private mount namespace"
RUN_PREFIX="unshare -m --propagation private $WORK/smallshm"

for np in 4 8; do
    COLLTEST_QUICK=1 run 240 -np "$np" "$SM_STRESS"
    [ "$RC" -eq 0 ] || fail "np $np: sm_stress failed (rc $RC): $OUT $ERR"
    echo "$OUT" | grep -q "sm_stress: passed at np $np" || fail "np $np: no pass line: $OUT"
    echo "$ERR" | grep -q "cannot create" && fail "np $np: a segment did not fit: $ERR"
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
