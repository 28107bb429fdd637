#!/bin/sh
# An allreduce size sweep under the plugin: `commfit report` fits it, its
# predictions match the sweep's timings, small sizes are startup-bound and
# large ones bandwidth-bound; rank 0's summary comes from the same analysis.
#
# How good the fit is, and so its verdicts, is the machine's: beside a CPU
# load a live sweep's medians scatter (a 4 MiB bin three times its
# neighbour, or no bandwidth to fit at all), however often it is taken.  So
# the live sweep is held to what no load moves (every size its bin, the calls
# and bytes the sweep made, the tables' arithmetic, the summary the same
# analysis as the report), and the fit, the predictions and the verdicts to
# the same sweep recorded on a quiet machine (tests/corpus/shm-allreduce-2,
# the program's own timings beside it), analysed here by this build.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
np=2
sweep_check() { "$CF_PYTHON" "$CF_SRCDIR/tests/mpi/check_report_sweep.py" "$@"; }

COMMFIT_OUTPUT="$cf_tmp/sweep.json" COMMFIT_SUMMARY=1 \
    cf_mpirun $np -- "$CF_BUILDDIR/examples/coll_sweep" --op allreduce --min 8 --max 4MiB \
    > "$cf_tmp/sweep.txt" 2> "$cf_tmp/summary.txt" || cf_fail "the sweep failed"
cat "$cf_tmp/sweep.txt" "$cf_tmp/summary.txt"
"$commfit" report --format json "$cf_tmp/sweep.json" > "$cf_tmp/report.json" \
    || cf_fail "commfit report --format json failed"
"$commfit" report --format json --link 10GB/s,1us "$cf_tmp/sweep.json" > "$cf_tmp/report-link.json" \
    || cf_fail "commfit report --link failed"
"$commfit" report "$cf_tmp/sweep.json" > "$cf_tmp/report.txt" || cf_fail "commfit report failed"
sed -n '1,/^OPERATIONS/p' "$cf_tmp/report.txt"

grep -q "^VERDICT" "$cf_tmp/report.txt" && grep -q "MPI_Allreduce on world" "$cf_tmp/report.txt" \
    && ok "text report opens with the verdict" || bad "text report has no verdict"
# rank 0's summary: the report's headline, and its verdict for MPI_Allreduce
"$CF_PYTHON" - "$cf_tmp/summary.txt" "$cf_tmp/report.json" <<'PY' || failed=$((failed + 1))
import json, re, sys
from checks import check, done
summary, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
f = [x for x in rep["fits"] if x["kind"] == "collective" and x["op"] == "MPI_Allreduce" and x["comm"] == "world"]
row = re.search(r"^commfit: MPI_Allreduce +world +\d+ +\S+ \S+ +\S+ \S+ +\S+% +(\S+)", summary, re.M)
check("end-of-run summary gives MPI_Allreduce the report's verdict",
      row is not None and len(f) == 1 and row.group(1) == f[0]["verdict"],
      "%s vs %s" % (row.group(1) if row else None, f[0]["verdict"] if f else None))
check("and the report's headline", ("commfit: %s\n" % rep["headline"]) in summary, rep["headline"])
done()
PY
sweep_check --live "$cf_tmp/report.json" "$cf_tmp/sweep.txt" $np "$cf_tmp/report-link.json" || failed=$((failed + 1))

echo "== the same sweep, recorded on a quiet machine"
rec="$CF_SRCDIR/tests/corpus/shm-allreduce-2"
"$commfit" report --format json "$rec/profile.json" > "$cf_tmp/rec.json" || cf_fail "report of the recorded sweep"
"$commfit" report --format json --link 10GB/s,1us "$rec/profile.json" > "$cf_tmp/rec-link.json" ||
    cf_fail "report --link of the recorded sweep"
sweep_check "$cf_tmp/rec.json" "$rec/coll_sweep.csv" $np "$cf_tmp/rec-link.json" || failed=$((failed + 1))
cf_done
