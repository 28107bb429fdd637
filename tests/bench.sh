#!/usr/bin/env bash
# Hot-path benchmark: added time per intercepted call and memory per rank.
# Usage: tests/bench.sh [BUILD_DIR]   (make bench runs it)
# Each loop runs 2 ranks without the plugin, with it, and with it but call
# sites off (COMMFIT_CALLSITE_DEPTH=0), best of 5 repetitions, in rounds
# that alternate the three; the figure is the median over the rounds, and
# the cost of call sites is also given from the minima (a noisy machine
# slows runs, it does not speed them up).
set -u
b=$(cd "${1:-.}" && pwd)
prog=$b/tests/bench/hotpath
lib=$b/.libs/libcommfit.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "build first: make -C $b tests/bench/hotpath" >&2; exit 2; }
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
run() { mpirun "${root[@]}" --oversubscribe --bind-to core -np 2 --mca btl self,vader --mca pml ob1 "$@"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rounds="1 2 3 4 5"
profiled() { # OUT CALLSITE_DEPTH PROGRAM ARGS
    local out=$1 depth=$2; shift 2
    COMMFIT_OUTPUT=$tmp/p.json COMMFIT_SUMMARY=0 COMMFIT_CALLSITE_DEPTH=$depth run -x LD_PRELOAD="$lib" \
        -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY -x COMMFIT_CALLSITE_DEPTH "$@" >> "$out"
}
for i in $rounds; do
    run "$prog" 1 > "$tmp/plain$i" || exit 1
    profiled "$tmp/prof$i" 1 "$prog" 1 || exit 1
    profiled "$tmp/off$i" 0 "$prog" 1 || exit 1
done
# memory: the same loops with 100 times the calls
COMMFIT_OUTPUT=$tmp/p100.json COMMFIT_SUMMARY=0 run -x LD_PRELOAD="$lib" -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY \
    "$prog" 100 1 > "$tmp/prof100" || exit 1
run "$prog" 100 1 > "$tmp/plain100" || exit 1

# the Fortran path (Open MPI's Fortran bindings get wrappers of their own), when mpifort is there
floops=
if command -v mpifort >/dev/null && mpifort -fallow-argument-mismatch -o "$tmp/hotpath_f" \
    "$(dirname "$0")/bench/hotpath_f.F90" 2>/dev/null; then
    floops="f_send_proc_null f_allreduce_8B f_isend_irecv_waitall"
    for i in $rounds; do
        run "$tmp/hotpath_f" >> "$tmp/plain$i" || exit 1
        profiled "$tmp/prof$i" 1 "$tmp/hotpath_f" || exit 1
        profiled "$tmp/off$i" 0 "$tmp/hotpath_f" || exit 1
    done
fi

echo "commfit hot-path benchmark: 2 ranks, $(nproc) cores, $(mpirun --version | head -1)"
echo "profiled: call sites on (the default, COMMFIT_CALLSITE_DEPTH=1); sites off: COMMFIT_CALLSITE_DEPTH=0"
printf "%-22s %14s %10s %10s %12s %12s %14s\n" loop "plain ns/iter" profiled "sites off" "added/call" \
    "sites off" "sites/call min"
# stat FILES LOOP: the median (med) or the minimum (min) over the rounds
stat() { local how=$1 loop=$2; shift 2
    cat "$@" | awk -v l=$loop '$1 == l { print $3 }' | sort -g |
        awk -v h=$how '{ v[NR] = $1 } END { print h == "min" ? v[1] : v[int((NR + 1) / 2)] }'; }
for loop in send_proc_null pingpong_8B allreduce_8B isend_irecv_waitall $floops; do
    calls=$(awk -v l=$loop '$1 == l { print $2 }' "$tmp/plain1")
    plain=$(stat med $loop "$tmp"/plain?)
    prof=$(stat med $loop "$tmp"/prof?)
    off=$(stat med $loop "$tmp"/off?)
    dmin=$(awk -v a="$(stat min $loop "$tmp"/prof?)" -v b="$(stat min $loop "$tmp"/off?)" 'BEGIN { print a - b }')
    awk -v l=$loop -v a="$plain" -v b="$prof" -v o="$off" -v c="$calls" -v d="$dmin" \
        'BEGIN { printf "%-22s %14.1f %10.1f %10.1f %9.1f ns %9.1f ns %11.1f ns\n", l, a, b, o, (b - a) / c, (o - a) / c, d / c }'
done
m1=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/prof1")
m100=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/prof100")
p1=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/plain1")
p100=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/plain100")
echo "peak resident memory per rank (VmHWM): plain $p1 kB, profiled $m1 kB (+$((m1 - p1)) kB)"
# 200000 + 2 x 20000 + 20000 + 3 x 20000 intercepted calls per rank and unit of scale
echo "with 100x the calls ($((100 * 320000)) intercepted calls per rank): plain $p100 kB, profiled $m100 kB (+$((m100 - p100)) kB)"
echo "(what grows between the two is the sample buffers filling up to their fixed size, COMMFIT_SAMPLES)"
