#!/bin/bash
# Without a launcher: a singleton (1-rank job, modex of its own rank, fences
# are no-ops); started as if by srun without --mpi=pmix (faked SLURM_*
# variables, no PMIx server): a clear refusal instead of N singletons.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/common.sh"

# Forget any PMIx server of an enclosing launcher.
for v in $(env | grep -oE '^(PMIX|SLURM|PMI)_[A-Za-z0-9_]*' | grep -v '^PMIX_MCA_'); do unset "$v"; done

single() {
    local t0 t1
    t0=$(date +%s%N)
    RAILTEST_TAG=$TAG timeout -k 3 30 "$RTE_TEST" "$@" </dev/null >"$WORK/out" 2>"$WORK/err"
    RC=$?
    t1=$(date +%s%N)
    ELAPSED_MS=$(((t1 - t0) / 1000000))
}

single info
expect_rc 0 "singleton info"
expect_out "^INFO rank=0 size=1 local_rank=0 local_size=1 node_rank=0 node_id=0 num_nodes=1 appnum=0 universe=1 .* singleton=1 kernel_size=1 peers=0$" \
    "singleton info line"
expect_out "jobid=s[0-9a-f]+ " "singleton jobid"
single modex
expect_rc 0 "singleton modex" && expect_out "^MODEX OK rank 0 peers 1 " "singleton modex"
single modex direct
expect_rc 0 "singleton modex direct"
single abort 0 3
expect_rc 3 "singleton rte_abort(3)" && expect_err "deliberate abort" "singleton abort message"
[ "$ELAPSED_MS" -lt 5000 ] || fail "singleton abort took $ELAPSED_MS ms"

# srun without PMIx: SLURM step variables, more than one task, no server.
SLURM_JOB_ID=4242 SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_NTASKS=4 SLURM_STEP_NUM_TASKS=4 single info
[ "$RC" -ne 0 ] || fail "srun without PMIx: rte_init succeeded"
expect_err "started by srun without PMIx: use srun --mpi=pmix" "srun refusal message"
grep -q '^INFO' "$WORK/out" && fail "srun without PMIx ran as a singleton"
# One task, or the batch script's own step: a singleton is right.
SLURM_JOB_ID=4242 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_NTASKS=1 single info
expect_rc 0 "srun -n 1 without PMIx: singleton"
SLURM_JOB_ID=4242 SLURM_STEP_ID=4294967291 SLURM_PROCID=0 SLURM_NTASKS=4 single info
expect_rc 0 "batch step: singleton"
# MPICH's PMI launcher.
PMI_RANK=1 PMI_SIZE=2 single info
[ "$RC" -ne 0 ] && expect_err "PMI-1/PMI-2 launcher" "PMI launcher refusal" || fail "PMI_SIZE=2 accepted"
# A PMIx launcher that went away.
PMIX_NAMESPACE=gone.1 PMIX_RANK=0 PMIX_SERVER_URI41="gone.0;tcp4://127.0.0.1:1" single info
[ "$RC" -ne 0 ] && expect_err "cannot reach the PMIx server" "dead server message" || fail "dead server accepted"
finish
