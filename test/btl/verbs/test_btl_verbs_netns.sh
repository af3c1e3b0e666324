#!/bin/sh
# btl verbs between two hosts made of network namespaces, over the emulated
# HCA (btl_verbs_fake=1; the namespaces share /dev/shm and the kernel, as
# the fake needs): mpirun inside the first namespace starts 2 ranks on each
# host; sm carries the node-local peers, verbs the remote ones (the RoCE v2
# GID of each host's veth address).  p2p_basic, p2p_large (RDMA read for
# every rendezvous) and a ring of 4 MiB messages must pass; nothing may be
# left behind.  Addresses exist only inside the namespaces, which the test
# makes and removes.  Exit status: 0 pass, 1 fail, 77 skip.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../../runtime/common.sh"

JOB=$top_builddir/test/btl/verbs/verbs_job
P2P=$top_builddir/test/p2p
for p in "$JOB" "$P2P/p2p_basic" "$P2P/p2p_large"; do [ -x "$p" ] || skip "no $p"; done

A=rv$$a B=rv$$b
net=10.215.$(($$ % 200 + 20))
two_hosts $A $B $net
AGENT+=(--host $A:2,$B:2)
V=(--param btl=self,sm,verbs --param btl_verbs_fake=1 --param btl_verbs_roce_subnet=$net.0/24
   --param btl_verbose=2)

run 120 "${AGENT[@]}" "${V[@]}" "$JOB" ring
expect_rc 0 "ring" && [ "$(count_out '^RING OK')" -eq 4 ] || fail "ring: $(count_out '^RING OK') ranks OK"
expect_err "btl: rank 2 via verbs" "rank 0 reaches rank 2 through verbs"
expect_err "btl: rank 1 via sm" "rank 0 reaches rank 1 through sm"
expect_clean "ring"

run 180 "${AGENT[@]}" "${V[@]}" "$P2P/p2p_basic"
expect_rc 0 "p2p_basic"
expect_clean "p2p_basic"

run 300 "${AGENT[@]}" "${V[@]}" --param pml_rndv_get_min=1 "$P2P/p2p_large"
expect_rc 0 "p2p_large"
expect_clean "p2p_large"
finish
