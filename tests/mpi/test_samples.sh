#!/bin/sh
# Samples that run out are reported: with sample buffers of 64 entries a
# ping-pong sweep chooses far more messages than fit, and the profile is
# partial with a reason naming the samples; with the default buffers it is
# complete.  Every size bin has its own first samples, and each record says
# how many of its calls the sampler considered and chose.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
for n in 64 default; do
    if [ $n = default ]; then unset COMMFIT_SAMPLES; else COMMFIT_SAMPLES=$n; export COMMFIT_SAMPLES; fi
    COMMFIT_OUTPUT="$cf_tmp/s$n.json" COMMFIT_SUMMARY=0 \
        cf_mpirun 2 -- "$CF_BUILDDIR/examples/pingpong" --min 1 --max 64KiB --iters 200 > /dev/null \
        || cf_fail "job with COMMFIT_SAMPLES=$n failed"
done
unset COMMFIT_SAMPLES
# collectives: thousands of instances on world, past the 4096 where the period grows
COMMFIT_OUTPUT="$cf_tmp/coll.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 2 -- "$CF_BUILDDIR/examples/coll_sweep" --op allreduce --min 4 --max 64KiB --iters 150 > /dev/null \
    || cf_fail "the collective sweep failed"
# rank 0 keeps fewer trace rows (COMMFIT_TRACE, read per rank) than the
# others: their reports to it carry no more than it has room for
mpmd() { # TRACE-OF-RANK-0 OUTPUT
    local prog="$CF_BUILDDIR/examples/pingpong" args=(--min 1 --max 4KiB --iters 100)
    if [ "$CF_MPI_FAMILY" = mpich ]; then
        "$CF_MPIRUN" -genv LD_PRELOAD "$COMMFIT_LIB" -genv COMMFIT_OUTPUT "$2" -genv COMMFIT_SUMMARY 0 \
            -n 1 -env COMMFIT_TRACE "$1" "$prog" "${args[@]}" : -n 1 "$prog" "${args[@]}"
    else
        local x=(-x LD_PRELOAD="$COMMFIT_LIB" -x COMMFIT_OUTPUT="$2" -x COMMFIT_SUMMARY=0) root=()
        [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
        "$CF_MPIRUN" "${root[@]}" --oversubscribe --bind-to none --mca btl self,vader,tcp --mca pml ob1 \
            -np 1 "${x[@]}" -x COMMFIT_TRACE="$1" "$prog" "${args[@]}" : -np 1 "${x[@]}" "$prog" "${args[@]}"
    fi
}
for t in 2 0; do
    mpmd $t "$cf_tmp/mpmd$t.json" > /dev/null || cf_fail "rank 0 with COMMFIT_TRACE=$t, the others at the default: job failed"
done
"$CF_PYTHON" - "$cf_tmp" <<'PY' || exit 1
import json, sys
from checks import check, done
for t in (2, 0):
    p = json.load(open("%s/mpmd%d.json" % (sys.argv[1], t)))
    s = p.get("samples") or {}
    per = [sum(1 for r in s.get("messages", []) if r[1] == k) for k in (0, 1)]
    check("rank 0 with COMMFIT_TRACE=%d: a profile with both clocks, at most %d message rows a rank" % (t, t),
          len(p["clock"]["ranks"]) == 2 and "messages" in s and per == [t, t] and p["sampling"]["messages_matched"] > 0,
          "rows per receiver %s, %d matched" % (per, p["sampling"]["messages_matched"]))
done()
PY
"$CF_PYTHON" - "$cf_tmp" <<'PY'
import json, sys
d = sys.argv[1]
from checks import check, done
small = json.load(open(d + "/s64.json"))
full = json.load(open(d + "/sdefault.json"))
j = small["job"]
why = j.get("partial_reasons", [])
lost = small["sampling"]["not_sampled_buffer_full"]
check("64 samples: partial", j["partial"] is True)
check("64 samples: one reason, naming the samples and their count",
      len(why) == 1 and why[0].startswith("samples ran out: %d calls" % lost) and "COMMFIT_SAMPLES=64" in why[0],
      "%r (not sampled: %d)" % (why, lost))
check("64 samples: calls were left unsampled", lost > 1000, "%d" % lost)
j = full["job"]
check("default samples: not partial", j["partial"] is False and j.get("partial_reasons") == [],
      "%r" % j.get("partial_reasons"))
check("default samples: nothing left unsampled", full["sampling"]["not_sampled_buffer_full"] == 0)
# 200 timed round trips and their warm-up per size: 2 ranks x 220 = 440 sends and receives
# per record, all eligible.  Streams per size: pings (219, the last one has a tag of its own,
# which rank 1 receives with MPI_ANY_TAG) and pongs (220); of each the first 64, then in each
# aligned block of 2P sequence numbers the two consecutive ones from the offset the mix of
# the block's first number gives, modulo 2P - 1 (splitmix64's finalizer, as the plugin): P is
# 16, and past 4096 at least the power of two at or below the number / 32
def mix(k):
    m = (1 << 64) - 1
    z = (k * 0x9E3779B97F4A7C15) & m
    z ^= z >> 29
    z = (z * 0xBF58476D1CE4E5B9) & m
    return z ^ (z >> 32)
def rule(k, every=16):
    if k < 64:
        return True
    p = every
    if k >= 4096:
        p = max(p, (1 << (k.bit_length() - 1)) // 32)
    w = 2 * p
    b = k - k % w
    return k - b - mix(b) % (w - 1) in (0, 1)
def pick(n):
    return sum(1 for k in range(n) if rule(k))
p2p = [r for r in full["records"] if r["op"] in ("MPI_Send", "MPI_Recv")]
bins = sorted(set(r["size_lo"] for r in p2p))
check("default samples: 17 size bins of sends and receives", len(p2p) == 34 and len(bins) == 17,
      "%d records, bins %s" % (len(p2p), bins))
# The blocking collectives on world: every call eligible, and of the N instances each rank
# made those of the rule, on both ranks alike; the trace's rows (the first ones a rank
# sampled) are those instances.
coll = json.load(open(d + "/coll.json"))
world = [c["id"] for c in coll["communicators"] if c.get("name") == "MPI_COMM_WORLD"][0]
cr = [r for r in coll["records"] if r["kind"] == "collective" and r["comm"] == world
      and r["op"] in ("MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Allgather")]
n = sum(r["calls"] for r in cr) // 2
want = 2 * pick(n)
got = sum(r.get("sample_selected", 0) for r in cr)
check("collectives: every call on world eligible", all(r.get("sample_eligible") == r["calls"] for r in cr),
      "%r" % [(r["op"], r["size_lo"], r["calls"], r.get("sample_eligible")) for r in cr if r.get("sample_eligible") != r["calls"]][:3])
check("collectives: %d instances a rank, past 4096, chosen by the rule on both ranks (%d)" % (n, want),
      n > 4096 and got == want, "selected %d, expected %d" % (got, want))
check("collectives: every chosen instance sampled on both ranks",
      coll["sampling"]["collective_calls_incomplete"] == 0 and coll["sampling"]["collective_calls"] == want,
      "%r" % coll["sampling"])
rows = [r for r in coll["samples"]["collectives"] if r[1] == world]
seqs = [r[2] for r in rows]
check("collectives: the trace's %d rows are instances the rule chose, past the first 64 in pairs" % len(rows),
      len(rows) > 128 and all(rule(k) for k in seqs) and sum(1 for k in seqs if k >= 64 and k + 1 in seqs) >= 8,
      "%s" % [k for k in seqs if not rule(k)][:5])
# A chosen message is timed when its receive was waiting for it, else
# counted as posted late: per record the split depends on the race, over
# the receives the sum is exact.
chosen_recv = timed_recv = 0
for r in p2p:
    per_rank = r["calls"] // 2
    chosen = pick(per_rank - 1) + pick(1) + pick(per_rank)
    n = r.get("transfer_s", {}).get("n", 0)
    if r["op"] == "MPI_Recv":
        chosen_recv += chosen
        timed_recv += n
    ok = r.get("sample_eligible") == r["calls"] and r.get("sample_selected") == chosen and n <= chosen
    if not ok or r is p2p[0]:
        check("%s %d B: eligible = calls, selected = first 64 + 1 in each block of 16 (by the mix) per stream, no more timed" % (r["op"], r["size_lo"]),
              ok, "calls %d, eligible %s, selected %s (expected %d), transfer_s.n %d" % (
                  r["calls"], r.get("sample_eligible"), r.get("sample_selected"), chosen, n))
late = full["sampling"]["messages_receive_posted_late"]
check("default samples: every chosen message timed or counted as posted late",
      timed_recv + late == chosen_recv and full["sampling"]["messages_matched"] == chosen_recv,
      "timed %d + late %d, chosen %d, matched %d" % (timed_recv, late, chosen_recv, full["sampling"]["messages_matched"]))
# with 64 entries the first stream takes them all, and later bins are chosen but not kept
first = min((r for r in small["records"] if r["op"] == "MPI_Recv"), key=lambda r: r["size_lo"])
check("64 samples: the first bin holds the paired samples",
      first.get("transfer_s", {}).get("n", 0) + small["sampling"]["messages_receive_posted_late"] == 128,
      "%r, %d posted late" % (first.get("transfer_s"), small["sampling"]["messages_receive_posted_late"]))
done()
PY
