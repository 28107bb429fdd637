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
echo "plain (dp_train's comm time without the profiler, mean over ranks)"
printf '%-14s %4s %9s %8s %10s %10s %10s %10s\n' model rep bucket buckets predicted model realised plain
summary=()
for entry in "${models[@]}"; do
    name=${entry%%:*} layers=${entry#*:}
    m=(--layers "$layers"); [ "$layers" = small ] && m=(--model small)
    rows=()
    for rep in $(seq "$reps"); do
        COMMFIT_OUTPUT="$cf_tmp/a.json" COMMFIT_SUMMARY=0 cf_mpirun "$np" -- "$dp" "${m[@]}" --steps "$steps" \
            --compute-us 1000 --region --bucket 0 > /dev/null || { echo "$name: run failed"; continue; }
        read -r verdict bucket predicted model <<< "$("$commfit" report --format json "$cf_tmp/a.json" | "$CF_PYTHON" -c '
import json, sys
a = [x for x in json.load(sys.stdin)["advice"] if x["op"] == "MPI_Allreduce" and x["comm"] == "world"][0]
print(a["verdict"].replace(" ", "-"), a["bucket_bytes"] or 0, a["predicted_saving_s"] * 1e3, a["model_saving_s"] * 1e3)')"
        if [ "$verdict" != fuse ]; then
            printf '%-14s %4s %9s %8s %10s\n' "$name" "$rep" - - "no gain"
            continue
        fi
        COMMFIT_OUTPUT="$cf_tmp/b.json" COMMFIT_SUMMARY=0 cf_mpirun "$np" -- "$dp" "${m[@]}" --steps "$steps" \
            --compute-us 1000 --region --bucket "$bucket" > "$cf_tmp/b.out" || { echo "$name: run failed"; continue; }
        nb=$(sed -n 's/^# exchange: .* -> \([0-9]*\) buckets\/step.*/\1/p' "$cf_tmp/b.out")
        realised=$("$commfit" diff --format json "$cf_tmp/a.json" "$cf_tmp/b.json" | "$CF_PYTHON" -c '
import json, sys
r = [o for o in json.load(sys.stdin)["operations"] if o["op"] == "MPI_Allreduce" and o["comm"]["a"] == "world"][0]
print(r["fusion"]["realised_saving_s"] * 1e3)')
        plain=$("$CF_PYTHON" -c 'import sys; print((float(sys.argv[1]) - float(sys.argv[2])) * int(sys.argv[3]))' \
            "$(run_plain 0 "$layers")" "$(run_plain "$bucket" "$layers")" "$steps")
        printf '%-14s %4s %9s %8s %10.3f %10.3f %10.3f %10.3f\n' "$name" "$rep" "$bucket" "$nb" "$predicted" "$model" \
            "$realised" "$plain"
        rows+=("$predicted $model $realised $plain")
    done
    if [ ${#rows[@]} -eq 0 ]; then
        summary+=("$name: no gain predicted")
        continue
    fi
    summary+=("$(printf '%s\n' "${rows[@]}" | "$CF_PYTHON" -c '
import statistics as st, sys
cols = list(zip(*[[float(x) for x in l.split()] for l in sys.stdin if l.strip()]))
p, m, r, q = (st.median(c) for c in cols)
print("%s: predicted %.3g ms (model alone %.3g ms); realised %.3g ms profiled (%.0f%% of predicted), %.3g ms without the profiler"
      % (sys.argv[1], p, m, r, 100 * r / p if p else 0, q))' "$name")")
done
echo
echo "medians over $reps repetitions:"
printf '  %s\n' "${summary[@]}"
