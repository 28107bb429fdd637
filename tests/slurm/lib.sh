# The setup and helpers of the Slurm tests (sourced): starts tests/slurm/slurm.sh's Slurm
# (CF_SLURM_NODES=2: two nodes in network namespaces) and stops it at the end if no other test
# run uses it; the Slurm commands run where they reach it (CF_SLURM_IN).
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
[ "$CF_MPI_FAMILY" = openmpi ] || { echo "SKIP: the Slurm forms are tested with Open MPI"; exit 77; }
slurm="$CF_SRCDIR/tests/slurm/slurm.sh"
CF_SLURM_DIR=${CF_SLURM_DIR:-/tmp/commfit-slurm}
export CF_SLURM_DIR
# Test runs of other build trees may use the same Slurm at once: each holds a shared lock on
# DIR.users while it runs, and the last to leave stops it.  (A run that stopped it under another
# left that one's srun waiting without end for an allocation from a slurmctld gone.)
# A run alone starts it under the lock held exclusive (so it may restart a Slurm unfit for it),
# then shares it.
exec 8>> "$CF_SLURM_DIR.users" || { echo "SKIP: cannot lock $CF_SLURM_DIR.users"; exit 77; }
if flock -x -n 8; then alone=1; else alone=0; fi
[ $alone = 1 ] || flock -s 8 || { echo "SKIP: cannot lock $CF_SLURM_DIR.users"; exit 77; }
CF_SLURM_ALONE=$alone "$slurm" start 8>&- # the daemons do not hold the lock
rc=$?
flock -s 8
[ $rc = 0 ] || { echo "SKIP: Slurm cannot run here (above)"; exit 77; }
trap 'flock -x -n 8 && "$slurm" stop; rm -rf "$cf_tmp"' EXIT
eval "$("$slurm" env)"
echo "Slurm up: ${CF_SLURM_NODES:-1} node(s), proctrack/$(cat "$CF_SLURM_DIR/proctrack")"
# CMD...: where the commands reach slurmctld (in a node's network namespace for two nodes)
in_slurm() { if [ -n "${CF_SLURM_IN:-}" ]; then $CF_SLURM_IN "$@"; else command "$@"; fi; }
for c in sbatch salloc srun squeue scontrol scancel sinfo; do
    eval "$c() { in_slurm $c \"\$@\"; }"
done
# ranks that wait yield the CPU: the Slurm jobs overlap the other tests
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 COMMFIT_SUMMARY=0 OMPI_MCA_mpi_yield_when_idle=1
commfit="$CF_BUILDDIR/tools/commfit"
known="$CF_BUILDDIR/tests/mpi/known_calls"
abend="$CF_BUILDDIR/tests/mpi/abend"
mpirun="$CF_MPIRUN --oversubscribe --bind-to none -np 2 --mca btl self,vader,tcp --mca pml ob1"
check() { "$CF_PYTHON" "$CF_SRCDIR/tests/slurm/check_slurm.py" "$@"; }

# srun_stuck NAME: one line on what a job NAME that did not end in time waited on
srun_stuck() {
    st=$(squeue -h -n "$1" -o "%i %T %r" 2> /dev/null | head -1)
    if ! squeue -h > /dev/null 2>&1; then
        echo "srun waited on a slurmctld that no longer answers (srun waits for an allocation without end)"
    elif [ -z "$st" ]; then
        echo "no job $1 in the queue: srun ended or never reached slurmctld"
    elif [ "${st#* }" != "${st#* PENDING}" ]; then
        echo "srun waited for an allocation: job $st; the nodes' CPUs (allocated/idle/other/total): $(sinfo -h -o %C);" \
            "the CPUs held by: $(squeue -h -t R,CG -o '%i %j %T' | tr '\n' ';')"
    else
        echo "job $st: the step started but did not end (Slurm/PMIx or the program): $(scontrol listpids "${st%% *}" 2> /dev/null | wc -l) processes"
    fi
}

# bounded SECONDS NAME LOG CMD...: CMD (which runs the job NAME) within SECONDS, its output in
# LOG; else LOG shown, with one line on what it waited on (seen 10 s before the end, by the
# clock: a loaded machine stretches a count of sleeps past it)
bounded() {
    secs=$1 name=$2 log=$3
    shift 3
    rm -f "$log.stuck"
    at=$(($(date +%s) + secs - 10))
    (while [ "$(date +%s)" -lt $at ]; do sleep 1; done; srun_stuck "$name" > "$log.stuck") &
    watch=$!
    timeout "$secs" "$@" > "$log" 2>&1
    rc=$?
    kill $watch 2> /dev/null
    wait $watch 2> /dev/null
    [ $rc = 0 ] && return 0
    cat "$log"
    [ -s "$log.stuck" ] && cat "$log.stuck"
    return 1
}

# script FILE LINE...: a batch script of these lines
script() {
    f=$1
    shift
    { echo "#!/bin/sh"; for l in "$@"; do echo "$l"; done; } > "$f"
}
# gone JOB SECONDS: until the job has left the node (its steps and script ended)
gone() {
    for _ in $(seq $(($2 * 5))); do
        case "$(squeue -h -j "$1" -o %T 2> /dev/null)" in "" | COMPLETED | CANCELLED | TIMEOUT | FAILED) return 0 ;; esac
        sleep 0.2
    done
    return 1
}
state() { scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
# looping DIR N: until both ranks of abend have looped N times; prints their pids
looping() {
    for _ in $(seq 600); do
        p=$("$CF_PYTHON" -c '
import struct, sys
t = [struct.unpack("9q", open("%s/tally.%d" % (sys.argv[1], r), "rb").read(72)) for r in (0, 1)]
print(" ".join(str(x[0]) for x in t) if all(x[1] >= 1 and x[8] >= int(sys.argv[2]) for x in t) else "")
' "$1" "$2" 2> /dev/null)
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}
# parts SPOOL N: until N parts are there (the ranks refreshed them once)
parts() {
    for _ in $(seq 300); do
        [ "$(find "$1" -name 'rank-*.spill' 2> /dev/null | wc -l)" -ge "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
# each_rank SPOOL DIR [KIND]: each rank's part alone merged, checked against its tally
each_rank() {
    for r in 0 1; do
        one="$2/one$r"
        mkdir -p "$one"
        chmod 700 "$one"
        part=$(find "$1" -name "rank-$r.spill")
        [ -n "$part" ] || cf_fail "rank $r left no part in $1"
        cp "$part" "$one/"
        "$commfit" merge -o "$2/rank$r.json" "$one" 2> /dev/null || cf_fail "commfit merge of rank $r's part failed"
        check rank "$2/rank$r.json" "$2" $r ${3:-} || exit 1
    done
}

# end_it WHAT DIR JOB CMD...: once both ranks loop and have refreshed their parts, CMD ends
# the job (it may use $pids, the ranks' pids), which must then leave the node; its log is shown
end_it() {
    what=$1 d=$2 job=$3
    shift 3
    pids=$(looping "$d" 50) || { cat "$d/log"; cf_fail "$what: the ranks did not start"; }
    parts "$d/p.parts" 2 || cf_fail "$what: no part refreshed within 30 s"
    "$@"
    gone "$job" 30 || cf_fail "$what: the job did not end"
    cat "$d/log"
}
kill_rank1() { kill -KILL "${pids##* }"; }

# killed DIR: the profile commfit run made (it had the time: proctrack/linuxproc signals every
# process of the job), else each rank's part, checked
killed() {
    if [ -f "$1/p.json" ]; then
        echo "commfit run gathered the parts"
        check merged "$1/p.json" "$1" 0=any 1=any || exit 1
    else
        echo "commfit run was killed first: the parts, one by one"
        each_rank "$1/p.parts" "$1"
    fi
}

# timed_out JOB DIR: the job of `commfit run -- mpirun abend term` reached its time limit; the
# ranks had learned its end, and the profile (or the parts) is exact to the signal or the refresh
timed_out() {
    gone "$1" 150 || cf_fail "the time limit: the job is still there after 3.5 min"
    cat "$2/log"
    [ "$(state "$1")" = TIMEOUT ] || cf_fail "the time limit: the job ended $(state "$1")"
    # the end is the second the job started plus 60 s: up to 60 s from MPI_Init, rounded
    grep -q "the job's end: \([1-5][0-9]\|60\) s from now" "$2/log" ||
        cf_fail "the time limit: the ranks did not learn the job's end (10 to 60 s from MPI_Init)"
    killed "$2"
}

# whole JOB DIR WHAT: the OOM killer's way (memory.oom.group): once both ranks of `abend
# settle` made their last call and refreshed their parts twice since (so that a whole refresh
# began after it), every process of the job - the script, commfit run, the launcher, the
# ranks - SIGKILLed (all stopped, then the ranks first), no other signal; then `commfit merge`
# makes the profile from the parts, each count exact, the reason saying up to which refresh
whole() {
    job=$1 d=$2 what=$3
    for _ in $(seq 600); do
        [ -s "$d/settled.0" ] && [ -s "$d/settled.1" ] && break
        sleep 0.1
    done
    [ -s "$d/settled.0" ] && [ -s "$d/settled.1" ] || { cat "$d/log"; cf_fail "$what: the ranks did not settle"; }
    after=$(cat "$d"/settled.* | sort -n | tail -1)
    for r in 0 1; do
        seen=""
        for _ in $(seq 300); do
            m=$(stat -c %.9Y "$(find "$d/p.parts" -name "rank-$r.spill")" 2> /dev/null)
            [ -n "$m" ] && awk -v m="$m" -v a="$after" 'BEGIN { exit !(m > a) }' && case " $seen " in *" $m "*) ;; *) seen="$seen $m" ;; esac
            [ "$(echo "$seen" | wc -w)" -ge 2 ] && break
            sleep 0.1
        done
        [ "$(echo "$seen" | wc -w)" -ge 2 ] || cf_fail "$what: rank $r did not refresh its part after its last call"
    done
    # on each node of the job (listpids asks the slurmstepd of the node it names)
    pids=$(for n in $(scontrol show hostnames "$(squeue -h -j "$job" -o %N)"); do
        scontrol listpids "$job" "$n" | awk 'NR > 1 { print $1 }'
    done | sort -u | tr '\n' ' ')
    ranks=""
    for r in 0 1; do
        rp=$("$CF_PYTHON" -c 'import struct, sys; print(struct.unpack("q", open(sys.argv[1], "rb").read(8))[0])' "$d/tally.$r")
        case " $pids " in *" $rp "*) ;; *) cf_fail "$what: rank $r (pid $rp) is not among the job's processes: $pids" ;; esac
        ranks="$ranks $rp"
    done
    # the others leaves first: a process that dies orphans the process groups below it, and the
    # kernel wakes their stopped members with SIGHUP and SIGCONT (a rank wrote its part at it)
    order=$(ps -o pid=,ppid= -p "$(echo $pids | tr ' ' ,)" | awk '{ up[$1] = $2 }
        END { for (p in up) { n = 0; for (q = up[p]; q in up; q = up[q]) n++; print n, p } }' | sort -rn | awk '{ print $2 }')
    # stopped first, so that none of them sees another die before its own SIGKILL (commfit
    # run would pass a SIGTERM on to the ranks when the batch script goes); the ranks first
    kill -STOP $pids 2> /dev/null
    kill -KILL $ranks 2> /dev/null
    for p in $order; do kill -KILL "$p" 2> /dev/null; done
    killed=$(date +%s.%N)
    gone "$job" 30 || cf_fail "$what: the job did not end"
    echo "$what: SIGKILL to the job's $(echo $pids | wc -w) processes, all stopped; the job ended $(state "$job")"
    cat "$d/log"
    [ ! -e "$d/p.json" ] || cf_fail "$what: a profile, though commfit run was SIGKILLed"
    grep -q "^commfit run: if this job is killed before its profile is written, \`commfit merge $d/p.parts\` makes it" \
        "$d/log" || cf_fail "$what: the batch log does not say how to make the profile"
    "$commfit" merge -o "$d/p.json" "$d/p.parts" 2> "$d/merge" || { cat "$d/merge"; cf_fail "$what: commfit merge failed"; }
    grep -qx "commfit: the job did not reach MPI_Finalize: partial profile (parts of all 2 ranks) written to $d/p.json" \
        "$d/merge" || { cat "$d/merge"; cf_fail "$what: commfit merge said otherwise"; }
    check merged "$d/p.json" "$d" 0=settled 1=settled || exit 1
    check refreshed "$d/p.json" "$d" "$killed" || exit 1
    "$CF_PYTHON" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["ended"]["job"] != sys.argv[2])' \
        "$d/p.json" "SLURM_JOB_ID $job" || cf_fail "$what: the profile does not name the job"
    # the job section, as rank 0 saw it at MPI_Init and kept in the spool
    check job "$d/p.json" name=slurm job_id="$job" partition=debug || exit 1
    "$commfit" report "$d/p.json" > "$d/report" || cf_fail "$what: commfit report failed"
    grep -q "ranks 0-1 killed with no chance to write (SIGKILL, or the node lost): records up to the last refresh, at " \
        "$d/report" || { cat "$d/report"; cf_fail "$what: the report does not say where the counts end"; }
    grep "last refresh" "$d/report" | head -1
}


# whole_job NAME WHAT LAUNCH SBATCH_ARG...: a batch job (its name NAME, the job id left in $job,
# its directory in $d) of `commfit run -- LAUNCH abend settle`, SIGKILLed whole (above)
whole_job() {
    name=$1 d="$cf_tmp/$1" what=$2 launch=$3
    shift 3
    mkdir -p "$d"
    script "$d/job.sh" "COMMFIT_SPOOL_EVERY=1 $commfit run -o $d/p.json -- $launch $abend settle $d"
    job=$(sbatch --parsable -J "$name" -o "$d/log" "$@" "$d/job.sh" 2>&1) || cf_fail "$what: sbatch refused the job: $job"
    whole "$job" "$d" "$what"
}
