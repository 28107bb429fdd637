#!/bin/sh
# commfit under a real Slurm (tests/slurm/slurm.sh: one node, this machine's
# CPUs, KillWait=3), in the forms users write: sbatch with `commfit run --
# mpirun`, salloc, a job array, `commfit run -- srun --mpi=pmix`; and the
# ends a batch system deals: scancel of a batch job, its time limit,
# --signal=B:TERM@30 to an `exec commfit run`, scancel of a step, SIGKILL of
# one rank, SIGKILL of every process of a job at once (as the OOM killer
# does).  Counts are checked against each rank's own tally: exact, up to
# one more call for the one a signal interrupted, up to the tally for a
# rank whose records end at its last refresh, exact for ranks that made
# their last call before it.  Skips where Slurm cannot run.
. "$CF_SRCDIR/tests/slurm/lib.sh"

# 1. the time limit (1 min; reached 60-90 s in, slurmctld looks every 30 s), in the background:
#    `commfit run -- mpirun` in a batch script, no exec, no refresh by interval: the ranks
#    refresh their parts 30 s before the job's end (squeue)
dl="$cf_tmp/limit"
mkdir -p "$dl"
script "$dl/job.sh" "COMMFIT_SPOOL_EVERY=0 COMMFIT_VERBOSE=1 $commfit run -o $dl/p.json -- $mpirun $abend term $dl"
limit=$(sbatch --parsable -n 1 -t 1 -J limit -o "$dl/log" "$dl/job.sh") || cf_fail "sbatch refused the job"

# 2. sbatch with `commfit run -- mpirun`, to the end: the profile exact, the job named
d="$cf_tmp/batch"
mkdir -p "$d"
script "$d/job.sh" "$commfit run -o $d/p.json -- $mpirun $known"
job=$(sbatch --parsable --wait -n 1 -t 5 -J batch -o "$d/log" "$d/job.sh") || { cat "$d/log"; cf_fail "the batch job failed"; }
cf_check known_calls "$d/p.json" 2 > "$d/check" || { cat "$d/log" "$d/check"; cf_fail "sbatch: the profile"; }
tail -1 "$d/check"
echo "ok   sbatch, commfit run -- mpirun: exact (job $job)"
check job "$d/p.json" name=slurm job_id=$job job_name=batch partition=debug nodes=$(hostname -s) time_limit_s=300 \
    step=None array_index=None || exit 1
"$commfit" report "$d/p.json" > "$d/report" || cf_fail "commfit report failed"
grep -x "batch Slurm job $job \"batch\", partition debug, nodes $(hostname -s), time limit 0:05:00" "$d/report" \
    || { head -5 "$d/report"; cf_fail "the report's header does not name the job"; }
"$commfit" report --format html "$d/p.json" > "$d/report.html" || cf_fail "commfit report --format html failed"
grep -q "node &middot; Slurm job $job &quot;batch&quot;, partition debug" "$d/report.html" \
    || cf_fail "the HTML page does not name the job"
echo "ok   the profile, the report and the HTML page name the job"

# 3. salloc -n 1 commfit run -- mpirun
d="$cf_tmp/salloc"
mkdir -p "$d"
salloc -n 1 -J salloc "$commfit" run -o "$d/p.json" -- $mpirun "$known" > "$d/log" 2>&1 || { cat "$d/log"; cf_fail "salloc failed"; }
cf_check known_calls "$d/p.json" 2 > "$d/check" || { cat "$d/log" "$d/check"; cf_fail "salloc: the profile"; }
tail -1 "$d/check"
echo "ok   salloc commfit run -- mpirun: exact"

# 4. a job array of 2: a profile each
d="$cf_tmp/array"
mkdir -p "$d"
script "$d/job.sh" "cd $d && $commfit run -- $mpirun $known"
job=$(sbatch --parsable --wait -n 1 -a 0-1 -J array -o "$d/log-%a" "$d/job.sh") || { cat "$d"/log-*; cf_fail "the array failed"; }
for i in 0 1; do
    p=$(ls "$d"/commfit-*-"${job}_$i".json) || { ls "$d"; cf_fail "array task $i: no profile named with the job"; }
    cf_check known_calls "$p" 2 > "$d/check" || { cat "$d/check"; cf_fail "array task $i: the profile"; }
    check job "$p" array_job_id=$job array_index=$i || exit 1
done
echo "ok   a job array: a profile of each task, exact, named commfit-DATE-${job}_INDEX.json"

# 5. scancel of a batch job running `commfit run -- mpirun` (no exec): Slurm signals the
#    script alone (proctrack/cgroup), the script dies, and slurmstepd kills the rest
#    milliseconds later.  commfit run said at the start how to make the profile; the parts
#    (refreshed every second, or written at the signal commfit run passed on) make it.
d="$cf_tmp/scancel"
mkdir -p "$d"
script "$d/job.sh" "COMMFIT_SPOOL_EVERY=1 $commfit run -o $d/p.json -- $mpirun $abend term $d"
job=$(sbatch --parsable -n 1 -J scancel -o "$d/log" "$d/job.sh")
end_it scancel "$d" "$job" scancel "$job"
grep -q "^commfit run: if this job is killed before its profile is written, \`commfit merge $d/p.parts\` makes it" \
    "$d/log" || cf_fail "scancel: the batch log does not say how to make the profile"
echo "ok   the batch log says how to make the profile"
killed "$d"
echo "ok   scancel of a batch job: exact to each rank's signal or last refresh"

# 6. #SBATCH --signal=B:TERM@30 to `exec commfit run -- mpirun`: commfit run, the script
#    itself, passes SIGTERM on to the ranks and writes the profile before the time limit
d="$cf_tmp/signal"
mkdir -p "$d"
script "$d/job.sh" "#SBATCH --signal=B:TERM@30" "exec $commfit run -o $d/p.json -- $mpirun $abend term $d"
job=$(sbatch --parsable -n 1 -t 1 -J signal -o "$d/log" "$d/job.sh")
gone "$job" 100 || cf_fail "--signal: the job did not end"
cat "$d/log"
grep -q "^commfit run: SIGTERM passed on to the ranks here" "$d/log" || cf_fail "--signal: SIGTERM not passed on"
grep -q "^commfit: the job did not reach MPI_Finalize: partial profile (parts of all 2 ranks) written to $d/p.json" \
    "$d/log" || cf_fail "--signal: no profile"
cf_check abend "$d/p.json" "$d" 2 1 > "$d/check" || { cat "$d/check"; cf_fail "--signal: the profile"; }
tail -1 "$d/check"
grep -q "ranks 0-1 ended by SIGTERM" "$d/p.json" || cf_fail "--signal: the reason"
echo "ok   --signal=B:TERM@30, exec commfit run: the profile before the time limit, exact ($(state "$job"))"

# 7. SIGKILL to one rank: its part of the last refresh, the other's at the SIGTERM mpirun sends
d="$cf_tmp/kill"
mkdir -p "$d"
script "$d/job.sh" "COMMFIT_SPOOL_EVERY=1 $commfit run -o $d/p.json -- $mpirun $abend term $d"
job=$(sbatch --parsable -n 1 -J kill -o "$d/log" "$d/job.sh")
end_it kill "$d" "$job" kill_rank1
grep -q "^commfit: the job did not reach MPI_Finalize: partial profile (parts of all 2 ranks) written to $d/p.json" \
    "$d/log" || cf_fail "kill: no profile"
check merged "$d/p.json" "$d" 0=signal 1=refresh || exit 1
echo "ok   SIGKILL of one rank: its records to its last refresh, the other's exact"

# the time limit (1.)
timed_out "$limit" "$dl"
echo "ok   the time limit, commfit run -- mpirun without exec: exact to each rank's signal or its refresh before the end"

# 8. commfit run -- srun -n 2 --mpi=pmix (Open MPI 4.1 starts under srun through PMIx only)
d="$cf_tmp/srun"
mkdir -p "$d"
# bounded: srun waits for an allocation without end when the CPUs stay held or slurmctld goes
bounded 300 srun "$d/log" "$commfit" run -o "$d/p.json" -- srun -n 2 -J srun --mpi=pmix "$known" ||
    cf_fail "srun failed or did not end within 300 s"
cf_check known_calls "$d/p.json" 2 > "$d/check" || { cat "$d/log" "$d/check"; cf_fail "srun: the profile"; }
tail -1 "$d/check"
check job "$d/p.json" name=slurm step=0 job_name=srun || exit 1
echo "ok   commfit run -- srun --mpi=pmix: exact"

# 9. scancel of the step `commfit run -- srun` runs in a batch job: slurmstepd kills the
#    ranks (SIGKILL: no signal to write at), srun returns, commfit run makes the profile from
#    the parts of their last refresh (every second here), and the script goes on
d="$cf_tmp/step"
mkdir -p "$d"
script "$d/job.sh" "COMMFIT_SPOOL_EVERY=1 $commfit run -o $d/p.json -- srun -n 2 --mpi=pmix $abend term $d" \
    "echo script goes on"
job=$(sbatch --parsable -n 2 -J step -o "$d/log" "$d/job.sh")
end_it step "$d" "$job" scancel "$job.0"
grep -q "^commfit: the job did not reach MPI_Finalize: partial profile (parts of all 2 ranks) written to $d/p.json" \
    "$d/log" || cf_fail "step: no profile"
grep -q "^script goes on" "$d/log" || cf_fail "step: the script did not go on"
check merged "$d/p.json" "$d" 0=any 1=any || exit 1
echo "ok   scancel of a step: the profile, exact to each rank's signal or last refresh, and the script goes on"

# 10, 11. the whole job SIGKILLed (as the OOM killer does it) in sbatch, `commfit run -- mpirun`
#     and `commfit run -- srun --mpi=pmix`: the script, commfit run, the launcher (and the
#     step's ranks) at once
for form in mpirun srun; do
    case $form in
    mpirun) whole_job oom "whole job" "$mpirun" -n 1 ;;
    srun) whole_job oomstep "whole step" "srun -n 2 --mpi=pmix" -n 2 ;;
    esac
    echo "ok   SIGKILL of the whole job, commfit run -- $form: commfit merge makes it, exact to the last refresh, which it names"
done
echo "11 passed, 0 failed"
