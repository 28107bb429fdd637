#!/usr/bin/env bash
# CPU time and peak memory of commfit report, report --by-callsite, diff and
# trace on synthetic profiles of 1k, 10k and 100k ranks: as many
# communicators as ranks, 10 records, 12 sampled instances and 4 matrix
# pairs per rank, and a call site of 8 frames (each in a module of its
# own) per 10 ranks.  The 10k profile is the 41 MB one of the table in
# docs/overhead.md.  CPU time (user and system: the wall time swings with a
# busy machine's load, the CPU time much less) and peak memory are the
# kernel's figures for the command, measured by tests/tools/peak_rss.c;
# x file: peak memory over the profile's size (diff reads it twice).
#   bash tests/bench_tools.sh BUILDDIR [OLD_COMMFIT]
# With OLD_COMMFIT (another build's tools/commfit), each line shows it
# beside this build's, and both outputs are checked to be the same bytes.
# BENCH_TOOLS_RANKS="1000 10000" limits the sizes.
set -euo pipefail
build=${1:?usage: bench_tools.sh BUILDDIR [OLD_COMMFIT]}
old=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
commfit=$build/tools/commfit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/peak" "$src/tests/tools/peak_rss.c"

# measure BINARY OUT ARGS...: "cpu_seconds kB" of one run, its output in OUT
measure() {
    local bin=$1 out=$2
    shift 2
    if ! "$tmp/peak" "$tmp/peak.txt" "$bin" "$@" > "$out" 2> "$tmp/err"; then
        echo "failed: $(head -n 1 "$tmp/err")" >&2
        echo "- -"
        return
    fi
    cut -d' ' -f2,3 "$tmp/peak.txt"
}

cell() { # seconds kB file_bytes times_read
    awk -v s="$1" -v k="$2" -v f="$3" -v n="$4" 'BEGIN {
        if (s == "-") { printf "%8s %8s %6s", "failed", "", ""; exit }
        printf "%7.2fs %6.0fMB %5.1fx", s, k / 1024, k * 1024 / (f * n) }'
}

run() { # label file times_read args...
    local label=$1 f=$2 n=$3
    shift 3
    local bytes now
    bytes=$(stat -c %s "$f")
    now=$(measure "$commfit" "$tmp/new.out" "$@")
    if [ -n "$old" ]; then
        local was same=same
        was=$(measure "$old" "$tmp/old.out" "$@")
        cmp -s "$tmp/old.out" "$tmp/new.out" || same=DIFFERENT
        # shellcheck disable=SC2086
        printf "  %-16s %s   %s   %s\n" "$label" "$(cell $was "$bytes" "$n")" "$(cell $now "$bytes" "$n")" "$same"
    else
        # shellcheck disable=SC2086
        printf "  %-16s %s\n" "$label" "$(cell $now "$bytes" "$n")"
    fi
}

for n in ${BENCH_TOOLS_RANKS:-1000 10000 100000}; do
    f=$tmp/p$n.json
    python3 "$src/tests/tools/gen_profile.py" "$f" --ranks "$n" --comms "$n" --records $((10 * n)) \
        --samples $((12 * n)) --pairs $((4 * n)) --sites $((n / 10)) --modules $((8 * n / 10))
    echo "$n ranks: $n communicators, $((10 * n)) records, $((12 * n)) samples, $((4 * n)) pairs," \
        "$((n / 10)) call sites; profile $(($(stat -c %s "$f") / 1048576)) MB"
    if [ -n "$old" ]; then
        printf "  %-16s %-25s   %-25s\n" "" "before ($old)" "after"
    fi
    run report "$f" 1 report "$f"
    run "--by-callsite" "$f" 1 report --by-callsite "$f"
    run diff "$f" 2 diff "$f" "$f"
    run trace "$f" 1 trace "$f"
done
