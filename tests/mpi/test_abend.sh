#!/bin/sh
# A job that does not reach MPI_Finalize leaves a profile: killed by SIGTERM
# (a batch system at its time limit: every process, then SIGKILL), ended by
# MPI_Abort, or exited without finalizing; and a rank killed outright
# (SIGKILL) leaves the others' records.  Each rank's calls are checked
# against the tally the program keeps in a mapped file; in the loop that a
# signal interrupts, a rank may have recorded one call it had not tallied yet.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
prog="$CF_BUILDDIR/tests/mpi/abend"
root=""
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
# mpirun sends SIGKILL 1 s after its SIGTERM; on a loaded machine (oversubscribed ranks that
# poll) a rank may not get the CPU to write its part in that time: the tests give it 5 s
grace="--mca odls_base_sigkill_timeout 5"
launch() { # NP: the launcher line commfit run is given
    echo "$CF_MPIRUN" $root --oversubscribe --bind-to none -np "$1" --mca btl self,vader,tcp --mca pml ob1 $grace
}

# the ranks' pids, once each has done its known calls and N loop calls
wait_loop() { # DIR NP N
    "$CF_PYTHON" - "$@" <<'PY'
import os, struct, sys, time
d, p, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for _ in range(1200):
    try:
        t = [struct.unpack("9q", open("%s/tally.%d" % (d, r), "rb").read(72)) for r in range(p)]
        if all(x[1] >= 1 and x[8] >= n for x in t):
            print(" ".join(str(x[0]) for x in t))
            sys.exit(0)
    except (OSError, struct.error):
        pass
    time.sleep(0.05)
sys.exit(1)
PY
}

# 1. SIGTERM to every process of the job (the ranks, mpirun and commfit run), SIGKILL 10 s later
d="$cf_tmp/term"; mkdir -p "$d"
COMMFIT_SUMMARY=0 COMMFIT_SPOOL_FANOUT=2 "$commfit" run -o "$d/p.json" -- $(launch 3) "$prog" term "$d" \
    > "$d/out" 2> "$d/err" &
run=$!
pids=$(wait_loop "$d" 3 50) || { cat "$d/err"; kill -KILL $run; cf_fail "the ranks did not start"; }
mpirun=$(pgrep -P $run)
kill -TERM $pids $mpirun $run
# SIGKILL 30 s later to whatever of the job is left (commfit run, which
# gathers, is spared: a batch system's SIGKILL would leave that to commfit merge)
t0=$(date +%s)
for i in $(seq 300); do kill -0 $mpirun 2> /dev/null || break; sleep 0.1; done
if kill -0 $mpirun 2> /dev/null; then
    kill -KILL $pids $mpirun 2> /dev/null
    echo "SIGKILL sent after $(($(date +%s) - t0)) s"
else
    echo "mpirun ended $(($(date +%s) - t0)) s after the SIGTERM"
fi
wait $run; rc=$?
cat "$d/err"
[ "$rc" != 0 ] || cf_fail "commfit run returned 0 for a killed job"
echo "ok   commfit run returned $rc for a killed job"
grep -q "^commfit: the job did not reach MPI_Finalize: partial profile (parts of all 3 ranks) written to $d/p.json" \
    "$d/err" || cf_fail "no line saying where the profile is"
echo "ok   one line says where the profile is"
[ ! -e "$d/p.parts" ] || cf_fail "the spool is left behind"
cf_check abend "$d/p.json" "$d" 3 1 || exit 1
"$commfit" report "$d/p.json" > "$d/report" || cf_fail "commfit report failed on the partial profile"
grep -q "ranks 0-2 ended by SIGTERM" "$d/report" || cf_fail "the report does not say how the job ended"
echo "ok   commfit report reads it and says how the job ended"

# 2. MPI_Abort on rank 1, launched by hand, merged by hand; parts in subdirectories of 2 ranks
d="$cf_tmp/abort"; mkdir -p "$d"
COMMFIT_OUTPUT="$d/p.json" COMMFIT_SUMMARY=0 COMMFIT_SPOOL_FANOUT=2 \
    cf_mpirun 3 $grace -- "$prog" abort "$d" > /dev/null 2> "$d/err" && cf_fail "MPI_Abort did not end the job"
grep "^commfit: rank 1: MPI_Abort before MPI_Finalize: \`commfit merge $d/p.parts\` makes the profile" "$d/err" \
    || { cat "$d/err"; cf_fail "no message from the aborting rank"; }
ls "$d/p.parts/ranks-0-1/rank-0.spill" "$d/p.parts/ranks-0-1/rank-1.spill" "$d/p.parts/ranks-2-3/rank-2.spill" \
    || cf_fail "the parts are not in subdirectories of COMMFIT_SPOOL_FANOUT=2 ranks"
"$commfit" merge "$d/p.parts" 2> "$d/merge" || { cat "$d/merge"; cf_fail "commfit merge failed"; }
cat "$d/merge"
cf_check abend "$d/p.json" "$d" 3 0 || exit 1
grep -q "rank 1 called MPI_Abort (errorcode 3)" "$d/p.json" || cf_fail "the abort is not among the reasons"
"$commfit" report "$d/p.json" > /dev/null || cf_fail "commfit report failed"
echo "ok   MPI_Abort: exact counts, the reason, the report"

# 3. every rank exits (status 7) without MPI_Finalize, under commfit run
d="$cf_tmp/exit"; mkdir -p "$d"
COMMFIT_SUMMARY=0 "$commfit" run -o "$d/p.json" -- $(launch 2) "$prog" exit "$d" > /dev/null 2> "$d/err" \
    && cf_fail "the job returned 0"
grep "^commfit: the job did not reach MPI_Finalize" "$d/err" || { cat "$d/err"; cf_fail "no profile made"; }
cf_check abend "$d/p.json" "$d" 2 0 || exit 1
grep -q "exited (status 7) without it" "$d/p.json" || cf_fail "the exit is not among the reasons"
"$commfit" report "$d/p.json" > /dev/null || cf_fail "commfit report failed"
echo "ok   exit without MPI_Finalize: exact counts, the reason, the report"

# 4. one rank killed outright: the others' records, each marked as lacking a rank
d="$cf_tmp/kill"; mkdir -p "$d"
COMMFIT_OUTPUT="$d/p.json" COMMFIT_SUMMARY=0 cf_mpirun 3 $grace -- "$prog" term "$d" > /dev/null 2> "$d/err" &
job=$!
pids=$(wait_loop "$d" 3 20) || { kill -KILL $job; cf_fail "the ranks did not start"; }
kill -KILL ${pids##* }
wait $job
"$commfit" merge --keep -o "$d/m.json" "$d/p.parts" 2> "$d/merge" || { cat "$d/err" "$d/merge"; cf_fail "commfit merge failed"; }
cat "$d/merge"
grep -q "(parts of 2 of 3 ranks)" "$d/merge" || cf_fail "the merge does not say a rank is missing"
"$CF_PYTHON" - "$d" <<'PY' || exit 1
import json, os, struct, subprocess, sys
d = sys.argv[1]
p = json.load(open(d + "/m.json"))
why = " | ".join(p["job"]["partial_reasons"])
ok = "1 of 3 ranks left nothing" in why and "ranks 2" in why or "rank 2" in why
print("%s the missing rank is named: %s" % ("ok  " if ok else "FAIL", why))
sys.exit(0 if ok else 1)
PY
# ranks 0 and 1: exact up to the loop, which the kill interrupted
mv "$d/tally.2" "$d/tally.2.killed"
"$CF_PYTHON" - "$d" <<'PY' || exit 1
import json, struct, sys
d = sys.argv[1]
p = json.load(open(d + "/m.json"))
t = [struct.unpack("9q", open("%s/tally.%d" % (d, r), "rb").read(72)) for r in (0, 1)]
ar = sum(r["calls"] for r in p["records"] if r["op"] == "MPI_Allreduce" and r["size_lo"] == 64)
miss = {r.get("ranks_missing") for r in p["records"]}
ok = ar == t[0][2] + t[1][2] and miss == {1} and sorted(x["rank"] for x in p["ranks"]) == [0, 1]
print("%s ranks 0 and 1: %d allreduces of 64 B (tallies %d), every record ranks_missing 1: %s" %
      ("ok  " if ok else "FAIL", ar, t[0][2] + t[1][2], miss))
sys.exit(0 if ok else 1)
PY
"$commfit" report "$d/m.json" > /dev/null || cf_fail "commfit report failed"
echo "ok   a rank killed by SIGKILL: the others' records, marked"

# 5. a spool an earlier job left (never merged) is not taken for a job that finishes
"$CF_PYTHON" - "$d/p.parts" <<'PY'
import glob, struct, sys, time
for f in glob.glob(sys.argv[1] + "/*/rank-*.spill"):
    with open(f, "r+b") as h:   # the job started an hour ago (init_wall, at byte 104 of the header)
        h.seek(104)
        h.write(struct.pack("d", time.time() - 3600))
PY
COMMFIT_SUMMARY=0 "$commfit" run -o "$d/p.json" -- $(launch 2) "$prog" finish "$d" > /dev/null 2> "$d/err2" \
    || { cat "$d/err2"; cf_fail "a job that finishes failed"; }
"$CF_PYTHON" -c 'import json, sys; p = json.load(open(sys.argv[1])); sys.exit(p["job"]["partial"] or p["job"]["ranks"] != 2)' \
    "$d/p.json" || cf_fail "the earlier job's parts replaced a finished job's profile"
[ -d "$d/p.parts" ] || cf_fail "the earlier job's spool was removed"
! grep -q "did not reach" "$d/err2" || cf_fail "a finished job reported as unfinished"
echo "ok   an earlier job's spool is left alone when a job finishes"

# 6. commfit run names the spool (absolute) for ranks on every node: Open MPI's launcher gets -x for it
mkdir -p "$cf_tmp/bin"
printf '#!/bin/sh\necho "$@"\nenv | grep ^COMMFIT_SPOOL=\n' > "$cf_tmp/bin/mpirun"
chmod +x "$cf_tmp/bin/mpirun"
(cd "$cf_tmp" && "$commfit" run -o out.json -- "$cf_tmp/bin/mpirun" -np 2 ./app) > "$cf_tmp/args"
grep -q -- "-x COMMFIT_SPOOL " "$cf_tmp/args" && grep -q -- "-x COMMFIT_GATHER " "$cf_tmp/args" && grep -qx "COMMFIT_SPOOL=$cf_tmp/out.parts" "$cf_tmp/args" \
    || { cat "$cf_tmp/args"; cf_fail "the launcher is not given the spool"; }
echo "ok   the launcher forwards COMMFIT_SPOOL=$cf_tmp/out.parts and COMMFIT_GATHER"

# 7. COMMFIT_SPILL=0: nothing is spilled
d="$cf_tmp/off"; mkdir -p "$d"
COMMFIT_OUTPUT="$d/p.json" COMMFIT_SUMMARY=0 COMMFIT_SPILL=0 cf_mpirun 2 $grace -- "$prog" exit "$d" > /dev/null 2>&1
[ ! -e "$d/p.parts" ] && [ ! -e "$d/p.json" ] || cf_fail "COMMFIT_SPILL=0 left records"
echo "ok   COMMFIT_SPILL=0 leaves nothing"

# 8. a crash (SIGSEGV on rank 1, whose handler Open MPI installed: it prints a backtrace and
#    raises the signal again): the crashed rank's records too, exact
d="$cf_tmp/segv"; mkdir -p "$d"
COMMFIT_SUMMARY=0 "$commfit" run -o "$d/p.json" -- $(launch 3) "$prog" segv "$d" > /dev/null 2> "$d/err" \
    && cf_fail "the job returned 0"
grep "^commfit: the job did not reach MPI_Finalize: partial profile (parts of all 3 ranks)" "$d/err" \
    || { cat "$d/err"; cf_fail "no profile of all 3 ranks"; }
cf_check abend "$d/p.json" "$d" 3 0 || exit 1
grep -q "rank 1 ended by SIGSEGV" "$d/p.json" || cf_fail "the crash is not among the reasons"
echo "ok   a crash: every rank's records, the reason"

# 9. a signal the job handles itself (its handler, installed before MPI_Init, returns): the job
#    goes on, recording resumes, the part written at the signal is withdrawn
d="$cf_tmp/usr1"; mkdir -p "$d"
COMMFIT_OUTPUT="$d/p.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$prog" usr1 "$d" > /dev/null 2> "$d/err" \
    || { cat "$d/err"; cf_fail "the job with its own SIGUSR1 handler failed"; }
[ ! -e "$d/p.parts" ] || cf_fail "the withdrawn part's spool is left"
"$CF_PYTHON" - "$d/p.json" <<'PY' || exit 1
import json, sys
p = json.load(open(sys.argv[1]))
n = sum(r["calls"] for r in p["records"] if r["op"] == "MPI_Allreduce" and r["size_lo"] == 4)
ok = not p["job"]["partial"] and n == 2 * 20
print("%s the job's own handler: complete profile, all 40 loop allreduces recorded (%d), partial %s" %
      ("ok  " if ok else "FAIL", n, p["job"]["partial"]))
sys.exit(0 if ok else 1)
PY
