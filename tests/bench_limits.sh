#!/bin/bash
# The declared protocol limits on real 10-size sweeps.
#   make bench-limits          (or: bash tests/bench_limits.sh BUILDDIR)
# Runs BENCH_RUNS (10) ping-pong sweeps of 10 log-spaced sizes, 8 B .. 4 MiB
# (examples/pingpong --sizes 10), under the profiler, on shared memory (ob1 +
# vader, eager limit 4096) and TCP loopback (ob1 + tcp, eager limit 65536),
# and reports each profile twice: as recorded, and with its "protocol"
# section removed (the fit on its own).  For each it prints whether the joint
# point-to-point fit breaks between the two sizes around the eager limit, the
# error of the fit's prediction at those two sizes against the program's own
# half round trip, and the rms error over all ten.  Not a test: it asserts
# nothing; the figures depend on the machine and its load.
#   BENCH_RUNS (10)  sweeps per path
set -u
build=${1:-$PWD}
. "$build/tests/env.sh"
commfit=$CF_BUILDDIR/tools/commfit
runs=${BENCH_RUNS:-10}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commfit-bench-limits.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
. "$CF_SRCDIR/tests/transports.sh"
paths=("shm|$TRANSPORT_SHM" "tcp-lo|$TRANSPORT_TCP_LO")
echo "bench-limits: $runs ping-pong sweeps of 10 sizes per path, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "${paths[@]}"; do
    name=${p%%|*}
    # shellcheck disable=SC2206
    opts=(${p#*|})
    for r in $(seq 1 "$runs"); do
        COMMFIT_LIB=$COMMFIT_LIB "$commfit" run -q -o "$tmp/$name.$r.json" -- "$CF_MPIRUN" "${root[@]}" \
            --oversubscribe --bind-to none -np 2 "${opts[@]}" "$CF_BUILDDIR/examples/pingpong" \
            --min 8 --max 4MiB --sizes 10 --csv > "$tmp/$name.$r.csv" 2> "$tmp/$name.$r.err" ||
            { echo "bench-limits: $name: sweep $r failed:"; tail -n 5 "$tmp/$name.$r.err"; continue; }
        "$CF_PYTHON" - "$tmp/$name.$r.json" "$tmp/$name.$r.free.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p.pop("protocol", None)
json.dump(p, open(sys.argv[2], "w"))
PY
        "$commfit" report --format json "$tmp/$name.$r.json" > "$tmp/$name.$r.rep" &&
            "$commfit" report --format json "$tmp/$name.$r.free.json" > "$tmp/$name.$r.free.rep" ||
            echo "bench-limits: $name: report of sweep $r failed"
    done
    "$CF_PYTHON" - "$tmp" "$name" "$runs" <<'PY'
import csv, json, math, os, sys
tmp, name, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = {"with the limits": [], "without": []}
eager = None
for r in range(1, runs + 1):
    base = "%s/%s.%d" % (tmp, name, r)
    if not os.path.exists(base + ".rep"):
        continue
    truth = {int(x["bytes"]): float(x["half_rtt_us"]) * 1e-6 for x in csv.DictReader(open(base + ".csv"))}
    lim = [l["bytes"] for l in json.load(open(base + ".json")).get("protocol", {}).get("limits", [])
           if l["path"] == "intra-node" and "eager" in l["name"]]
    if not lim:
        continue
    eager = lim[0]
    sizes = sorted(truth)
    if not any(s < eager for s in sizes) or not any(s >= eager for s in sizes):
        continue
    for label, rep in (("with the limits", base + ".rep"), ("without", base + ".free.rep")):
        fits = [f for f in json.load(open(rep))["fits"] if f["op"] == "p2p" and f["path"] == "intra-node"]
        if not fits:
            continue
        f = fits[0]
        below = max(s for s in sizes if s < eager)
        above = min(s for s in sizes if s >= eager)
        segs = f["segments"]
        brk = any(a["size_hi"] <= below and b["size_lo"] >= above for a, b in zip(segs, segs[1:]))
        pred = {int(round(b["size"])): b["predicted_s"] for b in f["bins"] if b["size"] > 0}
        err = lambda s: pred[s] / truth[s] - 1 if s in pred and pred[s] else float("nan")
        rms = math.sqrt(sum(err(s) ** 2 for s in sizes if s in pred) / max(1, len([s for s in sizes if s in pred])))
        rows[label].append((brk, err(below), err(above), rms))
if eager is None:
    print("bench-limits: %s: no sweep recorded an eager limit" % name)
    sys.exit(0)
print("%s: eager limit %d B; %d sweeps" % (name, eager, len(rows["without"])))
print("  %-16s %16s %22s %22s %14s" % ("fit", "break at limit", "error below (median)", "error above (median)", "rms (median)"))
med = lambda v: sorted(v)[len(v) // 2] if v else float("nan")
for label, v in rows.items():
    if not v:
        continue
    print("  %-16s %10d of %-3d %+21.1f%% %+21.1f%% %13.1f%%" % (
        label, sum(x[0] for x in v), len(v), 100 * med([x[1] for x in v]), 100 * med([x[2] for x in v]),
        100 * med([x[3] for x in v])))
PY
done
