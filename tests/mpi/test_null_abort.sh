#!/bin/bash
# MPI_Abort runs the modules' abort hooks from the list, in its order, on the
# aborting rank only: with the template module registered (libcommfit_null.so),
# rank 1 of 3 calling MPI_Abort(3) writes its spool part (the spill's hook,
# earlier in the list) and then says so from the null module's hook, once;
# ranks 0 and 2, killed by the runtime, run no hook; the merged profile names
# the abort.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
null_lib="$CF_BUILDDIR/.libs/libcommfit_null.so"
[ -f "$null_lib" ] || cf_fail "no $null_lib (make check builds it)"
d="$cf_tmp/abort"; mkdir -p "$d"
COMMFIT_LIB="$null_lib" COMMFIT_OUTPUT="$d/p.json" COMMFIT_SUMMARY=0 COMMFIT_VERBOSE=1 \
    cf_mpirun 3 --mca odls_base_sigkill_timeout 5 -- "$CF_BUILDDIR/tests/mpi/abend" abort "$d" > /dev/null 2> "$d/err" &&
    cf_fail "MPI_Abort did not end the job"
spill="commfit: rank 1: MPI_Abort before MPI_Finalize: \`commfit merge $d/p.parts\` makes the profile"
null="commfit: rank 1: the null module sees MPI_Abort (errorcode 3) after 1 threads"
"$CF_PYTHON" - "$d/err" "$spill" "$null" <<'PY' || exit 1
import sys
from checks import check, done
lines = open(sys.argv[1]).read().splitlines()
spill, null = sys.argv[2], sys.argv[3]
check("the null module's hook once, on rank 1", lines.count(null) == 1, "%d lines %r" % (lines.count(null), null))
hooks = [l for l in lines if "the null module sees MPI_Abort" in l]
check("no other rank's hook", hooks == [null], repr(hooks))
first = [i for i, l in enumerate(lines) if l.startswith(spill)]
check("the spill's hook first (the list's order)", len(first) == 1 and null in lines
      and first[0] < lines.index(null), "\n".join(lines[-8:]))
done()
PY
"$CF_BUILDDIR/tools/commfit" merge "$d/p.parts" 2> "$d/merge" || { cat "$d/err" "$d/merge"; cf_fail "commfit merge failed"; }
grep -q "rank 1 called MPI_Abort (errorcode 3)" "$d/p.json" || cf_fail "the abort is not among the merged profile's reasons"
echo "ok   the merged profile: rank 1 called MPI_Abort (errorcode 3)"
