#!/bin/bash
# Bad input to btl ofi under our mpirun: an unknown name in
# btl_ofi_provider ends the job non-zero, with a message that names the
# parameter and the name, and leaves nothing behind.  Helpers:
# test/runtime/common.sh.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../../runtime/common.sh"

P2P=$top_builddir/test/p2p/p2p_basic
[ -x "$P2P" ] || skip "no p2p_basic at $P2P"

run 60 -n 2 --param 'btl_ofi_provider=tcp;nosuchprov' "$P2P"
[ "$RC" != 0 ] || { fail "unknown provider: exit status 0"; show "unknown provider"; }
expect_err 'btl_ofi_provider="tcp;nosuchprov": unknown libfabric provider "nosuchprov"' \
    "unknown provider named"
expect_clean "unknown provider"
finish
