#!/bin/bash
# NetPIPE against commfit's reference link, path by path.
#   make bench-netpipe          (or: bash tests/bench_netpipe.sh BUILDDIR)
# Runs NetPIPE (NPopenmpi, 2 ranks, 8 B .. 4 MiB, no perturbation) under the
# profiler on shared memory (ob1 + vader), TCP loopback (ob1 + tcp on lo) and
# UCX, then prints for each: NetPIPE's latency (time of its smallest message)
# and peak bandwidth (its best throughput) next to the reference link commfit
# reports for the path (references[]: alpha, B) and the asymptotic B of the
# joint p2p fit (its largest-size segment).  Not a test: it asserts nothing,
# the numbers depend on the machine.
# Needs netpipe-openmpi:  apt-get install netpipe-openmpi
#   BENCH_NP_MAX (4194304)  largest NetPIPE message in bytes
set -u
build=${1:-$PWD}
. "$build/tests/env.sh"
commfit=$CF_BUILDDIR/tools/commfit
np_bin=$(command -v NPopenmpi || command -v NPmpi) || {
    echo "bench-netpipe: NetPIPE for Open MPI (NPopenmpi) not found; install it with: apt-get install netpipe-openmpi" >&2
    exit 1
}
max=${BENCH_NP_MAX:-4194304}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commfit-bench-np.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
. "$CF_SRCDIR/tests/transports.sh"
paths=("shm|$TRANSPORT_SHM" "tcp-lo|$TRANSPORT_TCP_LO" "ucx|$TRANSPORT_UCX")
echo "bench-netpipe: NetPIPE $np_bin, 2 ranks, 8 B .. $max B, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "${paths[@]}"; do
    name=${p%%|*}
    # shellcheck disable=SC2206
    opts=(${p#*|})
    COMMFIT_LIB=$COMMFIT_LIB "$commfit" run -q -o "$tmp/$name.json" -- "$CF_MPIRUN" "${root[@]}" --oversubscribe \
        --bind-to none -np 2 "${opts[@]}" "$np_bin" -l 8 -u "$max" -p 0 -o "$tmp/$name.np" > "$tmp/$name.log" 2>&1 ||
        { echo "bench-netpipe: $name: NetPIPE failed:"; tail -n 5 "$tmp/$name.log"; continue; }
    "$commfit" report --format json "$tmp/$name.json" > "$tmp/$name.rep" ||
        { echo "bench-netpipe: $name: commfit report failed"; continue; }
done
"$CF_PYTHON" - "$tmp" shm tcp-lo ucx <<'PY'
import json, os, sys
tmp = sys.argv[1]
def t(x):
    if x is None: return "-"
    return "%.3g us" % (x * 1e6) if x < 1e-3 else "%.3g ms" % (x * 1e3)
def bw(x):
    return "-" if x is None else "%.4g MB/s" % (x / 1e6)
def ratio(a, b):
    return "-" if a is None or not b else "%.2fx" % (a / b)
print("%-7s %11s %13s | %-11s %11s %13s | %13s | %7s %7s %7s" % (
    "path", "NP latency", "NP peak", "ref path", "ref alpha", "ref B", "p2p fit B",
    "alpha/L", "refB/pk", "fitB/pk"))
for name in sys.argv[2:]:
    npf, rep = os.path.join(tmp, name + ".np"), os.path.join(tmp, name + ".rep")
    if not (os.path.exists(npf) and os.path.exists(rep)):
        print("%-7s (not measured)" % name)
        continue
    rows = [l.split() for l in open(npf) if len(l.split()) >= 3]
    rows = [(int(r[0]), float(r[1]) * 1e6 / 8, float(r[2])) for r in rows]
    lat = min(rows)[2]
    peak = max(r[1] for r in rows)
    r = json.load(open(rep))
    ref = (r.get("references") or [{}])[0]
    fit = [f for f in r.get("fits", []) if f.get("op") == "p2p" and f.get("joint") and f.get("path") == ref.get("path")]
    # asymptotic: the segment of the largest sizes when the fit is piecewise
    seg = (fit[0].get("segments") or [{}])[-1] if fit else {}
    fb = seg.get("bandwidth_Bps", fit[0].get("bandwidth_Bps")) if fit else None
    print("%-7s %11s %13s | %-11s %11s %13s | %13s | %7s %7s %7s" % (
        name, t(lat), bw(peak), ref.get("path", "-"), t(ref.get("alpha_s")), bw(ref.get("bandwidth_Bps")), bw(fb),
        ratio(ref.get("alpha_s"), lat), ratio(ref.get("bandwidth_Bps"), peak), ratio(fb, peak)))
print("NP latency: NetPIPE's one-way time of its smallest (8 B) message; NP peak: its best throughput;")
print("ref: the report's reference link of the path (references[]); p2p fit B: the joint p2p fit's asymptotic B")
print("(its largest-size segment); ratios: commfit over NetPIPE")
PY
