#!/bin/sh
# A profile merged from the spool names communicators as MPI_Finalize's
# does (MPI_Comm_set_name, on every rank or one, and how each was made); and
# a COMMFIT_TEST_CLOCK_OFFSET that is not a finite number of seconds is
# refused with a message, the job running on to a whole profile.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
prog="$CF_BUILDDIR/tests/mpi/named_exit"
root=""
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
launch() { echo "$CF_MPIRUN" $root --oversubscribe --bind-to none -np "$1" --mca btl self,vader,tcp --mca pml ob1 --mca odls_base_sigkill_timeout 5; }
export COMMFIT_SUMMARY=0
"$commfit" run -o "$cf_tmp/full.json" -- $(launch 4) "$prog" finish > /dev/null 2> "$cf_tmp/err1" \
    || { cat "$cf_tmp/err1"; cf_fail "the job that finishes failed"; }
"$commfit" run -o "$cf_tmp/part.json" -- $(launch 4) "$prog" exit > /dev/null 2> "$cf_tmp/err2"
grep -q "partial profile (parts of all 4 ranks) written to $cf_tmp/part.json" "$cf_tmp/err2" \
    || { cat "$cf_tmp/err2"; cf_fail "no partial profile of all 4 ranks"; }
"$CF_PYTHON" - "$cf_tmp/full.json" "$cf_tmp/part.json" <<'PY' || exit 1
import json, sys
full, part = (json.load(open(f)) for f in sys.argv[1:])
names = lambda p: sorted((c.get("user_name"), c["description"], c["size"]) for c in p["communicators"]
                         if c.get("user_name"))
# the two halves of the split, and the dup named on rank 0 alone, each with how it was made
ok = part["job"]["partial"] and not full["job"]["partial"] and names(part) == names(full) and \
    [(n, s) for n, _, s in names(full)] == [("halo <x>", 2), ("halo <x>", 2), ("solver", 4)] and \
    all(d for _, d, _ in names(full))
print("%s the partial profile names its communicators as the complete one: %s (complete: %s)" %
      ("ok  " if ok else "FAIL", names(part), names(full)))
sys.exit(0 if ok else 1)
PY
for v in 0:nan 1:inf 1:-inf 1:1e300; do
    COMMFIT_OUTPUT="$cf_tmp/off.json" COMMFIT_TEST_CLOCK_OFFSET=$v cf_mpirun 2 -- "$prog" finish 2> "$cf_tmp/err3" \
        || { cat "$cf_tmp/err3"; cf_fail "COMMFIT_TEST_CLOCK_OFFSET=$v: the job failed"; }
    n=$(grep -c "^commfit: COMMFIT_TEST_CLOCK_OFFSET='$v': '${v#*:}' is not a finite number of seconds within 1000000; ignored$" "$cf_tmp/err3")
    [ "$n" = 1 ] || { cat "$cf_tmp/err3"; cf_fail "COMMFIT_TEST_CLOCK_OFFSET=$v: $n lines refusing it, not 1"; }
    "$CF_PYTHON" - "$cf_tmp/off.json" "$v" <<'PY' || exit 1
import json, sys
p = json.load(open(sys.argv[1]))
ranks = sorted(r["rank"] for r in p["ranks"])
ar = sum(r["calls"] for r in p["records"] if r["op"] == "MPI_Allreduce")
ok = ranks == [0, 1] and ar == 12 and not p["job"]["partial"]
print("%s COMMFIT_TEST_CLOCK_OFFSET=%s refused: ranks %s, %d allreduces, partial %s" %
      ("ok  " if ok else "FAIL", sys.argv[2], ranks, ar, p["job"]["partial"]))
sys.exit(0 if ok else 1)
PY
done
