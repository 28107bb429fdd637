#!/bin/sh
# MPI_Waitall over 5000 requests, more than the fixed scratch of 4096: every
# completion is recorded (the scratch grows; before, none was), and the
# profile is complete.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/m.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/many_requests" \
    || cf_fail "the job failed"
"$CF_PYTHON" - "$cf_tmp/m.json" <<'PY'
import json, sys
prof = json.load(open(sys.argv[1]))
fails = 0
def check(what, ok, detail=""):
    global fails
    fails += not ok
    print("%s %s: %s" % ("ok  " if ok else "FAIL", what, detail))
rec = lambda op: [r for r in prof["records"] if r["layer"] == "mpi" and r["op"] == op]
w = rec("MPI_Waitall")
check("two MPI_Waitall calls", sum(r["calls"] for r in w) == 2, str([r["calls"] for r in w]))
# the receives' 20000 bytes all complete there; of the sends, those Open MPI
# finished inside MPI_Isend (its shared completed request) were booked at
# the post, so the senders' Waitall completes up to 20000 more
b = sum(r["bytes"] for r in w)
check("they completed the 5000 receives' 20000 bytes and up to 20000 of the sends'", 20000 < b <= 40000, str(b))
for op in ("MPI_Isend", "MPI_Irecv"):
    r = rec(op)
    check("%s: 5000 calls, 20000 bytes" % op, sum(x["calls"] for x in r) == 5000 and sum(x["bytes"] for x in r) == 20000,
          str([(x["calls"], x["bytes"]) for x in r]))
check("the profile is complete", prof["job"]["partial"] is False, str(prof["job"].get("partial_reasons")))
print("%d failed" % fails)
sys.exit(1 if fails else 0)
PY
