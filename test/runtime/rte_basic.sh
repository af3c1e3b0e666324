#!/bin/bash
# Ranks under the freshly built mpirun at 1, 2, 3, 4 and 8 ranks: rank, size
# and local information, the all-to-all modex (collecting fence, and direct
# modex after a non-collecting fence), binding, and the full start-to-finish
# cycle; nothing may be left behind.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/common.sh"

# Cores and CPUs per core (binding is per core).
NCORES=$(lscpu -p=CORE,ONLINE 2>/dev/null | grep -v '^#' | grep ',Y$' | cut -d, -f1 | sort -u | wc -l)
[ "${NCORES:-0}" -ge 1 ] && [ "$NCORES" -le "$NCPUS" ] || NCORES=$NCPUS
PER_CORE=$((NCPUS / NCORES))

for np in 1 2 3 4 8; do
    run 60 -n "$np" "$RTE_TEST" info
    expect_rc 0 "info np=$np" || continue
    [ "$(count_out '^INFO ')" -eq "$np" ] || fail "info np=$np: $(count_out '^INFO ') INFO lines"
    grep -q '^FAIL' "$WORK/out" && fail "info np=$np: $(grep '^FAIL' "$WORK/out" | head -3)"
    for r in $(seq 0 $((np - 1))); do
        expect_out "^INFO rank=$r size=$np local_rank=$r local_size=$np node_rank=$r node_id=0 num_nodes=1 appnum=0 " \
            "info np=$np rank $r"
    done
    [ "$(grep -oE 'jobid=[^ ]+' "$WORK/out" | sort -u | wc -l)" -eq 1 ] ||
        fail "info np=$np: ranks disagree on the jobid"
    # the node's CPUs: the cpuset's, fewer under a cgroup CPU quota (rte_cgroup.sh)
    node=$(grep -oE 'node_cpus=[0-9]+' "$WORK/out" | sort -u)
    node=${node#node_cpus=}
    [ -n "$node" ] && [ "$node" -ge 1 ] && [ "$node" -le "$NCPUS" ] ||
        fail "info np=$np: ranks disagree on node_cpus or exceed $NCPUS CPUs: $node"
    over=$([ "$np" -gt "${node:-$NCPUS}" ] && echo 1 || echo 0)
    [ "$(count_out "oversubscribed=$over ")" -eq "$np" ] ||
        fail "info np=$np: oversubscribed should be $over on ${node:-$NCPUS} CPUs"
    # Default binding: one core each when the cores suffice, none otherwise.
    cpus=$([ "$np" -le "$NCORES" ] && echo "$PER_CORE" || echo "$NCPUS")
    [ "$(count_out " cpus=$cpus ")" -eq "$np" ] || fail "info np=$np: expected cpus=$cpus per rank"
    expect_clean "info np=$np"

    for mode in "" direct; do
        run 60 -n "$np" "$RTE_TEST" modex $mode
        expect_rc 0 "modex $mode np=$np" || continue
        [ "$(count_out '^MODEX OK ')" -eq "$np" ] || { fail "modex $mode np=$np"; show modex; }
        expect_clean "modex $mode np=$np"
    done

    run 60 -n "$np" "$RTE_TEST" hello
    expect_rc 0 "hello np=$np"
    expect_clean "hello np=$np"
done

# --bind-to none leaves every rank the whole machine; --bind-to core binds
# even when oversubscribed (several ranks per core, with a warning).
run 60 -n 2 --bind-to none "$RTE_TEST" info
expect_rc 0 "--bind-to none" && [ "$(count_out " cpus=$NCPUS ")" -eq 2 ] ||
    fail "--bind-to none: ranks should see $NCPUS CPUs"
np=$((NCORES + 1))
run 60 -n "$np" --bind-to core "$RTE_TEST" info
expect_rc 0 "--bind-to core oversubscribed" && [ "$(count_out " cpus=$PER_CORE ")" -eq "$np" ] ||
    fail "--bind-to core: every rank should be bound to one core"
expect_err "several ranks per core" "--bind-to core oversubscribed warning"
expect_clean "bind"

# --host with slots and --map-by on this host only (all in mpirun's node server).
run 60 --host localhost:3 -n 3 "$RTE_TEST" info
expect_rc 0 "--host localhost:3" && expect_out "^INFO rank=2 size=3 .* host=localhost " "--host names the node"
run 60 -n 4 --map-by node --oversubscribe --allow-run-as-root "$RTE_TEST" modex
expect_rc 0 "--map-by node, compatibility options" && [ "$(count_out '^MODEX OK')" -eq 4 ] ||
    fail "--map-by node modex"
expect_clean "map"
finish
