#!/bin/sh
# A loop of MPI_Comm_dup, allreduce, MPI_Comm_free keeps every allreduce
# (the freed communicator's description, id and records come back to the
# next one of the same group), and thousands of live communicators are all
# described and found, none of them marking the profile partial.  The
# memory the loop costs is printed, not judged (it includes Open MPI's).
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
n=20000 k=5000
# MPICH has 2048 context ids a process: its K alive at once stay under them
# (1500 still grow the plugin's first table of handles, 512 live, twice)
[ "$CF_MPI_FAMILY" = mpich ] && k=1500
COMMFIT_OUTPUT="$cf_tmp/c.json" COMMFIT_SUMMARY=0 COMMFIT_TABLE_SIZE=16384 \
    cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/comm_churn" $n $k > "$cf_tmp/out" 2> "$cf_tmp/err" \
    || { cat "$cf_tmp/err"; cf_fail "job failed"; }
echo "bench: $(cat "$cf_tmp/out")"
"$CF_PYTHON" - "$cf_tmp/c.json" $n $k <<'PY' || exit 1
import json, sys
p, n, k = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
from checks import check, done
dups = [c for c in p["communicators"] if c["name"] == "MPI_Comm_dup"]
ar8 = [r for r in p["records"] if r["op"] == "MPI_Allreduce" and r["size_lo"] == 8]
ar4 = [r for r in p["records"] if r["op"] == "MPI_Allreduce" and r["size_lo"] == 4]
check("every allreduce of the loop kept", sum(r["calls"] for r in ar8) == 2 * n, str(sum(r["calls"] for r in ar8)))
check("on one communicator", len({r["comm"] for r in ar8}) == 1, str(len({r["comm"] for r in ar8})))
check("%d duplicates alive at once: one communicator each" % k, len(dups) == k, str(len(dups)))
check("their allreduces, one per communicator and rank", sum(r["calls"] for r in ar4) == 2 * k
      and len({r["comm"] for r in ar4}) == k, "%d calls on %d" % (sum(r["calls"] for r in ar4), len({r["comm"] for r in ar4})))
inst = sorted((c.get("instances", 1) for c in dups), reverse=True)
check("the loop's communicator held %d + 1 instances, the others 1" % n, inst[0] == n + 1 and set(inst[1:]) == {1},
      str(inst[:3]))
check("not partial", p["job"]["partial"] is False, str(p["job"]["partial_reasons"]))
done()
PY
