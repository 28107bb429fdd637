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
