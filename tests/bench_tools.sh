#!/usr/bin/env bash
# Time and peak memory of commfit report, diff and trace on synthetic
# profiles of 1k, 10k and 100k ranks, and of 1k, 10k and 100k records (one
# communicator per 5 records), to show that they grow linearly.  Peak memory
# is the kernel's figure for the child, whose floor (about 14 MB) is the
# measuring interpreter it was forked from.
#   bash tests/bench_tools.sh BUILDDIR
set -euo pipefail
build=${1:?usage: bench_tools.sh BUILDDIR}
src=$(cd "$(dirname "$0")/.." && pwd)
commfit=$build/tools/commfit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

measure() { # label command...: wall time and the command's peak resident memory
    local label=$1
    shift
    python3 - "$label" "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
t = time.monotonic() - t
if r.returncode != 0:
    print("  %-10s failed: %s" % (sys.argv[1], r.stderr.splitlines()[:1]))
else:
    kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print("  %-10s %8.2f s %9.1f MB" % (sys.argv[1], t, kb / 1024))
PY
}

run() { # what file
    local what=$1 f=$2
    echo "$what, profile $(($(stat -c %s "$f") / 1048576)) MB"
    measure report "$commfit" report "$f"
    measure diff "$commfit" diff "$f" "$f"
    measure trace "$commfit" trace -o "$tmp/trace.json" "$f"
}

for n in 1000 10000 100000; do
    python3 "$src/tests/tools/gen_profile.py" "$tmp/r.json" --ranks $n --records 200 --samples $((4 * n))
    run "$n ranks (200 records, $((4 * n)) sampled instances)" "$tmp/r.json"
done
for n in 1000 10000 100000; do
    python3 "$src/tests/tools/gen_profile.py" "$tmp/c.json" --ranks 64 --comms $((n / 5)) --records $n --samples 1000
    run "$n records on $((n / 5)) communicators (64 ranks)" "$tmp/c.json"
done
