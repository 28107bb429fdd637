#!/bin/bash
# Call sites: tests/mpi/callsite.c (built with -g) calls MPI_Allreduce from
# two lines with different counts, a Send/Recv pair and an Isend with its
# Wait, and prints each site's line, calls and bytes; the profile's sites,
# resolved by commfit report --by-callsite (text, json, csv), must be
# exactly those.  Also: COMMFIT_CALLSITE_DEPTH=0 leaves no section, depth 2
# adds the caller's frame, a binary that is gone falls back to module +
# offset, a Fortran program (use mpi) gets its own lines, and programs that call every
# wrapped function (C, Fortran use mpi and mpi_f08) have each call at a site in the program.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
prog="$cf_tmp/callsite"
cp "$CF_BUILDDIR/tests/mpi/callsite" "$prog" || cf_fail "no test program"
check() { # NAME PROFILE PRINTED [DEPTH]
    "$commfit" report --by-callsite "$2" > "$cf_tmp/$1.txt" || cf_fail "$1: report --by-callsite"
    "$commfit" report --by-callsite --format json "$2" > "$cf_tmp/$1.rep.json" || cf_fail "$1: --format json"
    "$commfit" report --by-callsite --format csv "$2" > "$cf_tmp/$1.csv" || cf_fail "$1: --format csv"
    "$CF_PYTHON" - "$1" "$2" "$3" "${4:-1}" "$cf_tmp/$1.txt" "$cf_tmp/$1.rep.json" "$cf_tmp/$1.csv" <<'PY' || exit 1
import csv, json, sys
name, prof, printed, depth, txt, rep, csvf = sys.argv[1:]
depth = int(depth)
from checks import check, done
# what the program says: line -> (op, calls, bytes)
want = {}
for line in open(printed):
    w = line.split()
    if w and w[0] == "site":
        want[int(w[1])] = (w[2], int(w[3]), int(w[4]))
check("the program printed its sites", len(want) >= 2, str(want))
p = json.load(open(prof))
for line, (op, n, b) in list(want.items()):
    if b < 0:  # as the records of the operation say
        want[line] = (op, n, sum(x["bytes"] for x in p["records"] if x["op"] == op))
sec = p["callsites"]
check("profile section: depth %d, complete, nothing lost" % depth,
      sec["depth"] == depth and sec["complete"] and sec["lost_calls"] == 0, str({k: sec[k] for k in ("depth", "complete", "lost_calls")}))
check("every site has 1 to %d frames with a module" % depth,
      all(1 <= len(s["stack"]) <= depth and s["stack"][0].get("module") for s in sec["sites"]))
r = json.load(open(rep))["callsites"]
src = lambda f: f and f.endswith(".c") or f and f.endswith(".f90")
got = {}
for s in r["sites"]:
    f = s["stack"][0]
    if src(f["file"]):
        got[f["line"]] = (s["op"], s["calls"], s["bytes"])
def line0(d):
    """line 0: a site in the program whose line is not checked (the compiler gave it none)"""
    for line in [l for l in d if l not in want]:
        if 0 in want and d[line][0] == want[0][0]:
            d[0] = d.pop(line)
    return d
got = line0(got)
check("json: the sites in the program are exactly its lines, calls and bytes", got == want, "%s vs %s" % (got, want))
check("json: function main (or the Fortran program) at every site in the program",
      all(s["stack"][0]["function"] in ("main", "MAIN__") for s in r["sites"] if src(s["stack"][0]["file"])))
check("json: ids 1.. in order of time", [s["id"] for s in r["sites"]] == list(range(1, len(r["sites"]) + 1)) and
      all(a["time_s"] >= b["time_s"] for a, b in zip(r["sites"], r["sites"][1:])))
check("json: comm names", all(s["comm_name"] in ("world", "-") for s in r["sites"]))
if depth > 1:
    check("json: the caller's frame under each site of the program",
          all(len(s["stack"]) == 2 and s["stack"][1]["where"] for s in r["sites"] if src(s["stack"][0]["file"])))
# every call of the program is at some site: the records' calls per operation
calls = {}
for x in p["records"]:
    if x.get("layer", "mpi") == "mpi":
        calls[x["op"]] = calls.get(x["op"], 0) + x["calls"]
sites = {}
for s in sec["sites"]:
    sites[s["op"]] = sites.get(s["op"], 0) + s["calls"]
check("the sites' calls add up to the records' per operation", all(sites.get(o) == c for o, c in calls.items()
      if o in {v[0] for v in want.values()}), "%s vs %s" % (sites, calls))
# each size's record holds its own calls (a site whose count changes at every call among them)
rec, sizes = {}, {}
for x in p["records"]:
    if x.get("layer", "mpi") == "mpi" and x["op"] == "MPI_Allreduce":
        k = (x["size_lo"], x["size_hi"])
        rec[k] = rec.get(k, 0) + x["calls"]
for line in open(printed):
    w = line.split()
    if w and w[0] == "size":
        k = [k for k in rec if k[0] <= int(w[2]) <= k[1]]
        k = k[0] if k else (int(w[2]), None)
        sizes[k] = sizes.get(k, 0) + int(w[3])
if sizes:  # the C program says them
    check("the MPI_Allreduce records per size hold the calls of that size", rec == sizes, "%s vs %s" % (rec, sizes))
rows = [x for x in csv.DictReader(open(csvf)) if x["level"] == "0" and src(x["file"])]
cgot = line0({int(x["line"]): (x["op"], int(x["calls"]), int(x["bytes"])) for x in rows})
check("csv: the same sites", cgot == want)
text = open(txt).read()
for line, (op, n, b) in want.items():
    base = "sites.f90" if name == "fortran" else "callsite.c"
    ok = any(op in l and " %d " % n in l and ("(%s:%d)" % (base, line) if line else "(%s:" % base) in l
             for l in text.splitlines())
    check("text: %s at %s:%d, %d calls" % (op, base, line, n), ok)
done()
PY
}
COMMFIT_OUTPUT="$cf_tmp/d1.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$prog" > "$cf_tmp/d1.printed" || cf_fail "job failed"
check callsite "$cf_tmp/d1.json" "$cf_tmp/d1.printed"
# Each clock: with the TSC a repeated call is recorded in the hit's part of
# its wrapper and the others reach the full path, each by tail calls; with
# CLOCK_MONOTONIC every call takes the full path (cf_site.h, "a wrapper in
# two parts").
# Either way each call is counted at its own line.
for tm in tsc monotonic; do
    COMMFIT_TIMER=$tm COMMFIT_OUTPUT="$cf_tmp/t-$tm.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$prog" > "$cf_tmp/t-$tm.printed" ||
        cf_fail "job failed with COMMFIT_TIMER=$tm"
    if [ "$tm" = tsc ] && ! grep -q '"timer": "tsc"' "$cf_tmp/t-$tm.json"; then
        echo "skip COMMFIT_TIMER=tsc: no invariant TSC here"
        continue
    fi
    check "callsite-$tm" "$cf_tmp/t-$tm.json" "$cf_tmp/t-$tm.printed"
done
COMMFIT_CALLSITE_DEPTH=2 COMMFIT_OUTPUT="$cf_tmp/d2.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$prog" > "$cf_tmp/d2.printed" ||
    cf_fail "job failed at depth 2"
check callsite-depth2 "$cf_tmp/d2.json" "$cf_tmp/d2.printed" 2

# off: no section, and the report says so
COMMFIT_CALLSITE_DEPTH=0 COMMFIT_TIMER=tsc COMMFIT_OUTPUT="$cf_tmp/d0.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$prog" > /dev/null ||
    cf_fail "job failed at depth 0"
"$CF_PYTHON" -c 'import json, sys; sys.exit("callsites" in json.load(open(sys.argv[1])))' "$cf_tmp/d0.json" ||
    cf_fail "COMMFIT_CALLSITE_DEPTH=0 left a callsites section"
"$commfit" report --by-callsite "$cf_tmp/d0.json" | grep -q "Not recorded: the profile has no call sites" ||
    cf_fail "--by-callsite on a profile without call sites"
# the records are those of depth 1 (the TSC's run above): the table stays
# for the memos, whose hit records a repeated call (both runs read the TSC,
# so both take it); what depth 0 costs is held by test_hotpath_ir.sh
"$CF_PYTHON" - "$cf_tmp/d0.json" "$cf_tmp/t-tsc.json" <<'PY' || cf_fail "COMMFIT_CALLSITE_DEPTH=0 changed the records"
import json, sys
def recs(f):
    return sorted((r["layer"], r["op"], r.get("comm"), r.get("path"), r.get("size_lo"), str(r.get("region")),
                   r["calls"], r["bytes"])
                  for r in json.load(open(f))["records"])
a, b = recs(sys.argv[1]), recs(sys.argv[2])
if a != b:
    sys.exit("depth 0: %d records, depth 1: %d; first difference: %s" %
             (len(a), len(b), next((x, y) for x, y in zip(a + [None] * len(b), b + [None] * len(a)) if x != y)))
print("ok   COMMFIT_CALLSITE_DEPTH=0: %d records, calls and bytes those of depth 1" % len(a))
PY
echo "ok   COMMFIT_CALLSITE_DEPTH=0: no callsites section, and the report says 'Not recorded'"

# every call of every operation is at a site in the program: tests/mpi/all_calls calls them all
# (a nonblocking call is a site's call at its post, a record's at its completion: a cancelled or
# never completed one is in the sites only; a persistent one is one site call per init, one
# record call per completed start)
sites_cover() { # NAME PROFILE PROGRAM OPERATIONS_AT_LEAST
    "$CF_PYTHON" - "$@" <<'PY' || exit 1
import json, sys
name, prof, prog, least = sys.argv[1:]
p = json.load(open(prof))
rec, site = {}, {}
for r in p["records"]:
    if r.get("layer", "mpi") == "mpi":
        rec[r["op"]] = rec.get(r["op"], 0) + r["calls"]
for s in p["callsites"]["sites"]:
    site[s["op"]] = site.get(s["op"], 0) + s["calls"]
def fits(op, r, s):
    if op.endswith("_init"):
        return r > 0 and s > 0
    return r == s or op.startswith("MPI_I") and s >= r
bad = [(op, rec.get(op), site.get(op)) for op in sorted(set(rec) | set(site))
       if not fits(op, rec.get(op, 0), site.get(op, 0))]
mods = {s["stack"][0].get("module") for s in p["callsites"]["sites"]}
ok = not bad and mods == {prog} and len(rec) >= int(least) and p["callsites"]["lost_calls"] == 0
print("%s %s: %d operations, each call at a site in the program%s" % ("ok  " if ok else "FAIL", name, len(rec),
      "" if ok else ": %s, modules %s" % (bad, mods)))
sys.exit(0 if ok else 1)
PY
}
cp "$CF_BUILDDIR/tests/mpi/all_calls" "$cf_tmp/all_calls"
COMMFIT_OUTPUT="$cf_tmp/all.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$cf_tmp/all_calls" "$cf_tmp" > /dev/null ||
    cf_fail "all_calls failed"
sites_cover all_calls "$cf_tmp/all.json" "$(cd "$cf_tmp" && pwd -P)/all_calls" 80

# the binary gone: module + offset, as the profile has them
rm "$prog"
"$commfit" report --by-callsite "$cf_tmp/d1.json" > "$cf_tmp/gone.txt" || cf_fail "report without the binary"
off=$("$CF_PYTHON" -c '
import json, sys
s = [s for s in json.load(open(sys.argv[1]))["callsites"]["sites"] if s["stack"][0]["module"].endswith("/callsite")][0]
print("%s %d callsite+0x%x" % (s["op"], s["calls"], s["stack"][0]["offset"]))' "$cf_tmp/d1.json")
set -- $off
grep "$1" "$cf_tmp/gone.txt" | grep " $2 " | grep -q -- "$3\$" || cf_fail "binary gone: no '$off' in $(cat "$cf_tmp/gone.txt")"
echo "ok   the binary gone: sites as module + offset ($3)"

# a bad section is refused with one line
"$CF_PYTHON" -c '
import json, sys
p = json.load(open(sys.argv[1])); p["callsites"]["sites"][0]["stack"] = []; json.dump(p, open(sys.argv[2], "w"))' \
    "$cf_tmp/d1.json" "$cf_tmp/bad.json"
"$commfit" report --by-callsite "$cf_tmp/bad.json" > /dev/null 2> "$cf_tmp/err" && cf_fail "a bad callsites section was read"
grep -q "callsites.sites\[0\] needs id, op, comm, calls, bytes, time_s and a stack" "$cf_tmp/err" || cf_fail "bad section: $(cat "$cf_tmp/err")"
echo "ok   a bad section: $(head -1 "$cf_tmp/err")"

# Fortran (use mpi): the wrappers of the Fortran bindings have their own return address, and
# those that go through the C ones (MPI_Wait) pass theirs on
[ -n "${CF_MPIFC:-}" ] || { echo "no MPI Fortran compiler: Fortran case skipped"; exit 0; }
# MPICH's Fortran bindings call the C functions: its sites are in libmpifort (docs/reading-the-report.md, "Call sites")
[ "$CF_MPI_FAMILY" = mpich ] && { echo "MPICH: Fortran case skipped"; exit 0; }
cat > "$cf_tmp/sites.f90" <<'F90'
program sites
  use mpi
  implicit none
  integer :: ierr, rank, size, i, req, st(MPI_STATUS_SIZE)
  double precision :: a(16), b(16)
  a = 1d0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  do i = 1, 4
    call MPI_Allreduce(a, b, 16, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  do i = 1, 2
    call MPI_Allreduce(a, b, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call MPI_Isend(a, 5, MPI_DOUBLE_PRECISION, 1 - rank, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_Recv(b, 5, MPI_DOUBLE_PRECISION, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(req, st, ierr)
  ! the lines above: 11, 14, 16, 17 and 18 (2 ranks; -1 bytes: as the profile's MPI_Wait record says);
  ! line 0: gfortran 12 gives the MPI_Wait call no line of its own (its DWARF says line 1)
  if (rank == 0) print '(a,i0,1x,i0)', 'site 11 MPI_Allreduce ', 4 * size, 4 * size * 16 * 8
  if (rank == 0) print '(a,i0,1x,i0)', 'site 14 MPI_Allreduce ', 2 * size, 2 * size * 2 * 8
  if (rank == 0) print '(a)', 'site 16 MPI_Isend 2 80'
  if (rank == 0) print '(a)', 'site 17 MPI_Recv 2 80'
  if (rank == 0) print '(a)', 'site 0 MPI_Wait 2 -1'
  call MPI_Finalize(ierr)
end program sites
F90
(cd "$cf_tmp" && $CF_MPIFC -g -o sites sites.f90) || cf_fail "cannot build the Fortran program"
COMMFIT_OUTPUT="$cf_tmp/f.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$cf_tmp/sites" > "$cf_tmp/f.printed" || cf_fail "Fortran job failed"
check fortran "$cf_tmp/f.json" "$cf_tmp/f.printed"
$CF_MPIFC -cpp -DUSE_MODULE -o "$cf_tmp/fmod" "$CF_SRCDIR/tests/mpi/fortran_calls.F90" || cf_fail "cannot build fortran_calls"
COMMFIT_OUTPUT="$cf_tmp/fmod.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$cf_tmp/fmod" "$cf_tmp" > /dev/null ||
    cf_fail "fortran_calls failed"
sites_cover fortran_calls "$cf_tmp/fmod.json" "$(cd "$cf_tmp" && pwd -P)/fmod" 30
$CF_MPIFC -cpp -DUSE_F08 -o "$cf_tmp/f08" "$CF_SRCDIR/tests/mpi/fortran_calls.F90" || cf_fail "cannot build fortran_calls (f08)"
COMMFIT_OUTPUT="$cf_tmp/f08.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$cf_tmp/f08" "$cf_tmp" > /dev/null ||
    cf_fail "fortran_calls (f08) failed"
sites_cover fortran_calls-f08 "$cf_tmp/f08.json" "$(cd "$cf_tmp" && pwd -P)/f08" 30
