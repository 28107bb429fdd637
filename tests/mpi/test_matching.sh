#!/bin/sh
# Sends and receives are paired exactly: tags, wildcards, nonblocking and
# persistent requests, receives posted out of order.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
for np in 2 3; do
    COMMFIT_OUTPUT="$cf_tmp/m$np.json" COMMFIT_SUMMARY=0 \
        cf_mpirun $np -- "$CF_BUILDDIR/tests/mpi/matching" || cf_fail "job failed"
    cf_check matching "$cf_tmp/m$np.json" $np || exit 1
done
