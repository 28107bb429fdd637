#!/bin/sh
# commfit trace: every sampled instance of every rank becomes a slice on its
# rank's track, with the waiting part nested inside; every sampled message
# (at most COMMFIT_TRACE per receiving rank) an arrow from its send's post on
# the sender's message track to its receive on the receiver's.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
# rank 1 late by 20 ms at every allreduce (rank 0 at each broadcast): more than a busy machine's
# scheduler delays mostly are, and where they are not, a second,
# independent run
skew() {
    COMMFIT_OUTPUT="$cf_tmp/skew.json" COMMFIT_SUMMARY=0 \
        cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/wait_skew" 20000 8 || cf_fail "job failed"
    "$CF_BUILDDIR/tools/commfit" trace "$cf_tmp/skew.json" > "$cf_tmp/trace.json" || cf_fail "commfit trace failed"
    "$CF_PYTHON" - "$cf_tmp/trace.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
from checks import check, done
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
check("two named tracks per rank", sorted(names) == [0, 1, 2, 3], str(names))
ops = [e for e in ev if e["ph"] == "X" and e["cat"] == "mpi"]
# 8 allreduces and 2 bcasts on each of 2 ranks
check("slices", len(ops) == 20, str(len(ops)))
check("allreduce slices", sum(e["name"] == "MPI_Allreduce" for e in ops) == 16)
waits = [e for e in ev if e["ph"] == "X" and e["cat"] == "wait"]
inside = all(any(w["tid"] == o["tid"] and o["ts"] <= w["ts"] and w["ts"] + w["dur"] <= o["ts"] + o["dur"] + 1e-3
                 for o in ops) for w in waits)
check("every wait lies inside its operation", inside and len(waits) > 0, "%d waits" % len(waits))
# the waits inside the allreduces (rank 1 waits in the two broadcasts,
# where rank 0 is late)
ar = [o for o in ops if o["name"] == "MPI_Allreduce"]
def in_allreduce(w):
    return any(w["tid"] == o["tid"] and o["ts"] <= w["ts"] <= o["ts"] + o["dur"] for o in ar)
r0 = sum(w["dur"] for w in waits if w["tid"] == 0 and in_allreduce(w))
r1 = sum(w["dur"] for w in waits if w["tid"] == 1 and in_allreduce(w))
check("rank 0 waits for the late rank 1 at allreduce", r0 > r1, "%.0f us vs %.0f us" % (r0, r1))
done()
PY
}
skew || { echo "a second, independent run"; skew; } || exit 1
# messages: 200 round trips of each of 4 sizes, the first 16 per receiver kept
COMMFIT_OUTPUT="$cf_tmp/pp.json" COMMFIT_SUMMARY=0 COMMFIT_TRACE=16 \
    cf_mpirun 2 -- "$CF_BUILDDIR/examples/pingpong" --min 8 --max 64 --iters 200 --warmup 2 > /dev/null \
    || cf_fail "ping-pong failed"
"$CF_BUILDDIR/tools/commfit" trace -o "$cf_tmp/pp.trace.json" "$cf_tmp/pp.json" || cf_fail "commfit trace failed"
"$CF_PYTHON" - "$cf_tmp/pp.json" "$cf_tmp/pp.trace.json" <<'PY' || exit 1
import json, sys
prof = json.load(open(sys.argv[1]))
ev = json.load(open(sys.argv[2]))["traceEvents"]
from checks import check, done
cols = prof["samples"]["message_columns"]
rows = [dict(zip(cols, r)) for r in prof["samples"]["messages"]]
per_dst = {d: sum(r["dst"] == d for r in rows) for d in (0, 1)}
check("16 sampled messages per receiving rank", per_dst == {0: 16, 1: 16}, str(per_dst))
check("each from the other rank, sent by MPI_Send, received by MPI_Recv",
      all(r["src"] == 1 - r["dst"] and r["send_op"] == "MPI_Send" and r["recv_op"] == "MPI_Recv" for r in rows))
check("in the sweep's sizes", all(r["size_lo"] in (8, 16, 32, 64) for r in rows))
check("receive completes after its send's post and its own post",
      all(r["recv_done_s"] >= r["send_post_s"] - 1e-6 and r["recv_done_s"] >= r["recv_post_s"] for r in rows))
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
ends = {e["id"]: e for e in ev if e["ph"] == "f"}
check("one arrow per message", len(starts) == 32 and sorted(starts) == sorted(ends), "%d arrows" % len(starts))
check("arrows run from the sender's message track to the receiver's",
      all(starts[i]["tid"] == 2 + (1 - (ends[i]["tid"] - 2)) for i in starts))
recvs = [e for e in ev if e["ph"] == "X" and e["cat"] == "p2p" and e["name"].startswith("MPI_Recv from")]
inside = all(any(x["tid"] == ends[i]["tid"] and x["ts"] <= ends[i]["ts"] <= x["ts"] + x["dur"] for x in recvs)
             for i in ends)
check("every arrow ends inside its receive's slice", inside and len(recvs) == 32, "%d receives" % len(recvs))
done()
PY
"$CF_BUILDDIR/tools/commfit" trace /nonexistent.json 2> "$cf_tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "nonexistent.json" "$cf_tmp/err" || cf_fail "missing profile: want exit 2 and a message"
echo "ok   a missing profile: exit 2, $(cat "$cf_tmp/err")"
