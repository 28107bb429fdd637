#!/usr/bin/env bash
# End-of-run cost: MPI_Finalize time (the slowest rank) and rank 0's peak
# resident memory, with and without the plugin, at several job sizes,
# oversubscribed on this machine (make bench runs it).
# Usage: tests/bench_finalize.sh [BUILD_DIR]; BENCH_RANKS="2 16 64" (the default) sets the sizes.
#   BENCH_SCALE=1: only plain against profiled (defaults), 2 to 256 ranks unless BENCH_RANKS
#   says, runs interleaved and the best of BENCH_REPEAT=3 each (a busy machine only adds);
#   COMMFIT_LIB=path profiles with another build of the plugin (an earlier one, to compare)
set -u
b=$(cd "${1:-.}" && pwd)
prog=$b/tests/bench/finalize
lib=${COMMFIT_LIB:-$b/.libs/libcommfit.so}
[ -x "$prog" ] && [ -f "$lib" ] || { echo "build first: make -C $b tests/bench/finalize" >&2; exit 2; }
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() { mpirun "${root[@]}" --oversubscribe --bind-to none --mca btl self,vader --mca pml ob1 "$@"; }
# prof NAME [VAR=VALUE...]: the profiled run with those COMMFIT_* settings, its output NAME, profile NAME.json
prof() {
    local name=$1 fwd=() kv; shift
    for kv in "$@"; do fwd+=(-x "$kv"); done
    run -np "$np" -x LD_PRELOAD="$lib" -x COMMFIT_OUTPUT="$tmp/$name.json" -x COMMFIT_SUMMARY=0 "${fwd[@]}" \
        "$prog" > "$tmp/$name" || exit 1
}
fin() { awk '$1 == "finalize" && $3 > m { m = $3 } END { printf "%.4f", m }' "$tmp/$1"; }
rss() { awk '$1 == "finalize" && $2 == 0 { print $5 }' "$tmp/$1"; }
# the calibration's budget and rank 0's time in it, from a profile
cal() {
    python3 -c 'import json, sys; c = json.load(open(sys.argv[1])).get("calibration")
print("%.3f/%.3f" % (c["elapsed_s"], c["budget_s"]) if c else "-")' "$tmp/$1.json"
}
echo "commfit finalize benchmark: $(nproc) cores, $(mpirun --version | head -1), ranks oversubscribed"
if [ -n "${BENCH_SCALE:-}" ]; then
    # MPI_Finalize of the slowest rank, s; added = profiled - plain
    printf "%6s %8s %9s %8s\n" ranks plain profiled added
    for np in ${BENCH_RANKS:-2 4 8 16 32 64 128 256}; do
        bp= bq=
        for i in $(seq "${BENCH_REPEAT:-3}"); do
            run -np "$np" "$prog" > "$tmp/plain" || exit 1
            prof prof
            bp=$(awk -v a="$(fin plain)" -v b="$bp" 'BEGIN { print (b == "" || a < b) ? a : b }')
            bq=$(awk -v a="$(fin prof)" -v b="$bq" 'BEGIN { print (b == "" || a < b) ? a : b }')
        done
        printf "%6d %8.3f %9.3f %8.3f\n" "$np" "$bp" "$bq" "$(awk -v a="$bp" -v b="$bq" 'BEGIN { print b - a }')"
    done
    exit 0
fi
# "no MPI_T": profiled with COMMFIT_PROTOCOL=0, without the read of the
# library's protocol limits (Open MPI's tool interface start on rank 0);
# "no calib.": COMMFIT_CALIBRATE=0; "calib. 0.5 s": COMMFIT_CALIBRATE=0.5s
# (the default's cap, reached by runs of 50 s and more), with rank 0's
# time in the calibration over its budget, as the profiled default's
printf "%6s %8s %10s %13s %9s %10s %13s %13s %s\n" ranks "plain" "profiled" "(calib. s)" "no MPI_T" "no calib." \
    "calib. 0.5 s" "(calib. s)" "rank 0 peak RSS plain/profiled"
for np in ${BENCH_RANKS:-2 16 64}; do
    run -np "$np" "$prog" > "$tmp/plain" || exit 1
    prof prof
    prof nomt COMMFIT_PROTOCOL=0
    prof nocal COMMFIT_CALIBRATE=0
    prof cal COMMFIT_CALIBRATE=0.5s
    mp=$(rss plain) mq=$(rss prof)
    printf "%6d %8s %10s %13s %9s %10s %13s %13s %s / %s kB (+%d kB)\n" "$np" "$(fin plain)" "$(fin prof)" \
        "$(cal prof)" "$(fin nomt)" "$(fin nocal)" "$(fin cal)" "$(cal cal)" "$mp" "$mq" $((mq - mp))
done
