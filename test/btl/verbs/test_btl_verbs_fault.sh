#!/bin/sh
# btl verbs on the emulated HCA (btl_verbs_fake=1), every peer through
# verbs: a ring of small and 4 MiB messages (RDMA read) passes, and so
# does a send from memory unmapped and mapped anew at the same address
# (registration cache invalidation, stale registrations refused); a QP that
# goes to the error state (an injected retry error, a wrong rkey) ends the
# job non-zero with a message naming both ranks and hosts; a rank killed
# with SIGKILL ends the job; and nothing of any job is left behind (no
# process, no /dev/shm/rail-<jobid>-* entry: the HCA's segment, channel and
# claim included); without a device btl verbs declines, saying why.
# Exit status: 0 pass, 1 fail, 77 skip.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../../runtime/common.sh"

JOB=$top_builddir/test/btl/verbs/verbs_job
[ -x "$JOB" ] || skip "no verbs_job at $JOB"
V=(--param btl=self,verbs --param btl_verbs_fake=1 --param btl_verbs_local_peers=1
   --param pml_rndv_get_min=1)

run 120 -n 3 "${V[@]}" "$JOB" ring
expect_rc 0 "ring" && [ "$(count_out '^RING OK')" -eq 3 ] || fail "ring: $(count_out '^RING OK') ranks OK"
expect_clean "ring"

# memory unmapped and mapped anew at a registered address: new bytes move
run 60 -n 2 "${V[@]}" "$JOB" remap
expect_rc 0 "remap" && expect_out "^REMAP OK$" "remap: the new bytes arrive"
expect_clean "remap"

run 60 -n 2 "${V[@]}" --param btl_verbs_fake_faults=qp_error=30@1 "$JOB" ring
[ "$RC" -ne 0 ] || fail "injected QP error: exit status 0"
expect_err "btl verbs: the queue pair between rank 1 \([^)]+\) and rank 0 \([^)]+\) went to the error state: .* \"transport retry counter exceeded\"" "QP error message"
expect_clean "injected QP error"

run 60 -n 2 "${V[@]}" --param btl_verbs_fake_faults=bad_rkey=1@0 "$JOB" ring
[ "$RC" -ne 0 ] || fail "wrong rkey: exit status 0"
expect_err "btl verbs: the queue pair between rank 0 \([^)]+\) and rank 1 \([^)]+\) went to the error state: an RDMA read or write completed with \"remote access error\"" "wrong rkey message"
expect_clean "wrong rkey"

run 60 -n 3 "${V[@]}" "$JOB" die 1
[ "$RC" -ne 0 ] || fail "killed rank: exit status 0"
expect_err "rank 1 .* (signal 9|Killed)" "killed rank report"
expect_clean "killed rank"

run 30 -n 2 --param btl=self,verbs --param btl_verbs_fake_faults=nonsense=1 --param btl_verbs_fake=1 "$JOB" ring
[ "$RC" -ne 0 ] || fail "bad fault list: exit status 0"
expect_err "btl_verbs_fake_faults: cannot parse \"nonsense=1\"" "bad fault list message"
expect_clean "bad fault list"

# Without a device and without btl_verbs_fake=1, btl verbs declines and says
# why (railinfo too).
info=$("$top_builddir/tools/railinfo" 2>&1 | grep '^  rdma-core:')
[ -n "$info" ] || fail "railinfo shows no rdma-core line"
if echo "$info" | grep -q "no RDMA device"; then
    run 30 -n 2 --param btl=self,verbs "$JOB" ring
    [ "$RC" -ne 0 ] || fail "verbs without a device: exit status 0"
    expect_err "btl verbs: no RDMA device .*btl_verbs_fake=1 emulates one" "why btl verbs declines"
    expect_clean "verbs without a device"
fi
finish
