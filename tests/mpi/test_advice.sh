#!/bin/sh
# Fusion advice on the training example: one all-reduce per gradient tensor
# of a model of many small tensors (4 ranks, steps marked with regions) gets
# the verdict "fuse" with a bucket size; rerun with that bucket, `commfit
# diff` shows the calls per step down to exactly the buckets dp_train made.
# Timings are printed, not asserted: on a shared two-core machine 4 ranks
# are descheduled at random, and only counts and verdicts are stable.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
np=4
steps=20
# 384 tensors from 16 B to 1 kB, 92 kB per step: startup dominates
layers=$("$CF_PYTHON" -c 'print(",".join(["256,16,16,64,4,4"] * 64))')
train() {
    cf_mpirun $np -- "$CF_BUILDDIR/examples/dp_train" --layers "$layers" --steps $steps --region \
        --compute-us 1000 "$@"
}

# Four ranks on two cores: now and then the scheduler scatters the bins so
# much that the line beyond the measured sizes (all under 1 kB; the buckets
# are 64 KiB and up) misses them by far, its uncertainty covers the
# saving, and commfit rightly says "uncertain" (and what would settle it).
# So can a CPU-bound load beside the job, and cut the calibration of the
# bucket sizes short at the default budget: the budget is set here (2 s),
# and another, independent run is taken, not a looser rule. Where every
# attempt measured its steps far beyond what its medians predict (a loaded
# machine), "uncertain" is the right answer: the test then holds that the
# report says so, and why, and leaves the bucket's rerun to a quiet machine.
disturbed=0
for attempt in 1 2 3; do
    COMMFIT_CALIBRATE=2s COMMFIT_OUTPUT="$cf_tmp/a.json" COMMFIT_SUMMARY=1 train --bucket 0 > "$cf_tmp/a.out" 2> "$cf_tmp/a.err" \
        || { cat "$cf_tmp/a.err"; cf_fail "per-tensor run failed"; }
    cat "$cf_tmp/a.out"
    grep "^commfit: fusion:" "$cf_tmp/a.err" || cf_fail "the end-of-run summary has no fusion line"
    "$commfit" report --format json "$cf_tmp/a.json" | "$CF_PYTHON" -c '
import json, sys
for a in json.load(sys.stdin)["advice"]:
    if a["op"] == "MPI_Allreduce" and a["verdict"] != "fuse":
        print("== no advice to fuse on run %s (%s: %s %s); a second measurement" % (sys.argv[1], a["verdict"], a["reason"], a["why"] or ""))
        # disturbed: the steps over their predictor, or the calibration over the calls of the program
        sys.exit(2 if a["disturbed"] or "the calibration ran slower" in (a["reason"] or "") else 1)' $attempt
    rc=$?
    [ $rc = 0 ] && { disturbed=0; break; }
    [ $rc = 2 ] && disturbed=$((disturbed + 1))
done
"$commfit" report --format json "$cf_tmp/a.json" > "$cf_tmp/a-report.json" || cf_fail "report --format json failed"
"$commfit" report --by-region "$cf_tmp/a.json" > "$cf_tmp/a-report.txt" || cf_fail "report failed"
sed -n '/^FUSION ADVICE/,/^OPERATIONS/p' "$cf_tmp/a-report.txt"
sed -n '/^REGIONS/,/^FITS/p' "$cf_tmp/a-report.txt"

bucket=$("$CF_PYTHON" - "$cf_tmp/a-report.json" $np $steps $disturbed <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
np, steps, disturbed = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]) == 3
import checks
checks.out = sys.stderr  # stdout is the bucket size the shell captures
from checks import check, done
adv = [a for a in rep["advice"] if a["op"] == "MPI_Allreduce" and a["comm"] == "world"]
check("advice for MPI_Allreduce on world", len(adv) == 1, str(len(adv)))
a = adv[0] if adv else {}
if disturbed:
    # every attempt was disturbed: the answer must be "uncertain", with the
    # measured disturbance and what settles it
    check("disturbed run: verdict uncertain", a.get("verdict") == "uncertain", "%s (%s)" % (a.get("verdict"), a.get("reason")))
    if "the calibration ran slower" in (a.get("reason") or ""):
        check("disturbed calibration: the reason says so and what settles it, the why by how much",
              "a run on a quiet machine settles it" in a["reason"] and
              "the calibration's sizes took up to" in (a.get("why") or ""), "%s / %s" % (a["reason"], a.get("why")))
    else:
        check("disturbed run: steps measured over twice the prediction",
              a.get("disturbed") is True and (a.get("measured_over_model") or 0) > 2, str(a.get("measured_over_model")))
        # the saving may lie within its uncertainty or, priced on the same loaded
        # machine, below it: either way the reason says what settles it
        check("disturbed run: the reason says what settles it",
              "a run on a quiet machine settles it" in (a.get("reason") or "") or
              abs(a.get("saving_step_s") or 0) <= (a.get("saving_uncertainty_step_s") or 0),
              "%s (%s +- %s)" % (a.get("reason"), a.get("saving_step_s"), a.get("saving_uncertainty_step_s")))
else:
    check("verdict fuse", a.get("verdict") == "fuse", "%s (%s)" % (a.get("verdict"), a.get("reason")))
check("comm_size", a.get("comm_size") == np, str(a.get("comm_size")))
check("steps from the region 'step'", (a.get("steps"), a.get("steps_source"), a.get("steps_region")) == (steps, "region", "step"),
      "%s %s %s" % (a.get("steps"), a.get("steps_source"), a.get("steps_region")))
check("384 calls per step", a.get("calls_per_step") == 384, str(a.get("calls_per_step")))
b = 0 if disturbed else a.get("bucket_bytes") or 0
if not disturbed:  # the bucket, where one is advised
    check("bucket size between 64 KiB and 1 GiB", 65536 <= b <= 2**30, str(b))
    # dp_train, a C program, loads neither framework: no framework's setting, the program's own merge
    check("no DDP or Horovod setting for a program without them",
          a.get("ddp_bucket_cap_mb") is None and a.get("horovod_fusion_threshold") is None and
          "the program would merge a step's calls into calls of up to" in (a.get("fuse_how") or ""),
          "bucket_cap_mb=%s HOROVOD_FUSION_THRESHOLD=%s: %s" % (a.get("ddp_bucket_cap_mb"),
                                                              a.get("horovod_fusion_threshold"), a.get("fuse_how")))
    check("a saving is predicted", (a.get("predicted_saving_s") or 0) > 0 and a.get("predicted_s") < a.get("current_s"),
          "current %s s, predicted %s s" % (a.get("current_s"), a.get("predicted_s")))
# wait and transfer (issue #4): per rank, per operation, late arrivals
check("ranks carry wait_s and transfer_s", all("wait_s" in r and "transfer_s" in r for r in rep["ranks"]))
op = [o for o in rep["operations"] if o["op"] == "MPI_Allreduce"][0]
check("operations carry wait_share", "wait_share" in op and op["wait_share"] is not None, str(op.get("wait_share")))
late = [l for l in rep["late_arrivals"] if l["comm"] == "world"]
check("late arrivals on world: counts within the instances",
      len(late) == 1 and 0 < sum(x["count"] for x in late[0]["last"]) <= late[0]["instances"], str(late))
reg = {r["region"]: r for r in rep["regions"]}
check("regions: step/allreduce holds the all-reduces",
      "step/allreduce" in reg and [o["op"] for o in reg["step/allreduce"]["operations"]] == ["MPI_Allreduce"]
      and reg["step/allreduce"]["entries"] == steps and reg["step"]["inclusive_s"] >= reg["step/allreduce"]["time_s"], "")
print(b)
done()
PY
) || cf_fail "advice"
if [ "$disturbed" = 3 ]; then
    grep -Eq "^    disturbed: the run measured .* a run on a quiet machine settles it|^    uncertain: .*the calibration ran slower .* a run on a quiet machine settles it" "$cf_tmp/a-report.txt" \
        || cf_fail "the text report does not say the run was disturbed and what settles it"
    echo "ok   text report: disturbed, and what settles it"
    echo "note: all 3 runs disturbed (a loaded machine): the bucket's rerun needs a quiet one"
    exit 0
fi
grep -q "^FUSION ADVICE" "$cf_tmp/a-report.txt" && grep -q "^    fuse: buckets of" "$cf_tmp/a-report.txt" \
    && grep -q "^REGIONS" "$cf_tmp/a-report.txt" && grep -q "^LATE ARRIVALS" "$cf_tmp/a-report.txt" \
    || cf_fail "text report lacks FUSION ADVICE, REGIONS or LATE ARRIVALS"
echo "ok   text report: FUSION ADVICE, REGIONS, LATE ARRIVALS"

COMMFIT_OUTPUT="$cf_tmp/b.json" COMMFIT_SUMMARY=0 train --bucket "$bucket" > "$cf_tmp/b.out" \
    || cf_fail "bucketed run failed"
cat "$cf_tmp/b.out"
nb=$(sed -n 's/^# exchange: .* -> \([0-9]*\) buckets\/step.*/\1/p' "$cf_tmp/b.out")
[ -n "$nb" ] || cf_fail "dp_train did not print its bucket count"
"$commfit" diff "$cf_tmp/a.json" "$cf_tmp/b.json" || cf_fail "commfit diff failed"
"$commfit" diff --format json "$cf_tmp/a.json" "$cf_tmp/b.json" > "$cf_tmp/diff.json" || cf_fail "commfit diff --format json failed"
"$CF_PYTHON" - "$cf_tmp/diff.json" "$nb" $np $steps <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
nb, np, steps = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
from checks import check, done
row = [o for o in d["operations"] if o["op"] == "MPI_Allreduce" and o["comm"]["a"] == "world"]
check("diff has MPI_Allreduce on world", len(row) == 1)
r = row[0]
check("calls per step drop to dp_train's %d buckets" % nb, r["calls_per_step"] == {"a": 384, "b": nb}, str(r["calls_per_step"]))
check("calls", r["calls"] == {"a": 384 * np * steps, "b": nb * np * steps}, str(r["calls"]))
f = r["fusion"]
check("A's advice is held against B", f is not None and f["predicted_saving_s"] > 0 and f["realised_saving_s"] is not None, str(f))
if f:
    print("     predicted saving %.3g ms, realised %.3g ms (%.0f%% of predicted; timings on a shared machine)"
          % (f["predicted_saving_s"] * 1e3, f["realised_saving_s"] * 1e3, 100 * f["realised_share"]))
done()
PY
