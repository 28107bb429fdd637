#!/bin/bash
# The communication matrix equals what the programs sent: a ring, a 2-D
# halo exchange, and messages on world, a dup and a split of it on 4 ranks
# (tests/mpi/matrix.c prints its own tally per communicator), in the
# profile, the JSON report, --matrix --format csv, the text and the page.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
for pattern in ring halo comms; do
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
from checks import check, done
truth = {}
for line in open(sent):
    w = line.split()
    if w and w[0] == "sent":
        truth[(int(w[1]), int(w[2]), w[5])] = (int(w[3]), int(w[4]))
rows = list(csv.DictReader(open(csvf)))
def kind(name):
    # what the communicator is called (cf_comm_name) as the program's tally names it
    return {"world": "world", "mydup": "dup"}.get(name) or next(
        (k for k in ("cart", "split") if name.startswith(k + " ")), name)
names = {x["comm"]: x["comm_name"] for x in rows}
def label(c):
    return {1: "world", 2: "self"}.get(c, "c%08x" % c)
# what the program says it sent, by construction (tests/mpi/matrix.c)
if pattern == "ring":
    want = {}
    for r in range(4):
        want[(r, (r + 1) % 4, "world")] = (10, 10 * (r + 1) * 100)
        want[(r, (r + 3) % 4, "world")] = (5, 5 * 64)
    check("the program's own tally is the ring", truth == want, str(truth))
elif pattern == "halo":
    # a 2x2 grid, not periodic: two neighbours each, one per dimension, 20 steps
    check("the program's own tally: 8 pairs of 20 messages", len(truth) == 8 and
          all(m == 20 and b in (20 * 800, 20 * 1600) and c == "cart" for (s, d, c), (m, b) in truth.items()),
          str(truth))
else:
    want = {}
    for r in range(4):
        want[(r, (r + 1) % 4, "world")] = (3, 3 * (r + 1) * 100)
        want[(r, (r + 3) % 4, "dup")] = (7, 7 * 256)
        want[(r, r ^ 2, "split")] = (4, 4 * 512)
    check("the program's own tally: world, dup and split", truth == want, str(truth))
def keyed(pairs):
    # [src, dst, messages, bytes, comm id, source]: the point-to-point share
    return {(s, d, kind(names.get(label(c), "?"))): (n, b) for s, d, n, b, c, src in pairs if src == "mpi"}
m = json.load(open(prof)).get("matrix")
got = keyed(m["pairs"]) if m else None
check("profile matrix per communicator equals what was sent", got == truth, "%s vs %s" % (got, truth))
check("no message lost", m and m["lost_messages"] == 0)
r = json.load(open(rep))["matrix"]
check("JSON report matrix", r and keyed(r["pairs"]) == truth)
check("--matrix --format csv", {(int(x["src"]), int(x["dst"]), kind(x["comm_name"])): (int(x["messages"]), int(x["bytes"]))
                                for x in rows if x["source"] == "mpi"} == truth, str(rows[:3]))
if pattern == "comms":
    check("csv: the split's name", all(x["comm_name"] == "split of world, colour %d, 2 ranks" % (int(x["src"]) % 2)
                                       for x in rows if kind(x["comm_name"]) == "split"))
text = open(txt).read()
ends = {(s, d) for s, d, c in truth}
total = sum(n for n, b in truth.values())
check("text: the pairs and the messages", "%d pairs of 4 ranks sent %d messages" % (len(ends), total) in text)
bycomm = {}
for (s, d, c), (n, b) in truth.items():
    x = bycomm.setdefault(c, [0, 0, 0])
    x[0] += 1; x[1] += n; x[2] += b
for c, (np_, n, b) in bycomm.items():
    name = next(v for v in names.values() if kind(v) == c)
    if c == "split":
        name = "split of world, colour 0, 2 ranks"
        np_, n, b = [v // 2 for v in (np_, n, b)]
    check("text: %s's group" % c, re.search(r"\n  %s: %d pairs sent %d messages" % (re.escape(name), np_, n), text),
          name)
if os.path.exists(page):
    data = json.loads(re.search(r'id="commfit-data">(.*?)</script>', open(page).read(), re.S).group(1))
    hm = data["html"]["matrix"]
    cells = {(c[0], c[1]): (c[2], c[3]) for c in hm["cells"]}
    sums = {}
    for (s, d, c), (n, b) in truth.items():
        x = sums.setdefault((s, d), [0, 0])
        x[0] += n; x[1] += b
    check("HTML heat map cells, all communicators (one rank each)", hm["block"] == 1 and
          cells == {k: tuple(v) for k, v in sums.items()})
    maps = {(x["source"], kind(x["name"])): {(c[0], c[1]): (c[2], c[3]) for c in x["cells"]}
            for x in hm["maps"] if not x["name"].startswith("split")}
    for c in bycomm:
        if c != "split":
            check("HTML map of %s" % c, maps.get(("mpi", c)) == {(s, d): v for (s, d, k), v in truth.items() if k == c})
    check("HTML maps: the busiest first", [x["bytes"] for x in hm["maps"]] == sorted((x["bytes"] for x in hm["maps"]), reverse=True))
done()
PY
done
# a profile from before the matrix says so
"$commfit" report --matrix "$CF_SRCDIR/tests/corpus/lammps-melt-4/profile.json" | grep -q "Not recorded: the profile has no matrix" ||
    cf_fail "--matrix on a profile without one"
"$commfit" report --matrix --format csv "$CF_SRCDIR/tests/corpus/lammps-melt-4/profile.json" > "$cf_tmp/old.csv" &&
    [ "$(cat "$cf_tmp/old.csv")" = "src,dst,messages,bytes,comm,comm_name,source" ] || cf_fail "--matrix --format csv without a matrix: the header alone"
echo "ok   a profile without a matrix: 'Not recorded', and a csv of the header alone"
# a matrix naming a rank outside the job is refused with one line
"$CF_PYTHON" -c '
import json, sys
p = json.load(open(sys.argv[1])); p["matrix"]["pairs"].append([0, 9, 1, 1]); json.dump(p, open(sys.argv[2], "w"))' \
    "$cf_tmp/ring.json" "$cf_tmp/bad.json"
"$commfit" report --matrix "$cf_tmp/bad.json" > /dev/null 2> "$cf_tmp/err"
grep -q "matrix.pairs\[8\] is not \[src, dst, messages, bytes, comm, \"mpi\" or \"ucx\"\] of ranks below 4" "$cf_tmp/err" || cf_fail "bad matrix: $(cat "$cf_tmp/err")"
echo "ok   a bad matrix: $(head -1 "$cf_tmp/err")"
# a matrix from before the communicator column ([src, dst, messages, bytes]) is read as all communicators together
"$CF_PYTHON" -c '
import json, sys
p = json.load(open(sys.argv[1])); p["matrix"]["pairs"] = [x[:4] for x in p["matrix"]["pairs"]]; json.dump(p, open(sys.argv[2], "w"))' \
    "$cf_tmp/comms.json" "$cf_tmp/old4.json"
"$commfit" report --matrix --format csv "$cf_tmp/old4.json" > "$cf_tmp/old4.csv" || cf_fail "old matrix csv"
[ "$(grep -c ',all,all,mpi$' "$cf_tmp/old4.csv")" = 12 ] || cf_fail "old matrix: $(cat "$cf_tmp/old4.csv")"
"$commfit" report --matrix "$cf_tmp/old4.json" | grep -q "all communicators (a profile from before the communicator column): 12 pairs sent 56 messages" ||
    cf_fail "old matrix text: $("$commfit" report --matrix "$cf_tmp/old4.json")"
echo "ok   a matrix without communicators: 12 rows of all communicators"
