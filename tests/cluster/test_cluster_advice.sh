#!/bin/bash
# Fusion advice across two emulated nodes (network namespaces, one rank
# each, the link shaped to 200 Mbit/s): every all-reduce crosses TCP, where
# startup costs far more than in shared memory, so the per-tensor training
# loop gets "fuse"; rerun with the advised bucket, the calls per step drop
# to the buckets dp_train made.  Timings are printed, not asserted.
# Skipped (77) where namespaces cannot be made (not root, no ip netns).
set -u
export PYTHONPATH="$CF_SRCDIR/tests${PYTHONPATH:+:$PYTHONPATH}" # tests/checks.py
here=$(cd "$(dirname "$0")" && pwd)
cluster=$here/cluster.sh
commfit=$CF_BUILDDIR/tools/commfit
export CFN_PREFIX=cfa$$
"$cluster" available --shaping || exit 77
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commfit-cluster.XXXXXX")
trap '"$cluster" down > /dev/null 2>&1; rm -rf "$tmp"' EXIT
"$cluster" up 2 --rate 200mbit || exit 1
steps=20
# 192 tensors from 16 B to 1 kB, 46 kB per step: at 25 MB/s the payload takes
# 1.8 ms per step, the startups more (timed without the profiler, 64 KiB
# buckets save about 60 % of the exchange)
layers=$("$CF_PYTHON" -c 'print(",".join(["256,16,16,64,4,4"] * 32))')
train() { # OUTPUT DP_TRAIN-ARGS...
    local out=$1; shift
    COMMFIT_OUTPUT=$out COMMFIT_SUMMARY=0 "$cluster" run -- -np 2 \
        -x LD_PRELOAD="$COMMFIT_LIB" -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY \
        "$CF_BUILDDIR/examples/dp_train" --layers "$layers" --steps $steps --region --compute-us 1000 "$@"
}
train "$tmp/a.json" --bucket 0 > "$tmp/a.out" || { echo "FAIL: per-tensor job"; exit 1; }
cat "$tmp/a.out"
"$commfit" report "$tmp/a.json" > "$tmp/a.txt" || { echo "FAIL: report"; exit 1; }
sed -n '/^FUSION ADVICE/,/^OPERATIONS/p' "$tmp/a.txt"
"$commfit" report --format json "$tmp/a.json" > "$tmp/a-report.json" || { echo "FAIL: report --format json"; exit 1; }
bucket=$("$CF_PYTHON" - "$tmp/a-report.json" $steps <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
steps = int(sys.argv[2])
import checks
checks.out = sys.stderr  # stdout is the bucket size the shell captures
from checks import check, done
check("two nodes", rep["job"]["nodes"] == 2, str(rep["job"]["nodes"]))
adv = [a for a in rep["advice"] if a["op"] == "MPI_Allreduce" and a["comm"] == "world"]
a = adv[0] if adv else {}
check("advice for MPI_Allreduce on world, inter-node", a.get("path") == "inter-node", str(a.get("path")))
check("verdict fuse", a.get("verdict") == "fuse", "%s (%s)" % (a.get("verdict"), a.get("reason")))
check("192 calls per step over %d steps" % steps, (a.get("calls_per_step"), a.get("steps")) == (192, steps),
      "%s calls/step, %s steps" % (a.get("calls_per_step"), a.get("steps")))
b = a.get("bucket_bytes") or 0
check("bucket size between 64 KiB and 1 GiB", 65536 <= b <= 2**30, str(b))
m = a.get("model", {})
print("     alpha_eff %s, B_eff %s (%s); predicted saving %s of %s s" % (m.get("alpha_s"), m.get("bandwidth_Bps"),
      m.get("source"), a.get("predicted_saving_s"), a.get("current_s")), file=sys.stderr)
print(b)
done()
PY
) || exit 1
train "$tmp/b.json" --bucket "$bucket" > "$tmp/b.out" || { echo "FAIL: bucketed job"; exit 1; }
cat "$tmp/b.out"
nb=$(sed -n 's/^# exchange: .* -> \([0-9]*\) buckets\/step.*/\1/p' "$tmp/b.out")
"$commfit" diff "$tmp/a.json" "$tmp/b.json" | sed -n '/^OPERATIONS/,$p'
"$commfit" diff --format json "$tmp/a.json" "$tmp/b.json" > "$tmp/diff.json" || { echo "FAIL: diff"; exit 1; }
"$CF_PYTHON" - "$tmp/diff.json" "${nb:-0}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
nb = int(sys.argv[2])
r = [o for o in d["operations"] if o["op"] == "MPI_Allreduce" and o["comm"]["a"] == "world"][0]
ok = nb > 0 and r["calls_per_step"] == {"a": 192, "b": nb}
print("%s calls per step drop to dp_train's %d buckets: %s" % ("ok  " if ok else "FAIL", nb, r["calls_per_step"]))
f = r["fusion"] or {}
if f.get("realised_saving_s") is not None:
    print("     predicted saving %.3g ms, realised %.3g ms (%.0f%% of predicted)" %
          (f["predicted_saving_s"] * 1e3, f["realised_saving_s"] * 1e3, 100 * f["realised_share"]))
sys.exit(0 if ok else 1)
PY
