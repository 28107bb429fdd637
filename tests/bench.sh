#!/usr/bin/env bash
# Hot-path benchmark: added time per intercepted call and memory per rank.
# Usage: tests/bench.sh [BUILD_DIR]   (make bench runs it)
# Each loop runs 2 ranks with and without the plugin, best of 5 repetitions,
# three times over, alternating; the figure is the median of the three.
set -u
b=$(cd "${1:-.}" && pwd)
prog=$b/tests/bench/hotpath
lib=$b/.libs/libcommfit.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "build first: make -C $b tests/bench/hotpath" >&2; exit 2; }
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
run() { mpirun "${root[@]}" --oversubscribe --bind-to core -np 2 --mca btl self,vader --mca pml ob1 "$@"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for i in 1 2 3; do
    run "$prog" 1 > "$tmp/plain$i" || exit 1
    COMMFIT_OUTPUT=$tmp/p.json COMMFIT_SUMMARY=0 run -x LD_PRELOAD="$lib" -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY \
        "$prog" 1 > "$tmp/prof$i" || exit 1
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
    for i in 1 2 3; do
        run "$tmp/hotpath_f" >> "$tmp/plain$i" || exit 1
        COMMFIT_OUTPUT=$tmp/pf.json COMMFIT_SUMMARY=0 run -x LD_PRELOAD="$lib" -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY \
            "$tmp/hotpath_f" >> "$tmp/prof$i" || exit 1
    done
fi

echo "commfit hot-path benchmark: 2 ranks, $(nproc) cores, $(mpirun --version | head -1)"
printf "%-22s %14s %14s %12s\n" loop "plain ns/iter" "profiled" "added/call"
for loop in send_proc_null pingpong_8B allreduce_8B isend_irecv_waitall $floops; do
    calls=$(awk -v l=$loop '$1 == l { print $2 }' "$tmp/plain1")
    plain=$(cat "$tmp"/plain[123] | awk -v l=$loop '$1 == l { print $3 }' | sort -g | sed -n 2p)
    prof=$(cat "$tmp"/prof[123] | awk -v l=$loop '$1 == l { print $3 }' | sort -g | sed -n 2p)
    awk -v l=$loop -v a="$plain" -v b="$prof" -v c="$calls" \
        'BEGIN { printf "%-22s %14.1f %14.1f %9.1f ns\n", l, a, b, (b - a) / c }'
done
m1=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/prof1")
m100=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/prof100")
p1=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/plain1")
p100=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/plain100")
echo "peak resident memory per rank (VmHWM): plain $p1 kB, profiled $m1 kB (+$((m1 - p1)) kB)"
# 200000 + 2 x 20000 + 20000 + 3 x 20000 intercepted calls per rank and unit of scale
echo "with 100x the calls ($((100 * 320000)) intercepted calls per rank): plain $p100 kB, profiled $m100 kB (+$((m100 - p100)) kB)"
echo "(what grows between the two is the sample buffers filling up to their fixed size, COMMFIT_SAMPLES)"
