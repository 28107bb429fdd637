#!/bin/sh
# MPI_Pcontrol switches recording and opens nested regions; the training
# example's steps show up as regions.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/pc.json" COMMFIT_SUMMARY=1 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/pcontrol" 2> "$cf_tmp/err" \
    || cf_fail "job failed"
cf_check pcontrol "$cf_tmp/pc.json" 2 || exit 1
grep -q "MPI_Pcontrol calls did not match an open region" "$cf_tmp/err" || cf_fail "no message for the stray close"
echo "ok   a close that matches no region is reported"
COMMFIT_OUTPUT="$cf_tmp/dp.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 2 -- "$CF_BUILDDIR/examples/dp_train" --region --steps 4 > /dev/null || cf_fail "dp_train failed"
"$CF_PYTHON" - "$cf_tmp/dp.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
ok = p["region_entries"].get("step") == 4 and all(
    r.get("region") == "step/allreduce" for r in p["records"] if r["op"] == "MPI_Allreduce")
print("%s dp_train --region: 4 steps, every allreduce in step/allreduce: %s" % ("ok  " if ok else "FAIL", p["region_entries"]))
sys.exit(0 if ok else 1)
PY
