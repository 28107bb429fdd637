#!/bin/sh
# A record some rank could not keep (its table was full) is exact for the
# ranks that kept it and says how many ranks it may lack; the report marks
# it.  Records every rank kept, or that no rank that dropped could have had,
# stay unmarked.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
# the MPI layer alone: MPICH over UCX would add two UCX records beneath each
# MPI_Sendrecv, and the table would fill at other regions than these counts say
COMMFIT_OUTPUT="$cf_tmp/t.json" COMMFIT_SUMMARY=0 COMMFIT_TABLE_SIZE=64 COMMFIT_UCX=0 \
    cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/small_table" 2> "$cf_tmp/err" || { cat "$cf_tmp/err"; cf_fail "job failed"; }
"$CF_PYTHON" - "$cf_tmp/t.json" <<'PY' || exit 1
import json, sys
p = json.load(open(sys.argv[1]))
from checks import check, done
rec = {(r["op"], r.get("region")): r for r in p["records"] if r["layer"] == "mpi"}
sr = {int(k[1][1:]): r for k, r in rec.items() if k[0] == "MPI_Sendrecv"}
check("regions r0-r19: both ranks, exact", all(sr[k]["calls"] == 2 and not sr[k].get("ranks_missing") for k in range(20)),
      str([(sr[k]["calls"], sr[k].get("ranks_missing")) for k in (0, 19)]))
check("regions r20-r62: rank 0 only, exact (rank 1, which dropped nothing, had none)",
      all(sr[k]["calls"] == 1 and not sr[k].get("ranks_missing") for k in range(20, 63)))
check("regions r63-r79: dropped on the only rank that had them, not shown", not any(k in sr for k in range(63, 80)),
      str(sorted(k for k in sr if k >= 63)))
for op in ("MPI_Allreduce", "MPI_Barrier"):
    r = rec.get((op, None))
    check("%s: rank 1's call, marked as lacking 1 rank" % op, r is not None and r["calls"] == 1
          and r.get("ranks_missing") == 1, str(r and (r["calls"], r.get("ranks_missing"))))
why = " ".join(p["job"]["partial_reasons"])
check("partial, naming ranks_missing", p["job"]["partial"] and "ranks_missing" in why, why)
done()
PY
"$CF_BUILDDIR/tools/commfit" report "$cf_tmp/t.json" > "$cf_tmp/report" || cf_fail "report failed"
grep -E "^  MPI_Allreduce +world +intra-node +1\+ " "$cf_tmp/report" || { cat "$cf_tmp/report"; cf_fail "the report does not mark the allreduce"; }
grep -q "^  +: the calls of some ranks could not be kept" "$cf_tmp/report" || cf_fail "no note on the mark"
echo "ok   the report marks the records that lack ranks"
"$CF_BUILDDIR/tools/commfit" report --format json "$cf_tmp/t.json" | "$CF_PYTHON" -c '
import json, sys
ops = {o["op"]: o for o in json.load(sys.stdin)["operations"]}
ok = ops["MPI_Allreduce"]["ranks_missing"] == 1 and ops["MPI_Sendrecv"]["ranks_missing"] == 0
print("%s report json: ranks_missing per operation" % ("ok  " if ok else "FAIL"))
sys.exit(0 if ok else 1)' || exit 1
