#!/bin/sh
# commfit diff on two real profiles: operations matched per communicator
# (also when the other run gave its communicators other ids), calls and
# times side by side; the report's late arrivals and per-rank wait columns;
# and input it cannot use: one line naming the file, exit status 2.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"

# rank 1 arrives late by D at every allreduce; B with a larger D
COMMFIT_OUTPUT="$cf_tmp/a.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/wait_skew" 300 40 \
    || cf_fail "job A failed"
COMMFIT_OUTPUT="$cf_tmp/b.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/wait_skew" 1500 40 \
    || cf_fail "job B failed"
COMMFIT_OUTPUT="$cf_tmp/k.json" COMMFIT_SUMMARY=0 cf_mpirun 4 -- "$CF_BUILDDIR/tests/mpi/known_calls" > /dev/null \
    || cf_fail "known_calls failed"

"$commfit" diff "$cf_tmp/a.json" "$cf_tmp/b.json" > "$cf_tmp/diff.txt" && ok "diff A B (text)" || bad "diff A B exit $?"
cat "$cf_tmp/diff.txt"
grep -q "^OPERATIONS" "$cf_tmp/diff.txt" && grep -q "^  MPI_Allreduce *world" "$cf_tmp/diff.txt" \
    && ok "text has the MPI_Allreduce row" || bad "text lacks OPERATIONS or the MPI_Allreduce row"
"$commfit" diff --format json "$cf_tmp/a.json" "$cf_tmp/b.json" > "$cf_tmp/diff.json" \
    && ok "diff A B (json)" || bad "diff --format json exit $?"

# The same communicators under other ids, as another program layout would give them.
"$CF_PYTHON" - "$cf_tmp/k.json" "$cf_tmp/k2.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
new = {}
for c in p["communicators"]:
    if c["id"] > 2:
        new[c["id"]] = c["id"] ^ 0x5a5a5a5
        c["id"] = new[c["id"]]
        c["label"] = "c%x" % c["id"]
for r in p["records"]:
    r["comm"] = new.get(r["comm"], r["comm"])
p.pop("late_arrivals", None)
p.pop("samples", None)
json.dump(p, open(sys.argv[2], "w"))
PY
"$commfit" diff --format json "$cf_tmp/k.json" "$cf_tmp/k2.json" > "$cf_tmp/k.diff.json" || bad "diff of renamed communicators"
"$commfit" report "$cf_tmp/a.json" > "$cf_tmp/a.txt" || bad "report A"

"$commfit" report --format json "$cf_tmp/a.json" > "$cf_tmp/a.rep.json" || bad "report --format json A"
"$CF_PYTHON" - "$cf_tmp/diff.json" "$cf_tmp/k.diff.json" "$cf_tmp/a.txt" "$cf_tmp/a.rep.json" <<'PY' || failed=$((failed + 1))
import json, sys
d, k, text = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), open(sys.argv[3]).read()
from checks import check, done
check("format", (d["format"], d["version"]) == ("commfit-diff", 1))
ar = [o for o in d["operations"] if o["op"] == "MPI_Allreduce"]
check("one MPI_Allreduce row on world", len(ar) == 1 and ar[0]["comm"] == {"a": "world", "b": "world"}, str(ar and ar[0]["comm"]))
r = ar[0]
check("same calls in A and B", r["calls"]["a"] == r["calls"]["b"] == 80, str(r["calls"]))
t = r["time_per_rank_s"]
check("delta is B - A", abs(r["delta_s"] - (t["b"] - t["a"])) <= 1e-8 * max(t["a"], t["b"]),
      "%s -> %s" % (r["time_per_rank_s"]["a"], r["time_per_rank_s"]["b"]))
check("fits side by side", set(r["alpha_s"]) == {"a", "b"} and set(r["bandwidth_Bps"]) == {"a", "b"})
# wait_skew's few all-reduces a step are no fusion case by design, but on a
# loaded machine their times can make one: the entry follows A's own advice
adv = [x for x in json.load(open(sys.argv[4]))["advice"] if x["op"] == "MPI_Allreduce" and x["comm"] == "world"]
fuse = bool(adv) and adv[0]["verdict"] == "fuse"
check("a fusion entry exactly where A's advice is to fuse", (r["fusion"] is not None) == fuse,
      "A's verdict %s; entry %s" % (adv[0]["verdict"] if adv else None, r["fusion"]))
one_sided = [o["op"] + " " + str(o["comm"]) for o in k["operations"] if o["calls"]["a"] is None or o["calls"]["b"] is None]
renamed = [o for o in k["operations"] if o["comm"]["a"] not in ("world", "self", "all", None) and o["comm"]["a"] != o["comm"]["b"]]
check("communicators with other ids are matched by how they were made and their size",
      not one_sided and renamed and all(o["calls"]["a"] == o["calls"]["b"] for o in k["operations"]),
      "%d rows, %d on renamed communicators, unmatched: %s" % (len(k["operations"]), len(renamed), one_sided))
check("report: LATE ARRIVALS names rank 1", "\nLATE ARRIVALS" in text and "rank      1  last" in text)
check("report: RANKS has wait and transfer columns", any(l.split()[-4:] == ["wait", "transfer", "wait", "%"] for l in text.splitlines()
      if l.strip().startswith("rank")))
check("report: OPERATIONS has a wait column", any(l.split()[-1:] == ["wait"] for l in text.splitlines()
      if l.strip().startswith("operation")))
done()
PY
sed -n '/^LATE ARRIVALS/,$p' "$cf_tmp/a.txt"

# expect_error WHAT ARGS...: exit 2, nothing on stdout, one line on stderr
# "commfit diff: ..." naming the file when the first argument is one
expect_error() {
    what=$1; shift
    "$commfit" diff "$@" > "$cf_tmp/out" 2> "$cf_tmp/err"
    rc=$?
    lines=$(wc -l < "$cf_tmp/err")
    if [ $rc -ne 2 ]; then
        bad "$what: exit status $rc, want 2"; cat "$cf_tmp/err"
    elif [ "$lines" -ne 1 ] || [ -s "$cf_tmp/out" ]; then
        bad "$what: want one line on stderr and nothing on stdout"; cat "$cf_tmp/err"
    elif ! grep -q "^commfit diff: $bad_file: " "$cf_tmp/err"; then
        bad "$what: '$(cat "$cf_tmp/err")' does not name $bad_file"
    else
        ok "$what: $(cat "$cf_tmp/err")"
    fi
}
bad_file="$cf_tmp/missing.json"; expect_error "missing B" "$cf_tmp/a.json" "$bad_file"
bad_file="$cf_tmp/missing.json"; expect_error "missing A" "$bad_file" "$cf_tmp/a.json"
bad_file="$cf_tmp"; expect_error "a directory" "$cf_tmp/a.json" "$bad_file"
head -c 300 "$cf_tmp/a.json" > "$cf_tmp/cut.json"
bad_file="$cf_tmp/cut.json"; expect_error "truncated profile" "$cf_tmp/a.json" "$bad_file"
printf '{"hello": "world"}\n' > "$cf_tmp/foreign.json"
bad_file="$cf_tmp/foreign.json"; expect_error "not a profile" "$bad_file" "$cf_tmp/b.json"
sed 's/"version": *1/"version": 99/' "$cf_tmp/a.json" > "$cf_tmp/v99.json"
bad_file="$cf_tmp/v99.json"; expect_error "unknown version" "$cf_tmp/a.json" "$bad_file"

# usage errors: exit 2, a message and the usage on stderr
for args in "" "$cf_tmp/a.json" "$cf_tmp/a.json $cf_tmp/b.json $cf_tmp/b.json" "--format xml $cf_tmp/a.json $cf_tmp/b.json" "--bogus"; do
    # shellcheck disable=SC2086
    "$commfit" diff $args > "$cf_tmp/out" 2> "$cf_tmp/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q "^Usage: commfit diff" "$cf_tmp/err" && [ ! -s "$cf_tmp/out" ]; then
        ok "usage error '$args': $(head -n 1 "$cf_tmp/err")"
    else
        bad "usage error '$args': exit $rc"
    fi
done
"$commfit" diff --help > "$cf_tmp/out" && grep -q "^Usage: commfit diff" "$cf_tmp/out" && ok "--help" || bad "--help"

# the measured saving per step is the buckets' only where B moves A's bytes:
# the corpus pair of one trainer (3 323 864 B a step each) says nothing of
# bytes; two trainers' per-tensor runs (161 960 B against 3 323 864 B) say
# how far they differ
corpus=$CF_SRCDIR/tests/corpus
"$commfit" diff "$corpus/veth-torch-resnet-stream-overlap-pt-2/profile.json" \
    "$corpus/veth-torch-resnet-stream-overlap-512k-2/profile.json" > "$cf_tmp/same.txt" || bad "diff of the corpus pair"
if grep -q "B saves" "$cf_tmp/same.txt" && ! grep -q "^    bytes:" "$cf_tmp/same.txt"; then
    ok "the corpus pair: a saving, and no line on bytes (the same a step)"
else
    bad "the corpus pair: $(grep -E "B saves|bytes:" "$cf_tmp/same.txt")"
fi
"$commfit" diff "$corpus/veth-torch-mlp-2/profile.json" "$corpus/veth-torch-resnet-stream-2/profile.json" > "$cf_tmp/other.txt" \
    || bad "diff of two trainers"
if sed -n '/^  MPI_Allreduce on world:/,/^  MPI_/p' "$cf_tmp/other.txt" |
    grep -q "^    bytes: A moves 162 kB a step, B 3.32 MB (+1952.3%): B does not exchange what A does"; then
    ok "two trainers: the bytes a step differ, said with both figures"
else
    bad "two trainers: no line on bytes: $(grep -A6 "^  MPI_Allreduce on world" "$cf_tmp/other.txt")"
fi
# the blocking pair the other way round: A, one call a step, takes B's gap
# per call (82.3 us over 50 calls: 1.65 us), and says so
"$commfit" diff "$corpus/veth-torch-mlp-200mbit-25m-2/profile.json" "$corpus/veth-torch-mlp-200mbit-pt-2/profile.json" \
    > "$cf_tmp/rev.txt" || bad "diff of the blocking pair reversed"
if grep -q "outside MPI 1.65 us -> 82.3 us (the framework's time per call, measured, x calls; A's calls, too few a step to measure it, at B's): B costs 86.1 us a step" "$cf_tmp/rev.txt"; then
    ok "the sparse side A borrows B's gap per call"
else
    bad "the sparse side A: $(grep "measured:" "$cf_tmp/rev.txt")"
fi
# A advised fusing and B's stream took longer: said as what B took more, not as a share
if grep -q "^    predicted saving 16.5 ms, realised none: B took 97.4 ms more over A's 30 steps" "$cf_tmp/other.txt"; then
    ok "a realised saving below zero: what B took more"
else
    bad "a realised saving below zero: $(grep "predicted saving" "$cf_tmp/other.txt")"
fi
# a stream without a repeating step (the trainers' aux all-reduces, 4 and 5
# calls in one step) has no per-step figures, so no line in FUSION
if grep -q "^  MPI_Allreduce on aux:" "$cf_tmp/other.txt"; then
    bad "a stream without a repeating step measured per step: $(grep -A2 "^  MPI_Allreduce on aux:" "$cf_tmp/other.txt")"
else
    ok "no per-step figures for a stream without a repeating step"
fi

# further pairs (commfit diff A B A2 B2 ...): the spread of the settled
# stream's saving per step over the pairs that have it, each pair's as its
# own diff measures it; a pair without the stream, or with it at other calls
# and bytes a step (another trainer's), is counted apart
lead=$corpus/veth-torch-resnet20-overlap-lead-2/profile.json b64=$corpus/veth-torch-resnet20-overlap-64k-2/profile.json
pt=$corpus/veth-torch-resnet-stream-overlap-pt-2/profile.json b512=$corpus/veth-torch-resnet-stream-overlap-512k-2/profile.json
"$commfit" diff --format json "$lead" "$b64" > "$cf_tmp/p1.json" || bad "diff of the first pair"
"$commfit" diff --format json "$pt" "$b512" > "$cf_tmp/p2.json" || bad "diff of the second pair"
"$commfit" diff --format json "$lead" "$b64" "$lead" "$b64" "$pt" "$b512" "$cf_tmp/a.json" "$cf_tmp/b.json" \
    > "$cf_tmp/pairs.json" || bad "diff of four pairs"
"$commfit" diff "$lead" "$b64" "$lead" "$b64" "$pt" "$b512" "$cf_tmp/a.json" "$cf_tmp/b.json" \
    > "$cf_tmp/pairs.txt" || bad "diff of four pairs (text)"
"$CF_PYTHON" - "$cf_tmp/p1.json" "$cf_tmp/p2.json" "$cf_tmp/pairs.json" "$cf_tmp/pairs.txt" <<'PY'
import json, statistics, sys
from checks import check, done
def settled(f):
    return [o for o in json.load(open(f))["operations"] if o["op"] == "MPI_Iallreduce" and o["measured_per_step"]][0]
s1, s2 = (settled(f)["measured_per_step"]["saving_step_s"] for f in sys.argv[1:3])
m = settled(sys.argv[3])["measured_per_step"]
ov = m["over_pairs"]
want = [s1, s1, s1]
check("over_pairs: 2 pairs that settle the stream, 2 without it at its calls and bytes a step",
      ov["pairs"] == 2 and ov["pairs_without"] == 2, str(ov))
check("over_pairs: min, median and max of the pairs' own savings (%s), not the other trainer's (%s)" % (want, s2),
      [ov["saving_step_min_s"], ov["saving_step_median_s"], ov["saving_step_max_s"]] == want, str(ov))
check("the first pair's figures stand", m["saving_step_s"] == s1, "%s against %s" % (m["saving_step_s"], s1))
txt = open(sys.argv[4]).read()
def us(x):
    return "%.3g us" % (x * 1e6) if x < 1e-3 else "%.3g ms" % (x * 1e3)
line = "over 2 pairs: B saves %s a step (the median; from %s to %s)" % (us(want[1]), us(want[0]), us(want[2]))
check("the text: " + line, line in txt and "the pairs without the stream at the first pair's calls and bytes" in txt,
      [l for l in txt.splitlines() if "pairs" in l])
done()
PY
[ $? -eq 0 ] && ok "the spread over pairs" || bad "the spread over pairs"
set -- "$lead" "$b64"
for i in 2 3 4 5 6 7 8 9; do set -- "$@" "$lead" "$b64"; done
"$commfit" diff "$@" > "$cf_tmp/out" 2> "$cf_tmp/err"
[ $? -eq 2 ] && grep -q "8 pairs at most" "$cf_tmp/err" && ok "9 pairs: a usage error" || bad "9 pairs: $(head -n 1 "$cf_tmp/err")"
# a later pair's profile that cannot be read: exit 2, one line naming it, nothing on stdout
"$commfit" diff "$lead" "$b64" "$lead" "$cf_tmp/missing.json" > "$cf_tmp/out" 2> "$cf_tmp/err"
if [ $? -eq 2 ] && [ ! -s "$cf_tmp/out" ] && [ "$(wc -l < "$cf_tmp/err")" -eq 1 ] && grep -q "missing.json" "$cf_tmp/err"; then
    ok "a later pair's missing profile: $(cat "$cf_tmp/err")"
else
    bad "a later pair's missing profile: $(head -n 2 "$cf_tmp/err")"
fi

cf_done
