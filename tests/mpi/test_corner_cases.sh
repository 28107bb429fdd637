#!/bin/sh
# Corner cases are counted right and the results are bit-identical with and
# without the plugin.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
prog="$CF_BUILDDIR/tests/mpi/corner_cases"
cf_mpirun_plain 4 "$prog" > "$cf_tmp/plain.txt" || cf_fail "job without the plugin failed"
COMMFIT_OUTPUT="$cf_tmp/corner.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 4 -- "$prog" > "$cf_tmp/profiled.txt" || cf_fail "job with the plugin failed"
cat "$cf_tmp/profiled.txt"
[ "$(wc -l < "$cf_tmp/plain.txt")" -eq 4 ] || cf_fail "expected 4 checksum lines"
cmp "$cf_tmp/plain.txt" "$cf_tmp/profiled.txt" || cf_fail "results differ with the plugin"
echo "ok   results are bit-identical with and without the plugin"
cf_check corner_cases "$cf_tmp/corner.json" 4
