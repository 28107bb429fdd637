#!/bin/sh
# One-way message times on synchronized clocks: in a ping-pong sweep the
# median one-way time of each size is its half round trip.  One sweep on a
# shared two-core machine is one noisy measurement: both medians are the
# machine's (at a load of 19, beside two busy loops, the 2 B half round trip
# read 2338 us against a 0.61 us one-way p50, and a second sweep missed at
# 64 B to 1 kB the other way), so a sweep that misses is followed by a
# fresh one, at most 3, each judged on its own (all are printed), not a
# looser bound.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
attempt() {
    COMMFIT_OUTPUT="$cf_tmp/pp.json" COMMFIT_SUMMARY=0 \
        cf_mpirun 2 -- "$CF_BUILDDIR/examples/pingpong" --min 1 --max 1MiB --csv > "$cf_tmp/pp.csv" \
        || cf_fail "job failed"
    cf_check pingpong "$cf_tmp/pp.json" "$cf_tmp/pp.csv"
}
for i in 1 2 3; do
    echo "== sweep $i"
    attempt && exit 0
done
cf_fail "3 sweeps, none matched"
