#!/bin/bash
# The template module (plugin/cf_null.c), registered in the list of modules
# of a test build of the plugin (libcommfit_null.so): its section is in
# the profile, under its name and last (the list's order), with what its
# hooks saw: the ranks that ran its init, the threads that registered,
# the calls their tables hold; its end hook ran on every rank.  The plugin
# itself has no such section, and the rest of the profile has the same keys.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
null_lib="$CF_BUILDDIR/.libs/libcommfit_null.so"
[ -f "$null_lib" ] || cf_fail "no $null_lib (make check builds it)"
prog="$CF_BUILDDIR/tests/mpi/threads"
COMMFIT_LIB="$null_lib" COMMFIT_OUTPUT="$cf_tmp/null.json" COMMFIT_SUMMARY=0 COMMFIT_VERBOSE=1 \
    cf_mpirun 2 -- "$prog" 3 100 > "$cf_tmp/null.out" 2> "$cf_tmp/null.err"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { cat "$cf_tmp/null.err"; cf_fail "job with the null module failed ($rc)"; }
COMMFIT_OUTPUT="$cf_tmp/plain.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$prog" 3 100 > /dev/null ||
    cf_fail "job with the plugin failed"
"$CF_PYTHON" - "$cf_tmp/null.json" "$cf_tmp/plain.json" "$cf_tmp/null.err" <<'PY' || exit 1
import json, sys
from checks import check, done
p = json.load(open(sys.argv[1]))
plain = json.load(open(sys.argv[2]))
err = open(sys.argv[3]).read()
sec = p.get("null")
check("section", isinstance(sec, dict), "null: %r" % (sec,))
sec = sec or {}
check("ranks", sec.get("ranks") == 2, "%r, want 2 (its init on each rank)" % sec.get("ranks"))
check("threads", sec.get("threads") == 6, "%r, want 6 (3 threads calling MPI on each of 2 ranks)" % sec.get("threads"))
calls = sum(r["calls"] for r in p["records"])
# each thread: 100 x (MPI_Irecv, MPI_Isend, MPI_Waitall)
check("calls", sec.get("calls") == calls == 2 * 3 * 100 * 3,
      "%r in the section, %d in the records, want %d" % (sec.get("calls"), calls, 2 * 3 * 100 * 3))
keys = list(p)
check("last", keys[-1] == "null", "the profile's keys end with %r" % keys[-3:])
check("same keys", keys[:-1] == list(plain), "%r vs the plugin's %r" % (keys[:-1], list(plain)))
check("not in the plugin", "null" not in plain, "")
for rank in (0, 1):
    line = "commfit: rank %d: the null module ends after 3 threads" % rank
    check("fini on rank %d" % rank, line in err.splitlines(), line)
done()
PY
