#!/bin/sh
# A call that returns an error is counted as failed, not as traffic: three
# sends to a rank that does not exist and one real 4-byte send give one
# MPI_Send of 4 bytes and job.failed_calls = 3, which the report states.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/f.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/failed_calls" \
    || cf_fail "the program failed (its sends did not fail as expected?)"
"$CF_BUILDDIR/tools/commfit" report --format json "$cf_tmp/f.json" > "$cf_tmp/r.json" || cf_fail "report failed"
"$CF_PYTHON" - "$cf_tmp/f.json" "$cf_tmp/r.json" <<'PY'
import json, sys
prof, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
fails = 0
def check(what, ok, detail=""):
    global fails
    fails += not ok
    print("%s %s: %s" % ("ok  " if ok else "FAIL", what, detail))
send = [r for r in prof["records"] if r["layer"] == "mpi" and r["op"] == "MPI_Send"]
check("one MPI_Send recorded", sum(r["calls"] for r in send) == 1, str([(r["calls"], r["bytes"]) for r in send]))
check("of 4 bytes", sum(r["bytes"] for r in send) == 4, str(sum(r["bytes"] for r in send)))
check("three failed calls in the profile", prof["job"].get("failed_calls") == 3, str(prof["job"].get("failed_calls")))
check("the report says so", any("3 point-to-point calls returned an error" in c for c in rep.get("caveats", [])),
      str(rep.get("caveats")))
print("%d failed" % fails)
sys.exit(1 if fails else 0)
PY
