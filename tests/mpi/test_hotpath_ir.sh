#!/bin/bash
# Ceiling on the hot path: instructions the plugin adds per intercepted call
# at its defaults (call sites on), counted by callgrind on each loop of
# tests/bench/ir_loops.c (tests/bench_ir.sh).  Counts of one binary do not
# vary from run to run, so a change that makes the path heavier fails here.
# Each ceiling is about 5 % above what the path costs today (Open MPI 4.1,
# x86-64); lower it with the path, raise it only with a reason.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
command -v valgrind >/dev/null || { echo "no valgrind: skipped"; exit 77; }
[ "$CF_MPI_FAMILY" = openmpi ] || { echo "ceilings are for Open MPI's singleton: skipped"; exit 77; }
# The ceilings are for the TSC, which a kernel with another clock source
# (kvm-clock in many virtual machines) does not let auto take: ask for it.
ceilings="send_null 119 send_vary 200 self_p2p 219 allreduce 120 iallreduce 149 waitall3 302 waitall64 343 testall64 339
testall_grow 512 thread 119"
COMMFIT_TIMER=tsc IR_CONFIGS="plain default" bash "$CF_SRCDIR/tests/bench_ir.sh" "$CF_BUILDDIR" > "$cf_tmp/ir" ||
    cf_fail "bench_ir.sh failed"
cat "$cf_tmp/ir"
grep -qx "timer: tsc" "$cf_tmp/ir" || { echo "the plugin could not read the TSC here: skipped"; exit 77; }
set -- $ceilings
while [ $# -ge 2 ]; do
    got=$(awk -v l="$1" '$1 == l { print $4 }' "$cf_tmp/ir")
    [ -n "$got" ] || cf_fail "$1: no figure"
    awk -v g="$got" -v c="$2" 'BEGIN { exit !(g <= c) }' ||
        cf_fail "$1: $got instructions added per call, over the ceiling of $2"
    echo "ok: $1 $got <= $2"
    shift 2
done
# The lightest settings (COMMFIT_CALLSITE_DEPTH=0 COMMFIT_SAMPLES=0) keep the
# call sites' memos, which depth 0 once freed with the sites' table, sending
# every call to the full path (send 151.9, all-reduce 190.9): the defaults'
# ceilings hold them too.
COMMFIT_TIMER=tsc IR_LOOPS="send_null allreduce" IR_CONFIGS="plain light" bash "$CF_SRCDIR/tests/bench_ir.sh" \
    "$CF_BUILDDIR" > "$cf_tmp/ir-light" || cf_fail "bench_ir.sh (light) failed"
cat "$cf_tmp/ir-light"
for lc in "send_null 119" "allreduce 120"; do
    set -- $lc
    got=$(awk -v l="$1" '$1 == l { print $4 }' "$cf_tmp/ir-light")
    [ -n "$got" ] || cf_fail "$1 (light): no figure"
    awk -v g="$got" -v c="$2" 'BEGIN { exit !(g <= c) }' ||
        cf_fail "$1 (light): $got instructions added per call, over the ceiling of $2"
    echo "ok: $1 at the lightest settings $got <= $2"
done
