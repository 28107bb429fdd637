#!/usr/bin/env bash
# End-of-run cost: MPI_Finalize time (the slowest rank) and rank 0's peak
# resident memory, with and without the plugin, at several job sizes,
# oversubscribed on this machine (make bench runs it).
# Usage: tests/bench_finalize.sh [BUILD_DIR]; BENCH_RANKS="2 16 64" (the default) sets the sizes.
set -u
b=$(cd "${1:-.}" && pwd)
prog=$b/tests/bench/finalize
lib=$b/.libs/libcommfit.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "build first: make -C $b tests/bench/finalize" >&2; exit 2; }
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() { mpirun "${root[@]}" --oversubscribe --bind-to none --mca btl self,vader --mca pml ob1 "$@"; }
echo "commfit finalize benchmark: $(nproc) cores, $(mpirun --version | head -1), ranks oversubscribed"
# "no MPI_T": profiled with COMMFIT_PROTOCOL=0, without the read of the
# library's protocol limits (Open MPI's tool interface start on rank 0)
printf "%6s %20s %22s %14s %30s\n" ranks "finalize plain (s)" "finalize profiled (s)" "no MPI_T (s)" \
    "rank 0 peak RSS plain/profiled"
for np in ${BENCH_RANKS:-2 16 64}; do
    run -np "$np" "$prog" > "$tmp/plain" || exit 1
    COMMFIT_OUTPUT=$tmp/p.json COMMFIT_SUMMARY=0 run -np "$np" -x LD_PRELOAD="$lib" -x COMMFIT_OUTPUT \
        -x COMMFIT_SUMMARY "$prog" > "$tmp/prof" || exit 1
    COMMFIT_OUTPUT=$tmp/p.json COMMFIT_SUMMARY=0 COMMFIT_PROTOCOL=0 run -np "$np" -x LD_PRELOAD="$lib" \
        -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY -x COMMFIT_PROTOCOL "$prog" > "$tmp/nomt" || exit 1
    fp=$(awk '$1 == "finalize" && $3 > m { m = $3 } END { printf "%.4f", m }' "$tmp/plain")
    fq=$(awk '$1 == "finalize" && $3 > m { m = $3 } END { printf "%.4f", m }' "$tmp/prof")
    fn=$(awk '$1 == "finalize" && $3 > m { m = $3 } END { printf "%.4f", m }' "$tmp/nomt")
    mp=$(awk '$1 == "finalize" && $2 == 0 { print $5 }' "$tmp/plain")
    mq=$(awk '$1 == "finalize" && $2 == 0 { print $5 }' "$tmp/prof")
    printf "%6d %20s %22s %14s %16s / %s kB (+%d kB)\n" "$np" "$fp" "$fq" "$fn" "$mp" "$mq" $((mq - mp))
done
