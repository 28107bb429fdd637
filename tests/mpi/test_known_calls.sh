#!/bin/sh
# Exact calls and bytes per operation and communicator, on 2 and 4 ranks.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
for np in 2 4; do
    COMMFIT_OUTPUT="$cf_tmp/known$np.json" COMMFIT_SUMMARY=1 \
        cf_mpirun "$np" -- "$CF_BUILDDIR/tests/mpi/known_calls" || cf_fail "job on $np ranks failed"
    cf_check known_calls "$cf_tmp/known$np.json" "$np" || cf_fail "profile of $np ranks"
done
