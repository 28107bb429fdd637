#!/bin/sh
# MPI_Pcontrol switches recording and opens nested regions; the training
# example's steps show up as regions.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/pc.json" COMMFIT_SUMMARY=1 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/pcontrol" 2> "$cf_tmp/err" \
    || cf_fail "job failed"
cf_check pcontrol "$cf_tmp/pc.json" 2 || exit 1
grep -q "MPI_Pcontrol calls did not match an open region" "$cf_tmp/err" || cf_fail "no message for the stray close"
echo "ok   a close that matches no region is reported"
COMMFIT_OUTPUT="$cf_tmp/dp.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 2 -- "$CF_BUILDDIR/examples/dp_train" --region --steps 4 > /dev/null || cf_fail "dp_train failed"
"$CF_PYTHON" - "$cf_tmp/dp.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
ok = p["region_entries"].get("step") == 4 and all(
    r.get("region") == "step/allreduce" for r in p["records"] if r["op"] == "MPI_Allreduce")
print("%s dp_train --region: 4 steps, every allreduce in step/allreduce: %s" % ("ok  " if ok else "FAIL", p["region_entries"]))
sys.exit(0 if ok else 1)
PY

# Memory mapped in afresh per step (ranks[].step_minor_faults): 256 pages a
# step faulted in by the program counted per entry of region "step" (the
# outermost region entered most), against none; the 256-page run sleeps 2
# ms a step, its period (ranks[].step_s) at least that, and both count the
# processes' involuntary context switches per step (step_preemptions)
for pages in 256 0; do
    COMMFIT_OUTPUT="$cf_tmp/flt$pages.json" COMMFIT_SUMMARY=0 COMMFIT_CALIBRATE=0 \
        cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/step_faults" $pages 12 $(( pages ? 2000 : 0 )) > /dev/null ||
        cf_fail "step_faults $pages failed"
done
"$CF_PYTHON" - "$cf_tmp/flt256.json" "$cf_tmp/flt0.json" <<'PY' || exit 1
import json, sys
bad = 0
for path, pages in zip(sys.argv[1:], (256, 0)):
    for r in json.load(open(path))["ranks"]:
        f = r.get("step_minor_faults")
        # the step's own pages, and at most 48 more (the libraries' own
        # pages first touched in a step)
        ok = r.get("step_region") == "step" and f is not None and pages <= f <= pages + 48
        bad += not ok
        print("%s %d pages a step, rank %d: %s minor faults a step in %r" %
              ("ok  " if ok else "FAIL", pages, r["rank"], f, r.get("step_region")))
        # the period: the 2 ms sleep and under a second (a busy machine), or
        # under a second without it; the switches a count per step
        s, c = r.get("step_s"), r.get("step_preemptions")
        ok = s is not None and (2e-3 if pages else 0) <= s < 1.0 and c is not None and 0 <= c < 1e4
        bad += not ok
        print("%s rank %d: steps of %s s, %s involuntary context switches a step" % ("ok  " if ok else "FAIL", r["rank"], s, c))
sys.exit(1 if bad else 0)
PY

# Involuntary context switches per step (ranks[].step_preemptions) against
# the program's own getrusage count at each entry of "step": each rank
# spins 20 ms a step beside a spinning child pinned to its CPU, so the
# scheduler takes the CPU from it every step (at least one switch a step)
COMMFIT_OUTPUT="$cf_tmp/csw.json" COMMFIT_SUMMARY=0 COMMFIT_CALIBRATE=0 \
    cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/step_faults" 0 12 0 20 > "$cf_tmp/csw.out" || cf_fail "step_faults spinning failed"
"$CF_PYTHON" - "$cf_tmp/csw.json" "$cf_tmp/csw.out" <<'PY' || exit 1
import json, re, sys
prof = json.load(open(sys.argv[1]))
own = {int(m.group(1)): float(m.group(2))
       for m in re.finditer(r"^step_faults: rank (\d+) ivcsw_per_step ([\d.]+)$", open(sys.argv[2]).read(), re.M)}
bad = len(own) != 2
for r in prof["ranks"]:
    c, w = r.get("step_preemptions"), own.get(r["rank"])
    ok = c is not None and w is not None and w >= 1 and abs(c - w) <= 0.5 + 0.1 * w
    bad += not ok
    print("%s rank %d: %s involuntary context switches a step in the profile, %s by the program's own count" %
          ("ok  " if ok else "FAIL", r["rank"], c, w))
sys.exit(1 if bad else 0)
PY
