#!/bin/sh
# The job named from PBS's (PBS Pro's and Torque's) and LSF's variables, as
# those schedulers set them in a job, around a real mpirun: the default
# profile name with the job, the report's header, and a profile from before
# job.scheduler read as before.  No PBS or LSF runs here (Debian packages
# neither): this checks the reading of their variables, not a real job.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
known="$CF_BUILDDIR/tests/mpi/known_calls"
check() { "$CF_PYTHON" "$CF_SRCDIR/tests/slurm/check_slurm.py" "$@"; }
unset SLURM_JOB_ID SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID SLURM_STEP_ID PBS_JOBID PBS_ARRAY_INDEX PBS_ARRAYID LSB_JOBID \
    LSB_JOBINDEX LSB_HOSTS LSB_MCPU_HOSTS
export COMMFIT_SUMMARY=0

# 1. PBS: job id, name, array index, queue, the distinct hosts of the node file, walltime
d="$cf_tmp/pbs"
mkdir -p "$d"
printf 'n01\nn01\nn02\nn01\n' > "$d/nodefile"
(cd "$d" && PBS_JOBID=4242[3].pbs01 PBS_JOBNAME=train PBS_ARRAY_INDEX=3 PBS_QUEUE=gpu PBS_NODEFILE="$d/nodefile" \
    PBS_WALLTIME=7200 cf_mpirun 2 -- "$known") || cf_fail "the job failed"
p=$(ls "$d"/commfit-*-4242_3_.pbs01.json) || { ls "$d"; cf_fail "the default name does not carry PBS's job id"; }
# rank 0 kept the job in the spool (for a profile merged outside the job); it went with the spool
! ls -d "$d"/*.parts 2> /dev/null || cf_fail "the spool is left after the job"
cf_check known_calls "$p" 2 > "$d/check" || { cat "$d/check"; cf_fail "the profile"; }
check job "$p" name=pbs job_id=4242[3].pbs01 job_name=train array_index=3 partition=gpu nodes=n01,n02 \
    time_limit_s=7200 step=None || exit 1
"$commfit" report "$p" > "$d/report" || cf_fail "commfit report failed"
grep -x 'batch PBS job 4242\[3\].pbs01 (array index 3) "train", partition gpu, nodes n01,n02, time limit 2:00:00' \
    "$d/report" || { head -4 "$d/report"; cf_fail "the report's header"; }
echo "ok   PBS: the job in the profile, the file name and the report"

# 1b. Torque: the array index in PBS_ARRAYID, the job id with it
d="$cf_tmp/torque"
mkdir -p "$d"
(cd "$d" && PBS_JOBID=88[7].torque1 PBS_ARRAYID=7 PBS_QUEUE=batch PBS_WALLTIME=90 cf_mpirun 2 -- "$known") ||
    cf_fail "the job failed"
p=$(ls "$d"/commfit-*-88_7_.torque1.json) || { ls "$d"; cf_fail "the default name does not carry Torque's job id"; }
check job "$p" name=pbs job_id=88[7].torque1 array_index=7 partition=batch time_limit_s=90 nodes=None || exit 1
echo "ok   Torque: the array index from PBS_ARRAYID"

# 1c. a PBS job that ends in MPI_Abort: `commfit merge` of its spool, outside the job, names it
#     (rank 0 kept it in the spool at MPI_Init), and the spool goes
d="$cf_tmp/pbsabort"
mkdir -p "$d"
(cd "$d" && PBS_JOBID=51.pbs01 PBS_QUEUE=long PBS_WALLTIME=600 COMMFIT_OUTPUT="$d/p.json" \
    cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/abend" abort "$d" > "$d/log" 2>&1) && cf_fail "MPI_Abort: the job did not fail"
"$commfit" merge -o "$d/p.json" "$d/p.parts" 2> "$d/merge" || { cat "$d/log" "$d/merge"; cf_fail "commfit merge failed"; }
check job "$d/p.json" name=pbs job_id=51.pbs01 partition=long time_limit_s=600 || exit 1
[ ! -e "$d/p.parts" ] || { ls -la "$d/p.parts"; cf_fail "the spool is left after commfit merge"; }
echo "ok   PBS, MPI_Abort: the profile commfit merge makes outside the job names it, and the spool goes"

# 2. LSF: job id and array index (LSB_JOBINDEX), queue, hosts; the default name JOB_INDEX.
#    LSB_HOSTS names a host once per slot: 6 slots on 3 hosts give 3 nodes, in the order
#    of first appearance (h1 is not taken for a part of h10)
d="$cf_tmp/lsf"
mkdir -p "$d"
(cd "$d" && LSB_JOBID=977 LSB_JOBINDEX=5 LSB_JOBNAME="sweep[5]" LSB_QUEUE=normal LSB_HOSTS="h2 h2 h10 h1 h2 h1" \
    cf_mpirun 2 -- "$known") || cf_fail "the job failed"
p=$(ls "$d"/commfit-*-977_5.json) || { ls "$d"; cf_fail "the default name does not carry LSF's job and index"; }
check job "$p" name=lsf job_id=977 array_index=5 partition=normal nodes=h2,h10,h1 time_limit_s=None || exit 1
"$commfit" report "$p" > "$d/report" || cf_fail "commfit report failed"
grep -x 'batch LSF job 977 (array index 5) "sweep\[5\]", partition normal, nodes h2,h10,h1' "$d/report" ||
    { head -4 "$d/report"; cf_fail "the report's header"; }
echo "ok   LSF: the job in the profile (6 slots, 3 distinct hosts), the file name and the report"

# 2b. LSF without LSB_HOSTS (a job too large for it): LSB_MCPU_HOSTS, host and slot count
#     in turn; the counts are not hosts
d="$cf_tmp/lsfmcpu"
mkdir -p "$d"
(cd "$d" && LSB_JOBID=978 LSB_MCPU_HOSTS="n07 40 n03 40 n12 8 " COMMFIT_OUTPUT="$d/p.json" cf_mpirun 2 -- "$known") ||
    cf_fail "the job failed"
check job "$d/p.json" name=lsf job_id=978 nodes=n07,n03,n12 array_index=None || exit 1
echo "ok   LSF: the 3 hosts of LSB_MCPU_HOSTS when LSB_HOSTS is not set"

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
echo "7 passed, 0 failed"
