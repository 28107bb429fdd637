#!/bin/sh
# commfit trace: every sampled instance of every rank becomes a slice on its
# rank's track, with the waiting part nested inside.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/skew.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/wait_skew" 1000 8 || cf_fail "job failed"
"$CF_BUILDDIR/tools/commfit" trace "$cf_tmp/skew.json" > "$cf_tmp/trace.json" || cf_fail "commfit trace failed"
"$CF_PYTHON" - "$cf_tmp/trace.json" <<'PY' || exit 1
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
fails = 0
def check(what, ok, detail=""):
    global fails
    fails += not ok
    print("%s %s %s" % ("ok  " if ok else "FAIL", what, detail))
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M"}
check("one named track per rank", sorted(names) == [0, 1], str(names))
ops = [e for e in ev if e["ph"] == "X" and e["cat"] == "mpi"]
# 8 allreduces and 2 bcasts on each of 2 ranks
check("slices", len(ops) == 20, str(len(ops)))
check("allreduce slices", sum(e["name"] == "MPI_Allreduce" for e in ops) == 16)
waits = [e for e in ev if e["ph"] == "X" and e["cat"] == "wait"]
inside = all(any(w["tid"] == o["tid"] and o["ts"] <= w["ts"] and w["ts"] + w["dur"] <= o["ts"] + o["dur"] + 1e-3
                 for o in ops) for w in waits)
check("every wait lies inside its operation", inside and len(waits) > 0, "%d waits" % len(waits))
r0 = sum(w["dur"] for w in waits if w["tid"] == 0)
r1 = sum(w["dur"] for w in waits if w["tid"] == 1)
check("rank 0 waits for the late rank 1 at allreduce", r0 > r1, "%.0f us vs %.0f us" % (r0, r1))
print("%d passed, %d failed" % (5 - fails, fails))
sys.exit(1 if fails else 0)
PY
"$CF_BUILDDIR/tools/commfit" trace /nonexistent.json 2> "$cf_tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "nonexistent.json" "$cf_tmp/err" || cf_fail "missing profile: want exit 2 and a message"
echo "ok   a missing profile: exit 2, $(cat "$cf_tmp/err")"
