#!/bin/bash
# Communicators are named as people know them, the same on every rank, in
# the profile, the JSON report, the text report and the HTML page's data.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/names.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 4 -- "$CF_BUILDDIR/tests/mpi/comm_names" || cf_fail "job failed"
commfit="$CF_BUILDDIR/tools/commfit"
"$commfit" report --format json "$cf_tmp/names.json" > "$cf_tmp/report.json" || cf_fail "report --format json"
"$commfit" report "$cf_tmp/names.json" > "$cf_tmp/report.txt" || cf_fail "report"
"$commfit" report --format csv "$cf_tmp/names.json" > "$cf_tmp/report.csv" || cf_fail "report --format csv"
"$commfit" trace -o "$cf_tmp/trace.json" "$cf_tmp/names.json" || cf_fail "trace"
"$commfit" report --format html -o "$cf_tmp/report.html" "$cf_tmp/names.json" 2> "$cf_tmp/err" ||
    grep -q "built without Chart.js" "$cf_tmp/err" || cf_fail "report --format html"
"$CF_PYTHON" - "$cf_tmp/names.json" "$cf_tmp/report.json" "$cf_tmp/report.txt" "$cf_tmp/report.csv" \
    "$cf_tmp/report.html" "$cf_tmp/trace.json" <<'PY' || exit 1
import csv, json, sys
prof = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
text = open(sys.argv[3]).read()
rows = list(csv.DictReader(open(sys.argv[4])))
page = None
try:
    import re
    m = re.search(r'<script type="application/json" id="commfit-data">(.*?)</script>',
                  open(sys.argv[5]).read(), re.S)
    page = json.loads(m.group(1))
except FileNotFoundError:
    print("(no HTML report: built without Chart.js)")
from checks import check, done

# the count of each allreduce tells its communicator (comm_names.c)
want = {1: ("world", None, 4), 2: ("dup of world, 4 ranks", "dup of world", 4),
        3: ("split of world, colour 3, 2 ranks", "split of world, colour 3", 2),
        4: ("cart 2x2 of world, periodic in 1, 4 ranks", "cart 2x2 of world, periodic in 1", 4),
        5: ("sub (dims 2) of cart 2x2 of world, periodic in 1, where dim 1 = 0, 2 ranks",
            "sub (dims 2) of cart 2x2 of world, periodic in 1, where dim 1 = 0", 2),
        6: ("dup of split of world, colour 3, 2 ranks", "dup of split of world, colour 3", 2),
        7: ("halo <x>", "dup of world", 4)}
comms = {c["id"]: c for c in prof["communicators"]}
recs = [r for r in prof["records"] if r["op"] == "MPI_Allreduce" and r["layer"] == "mpi"]
label = {c["comm"]: c for c in rep["communicators"]}
for count, (name, desc, size) in sorted(want.items()):
    # colour 3 and 4 make two communicators of the same description but colour
    mine = [r for r in recs if r["bytes"] == 4 * count * r["calls"]]
    ids = sorted({r["comm"] for r in mine})
    names = sorted(comms[i].get("description") or "" for i in ids)
    # colours 3 and 4; rows 0 and 1 of the grid
    other = lambda d: d.replace("colour 3", "colour 4").replace("dim 1 = 0", "dim 1 = 1")
    if count in (3, 5, 6):
        alt = other(desc)
        check("count %d: two communicators" % count, names == sorted([desc, alt]), str(names))
    elif count == 1:
        check("count 1: world", ids == [1], str(ids))
    else:
        check("count %d: %s" % (count, desc), names == [desc], str(names))
    calls = sum(r["calls"] for r in mine)
    check("count %d: one call on each of 4 ranks" % count, calls == 4, str(calls))
    for i in ids:
        c = comms[i]
        check("count %d: size %d" % (count, size), c["size"] == size, str(c["size"]))
        if count == 7:
            check("MPI_Comm_set_name kept", c.get("user_name") == "halo <x>", str(c.get("user_name")))
        lab = "world" if i == 1 else "c%08x" % i
        n = label[lab]["comm_name"]
        expect = name if c.get("description") in (None, desc) else other(name)
        check("count %d: report names %s" % (count, lab), n == expect, repr(n))
        ops = [o for o in rep["operations"] if o["op"] == "MPI_Allreduce" and o["comm"] == lab]
        check("count %d: the operation row carries the name" % count, len(ops) == 1 and ops[0]["comm_name"] == expect,
              str([o["comm_name"] for o in ops]))
        check("count %d: the text report lists it" % count, ("%s " % lab) in text and expect in text)
        fits = [r for r in rows if r["op"] == "MPI_Allreduce" and r["comm"] == lab]
        check("count %d: csv rows carry the name" % count, fits and all(r["comm_name"] == expect for r in fits))
trace = json.load(open(sys.argv[6]))
tnames = {e["args"]["comm_name"] for e in trace["traceEvents"] if e.get("cat") == "mpi"}
check("the trace names the communicators of its slices",
      {"world", "halo <x>", "dup of world, 4 ranks", "cart 2x2 of world, periodic in 1, 4 ranks"} <= tnames, str(tnames))
if page is not None:
    check("the HTML page's data names them as the JSON report",
          page["communicators"] == rep["communicators"] and page["operations"] == rep["operations"])
    check("the page escapes the name", "halo <x>" not in open(sys.argv[5]).read().split('id="commfit-data">')[1])
done()
PY
