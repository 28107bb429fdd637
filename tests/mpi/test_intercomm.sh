#!/bin/sh
# An intercommunicator: one id on both sides, payloads from the right group.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/ic.json" COMMFIT_SUMMARY=0 cf_mpirun 4 -- "$CF_BUILDDIR/tests/mpi/intercomm" \
    || cf_fail "job failed"
"$CF_PYTHON" - "$cf_tmp/ic.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
fails = 0
def check(what, got, want):
    global fails
    fails += got != want
    print("%s %s: got %r, want %r" % ("ok  " if got == want else "FAIL", what, got, want))
inter = [c for c in p["communicators"] if c["name"] == "MPI_Intercomm_create"]
check("the intercommunicator has one id on both sides", len(inter), 1)
cid = inter[0]["id"] if inter else None
def tot(op):
    rs = [r for r in p["records"] if r["op"] == op and r["comm"] == cid]
    return [sum(r["calls"] for r in rs), sum(r["bytes"] for r in rs)]
# every rank reduces 3 doubles; the counts array has as many entries as its own group
check("MPI_Reduce_scatter calls and bytes", tot("MPI_Reduce_scatter"), [4, 4 * 24])
check("MPI_Allreduce calls and bytes", tot("MPI_Allreduce"), [4, 4 * 8])
print("%d passed, %d failed" % (3 - fails, fails))
sys.exit(1 if fails else 0)
PY
