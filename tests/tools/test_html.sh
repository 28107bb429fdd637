#!/bin/bash
# commfit report --format html: the page loads in headless Chromium with no
# network, no console message, and draws the charts and points of the JSON
# report (tests/tools/check_html.py): the demo's training loop, LAMMPS in.melt
# and a 10-size ping-pong with declared protocol limits from the corpus, a
# profile whose strings are markup, and 10000 ranks.
# Skipped only where Chromium cannot run, and never under CI=true.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
shots="$CF_BUILDDIR/tests/tools/html"
mkdir -p "$shots"

cf_unavailable() {
    if [ "${CI:-}" = true ]; then cf_fail "$* (CI=true: the browser test must run)"; fi
    echo "SKIP: $*"
    exit 77
}
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || cf_unavailable "no chromium (Debian: chromium)"
"$chrome" --headless --no-sandbox --disable-gpu --user-data-dir="$cf_tmp/probe" --dump-dom about:blank \
    > "$cf_tmp/probe.out" 2> "$cf_tmp/probe.err" && grep -q "<html" "$cf_tmp/probe.out" ||
    cf_unavailable "chromium does not run here: $(tail -3 "$cf_tmp/probe.err")"
"$commfit" report --format html -o "$cf_tmp/x.html" "$CF_SRCDIR/tests/corpus/lammps-melt-4/profile.json" \
    2> "$cf_tmp/err" || {
    grep -q "built without Chart.js" "$cf_tmp/err" && cf_unavailable "$(cat "$cf_tmp/err")"
    cf_fail "commfit report --format html failed: $(cat "$cf_tmp/err")"
}

# page PROFILE NAME [check_html options]: the page, the JSON, the browser's check and a screenshot
page() {
    local prof=$1 name=$2; shift 2
    "$commfit" report --format html -o "$cf_tmp/$name.html" "$prof" || cf_fail "$name: report --format html failed"
    "$commfit" report --format json "$prof" > "$cf_tmp/$name.report.json" || cf_fail "$name: report --format json failed"
    "$CF_PYTHON" "$CF_SRCDIR/tests/tools/check_html.py" "$chrome" "$cf_tmp/$name.html" "$cf_tmp/$name.report.json" \
        --screenshot "$shots/$name.png" "$@" || cf_fail "$name: the page"
    cp "$cf_tmp/$name.html" "$shots/$name.html"
    echo "ok   $name: $(wc -c < "$cf_tmp/$name.html") bytes, screenshot $shots/$name.png"
}

# the demo: a data-parallel training loop, one allreduce per tensor, steps as regions
COMMFIT_OUTPUT="$cf_tmp/demo.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 4 -- "$CF_BUILDDIR/examples/dp_train" --model tiny --steps 30 --region --compute-us 1000 \
    > /dev/null || cf_fail "the demo job failed"
page "$cf_tmp/demo.json" demo --expect-text "VERDICT" --expect-text "FUSION ADVICE"
page "$CF_SRCDIR/tests/corpus/lammps-melt-4/profile.json" lammps-melt-4 --expect-text "MPI_Send on world"
# a real application that loaded no framework: the program line, and the advised merge in the card
page "$CF_SRCDIR/tests/corpus/cp2k-h2o-2/profile.json" cp2k-h2o-2 \
    --expect-text "prog  cp2k.psmp (loaded: none of torch, horovod)" \
    --expect-text "no framework setting fuses MPI_Alltoall, whose calls come from cp2k.psmp: the program would merge a step's calls into calls of up to 65.5 kB"
# a sweep whose joint fit breaks at the library's eager limit, marked on its chart
page "$CF_SRCDIR/tests/corpus/shm-pingpong10-2/profile.json" shm-pingpong10-2 \
    --expect-text "breaks at the library's protocol limits: 4.1 kB (btl_vader_eager_limit)"
# an overlapped (Horovod-style) stream: its fusion chart draws the times the text prints, and
# its card the exposed pricing (check_html.py holds both numbers to the JSON)
page "$CF_SRCDIR/tests/corpus/veth-torch-resnet20-horovod-2/profile.json" resnet20-horovod \
    --expect-text "MPI_Iallreduce on world" \
    --expect-text "priced with the buckets' time exposed (no progress thread) and the ranks' wait for the last, 310 us/step; if the overlap hid them as it hides the calls now: saving 1.28 ms per step" \
    --expect-text "kept in every prediction, not counted as a saving"
# a hook trainer that polls once a post, its polls' mean 2.9x their median: the tails said, kept
page "$CF_SRCDIR/tests/corpus/veth-torch-resnet20-overlap-2/profile.json" resnet20-overlap \
    --expect-text "polls beyond their median: 1.23 ms/step of the polls' 1.86 ms/step (their mean 2.9x their median"
# a hook trainer whose heap refaults its memory every step: the buckets priced with the fresh page
page "$CF_SRCDIR/tests/corpus/veth-torch-resnet-stream-overlap-refault-2/profile.json" resnet-stream-refault \
    --expect-text "the buckets are priced with it: 406 pages a step at 8.75 us a page (the calibration's fresh page), 3.55 ms a step"
# a blocking trainer whose heap refaults: one bucket's temporary buffer stated, the heap kept in the advice
page "$CF_SRCDIR/tests/corpus/veth-torch-resnet-stream-2/profile.json" resnet-stream-blocking \
    --expect-text "refaulted, one bucket's temporary buffer would cost 128 pages a step at 12.4 us a page (the calibration's fresh page), 1.59 ms a step" \
    --expect-text "the advice is the buckets with the heap kept (the price assumes it): MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=1073741824" \
    --expect-text "outside MPI, 5.94 ms more, counted in the saving per step: the calls go back to back, 3.47 us apart (median of 122 sampled pairs)"
# a hook trainer whose gap after each post is measured: the buckets save it once per post removed
page "$CF_SRCDIR/tests/corpus/veth-torch-resnet20-overlap-gap-2/profile.json" resnet20-overlap-gap \
    --expect-text "outside MPI, 5.23 ms more, counted in the saving per step: 3.71 us from a post to the completion call after it (median over the ranks, 232 gaps)" \
    --expect-text "of the tails, about 43.1 us/step is CPU contention if the processes' 2.1 involuntary context switches a step (mean per rank) fall at times that do not depend on the polls" \
    --expect-text "in flight: 18 buckets posted together priced at 0.65x their time one at a time (calibration: 16 calls of 65.5 kB posted at once" \
    --expect-text "its calls come from mpi4py (MPI.cpython-311-x86_64-linux-gnu.so), not through a framework that fuses MPI_Iallreduce: the program would merge"

# strings from the profile are text, never markup: host, library, region names, the file name
evil="$cf_tmp/evil<&>'\".json"
"$CF_PYTHON" - "$cf_tmp/demo.json" "$evil" <<'PY' || cf_fail "could not write the hostile profile"
import json, sys
p = json.load(open(sys.argv[1]))
p["job"]["mpi_library"] = "<img src=x onerror=\"window.pwned=1\"> & lib"
for r in p["ranks"]:
    r["host"] = "</script><script>window.pwned=1</script>"
evil = lambda n: n.replace("step", "</script><b>step</b>")
p["regions"] = [evil(n) for n in p["regions"]]
p["region_entries"] = {evil(k): v for k, v in p["region_entries"].items()}
for r in p["records"]:
    if r.get("region"):
        r["region"] = evil(r["region"])
json.dump(p, open(sys.argv[2], "w"))
PY
page "$evil" evil --expect-text "<img src=x onerror=\"window.pwned=1\"> & lib" \
    --expect-text "</script><b>step</b>" --expect-text "evil<&>'\".json"

# 10000 ranks: the page draws quantiles, a histogram and the ranks at both ends
"$CF_PYTHON" - "$CF_SRCDIR/tests/corpus/lammps-melt-4/profile.json" "$cf_tmp/big.json" <<'PY' || cf_fail "no big profile"
import copy, json, sys
p = json.load(open(sys.argv[1]))
base = p["ranks"]
ranks = []
for i in range(10000):
    r = copy.deepcopy(base[i % len(base)])
    r["rank"] = i
    r["mpi_s"] = r["mpi_s"] * (1 + (i * 7919 % 1000) / 4000.0)
    r["node"] = i // 4
    ranks.append(r)
p["ranks"] = ranks
p["job"]["ranks"] = 10000
p["job"]["nodes"] = 2500
json.dump(p, open(sys.argv[2], "w"))
PY
page "$cf_tmp/big.json" ranks-10000 --expect-text "Quantiles over 10000 ranks"
size=$(wc -c < "$cf_tmp/ranks-10000.html")
[ "$size" -lt 600000 ] || cf_fail "the page of 10000 ranks holds $size bytes: ranks are not aggregated"

# usage
"$commfit" report --format html -o /nonexistent/dir/x.html "$cf_tmp/demo.json" 2> "$cf_tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot write '/nonexistent/dir/x.html'" "$cf_tmp/err" || cf_fail "unwritable -o: rc $rc"
echo "ok   an unwritable -o: exit 2, $(cat "$cf_tmp/err")"
"$commfit" report --format html "$cf_tmp/demo.json" | head -1 | grep -q "<!DOCTYPE html>" || cf_fail "html to stdout"
echo "ok   without -o the page goes to stdout"
