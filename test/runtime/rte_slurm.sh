#!/bin/bash
# Opt-in (RAILTEST_SLURM=1; RAIL_ would name a parameter): the ranks under
# Slurm's own PMIx server.  Starts
# a throwaway Slurm (slurmctld + slurmd, auth/none, its own config, spool and
# non-default ports in a temp dir), runs 4-rank jobs with `srun --mpi=pmix`
# (rank/size/locality, modex both ways, rte_abort), checks that plain `srun`
# without PMIx is refused by every task, and tears everything down.
# Skips with the reason when not opted in, not root, or Slurm is missing.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "$(dirname "$0")/common.sh"

[ "${RAILTEST_SLURM:-0}" = 1 ] || skip "opt-in: set RAILTEST_SLURM=1 to start a throwaway Slurm"
[ "$(id -u)" -eq 0 ] || skip "needs root to run slurmctld/slurmd"
for p in slurmctld slurmd srun sinfo; do
    command -v $p >/dev/null || skip "$p missing (apt-get install --no-install-recommends slurmd slurmctld slurm-client slurm-wlm-basic-plugins)"
done
plugdir=$(dirname "$(find /usr/lib /usr/lib64 -name mpi_pmix.so -path '*slurm*' 2>/dev/null | head -1)" 2>/dev/null)
[ -n "$plugdir" ] && [ -e "$plugdir/mpi_pmix.so" ] || skip "Slurm's PMIx plugin (mpi_pmix.so, slurm-wlm-basic-plugins) is missing"
[ -e "$plugdir/auth_none.so" ] || skip "Slurm's auth/none plugin is missing"

host=$(hostname -s)
D="$WORK/slurm"
mkdir -p "$D/state" "$D/spool" "$D/tmp"
chmod 755 "$D" "$D/state" "$D/spool"
# Two free ports above the usual ones.
free_port() {
    local p
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % 20000))
        ss -ltn 2>/dev/null | awk '{print $4}' | grep -q ":$p\$" || { echo $p; return; }
    done
    echo 26817
}
P1=$(free_port)
P2=$(free_port)
[ "$P1" = "$P2" ] && P2=$((P1 + 1))
cat >"$D/slurm.conf" <<EOT
ClusterName=railtest$$
SlurmctldHost=$host
SlurmctldPort=$P1
SlurmdPort=$P2
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
TmpFS=$D/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
NodeName=$host CPUs=8 State=UNKNOWN
PartitionName=railtest Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOT
export SLURM_CONF="$D/slurm.conf"
unset SLURM_JOB_ID SLURM_JOBID

CTLD=""
SLURMD=""
stop_slurm() {
    for p in $SLURMD $CTLD; do kill -TERM "$p" 2>/dev/null; done
    for _ in $(seq 50); do
        alive=0
        for p in $SLURMD $CTLD; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for p in $SLURMD $CTLD; do kill -KILL "$p" 2>/dev/null; done
    # slurmstepd of a step that outlived the test (by our config's spool dir)
    for p in $(pgrep -f "slurmstepd" 2>/dev/null); do
        tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "SLURM_CONF=$D/slurm.conf" && kill -KILL "$p"
    done
}
EXTRA_CLEANUP=stop_slurm

slurmctld -D -i -f "$D/slurm.conf" >"$D/ctld.out" 2>&1 &
CTLD=$!
slurmd -D -f "$D/slurm.conf" -N "$host" >"$D/d.out" 2>&1 &
SLURMD=$!
up=0
for _ in $(seq 100); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)'; then up=1; break; fi
    sleep 0.2
done
if [ $up = 0 ]; then
    note "slurmctld log:"; tail -5 "$D/slurmctld.log" 2>/dev/null
    note "slurmd log:"; tail -5 "$D/slurmd.log" 2>/dev/null
    fail "the throwaway Slurm did not come up"
    finish
fi

srun_() {
    local t0 t1
    t0=$(date +%s%N)
    RAILTEST_TAG=$TAG timeout -k 3 60 srun "$@" </dev/null >"$WORK/out" 2>"$WORK/err"
    RC=$?
    t1=$(date +%s%N)
    ELAPSED_MS=$(((t1 - t0) / 1000000))
}

srun_ --mpi=pmix -n 4 "$RTE_TEST" info
expect_rc 0 "srun --mpi=pmix info"
for r in 0 1 2 3; do
    expect_out "^INFO rank=$r size=4 local_rank=$r local_size=4 .* node_id=0 num_nodes=1 .* singleton=0 " "srun rank $r"
done
grep -q '^FAIL' "$WORK/out" && fail "srun info: $(grep '^FAIL' "$WORK/out" | head -2)"
expect_out "jobid=slurm.pmix.[0-9]+.[0-9]+ " "jobid from Slurm's namespace"
for mode in "" direct; do
    srun_ --mpi=pmix -n 4 "$RTE_TEST" modex $mode
    expect_rc 0 "srun modex $mode" && [ "$(count_out '^MODEX OK rank [0-3] peers 4 ')" -eq 4 ] || fail "srun modex $mode"
done
srun_ --mpi=pmix -n 4 "$RTE_TEST" abort 2 7 nofence
[ "$RC" -ne 0 ] || fail "srun rte_abort: status 0"
expect_err "deliberate abort" "srun rte_abort message"
[ "$ELAPSED_MS" -lt 15000 ] || fail "srun rte_abort took $ELAPSED_MS ms"
# An MPI program (MPI_Init .. MPI_Finalize through the whole library).
HELLO="$top_builddir/examples/hello"
if [ -x "$HELLO" ]; then
    srun_ --mpi=pmix -n 4 "$HELLO"
    expect_rc 0 "srun --mpi=pmix hello"
    [ "$(count_out '^Hello from rank [0-3] of 4 on ')" -eq 4 ] || fail "srun hello: 4 greetings expected"
fi
# Plain srun: no PMIx server, every task must refuse.
srun_ -n 4 "$RTE_TEST" info
[ "$RC" -ne 0 ] || fail "srun without --mpi=pmix: status 0"
[ "$(grep -c 'started by srun without PMIx: use srun --mpi=pmix' "$WORK/err")" -eq 4 ] ||
    { fail "srun without --mpi=pmix: every task should refuse"; show "srun -n 4"; }
grep -q '^INFO' "$WORK/out" && fail "srun without --mpi=pmix ran singletons"
expect_clean "slurm"
finish
