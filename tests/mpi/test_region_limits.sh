#!/bin/sh
# No silent caps on MPI_Pcontrol regions: 300 distinct regions all hold their
# calls (the table grows), opens nested deeper than 16 register nothing and
# their calls stay in the region 16 deep, and opens past the table's 8191
# regions are said among the profile's partial reasons, at MPI_Finalize and
# in a profile merged from the spool.  Exact counts on 2 ranks.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
prog="$CF_BUILDDIR/tests/mpi/many_regions"
export COMMFIT_SUMMARY=0 COMMFIT_TABLE_SIZE=65536
COMMFIT_OUTPUT="$cf_tmp/wide.json" cf_mpirun 2 -- "$prog" wide 2> "$cf_tmp/err" || { cat "$cf_tmp/err"; cf_fail "wide: the job failed"; }
"$CF_PYTHON" - "$cf_tmp/wide.json" <<'PY' || exit 1
import json, sys
p = json.load(open(sys.argv[1]))
calls = lambda op, region: sum(r["calls"] for r in p["records"] if r["op"] == op and r.get("region") == region)
deep = "/".join("d%d" % d for d in range(16))
wide = [calls("MPI_Allreduce", "r%03d" % i) for i in range(300)]
checks = [
    ("300 regions r000-r299, 2 allreduces each", wide == [2] * 300),
    ("no allreduce outside a region", calls("MPI_Allreduce", None) == 0),
    ("316 regions (300 + 16 deep), none deeper", len(p["regions"]) == 316 and not any("d16" in r for r in p["regions"])),
    ("the innermost allreduce and the bcast in the region 16 deep",
     calls("MPI_Allreduce", deep) == 2 and calls("MPI_Bcast", deep) == 2 and p["region_entries"].get(deep) == 1),
    ("the barrier after the closes outside any region", calls("MPI_Barrier", None) == 2),
    ("partial, the 8 deep opens said", p["job"]["partial"] and p["job"]["partial_reasons"] ==
     ["8 MPI_Pcontrol region opens nested deeper than 16 were not opened: their calls are in the region 16 deep"]),
]
for what, ok in checks:
    print("%s wide: %s" % ("ok  " if ok else "FAIL", what))
if not all(ok for _, ok in checks):
    print("wide counts %s, outside %d, regions %d, reasons %s" % (sorted(set(wide)), calls("MPI_Allreduce", None),
          len(p["regions"]), p["job"].get("partial_reasons")))
    sys.exit(1)
PY

check_full() { # PROFILE WHAT: 8191 regions of 2 allreduces, the 9 refused opens' 18 allreduces outside, the reason
    "$CF_PYTHON" - "$@" <<'PY'
import json, sys
p, what = json.load(open(sys.argv[1])), sys.argv[2]
calls = lambda region: sum(r["calls"] for r in p["records"] if r["op"] == "MPI_Allreduce" and r.get("region") == region)
inside = [calls("f%04d" % i) for i in range(8191)]
reason = "18 MPI_Pcontrol region opens found the region table full (8191 regions): their calls are in the region around them"
checks = [
    ("8191 regions f0000-f8190, 2 allreduces each", len(p["regions"]) == 8191 and inside == [2] * 8191),
    ("the 9 refused opens' 18 allreduces outside any region", calls(None) == 18 and calls("f8191") == 0),
    ("partial, the table's 18 refused opens said", p["job"]["partial"] and reason in p["job"]["partial_reasons"]),
]
for w, ok in checks:
    print("%s %s: %s" % ("ok  " if ok else "FAIL", what, w))
if not all(ok for _, ok in checks):
    print("%s: regions %d, outside %d, reasons %s" % (what, len(p["regions"]), calls(None), p["job"]["partial_reasons"]))
    sys.exit(1)
PY
}
COMMFIT_OUTPUT="$cf_tmp/full.json" cf_mpirun 2 -- "$prog" full 2> "$cf_tmp/err" || { cat "$cf_tmp/err"; cf_fail "full: the job failed"; }
check_full "$cf_tmp/full.json" full || exit 1
COMMFIT_OUTPUT="$cf_tmp/spill.json" cf_mpirun 2 --mca odls_base_sigkill_timeout 5 -- "$prog" full-exit > /dev/null 2>&1
"$CF_BUILDDIR/tools/commfit" merge "$cf_tmp/spill.parts" 2> "$cf_tmp/merge" || { cat "$cf_tmp/merge"; cf_fail "merge failed"; }
check_full "$cf_tmp/spill.json" "merged from the spool" || exit 1
