#!/bin/sh
# Polled completions keep a request's snapshot from one poll to the next
# while it still holds the request: every receive of tests/mpi/poll_reuse.c
# is booked once at its own size, whatever changed between its polls (a
# place taken by a new receive, a persistent receive started again, a
# cancel), with the exact calls and bytes the program made.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/p.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/poll_reuse" \
    || cf_fail "the job failed"
cf_check poll_reuse "$cf_tmp/p.json"
