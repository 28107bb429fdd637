#!/bin/sh
# MPI_Waitall over 5000 requests, more than the fixed scratch of 4096: every
# completion is recorded (the scratch grows; before, none was), and the
# profile is complete.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/m.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/many_requests" \
    || cf_fail "the job failed"
cf_check many_requests "$cf_tmp/m.json" 5000
