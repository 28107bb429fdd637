#!/bin/sh
# The records a full table drops are said in one sentence, the same from
# MPI_Finalize and from the spool of a job that did not finish: the same
# program (8200 allreduces, each in a region of its own) with tables of 64
# slots (63 records), once to MPI_Finalize, once exiting without it and
# merged from its spool.  Each rank keeps its first 63 records and drops
# the other 8137 calls (the 9 past the region table's 8191 included: their
# record, outside any region, is new too), 16274 over 2 ranks.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
prog="$CF_BUILDDIR/tests/mpi/many_regions"
export COMMFIT_SUMMARY=0 COMMFIT_TABLE_SIZE=64
COMMFIT_OUTPUT="$cf_tmp/fin.json" cf_mpirun 2 -- "$prog" full 2> "$cf_tmp/err" ||
    { cat "$cf_tmp/err"; cf_fail "full: the job failed"; }
COMMFIT_OUTPUT="$cf_tmp/spill.json" cf_mpirun 2 --mca odls_base_sigkill_timeout 5 -- "$prog" full-exit > /dev/null 2>&1
[ -d "$cf_tmp/spill.parts" ] || cf_fail "full-exit: no spool left"
"$CF_BUILDDIR/tools/commfit" merge "$cf_tmp/spill.parts" 2> "$cf_tmp/merge" || { cat "$cf_tmp/merge"; cf_fail "merge failed"; }
"$CF_PYTHON" - "$cf_tmp/fin.json" "$cf_tmp/spill.json" <<'PY' || exit 1
import json, sys
from checks import check, done
want = ("records dropped: 16274 calls found the tables full (COMMFIT_TABLE_SIZE=64); "
        "each record says how many ranks' calls it may lack (ranks_missing)")
said = {}
for what, path in (("finalize", sys.argv[1]), ("merged", sys.argv[2])):
    p = json.load(open(path))
    why = p["job"]["partial_reasons"]
    said[what] = [s for s in why if s.startswith("records dropped")]
    check("%s: partial, the sentence once" % what, p["job"]["partial"] and said[what] == [want], repr(why))
    kept = sum(r["calls"] for r in p["records"] if r["op"] == "MPI_Allreduce")
    check("%s: 63 records kept on each rank" % what, kept == 2 * 63, "%d allreduces in the records" % kept)
    dropped = [r.get("dropped") for r in p["ranks"]]
    check("%s: 8137 calls dropped on each rank" % what, dropped == [8137, 8137], repr(dropped))
check("the same sentence from both", said["finalize"] == said["merged"], repr(said))
done()
PY
