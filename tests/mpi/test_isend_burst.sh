#!/bin/bash
# Sends in flight together that complete inside their post are each
# booked with their own bytes (tests/mpi/isend_burst.c: 10 iterations of
# 32 MPI_Isend of 8 .. 256 bytes, 42240 bytes in all, and their
# MPI_Irecv), under ob1 and under Open MPI's UCX PML, whose eager sends
# all return one shared handle of completed sends: the plugin must
# recognise it, or every send in flight on that handle is booked with the
# last one's size (54984 and 70376 bytes in two runs, where 42240 were
# sent; the bins of the larger sizes hold them).
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
prog="$CF_BUILDDIR/tests/mpi/isend_burst"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
check() { # PROFILE LABEL
    "$CF_PYTHON" - "$1" "$2" <<'PY' || cf_fail "$2: sends booked wrongly"
import json, sys
p, label = json.load(open(sys.argv[1])), sys.argv[2]
got = {}
for r in p["records"]:
    if r["op"] in ("MPI_Isend", "MPI_Irecv"):
        c, b = got.get(r["op"], (0, 0))
        got[r["op"]] = (c + r["calls"], b + r["bytes"])
want = {"MPI_Isend": (320, 42240), "MPI_Irecv": (320, 42240)}
bins = sorted((r["size_lo"], r["calls"]) for r in p["records"] if r["op"] == "MPI_Isend")
print("%s: %s (want %s); Isend bins %s" % (label, got, want, bins))
# 8..256 B in steps of 8, 10 iterations: 1, 2, 4, 8, 16 and 1 sizes in the bins from 8 B
want_bins = [(8, 10), (16, 20), (32, 40), (64, 80), (128, 160), (256, 10)]
sys.exit(0 if got == want and bins == want_bins else 1)
PY
}
COMMFIT_OUTPUT="$cf_tmp/ob1.json" COMMFIT_SUMMARY=0 "$CF_MPIRUN" "${root[@]}" --oversubscribe --bind-to none -np 2 \
    --mca pml ob1 -x LD_PRELOAD="$COMMFIT_LIB" -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY "$prog" > /dev/null ||
    cf_fail "isend_burst under ob1 failed"
check "$cf_tmp/ob1.json" ob1
UCX_PML=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any)
if "$CF_MPIRUN" "${root[@]}" --oversubscribe --bind-to none -np 2 "${UCX_PML[@]}" "$prog" 1 > /dev/null 2>&1; then
    COMMFIT_OUTPUT="$cf_tmp/ucx.json" COMMFIT_SUMMARY=0 "$CF_MPIRUN" "${root[@]}" --oversubscribe --bind-to none -np 2 \
        "${UCX_PML[@]}" -x LD_PRELOAD="$COMMFIT_LIB" -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY "$prog" > /dev/null ||
        cf_fail "isend_burst under the UCX PML failed"
    check "$cf_tmp/ucx.json" ucx
else
    echo "the UCX PML does not start here: its half is not run"
fi
cf_done
