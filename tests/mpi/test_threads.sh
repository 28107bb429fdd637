#!/bin/sh
# MPI_THREAD_MULTIPLE: 4 threads per rank, all calls counted.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/threads.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 4 -- "$CF_BUILDDIR/tests/mpi/threads" 4 500
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || cf_fail "threaded job failed ($rc)"
cf_check threads "$cf_tmp/threads.json" 4 4 500
