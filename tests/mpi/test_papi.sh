#!/bin/sh
# PAPI counters: asking for them never changes the job.  On a machine
# without hardware counters (virtual machines, like the test machine) the
# profile says why; an unknown event is named as such; an event that can be
# counted (a software one, where perf_event allows it) still is; a list that
# names no event gets a message.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
ucx_check() { "$CF_PYTHON" "$CF_SRCDIR/tests/mpi/check_ucx.py" "$@"; }
prog="$CF_BUILDDIR/tests/mpi/ucx_pingpong"
args=(20 8 1000 65536)

cf_mpirun_plain 2 "$prog" "${args[@]}" > "$cf_tmp/plain.out" 2> "$cf_tmp/plain.err" || cf_fail "job without the plugin failed"
COMMFIT_OUTPUT="$cf_tmp/none.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$prog" "${args[@]}" > /dev/null \
    || cf_fail "job without counters failed"

# 1. a hardware event and an unknown one
COMMFIT_PAPI_EVENTS=PAPI_TOT_CYC,PAPI_FOO COMMFIT_OUTPUT="$cf_tmp/hw.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 2 -- "$prog" "${args[@]}" > "$cf_tmp/hw.out" 2> "$cf_tmp/hw.err"
rc=$?
cat "$cf_tmp/hw.err"
[ $rc -eq 0 ] || cf_fail "the job failed with counters requested ($rc)"
cmp -s "$cf_tmp/plain.out" "$cf_tmp/hw.out" || cf_fail "the job's output changed with counters requested"
grep -q "^commfit: PAPI" "$cf_tmp/hw.err" || grep -q "^commfit: COMMFIT_PAPI_EVENTS is set, but" "$cf_tmp/hw.err" \
    || cf_fail "no message about the counters"
ucx_check papi "$cf_tmp/hw.json" PAPI_TOT_CYC,PAPI_FOO || cf_fail "papi section"
ucx_check same_mpi "$cf_tmp/none.json" "$cf_tmp/hw.json" || cf_fail "MPI records changed with counters requested"

# 2. a software event, counted where perf_event allows it, beside a hardware one
COMMFIT_PAPI_EVENTS=PAPI_TOT_CYC,perf::TASK-CLOCK COMMFIT_OUTPUT="$cf_tmp/sw.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 2 -- "$prog" "${args[@]}" > "$cf_tmp/sw.out" 2> /dev/null || cf_fail "job with a software event failed"
cmp -s "$cf_tmp/plain.out" "$cf_tmp/sw.out" || cf_fail "the job's output changed with a software event"
ucx_check papi "$cf_tmp/sw.json" PAPI_TOT_CYC,perf::TASK-CLOCK || cf_fail "papi section with a software event"

# 3. a list that names no event
COMMFIT_PAPI_EVENTS=",," COMMFIT_OUTPUT="$cf_tmp/bad.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 2 -- "$prog" "${args[@]}" > "$cf_tmp/bad.out" 2> "$cf_tmp/bad.err" || cf_fail "job with a malformed list failed"
cat "$cf_tmp/bad.err"
grep -q "COMMFIT_PAPI_EVENTS=',,' names no event" "$cf_tmp/bad.err" || cf_fail "no message for a malformed list"
[ "$(grep -c "COMMFIT_PAPI_EVENTS=" "$cf_tmp/bad.err")" -eq 1 ] || cf_fail "the message should come once, from rank 0"
cmp -s "$cf_tmp/plain.out" "$cf_tmp/bad.out" || cf_fail "the job's output changed with a malformed list"
ucx_check papi_malformed "$cf_tmp/bad.json" ",," || cf_fail "papi section of a malformed list"
echo "PAPI: all checks passed"
