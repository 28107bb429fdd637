#!/bin/sh
# A call that returns an error is counted as failed, not as traffic: three
# sends to a rank that does not exist and one real 4-byte send give one
# MPI_Send of 4 bytes and job.failed_calls = 3, which the report states.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/f.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/failed_calls" \
    || cf_fail "the program failed (its sends did not fail as expected?)"
cf_check failed_calls "$cf_tmp/f.json" || exit 1
"$CF_BUILDDIR/tools/commfit" report "$cf_tmp/f.json" | grep "^WARNING: 3 point-to-point calls returned an error" \
    || cf_fail "the report does not say that 3 calls failed"
