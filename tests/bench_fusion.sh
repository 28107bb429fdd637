#!/bin/bash
# Fusion advice against the measured saving, on the training examples.
#   make bench-fusion            (or: bash tests/bench_fusion.sh BUILDDIR)
# 1. dp_train (C, simulated compute), 2 ranks on this host: for each model,
#    profile the per-tensor loop, take the advised bucket size, rerun with
#    it, and print the saving the advice predicted next to the one `commfit
#    diff` measured (mean per rank, transfer time) and the one
#    dp_train itself measured without the profiler (its comm time per step
#    of the late rank, the one that waited least in the step).  Repeated REPS times; medians at the end.
# 2. examples/torch_train.py (PyTorch forward and backward, mpi4py) on two
#    emulated nodes (tests/cluster/cluster.sh, one rank each, TCP), unshaped
#    and through tbf rates: per trainer, profile the per-tensor and the
#    overlapped (Horovod-style) exchange, read commfit's advice, then time
#    without the profiler alternating pairs of runs, per tensor against
#    bucketed at the advised size, at DDP's 25 MiB and at Horovod's 64 MiB,
#    and print the medians of the trainer's own timers: the late rank's
#    exchange (the rank that waited least in it, whose exchange the step
#    waits for), the exchange over all ranks, the step.  Then, on each
#    trainer it buckets, the settle step the advice names for an
#    "uncertain": one profiled run at B's bucket (an "uncertain" without a
#    candidate: DDP's 25 MiB), compared with the first profile by `commfit
#    diff`, whose measured saving per step is set beside the trainers'.
#    Skipped (with
#    the reason) without root and ip netns, or without python3-torch and
#    python3-mpi4py.
# Not a test: it asserts nothing, the numbers depend on the machine.
#   BENCH_NP (2)     ranks of part 1; more ranks than cores time the scheduler too
#   BENCH_REPS (3)   repetitions (part 2: pairs)
#   BENCH_STEPS      training steps per run (part 1: 50, part 2: 30)
#   BENCH_RATES ("unshaped 200mbit")   part 2's links (tc rates, or unshaped)
#   BENCH_MODELS ("mlp resnet20 resnet-stream")   part 2's trainers
#   BENCH_PARTS ("dp torch inflight")   which parts to run; inflight: several
#                    MPI_Iallreduce in flight against one at a time (tests/bench/inflight.py,
#                    BENCH_INFLIGHT_K calls of each size, 4)
#   BENCH_PLAIN_PAIRS (3)  part 1: alternating pairs of unprofiled runs per repetition
#   BENCH_KEEP       a directory to keep the runs' files in (profiles, reports)
#   BENCH_CALIBRATE (2s)  COMMFIT_CALIBRATE of the profiled runs (parts 1
#                    and 2): the budget a short run's advice asks for to
#                    measure its buckets (at the default 1 % of a 0.3 s run,
#                    it says "uncertain" and names this budget)
#   BENCH_PROFILES (2)  part 2: profiled runs per trainer; the advice is over all
#                    of them (commfit report A B ...: the median saving, their
#                    spread in its uncertainty); 1: one run's advice
#   BENCH_ENV        VAR=VALUE words given to every trainer of part 2 and
#                    inflight run, profiled or not (e.g. the allocator's
#                    MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=1073741824)
set -u
build=${1:-$PWD}
. "$build/tests/env.sh"
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
# BENCH_KEEP=DIR: the runs' files (profiles, reports, advice) stay in DIR
if [ -n "${BENCH_KEEP:-}" ]; then
    rm -rf "$cf_tmp"
    mkdir -p "$BENCH_KEEP" && cf_tmp=$(cd "$BENCH_KEEP" && pwd) || exit 2
fi
drop_tmp() { [ -n "${BENCH_KEEP:-}" ] || rm -rf "$cf_tmp"; }
trap 'drop_tmp' EXIT
np=${BENCH_NP:-2}
reps=${BENCH_REPS:-3}
steps=${BENCH_STEPS:-50}
parts=${BENCH_PARTS:-dp torch inflight}
commfit=$CF_BUILDDIR/tools/commfit
dp=$CF_BUILDDIR/examples/dp_train
calibrate=${BENCH_CALIBRATE:-2s}
profiles=${BENCH_PROFILES:-2}
case $profiles in ''|*[!0-9]*|0) echo "BENCH_PROFILES: '$profiles' is not a count of runs (1, 2, ...)" >&2; exit 2 ;; esac

# part 1, dp_train (the body is not indented: it holds here-documents)
dp_part() {
models=(
    "tiny tensors:$("$CF_PYTHON" -c 'print(",".join(["256,16,16,64,4,4"] * 64))')"
    "mixed tensors:$("$CF_PYTHON" -c 'print(",".join(["4096,64,64,1024,16,16"] * 16))')"
    "small CNN:small"
)

run_plain() { # BUCKET LAYERS -> the late rank's comm ms/step (mean over steps)
    local m=(--layers "$2"); [ "$2" = small ] && m=(--model small)
    cf_mpirun_plain "$np" "$dp" "${m[@]}" --steps "$steps" --compute-us 1000 --bucket "$1" |
        sed -n 's/^comm time, late rank: .* ms\/step median, \([0-9.]*\) ms\/step mean.*/\1/p'
}

# plain_saving BUCKET LAYERS: dp_train's comm time per tensor less bucketed,
# over the run (ms), without the profiler: the median of BENCH_PLAIN_PAIRS
# alternating pairs (one pair of single runs swung by hundreds of ms)
plain_saving() {
    local k d=()
    for k in $(seq "${BENCH_PLAIN_PAIRS:-3}"); do
        local a b
        if [ $((k % 2)) = 1 ]; then a=$(run_plain 0 "$2"); b=$(run_plain "$1" "$2")
        else b=$(run_plain "$1" "$2"); a=$(run_plain 0 "$2"); fi
        d+=("$a $b")
    done
    printf '%s\n' "${d[@]}" | "$CF_PYTHON" -c '
import statistics, sys
d = [(float(a) - float(b)) * int(sys.argv[1]) for a, b in (l.split() for l in sys.stdin if len(l.split()) == 2)]
print(statistics.median(d) if d else float("nan"))' "$steps"
}

echo "fusion bench: $np ranks, $steps steps, $reps repetitions, $(nproc) cores; profiled runs COMMFIT_CALIBRATE=$calibrate"
echo "savings over the run in ms: predicted (the model's relative saving applied to the measured time),"
echo "model (the model's own times), realised (commfit diff: mean per rank),"
echo "plain (dp_train's comm time without the profiler, of the late rank: per step the rank that waited least;"
echo "median of ${BENCH_PLAIN_PAIRS:-3} alternating pairs);"
echo "bucket* = not advised (no gain, or"
echo "withheld: nan), run with 64 KiB to compare"
printf '%-14s %4s %9s %8s %10s %10s %10s %10s\n' model rep bucket buckets predicted model realised plain
summary=()
declare -A verdicts
for entry in "${models[@]}"; do
    name=${entry%%:*} layers=${entry#*:}
    m=(--layers "$layers"); [ "$layers" = small ] && m=(--model small)
    rows=()
    for rep in $(seq "$reps"); do
        COMMFIT_OUTPUT="$cf_tmp/a.json" COMMFIT_SUMMARY=0 COMMFIT_CALIBRATE=$calibrate cf_mpirun "$np" -- "$dp" \
            "${m[@]}" --steps "$steps" --compute-us 1000 --region --bucket 0 > /dev/null || { echo "$name: run failed"; continue; }
        # the advised bucket; where fusion is not advised, 64 KiB to see what it would have done
        read -r verdict bucket predicted model <<< "$("$commfit" report --format json "$cf_tmp/a.json" | "$CF_PYTHON" -c '
import json, sys
# read defensively: withheld advice (verdict null) has no candidates
adv = [x for x in json.load(sys.stdin).get("advice") or [] if x.get("op") == "MPI_Allreduce" and x.get("comm") == "world"]
a = adv[0] if adv else {}
S = a.get("bucket_bytes") or 65536
c = ([c for c in a.get("candidates") or [] if c.get("bucket_bytes") == S] or [{}])[0]
def d(x, y, k):
    return "nan" if x is None or y is None else (x - y) * k
print((a.get("verdict") or "withheld").replace(" ", "-"), S, d(a.get("current_s"), c.get("predicted_s"), 1e3),
      d(a.get("model_current_step_s"), c.get("model_step_s"), (a.get("steps") or 0) * 1e3))')"
        COMMFIT_OUTPUT="$cf_tmp/b.json" COMMFIT_SUMMARY=0 cf_mpirun "$np" -- "$dp" "${m[@]}" --steps "$steps" \
            --compute-us 1000 --region --bucket "$bucket" > "$cf_tmp/b.out" || { echo "$name: run failed"; continue; }
        nb=$(sed -n 's/^# exchange: .* -> \([0-9]*\) buckets\/step.*/\1/p' "$cf_tmp/b.out")
        # the same measure as commfit diff: mean per rank, scaled to A's steps
        "$commfit" report --format json "$cf_tmp/a.json" > "$cf_tmp/a-report.json"
        "$commfit" report --format json "$cf_tmp/b.json" > "$cf_tmp/b-report.json"
        realised=$("$CF_PYTHON" - "$cf_tmp/a-report.json" "$cf_tmp/b-report.json" <<'PY'
import json, sys
a, b = ([x for x in json.load(open(f))["advice"] if x["op"] == "MPI_Allreduce" and x["comm"] == "world"][0]
        for f in sys.argv[1:3])
print((a["current_s"] / a["steps"] - b["current_s"] / b["steps"]) * a["steps"] * 1e3)
PY
)
        plain=$(plain_saving "$bucket" "$layers")
        [ -z "${BENCH_KEEP:-}" ] || cp "$cf_tmp/a.json" "$cf_tmp/dp-${name// /-}-$rep.json"
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
}

# part 2, the PyTorch trainers on two emulated nodes
py=/usr/bin/python3
# BENCH_ENV as mpirun -x arguments
bench_env=()
for kv in ${BENCH_ENV:-}; do
    case $kv in
        [A-Za-z_]*=*) bench_env+=(-x "$kv") ;;
        *) echo "BENCH_ENV: '$kv' is not VAR=VALUE" >&2; exit 2 ;;
    esac
done
trainer=$CF_SRCDIR/examples/torch_train.py
cluster=$CF_SRCDIR/tests/cluster/cluster.sh
tsteps=${BENCH_STEPS:-30}
rates=${BENCH_RATES:-unshaped 200mbit}
tmodels=${BENCH_MODELS:-mlp resnet20 resnet-stream}
DDP=26214400  # PyTorch DDP's bucket_cap_mb=25
HVD=67108864  # Horovod's HOROVOD_FUSION_THRESHOLD (64 MiB)

# cluster_up RATE: the two nodes, their link unshaped or through a tbf rate
cluster_up() {
    local how=()
    [ "$1" = unshaped ] || how=(--rate "$1")
    "$cluster" up 2 "${how[@]}" > /dev/null || { echo "cluster up ${how[*]} failed"; return 1; }
}

# train OUT PROFILE|- TRAINER-ARGS: one run on the two nodes, one rank each;
# under the plugin when PROFILE is not -
# (run_env: more -x arguments for this run)
train() {
    local out=$1 prof=$2 pre=()
    shift 2
    [ "$prof" = - ] || pre=(-x LD_PRELOAD="$COMMFIT_LIB" -x COMMFIT_OUTPUT="$prof" -x COMMFIT_SUMMARY=0
                            -x COMMFIT_CALIBRATE="$calibrate")
    "$cluster" run -- -np 2 "${pre[@]}" ${bench_env[@]+"${bench_env[@]}"} ${run_env[@]+"${run_env[@]}"} \
        -x OMP_NUM_THREADS=1 "$py" "$trainer" --steps "$tsteps" --warmup 2 \
        "$@" > "$out" 2>&1 && grep -q '^torch_train: .*ranks_agree=yes' "$out"
}

# the advice for MPI_Allreduce or MPI_Iallreduce on world, read defensively
# (missing fields print "-"): one tab-separated line
advice_line() { # REPORT.json
    "$CF_PYTHON" - "$1" <<'PY'
import json, sys
try:
    adv = json.load(open(sys.argv[1])).get("advice") or []
except (OSError, ValueError) as e:
    adv, err = [], str(e)
else:
    err = "no advice entry for the exchange on world"
a = ([x for x in adv if x.get("comm") == "world" and x.get("op") in ("MPI_Allreduce", "MPI_Iallreduce")] or [{}])[0]


def f(v):
    return "-" if v is None else str(v)


# commfit's saving in MPI time, plus the framework's time outside MPI that
# the buckets remove (framework_saving_s: blocking streams, the gap between
# back-to-back calls; nonblocking, the gap from a post to the completion call
# after it; call_gap_s), plus the
# packing copies commfit charges the buckets (copy_step_s), which the
# trainers do not pay: their buckets are views into one flat buffer (DDP's
# gradient_as_bucket_view; overlapped, the hooks copy each gradient in per
# tensor and per bucket alike), the case docs/fusion.md gives as "saving
# larger by copy_step_s".  What the trainer's timers see
gap = a.get("call_gap_s")


def cand(S):
    c = [c for c in a.get("candidates") or [] if c.get("bucket_bytes") == S]
    return c[0] if c else {}


def copies(S):
    return (cand(S).get("copy_step_s") or 0.0) * (a.get("steps") or 0)


def cand_saving(S):
    c = cand(S)
    cur, p = a.get("current_s"), c.get("predicted_s")
    if cur is None or p is None:
        return None
    out = 0.0
    if gap is not None and a.get("calls_per_step") and c.get("buckets_per_step") is not None:
        out = gap * max(0.0, a["calls_per_step"] - c["buckets_per_step"]) * (a.get("steps") or 0)
    return cur - p + out + copies(S)


saving = a.get("predicted_saving_s")
if saving is not None and a.get("framework_saving_s") is not None:
    saving += a["framework_saving_s"]
if saving is not None:
    saving += copies(a.get("bucket_bytes"))


# the bound the advice states beside a nonblocking saving: at most this much
# more over the run, the framework's time before each post it does not price
lead = a.get("framework_lead_step_s")
lead = lead * (a.get("steps") or 0) if lead is not None else None
reason = a.get("reason") or (err if not a else None)
print("\t".join(f(v) for v in (a.get("op"), a.get("verdict"), a.get("bucket_bytes"), saving,
                               a.get("current_s"), a.get("steps"), cand_saving(26214400), cand_saving(67108864),
                               a.get("calls_per_step"), a.get("step_refaulted") is True and not a.get("nonblocking"),
                               lead))
      + "\t" + (reason or "-").replace("\t", " "))
PY
}

# settle_line A.json B.json [A2.json B2.json]: what commfit diff measured
# per step of the exchange on world (its measured_per_step): the saving, A's
# and B's MPI time and framework time, and over the pairs the saving's
# median, least and greatest, in ms, tab-separated ("-" where it has none,
# and why)
settle_line() {
    "$CF_BUILDDIR/tools/commfit" diff --format json "$@" 2> /dev/null | "$CF_PYTHON" -c '
import json, sys
no = "-\t" * 8
try:
    ops = json.load(sys.stdin)["operations"]
except (KeyError, ValueError) as e:
    print(no + "commfit diff gave no JSON: %s" % e)
    sys.exit()
m = [o["measured_per_step"] for o in ops if o.get("measured_per_step") and (o.get("comm") or {}).get("a") == "world"
     and o.get("op") in ("MPI_Allreduce", "MPI_Iallreduce")]
if not m:
    print(no + "no measured_per_step for the exchange on world (calls per step unchanged?)")
    sys.exit()
m = m[0]
ms = lambda v: "-" if v is None else "%.6g" % (v * 1e3)
# the framework columns only where diff counted them in its saving
fw = (m.get("framework_step_s") or {}) if m.get("with_framework") else {}
ov = m.get("over_pairs") or {}
print("\t".join((ms(m.get("saving_step_s")), ms(m["mpi_step_s"]["a"]), ms(m["mpi_step_s"]["b"]),
                 ms(fw.get("a")), ms(fw.get("b")), ms(ov.get("saving_step_median_s")),
                 ms(ov.get("saving_step_min_s")), ms(ov.get("saving_step_max_s")), "-")))'
}

# field KEY FILE: a key=value of the trainer's result line
field() { sed -n "s/^torch_train: .* $1=\([^ ]*\).*/\1/p" "$2" | head -n 1; }

torch_part() {
    local why
    why=$("$py" -c "import torch, mpi4py" 2>&1) ||
        { echo "torch trainers: skipped: $py cannot import torch and mpi4py: $(echo "$why" | tail -n 1)"; return; }
    why=$(CFN_PREFIX=cft "$cluster" available --shaping) ||
        { echo "torch trainers: skipped: ${why#SKIP: }"; return; }
    export CFN_PREFIX=cft
    trap '"$cluster" down > /dev/null 2>&1; drop_tmp' EXIT
    local res=$cf_tmp/torch-runs.tsv adv=$cf_tmp/torch-advice.tsv settle=$cf_tmp/torch-settle.tsv
    : > "$res"
    : > "$adv"
    : > "$settle"
    echo
    echo "torch trainers: 2 emulated nodes, 1 rank each (ob1 + tcp), $tsteps steps (+2 warmup), $reps pairs a comparison;"
    echo "links: $rates; times are the trainer's own (step: slowest rank, median over steps);"
    echo "the advice of $profiles profiled run(s) per trainer (commfit report over all of them)"
    [ -z "${BENCH_ENV:-}" ] || echo "every run's environment adds: $BENCH_ENV"
    for rate in $rates; do
        cluster_up "$rate" || return
        for model in $tmodels; do
            for group in per-tensor overlap; do
                local base=$group fused=bucket
                [ "$group" = overlap ] && fused=overlap-bucket
                # profile: the per-tensor or overlapped exchange under the plugin
                local p=$cf_tmp/$rate-$model-$group
                run_env=()
                if ! train "$p.out" "$p.json" --model "$model" --mode "$base" --region; then
                    echo "$rate $model $group: profiled run failed: $(tail -n 2 "$p.out" | tr '\n' ' ')"
                    continue
                fi
                # more profiled runs: the advice over all of them (commfit report A B ...)
                local k runs=("$p.json")
                for k in $(seq 2 "$profiles"); do
                    if train "$p-$k.out" "$p-$k.json" --model "$model" --mode "$base" --region; then
                        runs+=("$p-$k.json")
                    else
                        echo "$rate $model $group: profiled run $k failed: $(tail -n 2 "$p-$k.out" | tr '\n' ' ')"
                    fi
                done
                "$CF_BUILDDIR/tools/commfit" report --format json "${runs[@]}" > "$p-report.json" 2> /dev/null
                "$CF_BUILDDIR/tools/commfit" report "${runs[@]}" 2> /dev/null |
                    sed -n '/^FUSION ADVICE/,/^OPERATIONS/p' | sed -n '/on world/,/^  MPI_/p' | sed '/^  MPI_.* on aux/d;/^OPERATIONS/d;/^$/d' \
                    > "$p-advice.txt"
                local line
                line=$(advice_line "$p-report.json")
                printf '%s\t%s\t%s\t%s\t%s\n' "$rate" "$model" "$group" "$(field bytes_per_step "$p.out")" "$line" >> "$adv"
                # the bucket the comparison runs at: the advice of this profile, else
                # (overlapped streams get none) that of the per-tensor profile
                local bucket
                bucket=$(echo "$line" | cut -f 3)
                if [ "$bucket" = - ] && [ "$group" = overlap ]; then
                    bucket=$(awk -F'\t' -v r="$rate" -v m="$model" '$1 == r && $2 == m && $3 == "per-tensor" {print $7}' "$adv")
                fi
                case $bucket in ''|-|None) bucket=- ;; esac
                local total variants=()
                total=$(field bytes_per_step "$p.out")
                [ "$bucket" != - ] && variants+=("advised:$bucket")
                # a blocking stream whose heap refaults: the advice is the bucket on a
                # heap kept (the memory line's variables), as its price assumes
                [ "$bucket" != - ] && [ "$(echo "$line" | cut -f 10)" = True ] && variants+=("kept:$bucket")
                variants+=("ddp:$DDP")
                # one bucket either way: Horovod's 64 MiB is DDP's run
                [ "${total:-0}" -gt $DDP ] && variants+=("horovod:$HVD")
                local rep v order
                for rep in $(seq "$reps"); do
                    # alternate the order within the pairs: drift in the machine's load
                    # falls on A and B alike
                    order=("A:0" "${variants[@]}")
                    if [ $((rep % 2)) = 0 ]; then
                        order=()
                        for v in "A:0" "${variants[@]}"; do order=("$v" "${order[@]}"); done
                    fi
                    for v in "${order[@]}"; do
                        local name=${v%%:*} b=${v#*:} mode=$fused o=$cf_tmp/run.out
                        [ "$name" = A ] && mode=$base
                        run_env=()
                        [ "$name" = kept ] && run_env=(-x MALLOC_MMAP_THRESHOLD_=67108864 -x MALLOC_TRIM_THRESHOLD_=1073741824)
                        if train "$o" - --model "$model" --mode "$mode" --bucket "$b"; then
                            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rate" "$model" "$group" "$rep" \
                                "$name" "$b" "$(field step_ms_median "$o")" "$(field exchange_ms_median "$o")" \
                                "$(field post_ms_mean "$o")" "$(field buckets_per_step "$o")" \
                                "$(field exchange_late_ms_median "$o")" >> "$res"
                        else
                            echo "$rate $model $mode --bucket $b: run failed: $(tail -n 2 "$o" | tr '\n' ' ')"
                        fi
                    done
                done
                # the settle step the advice names: a profiled run at B's bucket,
                # compared with the first profile by commfit diff (its measured saving
                # per step), and a second, compared with the second profile (the
                # median and range over the two pairs), to set beside what the
                # trainers' timers measured (an "uncertain" with no candidate to
                # run: at DDP's 25 MiB)
                local sb=$bucket
                [ "$sb" = - ] && [ "$(echo "$line" | cut -f 2)" = uncertain ] && sb=$DDP
                if [ "$sb" != - ]; then
                    run_env=()
                    if train "$p-settle.out" "$p-settle.json" --model "$model" --mode "$fused" --bucket "$sb" --region; then
                        local two=("$p.json" "$p-settle.json")
                        # the second pair: the second profile (if it was made) against a second run
                        [ ${#runs[@]} -ge 2 ] &&
                            train "$p-settle-2.out" "$p-settle-2.json" --model "$model" --mode "$fused" --bucket "$sb" \
                                --region && two+=("${runs[1]}" "$p-settle-2.json")
                        printf '%s\t%s\t%s\t%s\t%s\n' "$rate" "$model" "$group" "$sb" \
                            "$(settle_line "${two[@]}")" >> "$settle"
                    else
                        echo "$rate $model $group: profiled run at $sb failed: $(tail -n 2 "$p-settle.out" | tr '\n' ' ')"
                    fi
                fi
                echo "  done: $rate $model $group ($(date -u +%H:%M:%S))"
            done
        done
        "$cluster" down > /dev/null
    done
    trap 'drop_tmp' EXIT
    "$CF_PYTHON" - "$adv" "$res" "$tsteps" "$cf_tmp" "$settle" <<'PY'
import statistics as st, sys
adv_f, res_f, steps, tmp, settle_f = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
adv = {}
for l in open(adv_f):
    f = l.rstrip("\n").split("\t")
    adv[tuple(f[:3])] = dict(zip(("total", "op", "verdict", "bucket", "saving", "current", "steps", "ddp", "hvd",
                                  "calls", "refaulted", "lead", "reason"), f[3:]))
runs = {}
for l in open(res_f):
    f = l.rstrip("\n").split("\t")
    # bucket, step (median over steps); the late rank's exchange (per step the
    # rank that waited least in it, median over steps): blocking, the
    # all-reduces; overlap, blocked in MPI_Waitall plus the hooks' posts
    # (MPI_Iallreduce, MPI_Testall); calls per step; the exchange's mean over
    # ranks (median over steps), which adds the other ranks' wait for the late one
    runs.setdefault(tuple(f[:3]), {}).setdefault(int(f[3]), {})[f[4]] = [f[5], float(f[6]), float(f[10]), f[9],
                                                                        float(f[7]) + float(f[8])]


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def ms(x, fmt="%.3g"):
    return "-" if x is None else fmt % x


def human(b):
    b = num(b)
    if b is None:
        return "-"
    for u, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            return "%.4g %s" % (b / k, u)
    return "%d B" % b


print()
print("per trainer: advice from the profiled run; then, timed without the profiler, A = %s exchange against B" %
      "the per-tensor (or overlapped)")
print("  bucketed at the advised size, at DDP's 25 MiB and at Horovod's 64 MiB (= DDP's run where one bucket holds")
print("  a step).  Measured saving per step = median over the pairs of A - B, of the late rank's exchange (per step")
print("  the rank that waited least in its exchange: the last to arrive, whose exchange the step waits for; median")
print("  over steps; blocking: the all-reduces and the Python calls around them; overlap: blocked in MPI_Waitall")
print("  plus the hooks' MPI_Iallreduce and MPI_Testall), +- its standard error (1.25 sd / sqrt(pairs)); of the")
print("  exchange's mean over ranks (all ranks), which adds the others' wait for the late rank, set by the ranks'")
print("  imbalance; and of the step timer, which also holds the forward, backward and optimizer, identical in A and")
print("  B, whose run-to-run spread is often larger than the saving.  held (late rank's exchange): the advised")
print("  bucket saves within 25% of the predicted")
print("  saving, or within two standard errors of it (noise); in its bound: a nonblocking stream's saving beyond")
print("  that, up to 25% over the advice's 'at most' with the time before each post, which it does not price; where")
print("  fusion was not advised, 25 MiB saves under 10%")
print("  of the exchange.  SLOWER: the advised bucket measured slower, beyond two standard errors; where commfit")
print("  did not advise fusion, the row 'best' is its best candidate, run to compare.  kept: where a")
print("  blocking stream's heap refaults (the advice's memory line), the advised bucket with the line's")
print("  MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_, the heap its price assumes: that row is the one judged")
hdr = ("link", "trainer", "exchange", "verdict", "B", "bucket", "calls", "pred/step", "exch A", "saved exch",
       "all ranks", "step A", "saved step", "% exch", "held")
fmt = "%-9s %-13s %-10s %-9s %-8s %10s %5s %9s %7s %15s %15s %7s %15s %6s %s"
print(fmt % hdr)


def med_se(xs):
    m = st.median(xs)
    se = 1.25 * st.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else float("nan")
    return m, se


def pm(m, se):
    return "%.3g +- %.2g" % (m, se) if se == se else "%.3g" % m


verdict_texts = []
measured = {}
judged = {}
order = ["unshaped", "mlp", "resnet20", "resnet-stream", "per-tensor", "overlap"]
for key in sorted(adv, key=lambda k: [(order.index(x) if x in order else 9, x) for x in k]):
    a = adv[key]
    reps = runs.get(key, {})
    verdict = a["verdict"] if a["verdict"] != "-" else "withheld" if a["op"] != "-" else "-"
    asteps = num(a["steps"]) or steps
    pred_step = {"advised": num(a["saving"]), "kept": num(a["saving"]), "ddp": num(a["ddp"]), "horovod": num(a["hvd"])}
    a_step = [r["A"][1] for r in reps.values() if "A" in r]
    a_exch = st.median([r["A"][2] for r in reps.values() if "A" in r]) if a_step else None
    a_stepm = st.median(a_step) if a_step else None
    names = sorted({n for r in reps.values() for n in r if n != "A"}, key=["advised", "kept", "ddp", "horovod"].index)
    if not names:
        print(fmt % (key[0], key[1], key[2], verdict, "-", "-", "-", "-", ms(a_exch), "-", "-", ms(a_stepm), "-",
                     "-", "no runs"))
    for n in names:
        pairs = [r for r in reps.values() if "A" in r and n in r]
        d_step, se_step = med_se([r["A"][1] - r[n][1] for r in pairs])
        d_exch, se_exch = med_se([r["A"][2] - r[n][2] for r in pairs])
        d_all, se_all = med_se([r["A"][4] - r[n][4] for r in pairs])
        noise = 2 * se_exch if se_exch == se_exch else 0.0
        calls = pairs[0][n][3]
        p = pred_step[n]
        p = None if p is None else 1e3 * p / asteps  # ms per step
        # the advice's "at most ... more" of a nonblocking stream, ms per step
        up = num(a.get("lead")) if n in ("advised", "kept") else None
        up = None if up is None or p is None else p + 1e3 * up / asteps
        pct = None if not a_exch else 100 * d_exch / a_exch
        if n == "advised" and "kept" in names:
            held = "(the bucket alone; the advice keeps the heap: next row)"
        elif n in ("advised", "kept") and verdict != "fuse":
            # the best candidate, run to compare: commfit did not advise it
            held = "not advised (%s): %s" % (verdict, "it measured slower" if d_exch < -noise else
                                               "it saved %.3g ms" % d_exch)
        elif n in ("advised", "kept"):
            if p is None:
                held = "-"
            elif d_exch < -noise:
                held = "SLOWER (saved %.3g ms, predicted %.3g)" % (d_exch, p)
            elif abs(d_exch - p) <= 0.25 * abs(p):
                held = "yes (%.0f%% of predicted)" % (100 * d_exch / p)
            elif abs(d_exch - p) <= noise:
                held = "noise (%.0f%% of predicted, within 2 se)" % (100 * d_exch / p if p else float("nan"))
            elif up is not None and 0.75 * p <= d_exch <= 1.25 * up:
                held = "in its bound (%.0f%% of predicted; at most %.3g with the time before each post)" % (
                    100 * d_exch / p, up)
            else:
                held = "no (%.0f%% of predicted)" % (100 * d_exch / p if p else float("nan"))
        elif n == "ddp" and verdict != "fuse":
            held = "yes (no fusion advised, 25 MiB saves %.0f%%)" % pct if pct is not None and pct < 10 else \
                "no (no fusion advised, 25 MiB saves %s%%)" % ms(pct, "%.0f")
        else:
            held = ""
        if n != "kept":
            measured[key + (pairs[0][n][0],)] = (verdict, d_exch, se_exch, d_all, se_all)
        label = "best" if n == "advised" and verdict != "fuse" else n
        print(fmt % (key[0], key[1], key[2], verdict, label, human(pairs[0][n][0]), calls, ms(p), ms(a_exch),
                     pm(d_exch, se_exch), pm(d_all, se_all), ms(a_stepm), pm(d_step, se_step), ms(pct, "%.0f"), held))
        # the row the rule judges: the advised bucket (with the heap kept where
        # the advice keeps it), else DDP's 25 MiB
        if (verdict == "fuse" and n == ("kept" if "kept" in names else "advised")) or (verdict != "fuse" and n == "ddp"):
            judged[key] = held
    txt = "%s/%s-%s-%s-advice.txt" % (tmp, key[0], key[1], key[2])
    try:
        body = [l.rstrip() for l in open(txt) if l.strip()]
    except OSError:
        body = []
    verdict_texts.append("%s %s %s: %s %s: %s" % (key[0], key[1], key[2], a["op"], verdict, a["reason"]))
    verdict_texts += ["    " + l.strip() for l in body[1:] if a["reason"] not in l]
held_n = sum(1 for h in judged.values() if h.startswith(("yes", "noise")))
bound = sorted(" ".join(k) for k, h in judged.items() if h.startswith("in its bound"))
slower = sorted(" ".join(k) for k, h in judged.items() if h.startswith("SLOWER"))
missed = sorted(" ".join(k) for k, h in judged.items() if not h.startswith(("yes", "noise", "SLOWER", "in its bound")))
print("the rule: held on %d of %d trainers; beyond the saving but within its stated bound: %s; slower: %s; missed: %s"
      % (held_n, len(judged), ", ".join(bound) or "none", ", ".join(slower) or "none", ", ".join(missed) or "none"))
print("(times in ms; pred/step: commfit's predicted saving per step for that bucket, from its candidates where it")
print(" advised another, MPI time plus the framework's time between back-to-back calls it removes (call_gap_s),")
print(" plus the packing copies it charges the buckets (copy_step_s), which these trainers do not pay: their")
print(" buckets are views into one flat buffer; B: the bucket run; calls: its calls per step)")
print()
print("the settle step: commfit diff of the first profile against a profiled run at B's bucket (the advised or")
print("  best one; DDP's 25 MiB for an 'uncertain' without one), what it measured per step (MPI time, with")
print("  nonblocking posts and polls, plus the framework's time per call x calls), and of the second profile")
print("  against a second run at B's bucket (commfit diff A B A2 B2: the median and range over the two pairs),")
print("  against the trainers' unprofiled timers above (saved exch: late rank; all ranks: the mean over ranks,")
print("  the measure diff's mean per rank compares to).  agrees: the median over the pairs (else the first")
print("  pair's) has the sign of each of the trainers' two savings that lies beyond two standard errors of zero")
print("  ('-' where neither does)")
sfmt = "%-9s %-13s %-10s %-9s %10s %10s %21s %22s %15s %15s %s"
print(sfmt % ("link", "trainer", "exchange", "verdict", "bucket", "diff saves", "diff A -> B", "2 pairs: median (range)",
              "all ranks", "saved exch", "agrees"))
for l in open(settle_f):
    f = (l.rstrip("\n").split("\t") + ["-"] * 13)[:13]  # a short row (a failed diff): "-"
    key, bucket, (sav1, ma, mb, fa, fb, med, lo, hi, why) = tuple(f[:3]), f[3], f[4:13]
    sav = med if num(med) is not None else sav1
    spread = "%.3g (%.3g .. %.3g)" % (num(med), num(lo), num(hi)) if num(med) is not None else "-"
    if key + (bucket,) not in measured:
        continue
    verdict, d_exch, se_exch, d_all, se_all = measured[key + (bucket,)]
    if num(sav) is None:
        print(sfmt % (key + (verdict, human(bucket), "-", "-", "-", pm(d_all, se_all), pm(d_exch, se_exch), why)))
        continue
    a_tot, b_tot = num(ma) + (num(fa) or 0.0), num(mb) + (num(fb) or 0.0)
    # the trainers' savings beyond two standard errors of 0: the sign diff must match
    sig = [(n, d) for n, d, se in (("all ranks'", d_all, se_all), ("late rank's", d_exch, se_exch))
           if se == se and abs(d) > 2 * se]
    pct = "; ".join("%.0f%% of the %s" % (100 * num(sav) / d, n) for n, d in sig)
    if not sig:
        ok = "- (the trainers' savings are within 2 se of 0)"
    elif all((num(sav) > 0) == (d > 0) for n, d in sig):
        ok = "yes (%s)" % pct
    else:
        ok = "NO (opposite sign: %s)" % pct
    print(sfmt % (key + (verdict, human(bucket), "%.3g" % num(sav1), "%.3g -> %.3g" % (a_tot, b_tot), spread,
                         pm(d_all, se_all), pm(d_exch, se_exch), ok)))
print()
print("commfit's verdicts (report --format json: verdict and reason; the text report's lines under it):")
for t in verdict_texts:
    print("  " + t)
PY
}

# part 3: several nonblocking all-reduces in flight against one at a time
# (tests/bench/inflight.py), on the same two nodes and links
inflight_part() {
    local why rate
    why=$("$py" -c "import numpy, mpi4py" 2>&1) ||
        { echo "inflight: skipped: $py cannot import numpy and mpi4py: $(echo "$why" | tail -n 1)"; return; }
    why=$(CFN_PREFIX=cft "$cluster" available --shaping) || { echo "inflight: skipped: ${why#SKIP: }"; return; }
    export CFN_PREFIX=cft
    trap '"$cluster" down > /dev/null 2>&1; drop_tmp' EXIT
    for rate in $rates; do
        echo
        echo "inflight, $rate link:"
        cluster_up "$rate" || return
        "$cluster" run -- -np 2 ${bench_env[@]+"${bench_env[@]}"} -x OMP_NUM_THREADS=1 "$py" "$CF_SRCDIR/tests/bench/inflight.py" \
            "${BENCH_INFLIGHT_K:-4}" "${BENCH_REPS_INFLIGHT:-40}" || echo "inflight: run failed"
        "$cluster" down > /dev/null
    done
    trap 'drop_tmp' EXIT
}

for part in $parts; do
    case $part in
        dp) dp_part ;;
        torch) torch_part ;;
        inflight) inflight_part ;;
        *) echo "BENCH_PARTS: unknown part '$part' (dp, torch, inflight)" ;;
    esac
done
