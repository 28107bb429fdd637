#!/bin/sh
# One-way message times on synchronized clocks, held to what load cannot
# move.  A ping-pong sweep with every message sampled and traced, rank 1's
# clock off by 0.25 s, which synchronization must recover within the error
# the profile states.  Then each size's calls and bytes, its messages
# matched, and every round trip in the order it has in true time: each
# receive ends after its send began (across ranks, on the synchronized
# clocks, within that error: an offset missed by more than a one-way time
# breaks it), each reply is sent after its request arrived.  The plugin's
# round trips lie inside the program's own MPI_Wtime pairs, so their
# median is at most the program's.  One sweep, no retry: a loaded machine
# makes times longer, and none of these depends on how long.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
iters=200 warmup=10
COMMFIT_OUTPUT="$cf_tmp/pp.json" COMMFIT_SUMMARY=0 COMMFIT_SAMPLE_EVERY=1 COMMFIT_TRACE=1048576 \
    COMMFIT_TEST_CLOCK_OFFSET=1:0.25 \
    cf_mpirun 2 -- "$CF_BUILDDIR/examples/pingpong" --min 1 --max 1MiB --iters $iters --warmup $warmup --csv \
    > "$cf_tmp/pp.csv" || cf_fail "job failed"
cf_check clock "$cf_tmp/pp.json" 1 0.25 || cf_fail "the clock offset missed its stated bound"
cf_check pingpong "$cf_tmp/pp.json" "$cf_tmp/pp.csv" $iters $warmup || cf_fail "the sweep's profile does not hold"
