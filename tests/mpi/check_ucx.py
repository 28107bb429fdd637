#!/usr/bin/env python3
"""Checks the UCX layer and the PAPI section of commfit profiles.

usage: check_ucx.py CHECK ARGS...
  pingpong PROFILE ITERS SIZE...     tests/mpi/ucx_pingpong under the UCX PML
  allreduce PROFILE NP CALLS BYTES ALGO
                                     tests/mpi/ucx_allreduce; ALGO ring or recursive_doubling
  corners PROFILE NP SIZE            tests/mpi/ucx_corners under the UCX PML (osc ucx)
  nodes PROFILE NP CALLS              ucx_allreduce (ring) on 2 nodes, NP/2 ranks each
  no_ucx PROFILE                     no UCX record (ob1, or COMMFIT_UCX=0)
  same_mpi PROFILE_A PROFILE_B       the MPI records of both have the same calls and bytes
  report_allreduce REPORT NP CALLS BYTES ALGO
                                     the wire section of `commfit report --format json` on
                                     an allreduce profile: the algorithm and its messages
  report_hop REPORT PATH             a per-hop fit of the UCX sends on PATH, with numbers
  report_sweep REPORT NP             an allreduce size sweep under recursive doubling: the
                                     UCX hop fit as the reference link, costed on its own fit
  report_sweep_link REPORT NP ALPHA_S BW_BPS
                                     the same sweep reported with --link: the cheaper
                                     algorithm on that fixed link
  report_no_wire REPORT              no wire section (no UCX record)
  papi PROFILE EVENT,...             the papi section of a run that asked for EVENTs
  papi_malformed PROFILE RAW         the papi section of a run with a list naming no event
"""
import json
import sys
from collections import defaultdict

failures = 0
checks = 0


def check(what, ok, detail=""):
    global failures, checks
    checks += 1
    if ok:
        print("ok   %s%s" % (what, " (%s)" % detail if detail else ""))
    else:
        failures += 1
        print("FAIL %s%s" % (what, ": %s" % detail if detail else ""))


def expect(what, got, want):
    check("%s = %r" % (what, want), got == want, "got %r" % (got,))


def load(path):
    with open(path) as f:
        return json.load(f)


def ucx(prof, kind=None, parent=None):
    return [r for r in prof["records"] if r["layer"] == "ucx"
            and (kind is None or r["kind"] == kind)
            and (parent is None or r["parent_op"] == parent)]


def mpi(prof, op):
    return [r for r in prof["records"] if r["layer"] == "mpi" and r["op"] == op]


def by_bin(records):
    t = defaultdict(lambda: [0, 0])
    for r in records:
        t[r["size_lo"]][0] += r["calls"]
        t[r["size_lo"]][1] += r["bytes"]
    return t


def bin_lo(n):
    return 0 if n == 0 else 1 << (n.bit_length() - 1)


def sane_records(prof):
    """Every UCX record: a UCP name, a known kind, a mean inside its bin, ordered times."""
    for r in ucx(prof):
        mean = r["bytes"] / r["calls"] if r["calls"] else 0
        ts = r["time_s"]
        if not (r["op"].startswith("ucp_") and r["kind"] in ("send", "recv", "rma", "atomic")
                and r["size_lo"] <= mean <= r["size_hi"] + 1
                and 0 <= ts["min"] <= ts["p50"] <= ts["p99"] <= ts["max"] + 1e-12
                and r["comm"] == 0 and "parent_op" in r):
            check("UCX record is well formed", False, repr(r))
            return
    check("UCX records well formed", True, "%d records" % len(ucx(prof)))


def pingpong(prof, iters, *sizes):
    sane_records(prof)
    sends = ucx(prof, "send", "MPI_Send")
    check("UCX sends under MPI_Send", len(sends) > 0)
    check("they are tag sends", all(r["op"].startswith("ucp_tag_send") for r in sends),
          ", ".join(sorted({r["op"] for r in sends})))
    check("on the intra-node path (one node)", {r["path"] for r in sends} == {"intra-node"},
          repr({r["path"] for r in sends}))
    wire = by_bin(sends)
    app = by_bin(mpi(prof, "MPI_Send"))
    for s in sizes:
        lo = bin_lo(s)
        want = 2 * iters * s  # rank 0 pings, rank 1 pongs
        expect("MPI_Send bytes of %d B" % s, app[lo][1], want)
        check("UCX send bytes under MPI_Send cover the payload of %d B" % s, wire[lo][1] >= app[lo][1],
              "%d >= %d" % (wire[lo][1], app[lo][1]))
        expect("UCX sends of %d B, one per MPI_Send" % s, wire[lo][0], app[lo][0])
    recvs = by_bin(ucx(prof, "recv", "MPI_Recv"))
    for s in sizes:
        expect("UCX receive bytes under MPI_Recv of %d B" % s, recvs[bin_lo(s)][1], 2 * iters * s)
    sec = prof.get("ucx", {})
    check("transports listed for intra-node", len(sec.get("transports", {}).get("intra-node", [])) > 0,
          repr(sec.get("transports")))
    expect("every endpoint placed by its worker id", sec.get("endpoints_by_worker_id"), sec.get("endpoints"))
    expect("no operation timed at post", sec.get("timed_over_call"), 0)
    expect("nothing lost", sec.get("lost"), 0)


def matrix_ucx(prof):
    """The matrix's UCX share {(src, dst): (messages, bytes)}, checked against the UCX sends beneath collectives."""
    pairs = [x for x in prof["matrix"]["pairs"] if x[5] == "ucx"]
    colls = {r["op"] for r in prof["records"] if r["layer"] == "mpi" and r["kind"] == "collective"}
    beneath = [r for r in ucx(prof, "send") if r["parent_op"] in colls]
    expect("matrix (ucx): messages and bytes = the UCX sends beneath collectives",
           (sum(x[2] for x in pairs), sum(x[3] for x in pairs)),
           (sum(r["calls"] for r in beneath), sum(r["bytes"] for r in beneath)))
    expect("matrix (ucx): all communicators", {x[4] for x in pairs}, {0})
    return {(x[0], x[1]): (x[2], x[3]) for x in pairs}


def matrix_comms(prof, sent):
    """tests/mpi/matrix comms on 4 ranks, allreduce by recursive doubling and bcast linear:
    the point-to-point share is the program's tally, the UCX share what the algorithms send."""
    truth = defaultdict(lambda: [0, 0])
    for line in open(sent):
        w = line.split()
        if w and w[0] == "sent":
            truth[(int(w[1]), int(w[2]))][0] += int(w[3])
            truth[(int(w[1]), int(w[2]))][1] += int(w[4])
    p2p = defaultdict(lambda: [0, 0])
    for x in prof["matrix"]["pairs"]:
        if x[5] == "mpi":
            p2p[(x[0], x[1])][0] += x[2]
            p2p[(x[0], x[1])][1] += x[3]
    expect("matrix (mpi) under UCX: the program's tally", dict(p2p), dict(truth))
    expect("matrix (mpi) under UCX: world, the dup and the split's two halves",
           len({x[4] for x in prof["matrix"]["pairs"] if x[5] == "mpi"}), 4)
    want = defaultdict(lambda: [0, 0])
    for r in range(4):
        for k in (1, 2):  # allreduce of 8 KiB: one message to rank ^ 1 and ^ 2 per call
            want[(r, r ^ k)][0] += 5
            want[(r, r ^ k)][1] += 5 * 8192
    for r in (1, 2, 3):  # bcast of 1 KiB, linear: the root sends to each
        want[(0, r)][0] += 5
        want[(0, r)][1] += 5 * 1024
    expect("matrix (ucx): recursive-doubling allreduce and linear bcast", matrix_ucx(prof),
           {k: tuple(v) for k, v in want.items()})


def allreduce(prof, p, calls, nbytes, algo):
    sane_records(prof)
    ar = mpi(prof, "MPI_Allreduce")
    ncalls = sum(r["calls"] for r in ar)
    expect("MPI_Allreduce calls", ncalls, p * calls)
    expect("MPI_Allreduce bytes", sum(r["bytes"] for r in ar), p * calls * nbytes)
    sends = ucx(prof, "send", "MPI_Allreduce")
    msgs = sum(r["calls"] for r in sends)
    wire = sum(r["bytes"] for r in sends)
    per_call = msgs / ncalls if ncalls else 0
    if algo == "ring":
        # 2(p-1) messages of M/p per rank and call
        expect("wire messages per rank and call (ring: 2(p-1))", per_call, 2 * (p - 1))
        sizes = {r["size_lo"] for r in sends}
        expect("message size bins (ring: M/p)", sizes, {bin_lo(nbytes // p)})
        expect("wire bytes (ring: 2(p-1)/p M per rank and call)", wire, ncalls * 2 * (p - 1) * nbytes // p)
    elif algo == "recursive_doubling":
        lg = p.bit_length() - 1
        expect("wire messages per rank and call (recursive doubling: lg p)", per_call, lg)
        expect("message size bins (recursive doubling: M)", {r["size_lo"] for r in sends}, {bin_lo(nbytes)})
    recvs = ucx(prof, "recv", "MPI_Allreduce")
    expect("UCX receives match the sends", (sum(r["calls"] for r in recvs), sum(r["bytes"] for r in recvs)),
           (msgs, wire))
    got = matrix_ucx(prof)
    if algo == "ring":
        want = {(r, (r + 1) % p): (calls * 2 * (p - 1), calls * 2 * (p - 1) * nbytes // p) for r in range(p)}
        expect("matrix (ucx): ring, 2(p-1) messages of M/p per call to the right neighbour", got, want)
    elif algo == "recursive_doubling" and p & (p - 1) == 0:
        want = {(r, r ^ (1 << k)): (calls, calls * nbytes) for r in range(p) for k in range(p.bit_length() - 1)}
        expect("matrix (ucx): recursive doubling, one message of M per call to each rank ^ 2^k", got, want)


def corners(prof, p, n):
    sane_records(prof)
    k = 5
    sec = prof["ucx"]

    def count(op, parent):
        rs = [r for r in ucx(prof, None, parent) if r["op"] == op]
        return sum(r["calls"] for r in rs), sum(r["bytes"] for r in rs)

    expect("MPI_Ssend: synchronous tag sends", count("ucp_tag_send_sync_nb", "MPI_Ssend"), (k, k * n))
    expect("MPI_Bsend: tag sends of the packed copy", count("ucp_tag_send_nb", "MPI_Bsend"), (k, k * n))
    expect("MPI_Isend then MPI_Request_free: still counted", count("ucp_tag_send_nbx", "MPI_Isend"), (k, k * n))
    expect("MPI_Start: sends of persistent requests", count("ucp_tag_send_nb", "MPI_Start"), (k, k * n))
    expect("MPI_Start: receives of persistent requests", count("ucp_tag_recv_nb", "MPI_Start"), (k, k * n))
    mrecv = [r for r in ucx(prof) if r["op"] == "ucp_tag_msg_recv_nb"]
    expect("matched receives (MPI_Mrecv)", (sum(r["calls"] for r in mrecv), sum(r["bytes"] for r in mrecv)),
           (k, k * n))
    puts = [r for r in ucx(prof) if r["op"].startswith("ucp_put")]
    gets = [r for r in ucx(prof) if r["op"].startswith("ucp_get")]
    expect("one-sided puts", (sum(r["calls"] for r in puts), sum(r["bytes"] for r in puts)), (k, k * n))
    expect("one-sided gets", (sum(r["calls"] for r in gets), sum(r["bytes"] for r in gets)), (k, k * n))
    check("puts and gets are of kind rma", all(r["kind"] == "rma" for r in puts + gets))
    strided = [r for r in ucx(prof, "send", "MPI_Send") if r["size_lo"] == bin_lo(n // 8 * 4)]
    if n // 8 * 4 != n:
        expect("strided sends: their packed size", (sum(r["calls"] for r in strided), sum(r["bytes"] for r in strided)),
               (k, k * (n // 8 * 4)))
    expect("cancelled receives (one per rank) not recorded", sec["failed_or_cancelled"], p)
    check("requests freed in flight are accounted", 0 <= sec["freed_before_completion"] <= k,
          str(sec["freed_before_completion"]))
    check("endpoints of the one-sided workers placed by transport", sec["endpoints_by_transport"] > 0,
          str(sec["endpoints_by_transport"]))
    expect("paths of all endpoints known", sum(sec["endpoints_by_path"].values()), sec["endpoints"])
    check("the rank's own endpoints on path self", sec["endpoints_by_path"].get("self", 0) >= p)


def nodes(prof, p, calls):
    expect("job.nodes", prof["job"]["nodes"], 2)
    sends = ucx(prof, "send", "MPI_Allreduce")
    per_path = defaultdict(int)
    for r in sends:
        per_path[r["path"]] += r["calls"]
    # rank r sends to r+1: with ranks in pairs per node, half the ring crosses nodes
    half = p * calls * 2 * (p - 1) // 2
    expect("ring messages inside a node", per_path["intra-node"], half)
    expect("ring messages between nodes", per_path["inter-node"], half)
    sec = prof["ucx"]
    expect("every endpoint placed by its worker id", sec["endpoints_by_worker_id"], sec["endpoints"])
    # Between nodes, the endpoints UCX made before the finalize: those of
    # the ring's two crossings, and those the plugin's start made (its
    # exchanges at MPI_Init, which the program then uses), at most one from
    # each rank to each rank of the other node.  The plugin's own finalize
    # connects pairs the program never used: those are not counted (its
    # all-to-all of samples once made every pair, 2 on the other node each)
    eps = sec["endpoints_by_path"]
    expect("endpoints per path (4 ranks: 1 self, 1 on the node)", (eps.get("self"), eps.get("intra-node")), (p, p))
    check("endpoints between nodes: the ring's crossings at least, each rank to each of the other node at most",
          p // 2 <= eps.get("inter-node", 0) <= p * (p // 2), str(eps))
    inter = sec["transports"].get("inter-node", [])
    check("a network transport between nodes", any(t.split("/")[0] in ("tcp", "rc", "rc_mlx5", "dc_mlx5", "ud",
                                                                         "ud_mlx5", "rc_verbs", "ud_verbs")
                                                  for t in inter), repr(inter))


def wire_entry(rep, op):
    w = rep.get("wire")
    check("report has a wire section", isinstance(w, dict))
    if not isinstance(w, dict):
        return {}
    es = [c for c in w["collectives"] if c["op"] == op]
    expect("wire entries for %s" % op, len(es), 1)
    return es[0] if es else {}


def close(got, want, rel):
    return got is not None and abs(got - want) <= rel * abs(want)


def report_allreduce(rep, p, calls, nbytes, algo):
    c = wire_entry(rep, "MPI_Allreduce")
    if not c:
        return
    expect("comm", c["comm"], "world")
    expect("comm_size", c["comm_size"], p)
    expect("mpi_calls (all ranks)", c["mpi_calls"], p * calls)
    expect("inferred_algorithm", c["inferred_algorithm"], algo)
    expect("match", c["match"], True)
    if algo == "ring":
        want_msgs, want_size = 2 * (p - 1), nbytes / p
    else:
        want_msgs, want_size = p.bit_length() - 1, nbytes
    check("wire messages per call and rank = %d" % want_msgs, close(c["wire_messages_per_call_per_rank"], want_msgs, 1e-9),
          repr(c["wire_messages_per_call_per_rank"]))
    expect("expected_messages of the model", c["expected_messages"], want_msgs)
    check("message size ~ %d B (%s)" % (want_size, "M/p" if algo == "ring" else "M"),
          close(c["message_size"], want_size, 0.01), repr(c["message_size"]))
    check("wire bytes per call and rank = messages x size",
          close(c["wire_bytes_per_call_per_rank"], want_msgs * want_size, 0.01), repr(c["wire_bytes_per_call_per_rank"]))
    hops = {h["path"]: h for h in rep["wire"]["hop_fits"]}
    check("a hop fit entry for intra-node", "intra-node" in hops, repr(sorted(hops)))
    check("transports listed for intra-node", len(rep["wire"]["transports"].get("intra-node", [])) > 0,
          repr(rep["wire"]["transports"]))


def report_hop(rep, path):
    hops = {h["path"]: h for h in (rep.get("wire") or {}).get("hop_fits", [])}
    h = hops.get(path)
    check("a hop fit for %s" % path, h is not None, repr(sorted(hops)))
    if h is None:
        return
    check("its alpha and B are numbers", (h["alpha_s"] or -1) >= 0 and (h["bandwidth_Bps"] or 0) > 0,
          "alpha %r, B %r, note %r" % (h["alpha_s"], h["bandwidth_Bps"], h["note"]))
    check("n_half and R^2 given", h["n_half_bytes"] is not None and h["r2"] is not None)


def report_sweep(rep, p):
    c = wire_entry(rep, "MPI_Allreduce")
    if not c:
        return
    expect("inferred_algorithm", c["inferred_algorithm"], "recursive_doubling")
    expect("wire messages per call and rank (lg p)", c["wire_messages_per_call_per_rank"], p.bit_length() - 1)
    check("messages of the whole vector", close(c["message_share_of_payload"], 1.0, 0.01),
          repr(c["message_share_of_payload"]))
    refs = {r["path"]: r["source"] for r in rep["references"]}
    expect("reference link of intra-node (no MPI point to point)", refs.get("intra-node"), "ucx hop fit")
    check("costed with its own fit", (c["cost_link"] or {}).get("source") == "collective fit", repr(c["cost_link"]))
    check("costed on a link with numbers", (c["cost_link"] or {}).get("alpha_s") is not None and
          ((c["cost_link"] or {}).get("bandwidth_Bps") or 0) > 0, repr(c["cost_link"]))
    notable = (c["excess"] or 0) >= 1.25
    check("advice given exactly when the excess is notable (>= 1.25)", (c["advice"] is not None) == notable,
          "excess %r, advice %r" % (c["excess"], c["advice"]))
    if c["advice"]:
        check("the advice names the Open MPI setting", "coll_tuned_allreduce_algorithm" in c["advice"], c["advice"])


def report_sweep_link(rep, p, alpha, bw):
    """The same sweep reported with --link ALPHA,BW: the algorithms' costs on
    a fixed link, which no load can move.  Recursive doubling sends lg p
    messages of n, ring and Rabenseifner 2(p-1) of n/p (1.5 n at p = 4)."""
    c = wire_entry(rep, "MPI_Allreduce")
    if not c:
        return
    link = c["cost_link"] or {}
    check("costed on the given link", link.get("source") == "link" and close(link.get("alpha_s"), alpha, 1e-6)
          and close(link.get("bandwidth_Bps"), bw, 1e-6), repr(link))
    # at the largest size the bytes decide: lg p n / (2 (p - 1) / p n) = 4/3 at p = 4; the
    # smaller sizes of the sweep, where ring's 2(p-1) startups weigh, bring it down a little
    check("a cheaper algorithm at large sizes (1.5 n where it sends 2 n)",
          c["best_algorithm"] in ("ring", "rabenseifner") and 1.25 <= (c["excess"] or 0) <= 4 / 3 + 1e-9,
          "%r, excess %r" % (c["best_algorithm"], c["excess"]))
    check("and the advice given", c["advice"] is not None and "coll_tuned_allreduce_algorithm" in c["advice"],
          repr(c["advice"]))


def report_no_wire(rep):
    expect("wire", rep.get("wire", "absent"), None)


def no_ucx(prof):
    expect("UCX records", len(ucx(prof)), 0)
    check("MPI records present", any(r["layer"] == "mpi" for r in prof["records"]))


def mpi_totals(prof):
    t = defaultdict(lambda: [0, 0])
    label = {c["id"]: c["name"] for c in prof["communicators"]}
    for r in prof["records"]:
        if r["layer"] == "mpi":
            key = (r["op"], label.get(r["comm"], "-"), r["size_lo"])
            t[key][0] += r["calls"]
            t[key][1] += r["bytes"]
    return dict(t)


def same_mpi(a, b):
    ta, tb = mpi_totals(a), mpi_totals(b)
    diff = {k: (ta.get(k), tb.get(k)) for k in set(ta) | set(tb) if ta.get(k) != tb.get(k)}
    check("MPI calls and bytes per operation, communicator and size are the same", not diff, repr(diff))


def papi(prof, events):
    req = events.split(",")
    sec = prof.get("papi")
    check("papi section present", sec is not None)
    if sec is None:
        return
    expect("papi.requested", sec["requested"], req)
    ev = {e["name"]: e for e in sec["events"]}
    expect("one entry per requested event", sorted(ev), sorted(req))
    counted = [e for e in sec["events"] if e["counted"]]
    expect("papi.available", sec["available"], len(counted) > 0)
    if not sec["available"]:
        check("a reason is given", len(sec.get("reason", "")) > 10, sec.get("reason", ""))
    for e in sec["events"]:
        if e["counted"]:
            check("%s counted: a total and the operations" % e["name"],
                  e["total"] > 0 and "MPI_Send" in e["by_operation"] and "MPI_Recv" in e["by_operation"],
                  "total %d" % e["total"])
        else:
            check("%s not counted: a note says why" % e["name"], len(e.get("note", "")) > 5, e.get("note", ""))
        if e["name"] == "PAPI_FOO":
            check("PAPI_FOO is an unknown event", not e["counted"] and (
                "unknown event PAPI_FOO" in e.get("note", "") or "built without PAPI" in e.get("note", "")),
                e.get("note", ""))


def papi_malformed(prof, raw):
    sec = prof.get("papi")
    check("papi section present", sec is not None)
    if sec:
        expect("papi.requested", sec["requested"], [])
        expect("papi.requested_as", sec.get("requested_as"), raw)
        expect("papi.available", sec["available"], False)
        check("a reason is given", bool(sec.get("reason")), sec.get("reason", ""))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, args = sys.argv[1], sys.argv[2:]
    if what == "pingpong":
        pingpong(load(args[0]), *[int(x) for x in args[1:]])
    elif what == "allreduce":
        allreduce(load(args[0]), int(args[1]), int(args[2]), int(args[3]), args[4])
    elif what == "matrix_comms":
        matrix_comms(load(args[0]), args[1])
    elif what == "corners":
        corners(load(args[0]), int(args[1]), int(args[2]))
    elif what == "nodes":
        nodes(load(args[0]), int(args[1]), int(args[2]))
    elif what == "no_ucx":
        no_ucx(load(args[0]))
    elif what == "same_mpi":
        same_mpi(load(args[0]), load(args[1]))
    elif what == "report_allreduce":
        report_allreduce(load(args[0]), int(args[1]), int(args[2]), int(args[3]), args[4])
    elif what == "report_hop":
        report_hop(load(args[0]), args[1])
    elif what == "report_sweep":
        report_sweep(load(args[0]), int(args[1]))
    elif what == "report_sweep_link":
        report_sweep_link(load(args[0]), int(args[1]), float(args[2]), float(args[3]))
    elif what == "report_no_wire":
        report_no_wire(load(args[0]))
    elif what == "papi":
        papi(load(args[0]), args[1])
    elif what == "papi_malformed":
        papi_malformed(load(args[0]), args[1])
    else:
        sys.exit(__doc__)
    print("%d passed, %d failed" % (checks - failures, failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
