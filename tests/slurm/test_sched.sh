#!/bin/sh
# The job named from PBS's and LSF's variables (as those schedulers set them
# in a job), the default profile name with the job, the report's header, and
# a profile from before job.scheduler read as before.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
known="$CF_BUILDDIR/tests/mpi/known_calls"
check() { "$CF_PYTHON" "$CF_SRCDIR/tests/slurm/check_slurm.py" "$@"; }
unset SLURM_JOB_ID SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID SLURM_STEP_ID PBS_JOBID LSB_JOBID
export COMMFIT_SUMMARY=0

# 1. PBS: job id, name, array index, queue, the distinct hosts of the node file, walltime
d="$cf_tmp/pbs"
mkdir -p "$d"
printf 'n01\nn01\nn02\nn01\n' > "$d/nodefile"
(cd "$d" && PBS_JOBID=4242[3].pbs01 PBS_JOBNAME=train PBS_ARRAY_INDEX=3 PBS_QUEUE=gpu PBS_NODEFILE="$d/nodefile" \
    PBS_WALLTIME=7200 cf_mpirun 2 -- "$known") || cf_fail "the job failed"
p=$(ls "$d"/commfit-*-4242_3_.pbs01.json) || { ls "$d"; cf_fail "the default name does not carry PBS's job id"; }
cf_check known_calls "$p" 2 > "$d/check" || { cat "$d/check"; cf_fail "the profile"; }
check job "$p" name=pbs job_id=4242[3].pbs01 job_name=train array_index=3 partition=gpu nodes=n01,n02 \
    time_limit_s=7200 step=None || exit 1
"$commfit" report "$p" > "$d/report" || cf_fail "commfit report failed"
grep -x 'batch PBS job 4242\[3\].pbs01 (array index 3) "train", partition gpu, nodes n01,n02, time limit 2:00:00' \
    "$d/report" || { head -4 "$d/report"; cf_fail "the report's header"; }
echo "ok   PBS: the job in the profile, the file name and the report"

# 2. LSF: job id and array index (LSB_JOBINDEX), queue, hosts; the default name JOB_INDEX
d="$cf_tmp/lsf"
mkdir -p "$d"
(cd "$d" && LSB_JOBID=977 LSB_JOBINDEX=5 LSB_JOBNAME="sweep[5]" LSB_QUEUE=normal LSB_HOSTS="h1 h1 h2" \
    cf_mpirun 2 -- "$known") || cf_fail "the job failed"
p=$(ls "$d"/commfit-*-977_5.json) || { ls "$d"; cf_fail "the default name does not carry LSF's job and index"; }
check job "$p" name=lsf job_id=977 array_index=5 partition=normal "nodes=h1 h1 h2" time_limit_s=None || exit 1
echo "ok   LSF: the job in the profile and the file name"

# 3. a control character in a variable never reaches the terminal
d="$cf_tmp/ctl"
mkdir -p "$d"
COMMFIT_OUTPUT="$d/p.json" PBS_JOBID=12 PBS_JOBNAME="$(printf 'a\033[2Jb')" cf_mpirun 2 -- "$known" \
    || cf_fail "the job failed"
"$commfit" report "$d/p.json" > "$d/report" || cf_fail "commfit report failed"
grep -qx 'batch PBS job 12 "a?\[2Jb"' "$d/report" || { head -4 "$d/report"; cf_fail "the escape reached the report"; }
echo "ok   a control character in the job's name is shown as ?"

# 4. outside a batch job, and a profile from before job.scheduler: no section, no header line
d="$cf_tmp/none"
mkdir -p "$d"
COMMFIT_OUTPUT="$d/p.json" cf_mpirun 2 -- "$known" || cf_fail "the job failed"
"$CF_PYTHON" -c 'import json, sys; sys.exit("scheduler" in json.load(open(sys.argv[1]))["job"])' "$d/p.json" \
    || cf_fail "a job outside a batch system has job.scheduler"
old="$CF_SRCDIR/tests/corpus/hpcc-shm-2/profile.json"
"$commfit" report "$old" > "$d/report" || cf_fail "commfit report of $old failed"
! grep -q "^batch " "$d/report" || cf_fail "a batch line for a profile without job.scheduler"
echo "ok   outside a batch job, and in an older profile: no job.scheduler, no header line"
echo "4 passed, 0 failed"
