#!/bin/sh
# commfit under a real Slurm of two nodes (tests/slurm/slurm.sh with
# CF_SLURM_NODES=2: slurmd in two network namespaces, cfsl0 and cfsl1, each
# with its own host name, on a bridge), one rank on each: `sbatch -N 2` with
# `commfit run -- mpirun` (mpirun starts its daemon on the other node with
# srun), `commfit run -- srun -N 2 --mpi=pmix`, scancel of the batch job,
# its time limit, and a SIGKILL of every process of the job on both nodes at
# once (as the OOM killer does it).  Counts against the program's own tally,
# the job (id, step, partition, node list, time limit) and the two hosts in
# the profile.  Skips where Slurm or the namespaces cannot run.
export CF_SLURM_NODES=2 CF_SLURM_DIR=${CF_SLURM_DIR2:-/tmp/commfit-slurm2}
. "$CF_SRCDIR/tests/slurm/lib.sh"

# 1. the time limit (1 min), in the background: the ranks refresh their parts 30 s before it
dl="$cf_tmp/limit"
mkdir -p "$dl"
script "$dl/job.sh" "COMMFIT_SPOOL_EVERY=0 COMMFIT_VERBOSE=1 $commfit run -o $dl/p.json -- $mpirun $abend term $dl"
limit=$(sbatch --parsable -N 2 -n 2 -t 1 -J limit -o "$dl/log" "$dl/job.sh") || cf_fail "sbatch refused the job"
# its ranks running before the next job starts: two mpiruns launching their
# daemons on the other node at once lost one daemon (once in nine runs of
# the suite, beside other load): the time-limited job's, then the next one's
looping "$dl" 1 > /dev/null || { cat "$dl/log"; cf_fail "the time-limited job's ranks did not start"; }

# 2. sbatch -N 2 with `commfit run -- mpirun`, to the end
d="$cf_tmp/batch"
mkdir -p "$d"
script "$d/job.sh" "$commfit run -o $d/p.json -- $mpirun $known"
job=$(sbatch --parsable --wait -N 2 -n 2 -t 5 -J batch -o "$d/log" "$d/job.sh") || { cat "$d/log"; cf_fail "the batch job failed"; }
cf_check known_calls "$d/p.json" 2 2 > "$d/check" || { cat "$d/log" "$d/check"; cf_fail "sbatch: the profile"; }
tail -1 "$d/check"
check hosts "$d/p.json" cfsl0 cfsl1 || exit 1
check job "$d/p.json" name=slurm job_id=$job job_name=batch partition=debug "nodes=cfsl[0-1]" time_limit_s=300 || exit 1
echo "ok   sbatch -N 2, commfit run -- mpirun: exact, a rank on each node (job $job)"

# 3. commfit run -- srun -N 2 -n 2 --mpi=pmix
d="$cf_tmp/srun"
mkdir -p "$d"
bounded 300 srun "$d/log" $CF_SLURM_IN "$commfit" run -o "$d/p.json" -- srun -N 2 -n 2 -J srun --mpi=pmix "$known" ||
    cf_fail "srun failed or did not end within 300 s"
cf_check known_calls "$d/p.json" 2 2 > "$d/check" || { cat "$d/log" "$d/check"; cf_fail "srun: the profile"; }
tail -1 "$d/check"
check hosts "$d/p.json" cfsl0 cfsl1 || exit 1
check job "$d/p.json" name=slurm step=0 job_name=srun "nodes=cfsl[0-1]" || exit 1
echo "ok   commfit run -- srun -N 2 --mpi=pmix: exact, a rank on each node"

# 4. scancel of a batch job running `commfit run -- mpirun` over both nodes
d="$cf_tmp/scancel"
mkdir -p "$d"
script "$d/job.sh" "COMMFIT_SPOOL_EVERY=1 $commfit run -o $d/p.json -- $mpirun $abend term $d"
job=$(sbatch --parsable -N 2 -n 2 -J scancel -o "$d/log" "$d/job.sh")
end_it scancel "$d" "$job" scancel "$job"
killed "$d"
echo "ok   scancel of a batch job on two nodes: exact to each rank's signal or last refresh"

# the time limit (1.)
timed_out "$limit" "$dl"
echo "ok   the time limit on two nodes: exact to each rank's signal or its refresh before the end"

# 5, 6. the whole job SIGKILLed on both nodes at once, no signal before (as the OOM killer does
#    it), `commfit run -- srun -N 2 --mpi=pmix` and `commfit run -- mpirun`: the profile that
#    commfit merge makes of the parts exact to the last refresh, which it names, a rank on each
#    node, and the job named (rank 0 runs in the step of srun; in the batch step of mpirun)
for form in srun mpirun; do
    case $form in
    srun) whole_job oomstep "whole step" "srun -N 2 -n 2 --mpi=pmix" -N 2 -n 2 -t 5 && step=0 ;;
    mpirun) whole_job oom "whole job" "$mpirun" -N 2 -n 2 -t 5 && step=None ;;
    esac
    check hosts "$d/p.json" cfsl0 cfsl1 || exit 1
    check job "$d/p.json" name=slurm job_id=$job job_name=$name step=$step partition=debug "nodes=cfsl[0-1]" \
        time_limit_s=300 array_index=None || exit 1
    echo "ok   SIGKILL of the whole job on two nodes, commfit run -- $form: exact to the last refresh, the job named"
done
echo "6 passed, 0 failed"
