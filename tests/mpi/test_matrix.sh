#!/bin/bash
# The communication matrix equals what the programs sent: a ring and a 2-D
# halo exchange on 4 ranks (tests/mpi/matrix.c prints its own tally), in the
# profile, the JSON report, --matrix --format csv, the text and the page.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
for pattern in ring halo; do
    COMMFIT_OUTPUT="$cf_tmp/$pattern.json" COMMFIT_SUMMARY=0 \
        cf_mpirun 4 -- "$CF_BUILDDIR/tests/mpi/matrix" $pattern > "$cf_tmp/$pattern.sent" || cf_fail "$pattern: job failed"
    "$commfit" report --format json "$cf_tmp/$pattern.json" > "$cf_tmp/$pattern.report.json" || cf_fail "report json"
    "$commfit" report --matrix --format csv "$cf_tmp/$pattern.json" > "$cf_tmp/$pattern.csv" || cf_fail "report --matrix csv"
    "$commfit" report --matrix "$cf_tmp/$pattern.json" > "$cf_tmp/$pattern.txt" || cf_fail "report --matrix"
    "$commfit" report --format html -o "$cf_tmp/$pattern.html" "$cf_tmp/$pattern.json" 2> "$cf_tmp/err" ||
        grep -q "built without Chart.js" "$cf_tmp/err" || cf_fail "report --format html"
    "$CF_PYTHON" - "$pattern" "$cf_tmp/$pattern.sent" "$cf_tmp/$pattern.json" "$cf_tmp/$pattern.report.json" \
        "$cf_tmp/$pattern.csv" "$cf_tmp/$pattern.txt" "$cf_tmp/$pattern.html" <<'PY' || exit 1
import csv, json, os, re, sys
pattern, sent, prof, rep, csvf, txt, page = sys.argv[1:]
fails = passed = 0
def check(what, ok, detail=""):
    global fails, passed
    fails += not ok
    passed += bool(ok)
    print("%s %s: %s %s" % ("ok  " if ok else "FAIL", pattern, what, detail))
truth = {}
for line in open(sent):
    w = line.split()
    if w and w[0] == "sent":
        truth[(int(w[1]), int(w[2]))] = (int(w[3]), int(w[4]))
# what the program says it sent, by construction (tests/mpi/matrix.c)
if pattern == "ring":
    want = {}
    for r in range(4):
        want[(r, (r + 1) % 4)] = (10, 10 * (r + 1) * 100)
        want[(r, (r + 3) % 4)] = (5, 5 * 64)
    check("the program's own tally is the ring", truth == want, str(truth))
else:
    # a 2x2 grid, not periodic: two neighbours each, one per dimension, 20 steps
    check("the program's own tally: 8 pairs of 20 messages", len(truth) == 8 and
          all(m == 20 and b in (20 * 800, 20 * 1600) for m, b in truth.values()), str(truth))
m = json.load(open(prof)).get("matrix")
got = {(s, d): (n, b) for s, d, n, b in m["pairs"]} if m else None
check("profile matrix equals what was sent", got == truth, "%s vs %s" % (got, truth))
check("no message lost", m and m["lost_messages"] == 0)
r = json.load(open(rep))["matrix"]
check("JSON report matrix", r and {(s, d): (n, b) for s, d, n, b in r["pairs"]} == truth)
rows = list(csv.DictReader(open(csvf)))
check("--matrix --format csv", {(int(x["src"]), int(x["dst"])): (int(x["messages"]), int(x["bytes"])) for x in rows} == truth)
text = open(txt).read()
total = sum(n for n, b in truth.values())
check("text: the pairs and the messages", "%d pairs of 4 ranks sent %d messages" % (len(truth), total) in text)
if os.path.exists(page):
    data = json.loads(re.search(r'id="commfit-data">(.*?)</script>', open(page).read(), re.S).group(1))
    cells = {(c[0], c[1]): (c[2], c[3]) for c in data["html"]["matrix"]["cells"]}
    check("HTML heat map cells (one rank each)", data["html"]["matrix"]["block"] == 1 and cells == truth)
print("%d passed, %d failed" % (passed, fails))
sys.exit(1 if fails else 0)
PY
done
# a profile from before the matrix says so
"$commfit" report --matrix "$CF_SRCDIR/tests/corpus/lammps-melt-4/profile.json" | grep -q "Not recorded: the profile has no matrix" ||
    cf_fail "--matrix on a profile without one"
"$commfit" report --matrix --format csv "$CF_SRCDIR/tests/corpus/lammps-melt-4/profile.json" > "$cf_tmp/old.csv" &&
    [ "$(cat "$cf_tmp/old.csv")" = "src,dst,messages,bytes" ] || cf_fail "--matrix --format csv without a matrix: the header alone"
echo "ok   a profile without a matrix: 'Not recorded', and a csv of the header alone"
# a matrix naming a rank outside the job is refused with one line
"$CF_PYTHON" -c '
import json, sys
p = json.load(open(sys.argv[1])); p["matrix"]["pairs"].append([0, 9, 1, 1]); json.dump(p, open(sys.argv[2], "w"))' \
    "$cf_tmp/ring.json" "$cf_tmp/bad.json"
"$commfit" report --matrix "$cf_tmp/bad.json" > /dev/null 2> "$cf_tmp/err"
grep -q "matrix.pairs\[8\] is not \[src, dst, messages, bytes\] of ranks below 4" "$cf_tmp/err" || cf_fail "bad matrix: $(cat "$cf_tmp/err")"
echo "ok   a bad matrix: $(head -1 "$cf_tmp/err")"
