#!/bin/sh
# MPI_THREAD_MULTIPLE: 4 threads per rank, all calls counted.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/threads.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 4 -- "$CF_BUILDDIR/tests/mpi/threads" 4 500
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || cf_fail "threaded job failed ($rc)"
cf_check threads "$cf_tmp/threads.json" 4 4 500

# more threads than COMMFIT_MAX_THREADS: the others run unrecorded, the
# profile says it is partial, nothing blocks
COMMFIT_OUTPUT="$cf_tmp/few.json" COMMFIT_SUMMARY=0 COMMFIT_MAX_THREADS=2 \
    cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/threads" 4 200 || cf_fail "job with COMMFIT_MAX_THREADS=2 failed"
"$CF_PYTHON" - "$cf_tmp/few.json" <<'PY' || exit 1
import json, sys
p = json.load(open(sys.argv[1]))
calls = sum(r["calls"] for r in p["records"] if r["op"] == "MPI_Isend")
ok = p["job"]["partial"] is True and 0 < calls < 2 * 4 * 200
print("%s COMMFIT_MAX_THREADS=2 with 4 threads: partial=%s, %d of %d Isends recorded"
      % ("ok  " if ok else "FAIL", p["job"]["partial"], calls, 2 * 4 * 200))
sys.exit(0 if ok else 1)
PY
