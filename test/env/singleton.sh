#!/bin/sh
# A program started without mpirun runs as a 1-rank job.
. "${top_srcdir:-.}/test/env/lib.sh"
out=$(env -u PMIX_RANK -u PMIX_NAMESPACE -u PMIX_SERVER_URI41 -u PMIX_SERVER_URI4 \
      timeout 30 "$top_builddir/examples/hello" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "singleton exited $rc"
echo "$out" | grep -q "Hello from rank 0 of 1 on" || fail "unexpected output"
# Started by srun without PMIx: refuse, rather than run N singletons.
out=$(env SLURM_JOB_ID=1 SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_NTASKS=4 SLURM_NPROCS=4 \
      timeout 30 "$top_builddir/examples/hello" 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || fail "ran under a fake srun without PMIx"
echo "$out" | grep -qi "pmix" || fail "the refusal does not mention PMIx"
pass
