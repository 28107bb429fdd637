#!/bin/sh
# A job started by MPI_Comm_spawn writes its own profile next to its
# parent's (out.json -> out.spawn-<pid>.json) instead of replacing it; the
# communicators that spawn, disconnect and idup make and unmake are known.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/sp.json" COMMFIT_SUMMARY=0 cf_mpirun 1 -- "$CF_BUILDDIR/tests/mpi/spawn" 2> "$cf_tmp/err.txt" \
    || { cat "$cf_tmp/err.txt"; cf_fail "the spawning job failed"; }
cat "$cf_tmp/err.txt"
ls "$cf_tmp"
"$CF_PYTHON" - "$cf_tmp" <<'PY'
import glob, json, sys
d = sys.argv[1]
from checks import check, done
kids = glob.glob(d + "/sp.spawn-*.json")
check("the parent's profile is there", len(glob.glob(d + "/sp.json")) == 1)
check("one profile of the spawned job, under its own name", len(kids) == 1, str(kids))
if kids:
    parent, kid = json.load(open(d + "/sp.json")), json.load(open(kids[0]))
    check("the parent's is of 1 rank", parent["job"]["ranks"] == 1, str(parent["job"]["ranks"]))
    check("the spawned job's is of 2 ranks", kid["job"]["ranks"] == 2, str(kid["job"]["ranks"]))
    sends = sum(r["calls"] for r in kid["records"] if r["layer"] == "mpi" and r["op"] == "MPI_Send")
    check("the spawned job's MPI_Send is in its own profile", sends == 1, str(sends))
    names = [c.get("name") for c in parent["communicators"]]
    check("the parent's intercommunicator is described as made by MPI_Comm_spawn", "MPI_Comm_spawn" in names,
          str(names))
    made = {c["id"]: c.get("name") for c in parent["communicators"]}
    ar = sorted((r["bytes"], made.get(r["comm"])) for r in parent["records"]
                if r["layer"] == "mpi" and r["op"] == "MPI_Allreduce")
    check("allreduces booked to their own communicators after a disconnect",
          ar == [(4, "MPI_Comm_dup"), (8, "MPI_Comm_idup")], str(ar))
    psends = sum(r["calls"] for r in parent["records"] if r["layer"] == "mpi" and r["op"] == "MPI_Send")
    check("and not in the parent's", psends == 0, str(psends))
done()
PY
