#!/usr/bin/env bash
# Hot-path benchmark: added time per intercepted call and memory per rank.
# Usage: tests/bench.sh [BUILD_DIR]   (make bench runs it; make bench-mpip adds mpiP)
#   MPIP_LIB=/path/libmpiP.so [MPIP="-k 0"]  mpiP as a peer (by default its cheapest
#                    mode, -k 0: no stack walk; MPIP="-k 1" is its default)
#   BENCH_ROUNDS=N   rounds (default 9, 15 with mpiP)
#   BENCH_FORTRAN=0|1  the Fortran loops too (default 1, 0 with mpiP)
#   BENCH_REPS=40 BENCH_SPLIT=10  each run's repetitions of each loop, and
#                    the loops cut to 1/SPLIT of their iterations (short
#                    repetitions: a busy machine leaves some undisturbed)
# The loops of tests/bench/hotpath.c (and hotpath_f.F90 when mpifort is there)
# run on 2 ranks without a profiler (plain), under the plugin at its defaults
# (call sites on), under it light (its lightest settings: COMMFIT_SAMPLES=0 and
# COMMFIT_CALLSITE_DEPTH=0, which keeps the call sites' memos and leaves their section out)
# and under mpiP; each run reports the best of its repetitions of each loop.
# A round runs every configuration once, in an order that rotates from round
# to round, so that the other work on a shared machine falls on all of them
# alike.  A configuration's added time per call is, in each round, its time
# less that round's plain time, over the calls; the table gives the median
# over the rounds and the quartiles.  The ratio to mpiP is taken in each round
# (the two differences of the same round), then its median and quartiles.
set -u
b=$(cd "${1:-.}" && pwd)
prog=$b/tests/bench/hotpath
lib=$b/.libs/libcommfit.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "build first: make -C $b tests/bench/hotpath" >&2; exit 2; }
mpip_lib=${MPIP_LIB:-} mpip_opts=${MPIP:--k 0}
[ -z "$mpip_lib" ] || [ -f "$mpip_lib" ] || { echo "MPIP_LIB=$mpip_lib is not a file" >&2; exit 2; }
nrounds=${BENCH_ROUNDS:-$([ -n "$mpip_lib" ] && echo 15 || echo 9)}
reps=${BENCH_REPS:-40} split=${BENCH_SPLIT:-10}
for v in "BENCH_ROUNDS=$nrounds" "BENCH_REPS=$reps" "BENCH_SPLIT=$split"; do
    case ${v#*=} in '' | *[!0-9]* | 0) echo "$v: needs a whole number, 1 or more" >&2; exit 2 ;; esac
done
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
run() { mpirun "${root[@]}" --oversubscribe --bind-to none -np 2 --mca btl self,vader --mca pml ob1 "$@"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/mpip" # mpiP writes its report in the working directory
# the work of the plugin's MPI_Finalize that is not on the hot path (protocol
# limits, calibration) is left out: it is outside the timed loops
export COMMFIT_OUTPUT=$tmp/p.json COMMFIT_SUMMARY=0 COMMFIT_PROTOCOL=0 COMMFIT_CALIBRATE=0
fwd=(-x COMMFIT_OUTPUT -x COMMFIT_SUMMARY -x COMMFIT_PROTOCOL -x COMMFIT_CALIBRATE)
# one CONFIG OUT PROGRAM ARGS: PROGRAM under CONFIG, its lines appended to OUT
one() {
    local cfg=$1 out=$2; shift 2
    case $cfg in
    plain) run "$@" ;;
    default) run -x LD_PRELOAD="$lib" "${fwd[@]}" -x COMMFIT_CALLSITE_DEPTH=1 "$@" ;;
    light) run -x LD_PRELOAD="$lib" "${fwd[@]}" -x COMMFIT_CALLSITE_DEPTH=0 -x COMMFIT_SAMPLES=0 "$@" ;;
    mpip) (cd "$tmp/mpip" && run -x LD_PRELOAD="$mpip_lib" -x MPIP="$mpip_opts" "$@") ;;
    esac >> "$out" 2> "$tmp/err" || { echo "$cfg run of ${1##*/} failed:" >&2; tail -5 "$tmp/err" >&2; return 1; }
}

# the Fortran path (Open MPI's Fortran bindings get wrappers of their own), when mpifort is
# there; not beside mpiP unless BENCH_FORTRAN=1 (its loops are whole and slow on a busy machine)
fprog= floops=
if [ "${BENCH_FORTRAN:-$([ -n "$mpip_lib" ] && echo 0 || echo 1)}" = 1 ] && command -v mpifort >/dev/null && mpifort -fallow-argument-mismatch -o "$tmp/hotpath_f" \
    "$(dirname "$0")/bench/hotpath_f.F90" 2>/dev/null; then
    fprog=$tmp/hotpath_f floops="f_send_proc_null f_allreduce_8B f_isend_irecv_waitall"
fi

cfgs=(plain default light ${mpip_lib:+mpip})
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 1; r <= nrounds; r++)); do
    for ((k = 0; k < ${#cfgs[@]}; k++)); do
        cfg=${cfgs[$(((r + k) % ${#cfgs[@]}))]}
        one "$cfg" "$tmp/$cfg.$r" "$prog" 1 "$reps" "$split" || exit 1
        [ -z "$fprog" ] || one "$cfg" "$tmp/$cfg.$r" "$fprog" || exit 1
    done
    cut -d' ' -f1 /proc/loadavg >> "$tmp/load"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
# memory: the same loops with 100 times the calls
one default "$tmp/prof100" "$prog" 100 1 || exit 1
one plain "$tmp/plain100" "$prog" 100 1 || exit 1

echo "commfit hot-path benchmark: 2 ranks, $(nproc) cores, $(mpirun --version | head -1)"
echo "$nrounds rounds; each run the best of $reps repetitions of 1/$split of each loop ${floops:+ (Fortran loops: best of 5, whole)}"
echo "default: the plugin's defaults; light: its lightest settings (COMMFIT_SAMPLES=0 COMMFIT_CALLSITE_DEPTH=0)"
[ -z "$mpip_lib" ] || echo "mpiP: MPIP=\"$mpip_opts\", $mpip_lib$(sed 's/^/, /' "${mpip_lib%.so}.source" 2>/dev/null)"
echo "load average before: $load0; after: $load1; 1-minute load after each round: $(sort -g "$tmp/load" |
    sed -n '1p;$p' | paste -sd- -)"
echo "added ns per intercepted call: median over the rounds of (run - the same round's plain) / calls, (quartiles)"
for cfg in "${cfgs[@]}"; do
    for ((r = 1; r <= nrounds; r++)); do
        awk -v c=$cfg -v r=$r 'NF == 3 && $2 > 0 { print c, r, $1, $2, $3 }' "$tmp/$cfg.$r"
    done
done > "$tmp/all"
awk -v loops="send_proc_null pingpong_8B allreduce_8B isend_irecv_waitall $floops" -v n=$nrounds \
    -v mp=${mpip_lib:+1} -v mpname="mpiP $mpip_opts" '
function sort(a, m,   i, j, t) { for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
function q(a, m, p,   h, l) { h = 1 + (m - 1) * p; l = int(h); return l >= m ? a[m] : a[l] + (h - l) * (a[l + 1] - a[l]) }
# med3: "median (q1-q3)" of a[1..m], sorted in place
function med3(a, m) { sort(a, m); return sprintf("%.1f (%.1f-%.1f)", q(a, m, .5), q(a, m, .25), q(a, m, .75)) }
function med3r(a, m) { sort(a, m); return sprintf("%.2f (%.2f-%.2f)", q(a, m, .5), q(a, m, .25), q(a, m, .75)) }
{ t[$1, $2, $3] = $5; calls[$3] = $4 }
END {
    printf "%-22s %9s  %-22s %-22s", "loop", "plain/it", "default", "light"
    if (mp) printf " %-22s %-19s %-19s", mpname, "default/mpiP", "light/mpiP"
    printf " %9s\n", "sites min"
    nl = split(loops, L, " ")
    for (i = 1; i <= nl; i++) {
        l = L[i]; c = calls[l]
        if (c == "") continue
        m = 0; mind = minl = 1e30
        for (r = 1; r <= n; r++) {
            if (!((("plain", r, l) in t) && (("default", r, l) in t) && (("light", r, l) in t))) continue
            if (mp && !(("mpip", r, l) in t)) continue
            m++; p = t["plain", r, l]; P[m] = p
            D[m] = (t["default", r, l] - p) / c; Dl[m] = (t["light", r, l] - p) / c
            if (t["default", r, l] < mind) mind = t["default", r, l]
            if (t["light", r, l] < minl) minl = t["light", r, l]
            if (mp) {
                M[m] = (t["mpip", r, l] - p) / c
                R[m] = M[m] != 0 ? D[m] / M[m] : 0; Rl[m] = M[m] != 0 ? Dl[m] / M[m] : 0
            }
        }
        if (m == 0) continue
        sort(P, m)
        printf "%-22s %9.1f  %-22s %-22s", l, q(P, m, .5), med3(D, m), med3(Dl, m)
        if (mp) {
            printf " %-22s %-19s %-19s", med3(M, m), med3r(R, m), med3r(Rl, m)
            x = q(R, m, .5); lo = (lo == "" || x < lo) ? x : lo; hi = (hi == "" || x > hi) ? x : hi
        }
        printf " %9.1f\n", (mind - minl) / c
    }
    print "sites min: (fastest default run - fastest light run) / calls: the cost of sampling, the difference between them (a busy machine slows runs, it does not speed them up)"
    if (mp && hi != "")
        printf "over the loops, commfit at its defaults adds %.2f-%.2fx what %s adds (median ratios)\n", lo, hi, mpname
}' "$tmp/all"
m1=$(awk '$1 == "vmhwm_kb" { print $3; exit }' "$tmp/default.1")
m100=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/prof100")
p1=$(awk '$1 == "vmhwm_kb" { print $3; exit }' "$tmp/plain.1")
p100=$(awk '$1 == "vmhwm_kb" { print $3 }' "$tmp/plain100")
mm=; [ -z "$mpip_lib" ] || mm=$(awk '$1 == "vmhwm_kb" { printf ", mpiP %s kB (+%d kB)", $3, $3 - p; exit }' \
    p="$p1" "$tmp/mpip.1")
echo "peak resident memory per rank (VmHWM): plain $p1 kB, profiled $m1 kB (+$((m1 - p1)) kB)$mm"
# 200000 + 2 x 20000 + 20000 + 3 x 20000 intercepted calls per rank and unit of scale
echo "with 100x the calls ($((100 * 320000)) intercepted calls per rank): plain $p100 kB, profiled $m100 kB (+$((m100 - p100)) kB)"
echo "(what grows between the two is the sample buffers filling up to their fixed size, COMMFIT_SAMPLES)"
