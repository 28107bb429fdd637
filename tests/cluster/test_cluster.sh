#!/bin/bash
# Two emulated nodes (network namespaces) joined by a link shaped to
# 50 Mbit/s: ranks on different nodes are classed inter-node, and the
# bandwidth from one-way message times is the link's payload rate.  The
# link is slow so that a loaded machine cannot move that rate: TCP's
# buffers hold tens of ms of it, longer than a rank waits for a core (at
# 200 Mbit/s, beside two busy loops, a 1 MiB message took 2.3 times as long).
# Skipped (77) where namespaces cannot be made (not root, no ip netns).
set -u
export PYTHONPATH="$CF_SRCDIR/tests${PYTHONPATH:+:$PYTHONPATH}" # tests/checks.py
here=$(cd "$(dirname "$0")" && pwd)
cluster=$here/cluster.sh
export CFN_PREFIX=cfc$$
"$cluster" available --shaping || exit 77
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commfit-cluster.XXXXXX")
trap '"$cluster" down > /dev/null 2>&1; rm -rf "$tmp"' EXIT
"$cluster" up 2 --rate 50mbit || exit 1
COMMFIT_OUTPUT=$tmp/cluster.json COMMFIT_SUMMARY=0 "$cluster" run -- -np 2 \
    -x LD_PRELOAD="$COMMFIT_LIB" -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY \
    "$CF_BUILDDIR/examples/pingpong" --min 1 --max 1MiB --iters 10 --csv > "$tmp/pp.csv" || { echo "FAIL: job"; exit 1; }
cat "$tmp/pp.csv"
"$CF_PYTHON" - "$tmp/cluster.json" 50e6 "$tmp/pp.csv" <<'PY'
import csv, json, sys
prof = json.load(open(sys.argv[1]))
# the payload rate: tbf counts the frames, 1514 bytes for 1448 of payload
rate = float(sys.argv[2]) / 8 * 1448 / 1514
from checks import check, done
check("two nodes", prof["job"]["nodes"] == 2, str(prof["job"]["nodes"]))
hosts = sorted(r["host"] for r in prof["ranks"])
check("two host names", len(set(hosts)) == 2, str(hosts))
paths = {r["path"] for r in prof["records"] if r["op"] in ("MPI_Send", "MPI_Recv")}
check("messages between the nodes are inter-node", paths == {"inter-node"}, str(paths))
pts = sorted((r["bytes"] / r["calls"], r["transfer_s"]["p50"]) for r in prof["records"]
             if r["op"] == "MPI_Recv" and r.get("transfer_s") and r["size_lo"] >= 262144)
# at 1 MiB the shaper sets the pace (latency is well under 1 % of the time),
# so the payload rate is size over one-way time; a slope over several sizes
# would amplify any noise at the smaller ones
m, t = pts[-1]
bw = m / t
check("inter-node bandwidth from one-way times within 25 %% of the shaped %.2f MB/s" % (rate / 1e6),
      abs(bw - rate) < 0.25 * rate, "%.2f MB/s at %d B" % (bw / 1e6, m))
# the program's own clock on the same messages: half its round trip
half = {int(r["bytes"]): float(r["half_rtt_us"]) * 1e-6 for r in csv.DictReader(open(sys.argv[3]))}
check("the one-way time is the program's half round trip (within 25 %)", abs(t - half[int(m)]) < 0.25 * half[int(m)],
      "%.2f ms vs %.2f ms" % (t * 1e3, half[int(m)] * 1e3))
blocking = [r for r in prof["records"] if r["op"] == "MPI_Recv" and r["size_lo"] == 1048576][0]
print("     1 MiB receive: duration p50 %.2f ms, one-way p50 %.2f ms" %
      (blocking["time_s"]["p50"] * 1e3, blocking["transfer_s"]["p50"] * 1e3))
done()
PY
