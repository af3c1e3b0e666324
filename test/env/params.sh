#!/bin/sh
# The parameter registry: railinfo lists components, parameters with their
# origin and the performance variables; environment, mpirun --param and
# config files set values; an unknown RAIL_* name is warned about once, with
# a suggestion.
. "${top_srcdir:-.}/test/env/lib.sh"
RAILINFO="$top_builddir/tools/railinfo"
HOME=$(mktemp -d) || fail "mktemp"
export HOME
trap 'rm -rf "$HOME"' EXIT

out=$("$RAILINFO") || fail "railinfo failed"
echo "$out" | grep -q "^Rail MPI " || fail "no version line"
echo "$out" | grep -Eq "^  btl +self sm( ofi)? tcp" || fail "btl components not listed"
echo "$out" | grep -Eq "^  accel +host fake" || fail "accel components not listed"

all=$("$RAILINFO" --all) || fail "railinfo --all failed"
for p in btl btl_sm_eager_limit pml_eager_credits accel mpi_show_errors; do
    echo "$all" | grep -q "^  $p = " || fail "parameter $p not listed by --all"
done
# ... and the performance variables each component registers.
for v in "mpi_live_comm (class level" "mpi_process_cpu_time (class timer" \
         "coll_sm_segments_created (class counter" "btl_sm_frags_streamed (class counter"; do
    echo "$all" | grep -qF "  $v" || fail "performance variable $v... not listed by --all"
done

out=$(RAIL_BTL_SM_EAGER_LIMIT=8k "$RAILINFO" --param btl_sm_eager_limit)
echo "$out" | grep -q "btl_sm_eager_limit = 8192" || fail "environment value not applied: $out"
echo "$out" | grep -q "from environment (RAIL_BTL_SM_EAGER_LIMIT)" || fail "origin not shown: $out"

mkdir -p "$HOME/.rail"
echo "btl_sm_eager_limit = 2048   # from the user file" > "$HOME/.rail/params.conf"
out=$("$RAILINFO" --param btl_sm_eager_limit)
echo "$out" | grep -q "btl_sm_eager_limit = 2048" || fail "user config file not applied: $out"
echo "$out" | grep -q "params.conf:1" || fail "config file origin not shown: $out"
out=$(RAIL_BTL_SM_EAGER_LIMIT=1024 "$RAILINFO" --param btl_sm_eager_limit)
echo "$out" | grep -q "= 1024" || fail "environment must win over the config file: $out"
rm "$HOME/.rail/params.conf"

"$RAILINFO" --param no_such_parameter >/dev/null 2>&1 && fail "unknown --param accepted"
"$RAILINFO" --json --all > "$HOME/info.json" || fail "railinfo --json failed"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['parameters'] and d['components']['btl'] and d['performance_variables']" \
    "$HOME/info.json" || fail "railinfo --json is not valid JSON with parameters"

# A misspelled name is warned about once (by rank 0), with a suggestion.
out=$(RAIL_BTL_SM_EAGER_LIMT=1 run_mpi -n 4 "$top_builddir/examples/hello" 2>&1) || fail "hello failed: $out"
n=$(echo "$out" | grep -c "unknown parameter 'btl_sm_eager_limt'")
[ "$n" -eq 1 ] || fail "expected one warning about the unknown name, got $n: $out"
echo "$out" | grep -q "did you mean 'btl_sm_eager_limit'" || fail "no suggestion: $out"

# mpirun --param reaches the ranks (a bad value is reported by the rank).
out=$(run_mpi -n 2 --param btl=self,nosuchbtl "$top_builddir/examples/hello" 2>&1)
echo "$out" | grep -qi "nosuchbtl" || fail "--param value did not reach the ranks: $out"

# A transport named explicitly that cannot run is reported, but not in a
# job of one process, which needs nothing but self.
out=$(RAIL_BTL=self,tcp run_mpi -n 1 "$top_builddir/examples/hello" 2>&1) || fail "hello failed: $out"
echo "$out" | grep -q "cannot run here\|no other process" && fail "np 1 warned about tcp: $out"
out=$(RAIL_BTL=self,sm,tcp RAIL_BTL_TCP_IF_INCLUDE=nosuchif0 run_mpi -n 2 \
      "$top_builddir/examples/hello" 2>&1) || fail "hello failed: $out"
echo "$out" | grep -q 'component "tcp" was requested' || fail "no word about tcp: $out"
pass
