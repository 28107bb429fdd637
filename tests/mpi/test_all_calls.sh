#!/bin/sh
# Every wrapped call beyond the basic ones (tests/mpi/all_calls.c: MPI-IO,
# one-sided, neighbourhood collectives, matched probes, cancel, and the
# MPI-4 calls when the library has them): exact calls and bytes per
# operation against the program's own tally, on 2 and 4 ranks, and file
# I/O kept apart from the network in the analysis.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
for np in 2 4; do
    COMMFIT_OUTPUT="$cf_tmp/all$np.json" COMMFIT_SUMMARY=0 \
        cf_mpirun "$np" -- "$CF_BUILDDIR/tests/mpi/all_calls" "$cf_tmp" >"$cf_tmp/tally$np.txt" ||
        cf_fail "job on $np ranks failed"
    "$CF_BUILDDIR/tools/commfit" report --format json "$cf_tmp/all$np.json" >"$cf_tmp/report$np.json" ||
        cf_fail "report of $np ranks"
    cf_check tally "$cf_tmp/all$np.json" "$np" "$cf_tmp/tally$np.txt" "$cf_tmp/report$np.json" ||
        cf_fail "profile of $np ranks"
done
