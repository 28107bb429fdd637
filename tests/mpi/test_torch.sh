#!/bin/sh
# The PyTorch trainer (examples/torch_train.py) under the plugin, 2 ranks on
# shared memory, a few steps of each way to exchange the gradients: the
# profile holds exactly the calls the trainer made.  On world: per tensor
# one MPI_Allreduce per tensor and step, bucketed one per bucket, overlapped
# one MPI_Iallreduce per tensor (or bucket) and one MPI_Waitall per step,
# 4 x parameters bytes a step either way; the trainer's own bookkeeping is
# on its communicator "aux" (aux_allreduce calls per rank); the warmup
# steps, run with recording paused, leave nothing.  Every rank ends with
# the same parameters (the trainer checks it) and every mode with the same
# ones (2 ranks: a sum of two is the same in any order).
# Skipped (77) without Debian's python3-torch and python3-mpi4py.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
py=/usr/bin/python3
why=$("$py" -c "import torch, mpi4py" 2>&1) || {
    echo "SKIP: $py cannot import torch and mpi4py (apt-get install python3-torch python3-mpi4py): $(echo "$why" | tail -n 1)"
    exit 77
}
[ "$CF_MPI_FAMILY" = openmpi ] || { echo "SKIP: Debian's mpi4py is built for Open MPI, this build uses $CF_MPI_FAMILY"; exit 77; }
np=2
steps=3
train() { # NAME TRAINER-ARGS...
    name=$1; shift
    COMMFIT_OUTPUT="$cf_tmp/$name.json" COMMFIT_SUMMARY=0 cf_mpirun $np -x OMP_NUM_THREADS=1 -- \
        "$py" "$CF_SRCDIR/examples/torch_train.py" --steps $steps --warmup 1 --region "$@" > "$cf_tmp/$name.out" \
        || { cat "$cf_tmp/$name.out"; cf_fail "torch_train $* failed"; }
    grep '^torch_train:' "$cf_tmp/$name.out"
}
train mlp-pt --model mlp --mode per-tensor
train mlp-b --model mlp --mode bucket --bucket 32768
train mlp-o --model mlp --mode overlap
train mlp-ob --model mlp --mode overlap-bucket --bucket 32768
train r20-pt --model resnet20 --mode per-tensor --batch 2
train r20-o --model resnet20 --mode overlap --batch 2
"$CF_BUILDDIR/tools/commfit" report --format json "$cf_tmp/mlp-pt.json" > "$cf_tmp/mlp-pt.report.json" ||
    cf_fail "commfit report mlp-pt.json"
"$CF_PYTHON" - "$cf_tmp" $np $steps <<'PY'
import json, sys
from collections import defaultdict
from checks import check, done
d, np_, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def result(name):
    for l in open("%s/%s.out" % (d, name)):
        if l.startswith("torch_train: "):
            return dict(kv.split("=", 1) for kv in l.split()[1:])
    return {}


def calls(name):
    """(op, comm) -> [calls, bytes]; comm 'world', 'aux' (by its name) or '-'."""
    p = json.load(open("%s/%s.json" % (d, name)))
    label = {c["id"]: c.get("user_name") or c["label"] for c in p["communicators"]}
    t = defaultdict(lambda: [0, 0])
    regions = set()
    for r in p["records"]:
        if r["layer"] == "mpi":
            t[(r["op"], label.get(r["comm"], "-"))][0] += r["calls"]
            t[(r["op"], label.get(r["comm"], "-"))][1] += r["bytes"]
            if r["op"] in ("MPI_Allreduce", "MPI_Iallreduce", "MPI_Waitall") and label.get(r["comm"]) != "aux":
                regions.add(r.get("region"))
    return t, p.get("region_entries", {}), regions


# the job loaded PyTorch (and not Horovod): the advice prices and names DDP's default, not Horovod's
job = json.load(open("%s/mlp-pt.json" % d))["job"]
check("job.frameworks: torch", job.get("frameworks") == ["torch"], str(job.get("frameworks")))
check("job.program: the interpreter", str(job.get("program", "")).startswith("python"), str(job.get("program")))
adv = [a for a in json.load(open("%s/mlp-pt.report.json" % d))["advice"]
       if a["op"] == "MPI_Allreduce" and a["comm"] == "world"]
names = {c["name"] for a in adv for c in a["candidates"] if c.get("name")}
check("the world all-reduce's named candidates: DDP's alone", names == {"DDP default (25 MiB)"}, str(names))
check("no Horovod setting", all(a["horovod_fusion_threshold"] is None for a in adv), str(adv and adv[0]["fuse_how"]))
# the trainer sums its gradients through mpi4py, not through DDP: DDP's setting is not named
check("the world all-reduce's calls come from mpi4py's module, DDP's setting not named",
      adv and all("/mpi4py/" in (a.get("calls_from") or "") and a["ddp_bucket_cap_mb"] is None for a in adv),
      str(adv and (adv[0].get("calls_from"), adv[0]["ddp_bucket_cap_mb"])))

sums = {}
for name, op in (("mlp-pt", "MPI_Allreduce"), ("mlp-b", "MPI_Allreduce"), ("mlp-o", "MPI_Iallreduce"),
                 ("mlp-ob", "MPI_Iallreduce"), ("r20-pt", "MPI_Allreduce"), ("r20-o", "MPI_Iallreduce")):
    r = result(name)
    check("%s: the trainer's own check" % name, r.get("ranks_agree") == "yes", r.get("ranks_agree", "no result line"))
    if not r:
        continue
    t, entries, regions = calls(name)
    per_step = int(r["buckets_per_step"])
    if name.endswith("-pt") or name.endswith("-o"):
        check("%s: one call per tensor" % name, per_step == int(r["tensors"]), "%s calls/step, %s tensors" %
              (per_step, r["tensors"]))
    else:
        check("%s: buckets of 32 KiB make fewer calls than tensors" % name, 1 < per_step < int(r["tensors"]),
              "%s buckets/step of %s tensors" % (per_step, r["tensors"]))
    want = [per_step * steps * np_, 4 * int(r["params"]) * steps * np_]
    check("%s: %s on world: %d calls/step x %d steps x %d ranks, 4 x %s params x steps x ranks bytes"
          % (name, op, per_step, steps, np_, r["params"]), t[(op, "world")] == want,
          "%s, want %s" % (t[(op, "world")], want))
    other = "MPI_Iallreduce" if op == "MPI_Allreduce" else "MPI_Allreduce"
    check("%s: no %s on world" % (name, other), t[(other, "world")][0] == 0, str(t[(other, "world")]))
    if op == "MPI_Iallreduce":
        w = sum(v[0] for (o, c), v in t.items() if o == "MPI_Waitall")
        check("%s: MPI_Waitall: steps x ranks" % name, w == steps * np_, "%d, want %d" % (w, steps * np_))
    aux = int(r["aux_allreduce"])
    check("%s: MPI_Allreduce on 'aux': the trainer's %d a rank" % (name, aux),
          t[("MPI_Allreduce", "aux")][0] == aux * np_, "%s, want %d" % (t[("MPI_Allreduce", "aux")][0], aux * np_))
    check("%s: %d entries of region 'step' (the warmup step not recorded)" % (name, steps),
          entries.get("step") == steps, str(entries))
    check("%s: the exchange inside step/allreduce" % name, regions == {"step/allreduce"}, str(regions))
    sums.setdefault(name.split("-")[0], set()).add(r["crc"])
for m, s in sums.items():
    check("%s: the same parameters after every mode" % m, len(s) == 1, "CRC-32 %s" % sorted(s))
done()
PY
