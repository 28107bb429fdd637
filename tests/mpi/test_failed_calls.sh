#!/bin/sh
# A call that returns an error (MPI_ERRORS_RETURN) is counted as failed by
# operation and error class, never as traffic (tests/mpi/failed_calls.c):
# 10 failed calls on 2 ranks, one 4-byte MPI_Send and MPI_Recv, no record of
# the failed Isend or Bcast (a bad root, MPI_COMM_NULL), which the report
# states.  Every call returns what it returns without the profiler.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
cf_mpirun_plain 2 "$CF_BUILDDIR/tests/mpi/failed_calls" > "$cf_tmp/plain" ||
    cf_fail "the program failed without the profiler (its calls did not fail as expected?)"
COMMFIT_OUTPUT="$cf_tmp/f.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/failed_calls" > "$cf_tmp/prof" ||
    cf_fail "the program failed with the profiler"
sort "$cf_tmp/plain" > "$cf_tmp/plain.s"
sort "$cf_tmp/prof" > "$cf_tmp/prof.s"
[ "$(grep -c ' MPI_ERR_' "$cf_tmp/plain.s")" = 10 ] || cf_fail "expected 10 failed calls without the profiler"
diff "$cf_tmp/plain.s" "$cf_tmp/prof.s" || cf_fail "the profiler changed what the calls returned"
cf_check failed_calls "$cf_tmp/f.json" || exit 1
"$CF_BUILDDIR/tools/commfit" report "$cf_tmp/f.json" > "$cf_tmp/report" || cf_fail "report failed"
grep "^WARNING: 10 calls returned an error: counted as MPI time, not as traffic" "$cf_tmp/report" ||
    cf_fail "the report does not say that 10 calls failed"

# A job that ends without MPI_Finalize (every rank exits after the same
# calls): the partial profile made from its parts counts the same failed
# calls by operation and class, and the same traffic.
if [ "$CF_MPI_FAMILY" = mpich ]; then
    set -- "$CF_MPIRUN" -n 2
else
    set -- "$CF_MPIRUN" --oversubscribe --bind-to none -np 2 --mca btl self,vader,tcp --mca pml ob1
    [ "$(id -u)" = 0 ] && set -- "$@" --allow-run-as-root
fi
# MPICH's launcher SIGKILLs the other ranks as soon as one exits without
# MPI_Finalize; a rank still in its exit handler then leaves nothing, and the
# profile says so ("left nothing (killed before they could write"), which is
# the launcher, not the plugin: that run is made again, up to 5 times.
for attempt in 1 2 3 4 5; do
    rm -f "$cf_tmp/x.json"
    COMMFIT_SUMMARY=0 "$CF_BUILDDIR/tools/commfit" run -o "$cf_tmp/x.json" -- "$@" \
        "$CF_BUILDDIR/tests/mpi/failed_calls" exit > "$cf_tmp/x.out" 2> "$cf_tmp/x.err"
    [ -f "$cf_tmp/x.json" ] || { cat "$cf_tmp/x.err"; cf_fail "no partial profile from a job that exited"; }
    "$CF_PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1]))["job"].get("partial_reasons") or []
sys.exit(1 if any("killed before they could write" in x for x in r) else 0)' "$cf_tmp/x.json" && break
    [ "$CF_MPI_FAMILY" = mpich ] || break
    echo "note the launcher killed a rank before it wrote its part (attempt $attempt); again"
done
"$CF_PYTHON" -c 'import json, sys; p = json.load(open(sys.argv[1])); sys.exit(0 if p["job"].get("partial") else 1)' \
    "$cf_tmp/x.json" || cf_fail "the profile of a job that exited is not marked partial"
cf_check failed_calls "$cf_tmp/x.json" || exit 1
echo "ok   the partial profile counts the failed calls by operation and class"
