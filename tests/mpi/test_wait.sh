#!/bin/sh
# Waiting is told apart from transfer: rank 1 arrives D late at every
# allreduce, and its clock is off by 0.25 s, which synchronization must
# recover (else every wait would be off by that much).  Two ranks, so that
# neither is descheduled on this two-core machine and lateness is exact.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/skew.json" COMMFIT_SUMMARY=0 COMMFIT_TEST_CLOCK_OFFSET=1:0.25 \
    cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/wait_skew" 20000 12 || cf_fail "job failed"
cf_check clock "$cf_tmp/skew.json" 1 0.25 || exit 1
cf_check wait_skew "$cf_tmp/skew.json" 2 20000
