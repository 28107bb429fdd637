#!/bin/bash
# Fusion advice against the measured saving, on the training example.
#   make bench-fusion            (or: bash tests/bench_fusion.sh BUILDDIR)
# For each model: profile the per-tensor loop, take the advised bucket size,
# rerun with it, and print the saving the advice predicted next to the one
# `commfit diff` measured (per rank on the slowest rank, transfer time) and
# the one dp_train itself measured without the profiler (its comm time per
# step, mean over ranks).  Repeated REPS times; medians at the end.
# Not a test: it asserts nothing, the numbers depend on the machine.
#   BENCH_NP (2)     ranks; more ranks than cores time the scheduler too
#   BENCH_REPS (3)   repetitions
#   BENCH_STEPS (50) training steps per run
set -u
build=${1:-$PWD}
. "$build/tests/env.sh"
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
np=${BENCH_NP:-2}
reps=${BENCH_REPS:-3}
steps=${BENCH_STEPS:-50}
commfit=$CF_BUILDDIR/tools/commfit
dp=$CF_BUILDDIR/examples/dp_train

models=(
    "tiny tensors:$("$CF_PYTHON" -c 'print(",".join(["256,16,16,64,4,4"] * 64))')"
    "mixed tensors:$("$CF_PYTHON" -c 'print(",".join(["4096,64,64,1024,16,16"] * 16))')"
    "small CNN:small"
)

run_plain() { # BUCKET LAYERS -> comm ms/step
    local m=(--layers "$2"); [ "$2" = small ] && m=(--model small)
    cf_mpirun_plain "$np" "$dp" "${m[@]}" --steps "$steps" --compute-us 1000 --bucket "$1" |
        sed -n 's/^comm time: .*, \([0-9.]*\) ms\/step.*/\1/p'
}

echo "fusion bench: $np ranks, $steps steps, $reps repetitions, $(nproc) cores"
echo "savings over the run in ms: predicted (the model's relative saving applied to the measured time),"
echo "model (the model's own times), realised (commfit diff: per rank on the slowest rank),"
echo "plain (dp_train's comm time without the profiler, mean over ranks); bucket* = not advised (no gain),"
echo "run with 64 KiB to compare"
printf '%-14s %4s %9s %8s %10s %10s %10s %10s\n' model rep bucket buckets predicted model realised plain
summary=()
declare -A verdicts
for entry in "${models[@]}"; do
    name=${entry%%:*} layers=${entry#*:}
    m=(--layers "$layers"); [ "$layers" = small ] && m=(--model small)
    rows=()
    for rep in $(seq "$reps"); do
        COMMFIT_OUTPUT="$cf_tmp/a.json" COMMFIT_SUMMARY=0 cf_mpirun "$np" -- "$dp" "${m[@]}" --steps "$steps" \
            --compute-us 1000 --region --bucket 0 > /dev/null || { echo "$name: run failed"; continue; }
        # the advised bucket; where fusion is not advised, 64 KiB to see what it would have done
        read -r verdict bucket predicted model <<< "$("$commfit" report --format json "$cf_tmp/a.json" | "$CF_PYTHON" -c '
import json, sys
a = [x for x in json.load(sys.stdin)["advice"] if x["op"] == "MPI_Allreduce" and x["comm"] == "world"][0]
S = a["bucket_bytes"] or 65536
c = [c for c in a["candidates"] if c["bucket_bytes"] == S][0]
print(a["verdict"].replace(" ", "-"), S, (a["current_s"] - c["predicted_s"]) * 1e3,
      (a["model_current_step_s"] - c["model_step_s"]) * a["steps"] * 1e3)')"
        COMMFIT_OUTPUT="$cf_tmp/b.json" COMMFIT_SUMMARY=0 cf_mpirun "$np" -- "$dp" "${m[@]}" --steps "$steps" \
            --compute-us 1000 --region --bucket "$bucket" > "$cf_tmp/b.out" || { echo "$name: run failed"; continue; }
        nb=$(sed -n 's/^# exchange: .* -> \([0-9]*\) buckets\/step.*/\1/p' "$cf_tmp/b.out")
        # the same measure as commfit diff: per rank on the slowest rank, scaled to A's steps
        "$commfit" report --format json "$cf_tmp/a.json" > "$cf_tmp/a-report.json"
        "$commfit" report --format json "$cf_tmp/b.json" > "$cf_tmp/b-report.json"
        realised=$("$CF_PYTHON" - "$cf_tmp/a-report.json" "$cf_tmp/b-report.json" <<'PY'
import json, sys
a, b = ([x for x in json.load(open(f))["advice"] if x["op"] == "MPI_Allreduce" and x["comm"] == "world"][0]
        for f in sys.argv[1:3])
print((a["current_s"] / a["steps"] - b["current_s"] / b["steps"]) * a["steps"] * 1e3)
PY
)
        plain=$("$CF_PYTHON" -c 'import sys; print((float(sys.argv[1]) - float(sys.argv[2])) * int(sys.argv[3]))' \
            "$(run_plain 0 "$layers")" "$(run_plain "$bucket" "$layers")" "$steps")
        [ "$verdict" = fuse ] || bucket="$bucket*"
        printf '%-14s %4s %9s %8s %10.3f %10.3f %10.3f %10.3f\n' "$name" "$rep" "$bucket" "$nb" "$predicted" "$model" \
            "$realised" "$plain"
        rows+=("$predicted $model $realised $plain")
        verdicts[$name]=$verdict
    done
    if [ ${#rows[@]} -eq 0 ]; then
        summary+=("$name: no runs")
        continue
    fi
    summary+=("$(printf '%s\n' "${rows[@]}" | "$CF_PYTHON" -c '
import statistics as st, sys
cols = list(zip(*[[float(x) for x in l.split()] for l in sys.stdin if l.strip()]))
p, m, r, q = (st.median(c) for c in cols)
print("%s (%s): predicted %.3g ms (model alone %.3g ms); realised %.3g ms profiled, %.3g ms without the profiler"
      % (sys.argv[1], sys.argv[2], p, m, r, q))' "$name" "${verdicts[$name]}")")
done
echo
echo "medians over $reps repetitions:"
printf '  %s\n' "${summary[@]}"
