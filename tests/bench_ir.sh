#!/usr/bin/env bash
# Instructions added per intercepted call, counted by valgrind's callgrind:
# unlike wall-clock time on a busy machine, the count of one binary repeats.
# Usage: tests/bench_ir.sh [BUILD_DIR]   (make bench-ir runs it)
#   MPIP_LIB=/path/libmpiP.so [MPIP="-k 0"]  adds a column for mpiP
#   IR_LOOPS="send_null ..."   the loops (default: all of tests/bench/ir_loops.c)
#   IR_CONFIGS="plain default light mpip"   the columns ("plain" is needed)
#   IR_N1=1000 IR_N2=21000     the two iteration counts
#   COMMFIT_TIMER=tsc          the clock the plugin reads (its header line
#                              says which it read: a kernel that keeps
#                              kvm-clock costs some 30 more per call)
#   IR_PML=ucx                 Open MPI's UCX PML instead of ob1 (the plain
#                              column too), with the column noucx: the
#                              plugin without its UCX layer (COMMFIT_UCX=0)
# Each loop runs on one rank (a singleton, no launcher) under callgrind,
# which counts its N1 and then its N2 iterations apart (client requests in
# the program): added per call = (profiled (N2 - N1) - plain (N2 - N1)) /
# calls (N2 - N1), so MPI_Init, MPI_Finalize and the first calls cancel.
# Columns: default = the plugin at its defaults (call sites on); light = the
# lightest settings (COMMFIT_CALLSITE_DEPTH=0 COMMFIT_SAMPLES=0); mpip = mpiP.
set -u
b=$(cd "${1:-.}" && pwd)
prog=$b/tests/bench/ir_loops
lib=$b/.libs/libcommfit.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "build first: make -C $b libcommfit.la tests/bench/ir_loops" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "bench-ir needs valgrind" >&2; exit 2; }
loops=${IR_LOOPS:-send_null send_vary self_p2p allreduce iallreduce waitall3 waitall64 testall64 testall_grow thread}
n1=${IR_N1:-1000} n2=${IR_N2:-21000}
pml=${IR_PML:-ob1}
configs=${IR_CONFIGS:-plain default light${MPIP_LIB:+ mpip}$([ "$pml" = ucx ] && echo " noucx")}
case " $configs " in *" mpip "*) [ -f "${MPIP_LIB:-}" ] || { echo "MPIP_LIB=${MPIP_LIB:-} is not a file" >&2; exit 2; } ;; esac
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self OMPI_MCA_pml=$pml
# UCX's PML needs these where there is no InfiniBand device
[ "$pml" = ucx ] && export OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any
# the finalize-time work (protocol limits, calibration) is the same at both counts: keep it out
export COMMFIT_PROTOCOL=0 COMMFIT_CALIBRATE=0 COMMFIT_SUMMARY=0

# one GROUP CONFIG: runs the group's loops (comma-separated) in one process
# and writes $tmp/LOOP.CONFIG for each with "calls1 calls2 ir1 ir2"
one() {
    local group=$1 cfg=$2 d=$tmp/run.$1.$2 pre=
    mkdir -p "$d"
    case $cfg in
    plain) ;;
    default) pre=$lib ;;
    light) pre=$lib; export COMMFIT_CALLSITE_DEPTH=0 COMMFIT_SAMPLES=0 ;;
    noucx) pre=$lib; export COMMFIT_UCX=0 ;;
    mpip) pre=$MPIP_LIB; export MPIP="${MPIP:--k 0}" ;;
    esac
    (cd "$d" && COMMFIT_OUTPUT=$d/p.json LD_PRELOAD=$pre valgrind --tool=callgrind --instr-atstart=no \
        --callgrind-out-file="$d/cg" "$prog" "$group" "$n1" "$n2" > "$d/out" 2> "$d/err") || {
        echo "$group ($cfg) failed:" >&2; tail -5 "$d/err" >&2; return 1; }
    local loop c i1 i2 k=0
    for loop in ${group//,/ }; do
        c=$(awk -v l="$loop" '$1 == l { print $2, $3 }' "$d/out")
        i1=$(awk '$1 == "totals:" { print $2 }' "$d/cg.$((2 * k + 1))")
        i2=$(awk '$1 == "totals:" { print $2 }' "$d/cg.$((2 * k + 2))")
        [ -n "$c" ] && [ -n "$i1" ] && [ -n "$i2" ] || { echo "$loop ($cfg): no counts" >&2; return 1; }
        echo "$c $i1 $i2" > "$tmp/$loop.$cfg"
        k=$((k + 1))
    done
}
export -f one
export tmp prog lib n1 n2 MPIP_LIB="${MPIP_LIB:-}"
# the loops of a single-threaded code in one process; the thread loop, which
# initialises MPI_THREAD_MULTIPLE, in its own
single=$(echo $loops | tr ' ' '\n' | grep -vx thread | paste -sd,)
groups="$single $(echo $loops | tr ' ' '\n' | grep -x thread)"
# two at a time: the counts do not depend on what else runs
for g in $groups; do for cfg in $configs; do echo "$g $cfg"; done; done |
    xargs -P 2 -n 2 bash -c 'one "$0" "$1"' || exit 1

# the clock the profiled runs read (the profile's clock.timer)
timer=$(for f in "$tmp"/run.*/p.json; do
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["clock"]["timer"])' "$f" 2>/dev/null && break
done)
echo "commfit instructions added per intercepted call (callgrind; 1 rank; pml $pml; $n1 -> $n2 iterations; $(mpirun --version 2>/dev/null | head -1))"
echo "timer: ${timer:-unknown}"
printf "%-11s %7s %11s" loop calls "plain/call"
for cfg in $configs; do [ "$cfg" = plain ] || printf " %9s" "$cfg"; done
echo
for loop in $loops; do
    read -r pc1 pc2 p1 p2 < "$tmp/$loop.plain"
    printf "%-11s %7s %11.1f" "$loop" "$((pc2 - pc1))" \
        "$(awk -v a="$p1" -v b="$p2" -v c="$((pc2 - pc1))" 'BEGIN { print (b - a) / c }')"
    for cfg in $configs; do
        [ "$cfg" = plain ] && continue
        read -r c1 c2 i1 i2 < "$tmp/$loop.$cfg"
        [ "$c1 $c2" = "$pc1 $pc2" ] || { echo; echo "$loop: $cfg made other calls than plain" >&2; exit 1; }
        printf " %9.1f" "$(awk -v a="$p1" -v b="$p2" -v x="$i1" -v y="$i2" -v c="$((c2 - c1))" \
            'BEGIN { print ((y - x) - (b - a)) / c }')"
    done
    echo
done
