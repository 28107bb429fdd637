#!/usr/bin/env python3
"""Checks numbers in a commfit profile against what a test program did.

usage: check_profile.py CHECK PROFILE [ARGS...]
  known_calls PROFILE NP     the calls of tests/mpi/known_calls.c
  corner_cases PROFILE NP    the calls of tests/mpi/corner_cases.c
  threads PROFILE NP T K     T threads per rank, K exchanges each
  wait_skew PROFILE NP D_US  tests/mpi/wait_skew.c: rank r late by r*D before allreduce
  matching PROFILE NP        tests/mpi/matching.c: every message paired
  clock PROFILE RANK SECONDS the offset injected on RANK was measured
  pingpong PROFILE CSV ITERS WARMUP  examples/pingpong, every message sampled and traced: calls,
                             bytes, round trips in order, within the program's own times
  pcontrol PROFILE NP        tests/mpi/pcontrol.c: recording switched, nested regions
  failed_calls PROFILE       tests/mpi/failed_calls.c: failed calls are not traffic
  many_requests PROFILE N    tests/mpi/many_requests.c: one Waitall over N requests per rank
  poll_reuse PROFILE         tests/mpi/poll_reuse.c: polled requests that change between polls
  abend PROFILE DIR NP LOOSE tests/mpi/abend.c: the calls of each rank's tally in DIR, up to its end;
                             LOOSE: the loop's last call may be recorded and not yet tallied
  tally PROFILE NP TALLY [REPORT]  tests/mpi/all_calls.c, fortran_calls.F90: calls and bytes per
                             operation against the TALLY lines the program printed; REPORT:
                             commfit report --format json of it (file I/O kept apart)
"""
import json
import sys
from collections import defaultdict

failures = 0
checks = 0


def expect(what, got, want):
    global failures, checks
    checks += 1
    if got != want:
        failures += 1
        print("FAIL %s: got %r, want %r" % (what, got, want))
    else:
        print("ok   %s = %r" % (what, got))


def load(path):
    with open(path) as f:
        prof = json.load(f)
    expect("format", prof["format"], "commfit-profile")
    expect("version", prof["version"], 1)
    return prof


def totals(prof, by=("op", "comm")):
    """(op, comm label) -> [calls, bytes] over the MPI-layer records."""
    label = {c["id"]: c["label"] for c in prof["communicators"]}
    t = defaultdict(lambda: [0, 0])
    for r in prof["records"]:
        if r["layer"] != "mpi":
            continue
        key = tuple(label.get(r["comm"], "-") if k == "comm" else r.get(k) for k in by)
        t[key][0] += r["calls"]
        t[key][1] += r["bytes"]
        assert r["size_lo"] <= r["size_hi"], r
        if r["calls"]:
            mean = r["bytes"] / r["calls"]
            assert r["size_lo"] <= mean <= r["size_hi"] + 1, r
            ts = r["time_s"]
            assert 0 <= ts["min"] <= ts["p50"] <= ts["p99"] <= ts["max"] + 1e-12, r
            assert ts["min"] * r["calls"] <= ts["sum"] * (1 + 1e-9) + 1e-12, r
    return t


def check_calls(t, op, comm, calls, nbytes):
    got = t.get((op, comm), [0, 0])
    expect("%s on %s: calls" % (op, comm), got[0], calls)
    expect("%s on %s: bytes" % (op, comm), got[1], nbytes)


def known_calls(prof, p, nodes=1):
    expect("job.ranks", prof["job"]["ranks"], p)
    expect("job.partial", prof["job"]["partial"], False)
    # rank 0's executable, and no framework whose fusion setting the advice would name
    expect("job.program", prof["job"].get("program"), "known_calls")
    expect("job.frameworks", prof["job"].get("frameworks"), [])
    expect("ranks listed", sorted(r["rank"] for r in prof["ranks"]), list(range(p)))
    comms = prof["communicators"]
    world = [c for c in comms if c["label"] == "world"]
    expect("world size", world[0]["size"] if world else None, p)
    t = totals(prof)
    check_calls(t, "MPI_Send", "world", 11, 10 * 1000 + 256)
    check_calls(t, "MPI_Recv", "world", 11, 10 * 1000 + 256)
    check_calls(t, "MPI_Probe", "world", 1, 256)
    check_calls(t, "MPI_Isend", "world", 10, 10 * 4096)
    check_calls(t, "MPI_Irecv", "world", 10, 10 * 4096)
    got = t.get(("MPI_Waitall", "-"), [0, 0])
    expect("MPI_Waitall calls", got[0], 10)
    check("MPI_Waitall bytes: the receives, and the sends still in flight", 10 * 4096 <= got[1] <= 20 * 4096, str(got[1]))
    check_calls(t, "MPI_Send_init", "world", 4, 4 * 512)
    check_calls(t, "MPI_Recv_init", "world", 4, 4 * 512)
    check_calls(t, "MPI_Start", "-", 8, 0)
    check_calls(t, "MPI_Sendrecv", "world", p, 256 * p)
    check_calls(t, "MPI_Allreduce", "world", 7 * p, 7 * p * 8192)
    check_calls(t, "MPI_Allgather", "world", 3 * p, 3 * p * p * 400)
    check_calls(t, "MPI_Alltoall", "world", 2 * p, 2 * p * p * 128)
    check_calls(t, "MPI_Bcast", "world", 5 * p, 5 * p * 3000)
    check_calls(t, "MPI_Gather", "world", p, p * p * 40)
    check_calls(t, "MPI_Reduce_scatter_block", "world", p, p * p * 32)
    check_calls(t, "MPI_Barrier", "world", 3 * p, 0)
    check_calls(t, "MPI_Iallreduce", "world", 3 * p, 3 * p * 4096)
    # the split: one communicator per parity, each with its own id
    halves = [c for c in comms if c["name"] == "MPI_Comm_split"]
    expect("split communicators", sorted(c["size"] for c in halves), sorted([(p + 1) // 2, p // 2]))
    for c in halves:
        check_calls(t, "MPI_Allreduce", c["label"], 4 * c["size"], 4 * c["size"] * 64)
    dups = [c for c in comms if c["name"] == "MPI_Comm_dup"]
    expect("dup communicators", [c["size"] for c in dups], [p])
    if dups:
        expect("dup id differs from world", dups[0]["id"] != world[0]["id"], True)
        check_calls(t, "MPI_Allreduce", dups[0]["label"], p, p * 16)
    # per-size bins: the allreduce of 8192 bytes sits in [4096, 8191]... no: [8192, 16383]
    bins = [(r["size_lo"], r["size_hi"]) for r in prof["records"]
            if r["op"] == "MPI_Allreduce" and r["comm"] == world[0]["id"]]
    expect("allreduce bins", sorted(set(bins)), [(8192, 16383)])
    paths = {r["path"] for r in prof["records"] if r["op"] == "MPI_Send"}
    expect("send path (%d node%s)" % (nodes, "s" * (nodes > 1)), paths, {"intra-node" if nodes == 1 else "inter-node"})


def corner_cases(prof, p):
    t = totals(prof, by=("op", "comm", "path"))
    expect("job.partial", prof["job"]["partial"], False)
    # MPI_PROC_NULL: counted, no payload, path self
    expect("Send to MPI_PROC_NULL", t.get(("MPI_Send", "world", "self")), [p, 0])
    expect("Recv from MPI_PROC_NULL", t.get(("MPI_Recv", "world", "self")), [p, 0])
    t2 = totals(prof)
    # rank 0 sends: 2 of count 0, a derived type of 32 bytes, 40 bytes to an
    # ANY_SOURCE receive posted for 4000, 56 bytes to an Irecv posted for 8000
    # and 32 bytes to a receive that rank 1 freed before they came
    check_calls(t2, "MPI_Send", "world", p + 6, 32 + 40 + 56 + 32)
    check_calls(t2, "MPI_Recv", "world", p + 7, 32 + 40 + 3 * 65536)
    # a nonblocking send the program never completes is still a call: rank
    # 0's two sends of 64 KiB (one freed while active, one pending at
    # MPI_Finalize) with their bytes, and its persistent send started after
    # a pause and left pending; rank 1's freed receives are left out (what
    # arrived is not known; one cancelled), as is the exchange of ranks 0
    # and 1 completed while recording was paused (its completions unseen),
    # which is not counted as unfinished either; their exchange posted
    # before a pause and completed after it is recorded as any other
    check_calls(t2, "MPI_Irecv", "world", p + 1 + 2, 56 + 2 * 65536)
    check_calls(t2, "MPI_Isend", "world", 2 + 2, 4 * 65536)
    check_calls(t2, "MPI_Send_init", "world", 1, 65536)
    expect("job.unfinished_requests", prof["job"].get("unfinished_requests"), 5)
    check_calls(t2, "MPI_Allreduce", "world", 2 * p, 2 * p * 80)
    # one with MPI_IN_PLACE and MPI_DATATYPE_NULL, one with an invalid type
    # where it is ignored, one of the checksums
    check_calls(t2, "MPI_Gather", "world", 3 * p, 3 * p * p * 8)
    check_calls(t2, "MPI_Scatter", "world", 2 * p, 2 * p * p * 8)
    # MPI_PROC_NULL on both sides of a sendrecv, and a nonblocking receive from it
    expect("Sendrecv with MPI_PROC_NULL", t.get(("MPI_Sendrecv", "world", "self")), [p, 0])
    expect("Irecv from MPI_PROC_NULL", t.get(("MPI_Irecv", "world", "self")), [p, 0])
    check_calls(t2, "MPI_Alltoall", "world", p, p * p * 4)
    check_calls(t2, "MPI_Allgatherv", "world", p, p * sum(range(1, p + 1)) * 4)
    check_calls(t2, "MPI_Bcast", "world", p, 0)


def threads(prof, p, nt, k):
    t = totals(prof)
    expect("job.partial", prof["job"]["partial"], False)
    check_calls(t, "MPI_Isend", "world", p * nt * k, p * nt * k * 64)
    check_calls(t, "MPI_Irecv", "world", p * nt * k, p * nt * k * 64)
    # a send that completes inside MPI_Isend is recorded there (Open MPI then
    # returns a shared complete request), so Waitall completes 64 or 128 bytes
    got = t.get(("MPI_Waitall", "-"), [0, 0])
    expect("MPI_Waitall calls", got[0], p * nt * k)
    check("MPI_Waitall bytes between the receives' and all", p * nt * k * 64 <= got[1] <= p * nt * k * 128, str(got[1]))


def check(what, ok, detail=""):
    global failures, checks
    checks += 1
    if not ok:
        failures += 1
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail else ""))


def wait_skew(prof, p, d_us):
    d = d_us * 1e-6
    world = [c["id"] for c in prof["communicators"] if c["label"] == "world"][0]
    ar = [r for r in prof["records"] if r["op"] == "MPI_Allreduce" and r["comm"] == world]
    wait = sum(r["wait_s"] for r in ar)
    n = sum(r.get("transfer_s", {}).get("n", 0) for r in ar)
    expect("allreduce instances sampled on every rank", n, sum(r["calls"] for r in ar))
    # rank r waits (p-1-r) D: the mean wait per call is D (p-1)/2.  A busy
    # machine can only make the late rank later, never earlier (beside two
    # busy loops, 7 times that); a clock off by the injected offset would
    # add half of it to every call's mean wait, twice the bound's margin
    mean_wait = wait / max(1, n)
    want = d * (p - 1) / 2
    hi = max(10 * want, want + prof["clock"]["max_abs_offset_s"] / 4)
    check("mean wait per call between 0.7 D(p-1)/2 = %.0f us and %.0f us" % (0.7 * want * 1e6, hi * 1e6),
          0.7 * want < mean_wait < hi, "%.0f us" % (mean_wait * 1e6))
    # Wait and transfer split each call's duration: with every call sampled,
    # their sums are the durations' sum, so what is counted as waiting is not
    # counted again as transfer (that would add the whole wait, D/2 a call).
    # The split is on the synchronized clock, its ticks scaled by the rate
    # over the whole run; durations by the rate of a 20 ms calibration at
    # start.  The two rates differ by 1e-5 to 5e-5 here (beside a load too):
    # 0.2 % of the durations is the slack (2.4 ms of the 1.2 s of a size
    # beside a load), against at least 0.7 D/2 a call (35 ms for 20 calls)
    # were the wait counted again.  (How much
    # of a duration is transfer is the machine's: beside a CPU load, a 512 kB
    # all-reduce waits for a core at each of its fragments, tens of ms.)
    drift = prof["clock"]["max_drift"]
    for r in ar:
        x, t = r["transfer_s"]["sum"], r["time_s"]["sum"]
        check("%d B: wait + transfer = duration (wait not counted as transfer)" % r["size_lo"],
              abs(r["wait_s"] + x - t) <= 1e-6 * r["calls"] + (2e-3 + drift) * t,
              "wait %.6f s + transfer %.6f s, duration %.6f s" % (r["wait_s"], x, t))
    late = [l for l in prof["late_arrivals"] if l["comm"] == world][0]
    last = max(late["last"], key=lambda x: x["count"])
    # the bcasts, a fifth of the instances, have the root (rank 0) last
    check("rank %d arrives last most often" % (p - 1), last["rank"] == p - 1 and last["count"] >= 0.7 * late["instances"],
          str(late["last"]))
    # bcast: rank 0 (the root) is late by D, everyone else waits for it
    bc = [r for r in prof["records"] if r["op"] == "MPI_Bcast" and r["comm"] == world]
    bwait = sum(r["wait_s"] for r in bc)
    bn = sum(r["calls"] for r in bc)
    check("bcast non-roots wait for the late root", bwait > 0.6 * d * (p - 1) / p * bn,
          "mean wait %.0f us per call" % (bwait / max(1, bn) * 1e6))
    ranks = sorted(prof["ranks"], key=lambda r: r["rank"])
    check("rank 0 waits more than rank %d" % (p - 1), ranks[0]["wait_s"] > ranks[-1]["wait_s"],
          ", ".join("%d: %.2f ms" % (r["rank"], r["wait_s"] * 1e3) for r in ranks))


def matching(prof, p):
    s = prof["sampling"]
    # 6 + 2 + 3 messages from 0 to 1, and p in the ring
    expect("messages matched", s["messages_matched"], 11 + p)
    expect("messages unmatched", s["messages_unmatched"], 0)
    # Every matched message is either timed (its receive was waiting) or
    # counted as posted late; which one depends on the race, the sum not.
    recv = [r for r in prof["records"] if r["op"] in ("MPI_Recv", "MPI_Irecv", "MPI_Sendrecv")]
    timed = sum(r.get("transfer_s", {}).get("n", 0) for r in recv)
    expect("messages timed or posted late", timed + s["messages_receive_posted_late"], 11 + p)


def clock(prof, rank, seconds):
    """The offset injected on RANK, recovered within the error the profile
    states for it: a bound, not an estimate (half the best round trip down
    the tree, on CLOCK_MONOTONIC itself, plus the tick/clock pairs' half
    brackets), so nothing is added to it but the rounding of ns timestamps
    in doubles (an ulp of 2 ns at 10^16 ns, four months of uptime)."""
    c = prof["clock"]
    r = [x for x in c["ranks"] if x["rank"] == rank][0]
    err, mine = c["est_error_s"], r["error_s"]
    miss = max(abs(r["offset_init_s"] + seconds), abs(r["offset_final_s"] + seconds))
    check("offset of rank %d recovered within its stated error: %g s injected" % (rank, seconds),
          miss <= mine + 1e-8,
          "measured %.9f / %.9f s, off by %.3f us, stated error %.3f us" %
          (r["offset_init_s"], r["offset_final_s"], miss * 1e6, mine * 1e6))
    # a measured round trip (never 0), far below the offset
    check("stated error measured, far below the offset", 0 < mine <= err < seconds / 10,
          "%.3f us (largest of any rank %.3f us)" % (mine * 1e6, err * 1e6))


def pp_streams(prof, size):
    """The sweep's round trips at SIZE from the trace, in order: (ping, pong)
    pairs of message rows as dicts; the last ping has a tag of its own."""
    cols = prof["samples"]["message_columns"]
    rows = [dict(zip(cols, m)) for m in prof["samples"]["messages"] if m[cols.index("size_lo")] == size]
    def stream(src, tags):
        return sorted((m for m in rows if m["src"] == src and m["tag"] in tags), key=lambda m: m["send_post_s"])
    pings, pongs = stream(0, (1,)) + stream(0, (2,)), stream(1, (3,))
    return rows, list(zip(pings, pongs)) if len(pings) == len(pongs) else []


def pp_order(pairs, e):
    """Violations of the order a round trip has in true time: each receive
    ends after its send began (across ranks: within the clocks' error E),
    rank 1 sends the pong after its receive of the ping ended, and rank 0
    the next ping after its receive of the pong (one rank's own clock: up to
    the 0.1 ns the trace prints)."""
    bad = []
    for k, (ping, pong) in enumerate(pairs):
        nxt = pairs[k + 1][0]["send_post_s"] if k + 1 < len(pairs) else float("inf")
        for what, a, b, tol in (("ping sent before received", ping["send_post_s"], ping["recv_done_s"], e),
                                ("pong sent after the ping arrived", ping["recv_done_s"], pong["send_post_s"], 1e-9),
                                ("pong sent before received", pong["send_post_s"], pong["recv_done_s"], e),
                                ("next ping after the pong", pong["recv_done_s"], nxt, 1e-9),
                                ("receives posted before they end", max(ping["recv_post_s"] - ping["recv_done_s"],
                                                                        pong["recv_post_s"] - pong["recv_done_s"]), 0,
                                 1e-9)):
            if a > b + tol:
                bad.append("%d: %s by %.3f us" % (k, what, (a - b) * 1e6))
    return bad


def median(v):
    v = sorted(v)
    n = len(v)
    return (v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])) if n else float("nan")


def pp_size(prof, size, half, iters, warmup, e):
    """One size of the sweep: its records, its round trips in the trace, and
    its timed messages against the record's one-way time."""
    n = 2 * (warmup + iters)  # per op: each rank sends and receives once a round trip
    recs = {op: [r for r in prof["records"] if r["op"] == op and r["size_lo"] <= size <= r["size_hi"]]
            for op in ("MPI_Send", "MPI_Recv")}
    for op, rs in recs.items():
        expect("%d B: %s records" % (size, op), [(r["size_lo"], r["size_hi"], r["calls"], r["bytes"]) for r in rs],
               [(size, 2 * size - 1, n, n * size)])
    rows, pairs = pp_streams(prof, size)
    expect("%d B: messages traced, each sampled (COMMFIT_SAMPLE_EVERY=1)" % size,
           [len(rows), len(pairs)] + [r["sample_selected"] for r in recs["MPI_Recv"]], [n, n // 2, n])
    bad = pp_order(pairs, e)
    check("%d B: every round trip in order on the synchronized clocks (error %.3f us)" % (size, e * 1e6),
          not bad, "; ".join(bad[:3]))
    # the plugin's view of a round trip, rank 0's ping sent to its pong
    # received, lies inside the program's MPI_Wtime pair around it, so the
    # medians over the timed round trips keep that order, whatever the load
    # (slack: the 20 ms rate calibration of the plugin's ticks, and the
    # CSV's 1 ns)
    rt = median(p[1]["recv_done_s"] - p[0]["send_post_s"] for p in pairs[warmup:])
    check("%d B: the plugin's median round trip within the program's" % size, rt <= 2 * half * (1 + 2e-3) + 2e-9,
          "%.3f us, program %.3f us" % (rt * 1e6, 2 * half * 1e6))
    # one-way times go to the records only for receives already waiting
    timed = sorted(max(0.0, m["recv_done_s"] - m["send_post_s"]) for m in rows if not m["receive_late"])
    xfer = [r.get("transfer_s", {"n": 0}) for r in recs["MPI_Send"] + recs["MPI_Recv"]]
    expect("%d B: messages timed in both records (the receive posted first)" % size,
           [x["n"] for x in xfer], [len(timed)] * len(xfer))
    if timed:
        # the record's median is a histogram bucket's midpoint, 8 buckets
        # per power of two (<= 6.25 % wide), of ns
        lo, hi = timed[max(0, (len(timed) - 1) // 2 - 1)], timed[min(len(timed) - 1, len(timed) // 2 + 1)]
        p50 = xfer[0]["p50"]
        check("%d B: the records' one-way p50 is the median of the timed messages" % size,
              all(x["p50"] == p50 for x in xfer) and lo / 1.0625 - 2e-9 <= p50 <= hi * 1.0625 + 2e-9,
              "%.3f us, messages %.3f..%.3f us" % (p50 * 1e6, lo * 1e6, hi * 1e6))
    return len(timed), xfer[0].get("p50") if timed else None


def pingpong(prof, csv_path, iters, warmup):
    """examples/pingpong --iters ITERS --warmup WARMUP, every message sampled
    and traced, rank 1's clock off by 0.25 s: each size's calls, bytes and
    messages, every round trip in order on the synchronized clocks, and the
    plugin's round trips within the program's own.  How close a one-way
    time comes to the half round trip is the machine's (beside two busy
    loops, a 2 B half round trip of 2338 us against a 0.61 us one-way p50):
    printed, not held."""
    import csv
    iters, warmup = int(iters), int(warmup)
    rows = list(csv.DictReader(open(csv_path)))
    expect("sizes swept", [int(r["bytes"]) for r in rows], [1 << k for k in range(21)])
    expect("timed round trips per size", sorted({int(r["iters"]) for r in rows}), [iters])
    c = prof["clock"]
    err = {x["rank"]: x["error_s"] for x in c["ranks"]}
    e = err[0] + err[1] + 1e-8
    s = prof["sampling"]
    n = 2 * (warmup + iters) * len(rows)
    late = sum(m[prof["samples"]["message_columns"].index("receive_late")] for m in prof["samples"]["messages"])
    expect("messages matched, unmatched, lost", [s["messages_matched"], s["messages_unmatched"],
                                                 s["not_sampled_buffer_full"]], [n, 0, 0])
    expect("messages posted late, as traced", s["messages_receive_posted_late"], late)
    for row in rows:
        size, half = int(row["bytes"]), float(row["half_rtt_us"]) * 1e-6
        timed, p50 = pp_size(prof, size, half, iters, warmup, e)
        print("     %9d B: half round trip %9.2f us, one-way p50 %s (%d timed)" %
              (size, half * 1e6, "%9.2f us" % (p50 * 1e6) if p50 is not None else "     none", timed))


def pcontrol(prof, p):
    expect("regions", prof["regions"], ["step", "step/exchange"])
    expect("region entries", prof["region_entries"], {"step": 3, "step/exchange": 3})
    t = totals(prof, by=("op", "region"))
    # 5 before MPI_Pcontrol(0), none of the 7 after it, 3 x 2 in regions, 1 at the end; then
    # paused again, 1 not recorded, and 1 after the resume that had a stray string for a name
    expect("allreduce outside regions", t.get(("MPI_Allreduce", None)), [7 * p, 7 * p * 8])
    expect("allreduce in step/exchange", t.get(("MPI_Allreduce", "step/exchange")), [6 * p, 6 * p * 8])
    expect("barrier in step", t.get(("MPI_Barrier", "step")), [3 * p, 0])
    # every instance is among a stream's first 64, which are all sampled: those after a
    # pause too, whose numbers moved on while it lasted
    coll = sum(r["calls"] for r in prof["records"] if r["kind"] == "collective")
    expect("collective instances recorded and sampled", [len(prof["samples"]["collectives"]), coll], [coll, 16 * p])


def mpi_records(prof, op):
    return [r for r in prof["records"] if r["layer"] == "mpi" and r["op"] == op]


def failed_calls(prof):
    for op, calls in (("MPI_Send", 1), ("MPI_Recv", 1), ("MPI_Isend", 0), ("MPI_Bcast", 0)):
        r = mpi_records(prof, op)
        expect("%s calls recorded" % op, sum(x["calls"] for x in r), calls)
        expect("%s bytes" % op, sum(x["bytes"] for x in r), 4 * calls)
    expect("MPI records on communicator 0", [r["op"] for r in prof["records"] if r["layer"] == "mpi" and r.get("comm") == 0], [])
    expect("failed calls", prof["job"].get("failed_calls"), 10)
    got = sorted((f["op"], f["class"], f["calls"]) for f in prof.get("failed_calls", []))
    expect("failed calls by operation and class", got,
           [("MPI_Bcast", "MPI_ERR_COMM", 2), ("MPI_Bcast", "MPI_ERR_ROOT", 2),
            ("MPI_Isend", "MPI_ERR_RANK", 2), ("MPI_Recv", "MPI_ERR_RANK", 1), ("MPI_Send", "MPI_ERR_RANK", 3)])


def many_requests(prof, n):
    w = mpi_records(prof, "MPI_Waitall")
    expect("MPI_Waitall calls", sum(r["calls"] for r in w), 2)
    # the receives' bytes all complete there; of the sends, those Open MPI
    # finished inside MPI_Isend (its shared completed request) were booked at
    # the post, so the senders' Waitall completes up to as many more
    b = sum(r["bytes"] for r in w)
    check("MPI_Waitall completed the %d receives' %d bytes and up to as many of the sends'" % (n, 4 * n),
          4 * n < b <= 8 * n, str(b))
    for op in ("MPI_Isend", "MPI_Irecv"):
        r = mpi_records(prof, op)
        expect("%s calls" % op, sum(x["calls"] for x in r), n)
        expect("%s bytes" % op, sum(x["bytes"] for x in r), 4 * n)
    expect("partial", prof["job"]["partial"], False)


def poll_reuse(prof):
    """Each receive booked once, at its own size, however its polls went: a
    place reused by a new receive, a persistent one started again, one
    cancelled between polls (no traffic)."""
    expect("partial", prof["job"]["partial"], False)
    t = totals(prof)
    check_calls(t, "MPI_Irecv", "world", 15, 8 * 1000 + 2 * 2000 + 3000 + 4 * 1200)
    check_calls(t, "MPI_Recv_init", "world", 2, 2 * 500)
    # the second start follows the first's completion by a second: timed from its own start
    ri = mpi_records(prof, "MPI_Recv_init")
    worst = max((r["time_s"]["max"] for r in ri), default=None)
    check("MPI_Recv_init: each start timed from itself (under 0.9 s)", worst is not None and worst < 0.9, str(worst))
    check_calls(t, "MPI_Send", "world", 24, 20800 + 7 * 4)
    check_calls(t, "MPI_Recv", "world", 7, 7 * 4)
    # each record (a size bin) holds exactly the receives of its sizes, with their bytes
    sizes = [1000] * 8 + [2000] * 2 + [3000] + [1200] * 4
    for r in mpi_records(prof, "MPI_Irecv"):
        mine = [x for x in sizes if r["size_lo"] <= x <= r["size_hi"]]
        expect("MPI_Irecv of %d to %d B: calls, bytes" % (r["size_lo"], r["size_hi"]),
               (r["calls"], r["bytes"]), (len(mine), sum(mine)))
    polls = sum(r["calls"] for r in mpi_records(prof, "MPI_Testall"))
    check("MPI_Testall polls recorded (at least the 8 + 2 + 2 + 1 + 1 that find requests pending)",
          polls >= 14, str(polls))


def abend(prof, d, p, loose):
    """Exact calls of the ranks that left records, against their own tallies;
    the loop's allreduce within 1 per rank when LOOSE (killed in the loop)."""
    import struct
    tally = {}
    for r in range(p):
        with open("%s/tally.%d" % (d, r), "rb") as f:
            v = struct.unpack("9q", f.read(72))
        tally[r] = dict(zip(("pid", "phase", "allreduce", "bcast", "send", "recv", "barrier", "region", "loop"), v))
    expect("job.ranks", prof["job"]["ranks"], p)
    expect("job.partial", prof["job"]["partial"], True)
    have = sorted(r["rank"] for r in prof["ranks"])
    # rank 0's part names the program, as a finished job's profile does; not
    # the frameworks, which a process may load after MPI_Init
    expect("job.program", prof["job"].get("program"), "abend" if 0 in have else None)
    expect("job.frameworks", prof["job"].get("frameworks"), None)
    # and its send freed while active, booked and counted
    expect("MPI_Isend freed while active", sum(r["calls"] for r in prof["records"] if r["op"] == "MPI_Isend"),
           1 if 0 in have else 0)
    expect("job.unfinished_requests", prof["job"].get("unfinished_requests"), 1 if 0 in have else None)
    miss = p - len(have)
    got = defaultdict(int)
    for r in prof["records"]:
        if r["layer"] != "mpi":
            continue
        got[(r["op"], r.get("region"), r["size_lo"])] += r["calls"]
        expect("%s: ranks_missing" % r["op"], r.get("ranks_missing", 0), miss)
    def want(field, ranks=have):
        return sum(tally[r][field] for r in ranks)
    expect("MPI_Allreduce of 64 B", got[("MPI_Allreduce", None, 64)], want("allreduce"))
    expect("MPI_Bcast", got[("MPI_Bcast", None, 512)], want("bcast"))
    expect("MPI_Send", got[("MPI_Send", None, 256)], want("send"))
    expect("MPI_Recv", got[("MPI_Recv", None, 256)], want("recv"))
    expect("MPI_Barrier", got[("MPI_Barrier", None, 0)], want("barrier"))
    expect("MPI_Allreduce in region step", got[("MPI_Allreduce", "step", 8)], want("region"))
    loop, t = got[("MPI_Allreduce", None, 4)], want("loop")
    if loop:
        if loose:
            check("loop MPI_Allreduce: the tally %d, or up to 1 more per rank" % t, t <= loop <= t + len(have), str(loop))
        else:
            expect("loop MPI_Allreduce", loop, t)
    why = " | ".join(prof["job"]["partial_reasons"])
    check("partial_reasons say the job did not reach MPI_Finalize", "did not reach MPI_Finalize" in why, why)
    check("and that clocks are not synchronized", "clocks not synchronized" in why)
    expect("clock.synchronized", prof.get("clock", {}).get("synchronized"), False)
    return why


KIND_OF = [("MPI_File_", "io"), ("MPI_Win_", "sync"), ("MPI_Reduce_local", "local"),
           ("MPI_Mprobe", "probe"), ("MPI_Improbe", "probe"), ("MPI_Cancel", "other")]
RMA = {"MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap",
       "MPI_Rput", "MPI_Rget", "MPI_Raccumulate", "MPI_Rget_accumulate", "MPI_Put_c"}


def tally(prof, p, tally_path, report_path=None):
    want = defaultdict(lambda: [0, 0])
    ranks = set()
    with open(tally_path) as f:
        for line in f:
            if line.startswith("TALLY "):
                _, rank, op, calls, nbytes = line.split()
                ranks.add(int(rank))
                want[op][0] += int(calls)
                want[op][1] += int(nbytes)
    expect("ranks that printed a tally", sorted(ranks), list(range(p)))
    expect("job.partial", prof["job"]["partial"], False)
    got = totals(prof, by=("op",))
    for op in sorted(want):
        g = got.get((op,), [0, 0])
        expect("%s: calls" % op, g[0], want[op][0])
        expect("%s: bytes" % op, g[1], want[op][1])
    kinds = {(r["op"], r["kind"]) for r in prof["records"] if r["layer"] == "mpi"}
    for op, kind in sorted(kinds):
        if op not in want:
            continue
        expected = "rma" if op in RMA else next((k for pre, k in KIND_OF if op.startswith(pre)), kind)
        expect("%s: kind" % op, kind, expected)
    # the cancelled receive is no transfer: only the completed ones are MPI_Irecv records
    irecv = [r for r in prof["records"] if r["op"] == "MPI_Irecv"]
    expect("MPI_Irecv records of the completed receives only", sum(r["calls"] for r in irecv), want["MPI_Irecv"][0])
    # one-sided calls are classed by the path to their target, the file accesses as self
    for r in prof["records"]:
        if r["op"].startswith("MPI_File_") and r["path"] != "self":
            expect("%s: path" % r["op"], r["path"], "self")
        if r["op"].startswith("MPI_File_") and r["comm"] != 1:
            expect("%s: communicator (world)" % r["op"], r["comm"], 1)
    if report_path is None:
        return
    with open(report_path) as f:
        rep = json.load(f)
    io_fits = [x for x in rep["fits"] if x["op"].startswith("MPI_File_")]
    check("the report fits file accesses", len(io_fits) > 0, str(len(io_fits)))
    expect("file fits are of kind io", sorted({x["kind"] for x in io_fits}), ["io"])
    check("no file access is in a joint fit or a reference link",
          all(x["op"] == "p2p" or not x.get("joint") for x in rep["fits"]) and
          all(ref["source"] in ("calibration", "p2p best case", "p2p fit", "ucx hop fit", "link")
              for ref in rep["references"]), "")
    check("file I/O has its own share of the MPI time", (rep["breakdown"].get("io") or 0) > 0,
          str(rep["breakdown"].get("io")))
    for o in rep["operations"]:
        if o["kind"] == "io" and o["advice"]:
            check("%s: advice speaks of files, not links" % o["op"],
                  "file" in o["advice"] and "link" not in o["advice"], o["advice"])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    name, prof = sys.argv[1], load(sys.argv[2])
    args = sys.argv[3:] if name == "pingpong" else [sys.argv[3]] + [int(x) for x in sys.argv[4:]] if name == "abend" \
        else [int(sys.argv[3])] + sys.argv[4:] if name == "tally" else [float(x) if "." in x else int(x) for x in sys.argv[3:]]
    fn = {"known_calls": known_calls, "corner_cases": corner_cases, "threads": threads, "wait_skew": wait_skew,
          "matching": matching, "clock": clock, "pingpong": pingpong, "pcontrol": pcontrol,
          "failed_calls": failed_calls, "many_requests": many_requests, "poll_reuse": poll_reuse, "abend": abend,
          "tally": tally}[name]
    fn(prof, *args)
    print("%d passed, %d failed" % (checks - failures, failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
