#!/bin/sh
# rail_copy streams from 3/8 of the last-level cache hwloc reports
# (copy_stream_min=0, base/copy.h): under fake topologies (HWLOC_SYNTHETIC)
# railinfo reports the threshold that follows the fake L3, the 12 MiB
# fallback when the topology has no cache, and an explicit copy_stream_min
# as it is.
. "${top_srcdir:-.}/test/env/lib.sh"
railinfo="$top_builddir/tools/railinfo"
[ -x "$railinfo" ] || fail "$railinfo is not built"

# copy_line SYNTHETIC [VAR=VALUE...]: railinfo's copy line under that topology
copy_line() {
    topo=$1
    shift
    env HWLOC_SYNTHETIC="$topo" "$@" "$railinfo" | grep '^  copy:' ||
        fail "railinfo printed no copy line under '$topo'"
}

line=$(copy_line "pack:1 l3:1(size=64MiB) l2:2(size=1MiB) core:2 pu:1")
case $line in
*"no streaming stores"*) skip "no streaming stores here: $line" ;;
esac
# 3/8 of 64 MiB = 24 MiB = 24576 KiB
echo "$line" | grep -q "from 24576 KiB (3/8 of a 65536 KiB last-level cache" ||
    fail "64 MiB L3: $line"
# the outermost data cache counts (an L4 when there is one): 3/8 of 256 MiB
line=$(copy_line "pack:1 l4:1(size=256MiB) l3:2(size=16MiB) core:1 pu:1")
echo "$line" | grep -q "from 98304 KiB" || fail "256 MiB L4: $line"
# no cache in the topology: the fallback, 12 MiB
line=$(copy_line "pack:1 core:2 pu:1")
echo "$line" | grep -q "from 12288 KiB (3/8 of a 0 KiB" || fail "no cache: $line"
# the parameter wins
line=$(copy_line "pack:1 l3:1(size=64MiB) core:2 pu:1" RAIL_COPY_STREAM_MIN=1m)
echo "$line" | grep -q "from 1024 KiB (copy_stream_min)" || fail "copy_stream_min=1m: $line"
pass
