#!/usr/bin/env python3
"""Checks the numbers of a profile's "calibration" section (plugin/cf_calibrate.c).

usage: check_calibrate.py CHECK ARGS...
  sweep PROFILE PATH      the link of PATH (intra-node, inter-node) swept from 8 B up to 4 MiB
                          or the budget, its round trips within the time taken, the world
                          allreduce at the bucket sizes, elapsed within the budget, the
                          messages at least what the sizes took: what load cannot move
  speed PROFILE PATH      that link fast, the sweep past 64 KiB: what load moves
  same PROFILE OFF        the program's records and matrix equal those of OFF (no calibration)
  budget PROFILE          elapsed within a short budget, and the budget named in skipped
  absent PROFILE          no section
  auto PROFILE            the default budget: at most 0.5 s, within it
  nonblocking PROFILE     a program of MPI_Iallreduce only: the nonblocking operation itself
                          measured for it (posted, then waited for), not the blocking one
  two_nodes PROFILE       the emulated 2-node cluster, 1 + 2 ranks: both links, between the right ranks
  monitoring ON OFF MON_ON MON_OFF
                          Open MPI's monitoring (external messages, i.e. point-to-point):
                          with calibration minus without = the section's messages; and the
                          program's sends are the same in both
"""
import json
import math
import re
import sys

from checks import check, done

# The budget is checked between steps, which a loaded machine stretches
# (a rank descheduled for a few time slices in a barrier): loose slacks.
SLACK_S = 0.5
SHORT_SLACK_S = 0.25
LINK_SIZES = []
p = 8
while p <= 4 << 20:
    LINK_SIZES.append(p)
    if p * 3 // 2 < 4 << 20:
        LINK_SIZES.append(p * 3 // 2)
    p *= 2
FRAMEWORK = {26214400, 64 << 20, 128 << 20}
SENDS = {"MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend", "MPI_Issend", "MPI_Sendrecv",
         "MPI_Send_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Bsend_init", "MPI_Sendrecv_replace"}


def load(path):
    return json.load(open(path))


def section(path):
    return load(path).get("calibration")


def within_budget(c, slack):
    check("elapsed %.3f s within the budget %.3f s (+%.2f s)" % (c["elapsed_s"], c["budget_s"], slack),
          0 < c["elapsed_s"] <= c["budget_s"] + slack)


def sweep(path, link_path):
    prof = load(path)
    c = prof.get("calibration")
    if not check("a calibration section, version 1", c is not None and c.get("version") == 1, str(c)[:200]):
        return
    links = [l for l in c["links"] if l["path"] == link_path]
    check("one %s link, ping-pong between two ranks" % link_path,
          len(links) == 1 and links[0]["method"] == "ping-pong" and len(set(links[0]["ranks"])) == 2,
          str([(l["path"], l["ranks"]) for l in c["links"]]))
    if links:
        link_numbers(links[0]["sizes"], c, link_path)
    ranks = prof["job"]["ranks"]
    world = {m["id"] for m in prof["communicators"] if m["size"] == ranks}
    ar = [r for r in prof["records"] if r["op"] == "MPI_Allreduce" and r["comm"] in world]
    want_comm = ar[0]["comm"] if ar else None
    cols = [e for e in c["collectives"] if e["op"] == "MPI_Allreduce" and e["for_op"] == "MPI_Allreduce"]
    check("a collectives entry: MPI_Allreduce for the program's MPI_Allreduce on world (comm %s)" % want_comm,
          len(cols) == 1 and cols[0]["comm"] == want_comm and cols[0]["comm_size"] == ranks and
          cols[0]["on"] == "world duplicate" and cols[0]["datatype"] == "MPI_FLOAT", str(c["collectives"])[:300])
    if cols:
        s = cols[0]["sizes"]
        got = [e["bytes"] for e in s]
        pow2 = [b for b in got if b not in FRAMEWORK]
        # none at all where the budget ended the sweep first (a loaded
        # machine: planned() holds that skipped names the cut)
        check("sizes from 64 KiB, ascending, powers of two (and the frameworks' sizes), or none",
              (not got or got[0] == 65536) and got == sorted(got) and
              all(b & (b - 1) == 0 for b in pow2) and pow2 == [65536 << i for i in range(len(pow2))], str(got))
        check("at least 3 repetitions per size, best <= median",
              all(e["reps"] >= 3 and 0 < e["best_s"] <= e["p50_s"] for e in s))
        check("collective calls at least the repetitions on every rank (%d)" % c["messages"]["collective_calls"],
              c["messages"]["collective_calls"] >= ranks * sum(e["reps"] for e in s))
        check("nothing beyond COMMFIT_CALIBRATE_MAX_BYTES (64 MiB)", all(b <= 64 << 20 for b in got))
    pf = c.get("page_fault_s")
    if c["collectives"]:
        # a blocking call's temporary buffer refaulted: the report bounds it with this
        check("a fresh page's cost beside the collectives' sweeps, 10 ns to 1 ms",
              isinstance(pf, float) and 1e-8 < pf < 1e-3, str(pf))
    else:
        check("no fresh page's cost without collectives to price", pf is None, str(pf))
    for e in c["collectives"]:
        planned(prof, c, e)
    within_budget(c, SLACK_S)


def plan_of(op, per_rank):
    """The sizes the plugin plans for a stream of per_rank bytes over the
    run: powers of two from 64 KiB (8 B for a nonblocking operation, whose
    spans are no call times) to the smallest at or above per_rank, and the
    frameworks' bucket sizes not above that one."""
    floor = 8 if op.startswith("MPI_I") else 65536
    top = floor
    while top < per_rank:
        top *= 2
    pow2 = []
    b = floor
    while b <= top:
        pow2.append(b)
        b *= 2
    return sorted(set(pow2) | {f for f in FRAMEWORK if f <= top}), top


def planned(prof, c, e, cap=64 << 20):
    """A stream's sizes: a prefix of its plan within the memory bound,
    cut where skipped says the budget ended them, and nothing the stream
    could not fill (no 25 MiB for a few kilobytes)."""
    ranks = prof["job"]["ranks"]
    per_rank = sum(r["bytes"] for r in prof["records"] if r["op"] == e["for_op"] and r["comm"] == e["comm"]) / ranks
    plan, top = plan_of(e["op"], per_rank)
    split = e["op"] in ("MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Allgather", "MPI_Ireduce_scatter",
                    "MPI_Ireduce_scatter_block", "MPI_Iallgather")
    n = e["comm_size"] if split else 1
    within = [b for b in plan if b <= cap and (b // 4 // n) * n > 0]
    got = [x["bytes"] for x in e["sizes"]]
    want = [(b // 4 // n) * n * 4 for b in within]
    name = "%s for %s on comm %s" % (e["op"], e["for_op"], e["comm"])
    check("%s: %.0f B per rank, sizes a prefix of %s (to %s), got %s" % (name, per_rank, within, fmt_bytes(top), got),
          got == want[:len(got)] and all(b <= top for b in got))
    cut = [k for k in c["skipped"] if k.startswith(name + ": sizes from ") and k.endswith("budget")]
    check("%s: the budget's cut named where the sizes end" % name,
          cut == ([] if len(got) == len(within) else
                  ["%s: sizes from %s not measured: budget" % (name, fmt_bytes(within[len(got)]))]), str(cut))
    over = [b for b in plan if b > cap]
    mem = [k for k in c["skipped"] if k.startswith(name + ": sizes from ") and "MAX_BYTES" in k]
    check("%s: the memory bound named only for sizes it plans beyond it (%s)" % (name, over),
          mem == (["%s: sizes from %s not measured: memory (over COMMFIT_CALIBRATE_MAX_BYTES)"
                   % (name, fmt_bytes(over[0]))] if over else []), str(mem))


def nonblocking(path):
    prof = load(path)
    c = section(path)
    ranks = prof["job"]["ranks"]
    world = {m["id"] for m in prof["communicators"] if m["size"] == ranks}
    nb = [r for r in prof["records"] if r["op"] == "MPI_Iallreduce" and r["comm"] in world]
    check("the program's MPI_Iallreduce on world recorded", len(nb) > 0)
    want = nb[0]["comm"] if nb else None
    cols = [e for e in c["collectives"] if e["for_op"] == "MPI_Iallreduce"]
    check("one collectives entry for the program's MPI_Iallreduce (comm %s), measuring MPI_Iallreduce" % want,
          len(cols) == 1 and cols[0]["op"] == "MPI_Iallreduce" and cols[0]["comm"] == want and
          cols[0]["comm_size"] == ranks, str(c["collectives"])[:300])
    check("no blocking MPI_Allreduce measured: the program has none",
          not any(e["op"] == "MPI_Allreduce" for e in c["collectives"]), str(c["collectives"])[:300])
    if cols:
        s = cols[0]["sizes"]
        got = [e["bytes"] for e in s]
        check("sizes from 8 B, the stream's own included (%s)" % got[:4], got and got[0] == 8)
        planned(prof, c, cols[0])
        check("at least 3 repetitions per size, 0 < best <= median",
              all(e["reps"] >= 3 and 0 < e["best_s"] <= e["p50_s"] for e in s))
        in_flight(prof, c, cols[0], nb)
        f = cols[0].get("in_flight", [])
        calls = sum(e["reps"] for e in s) + sum(e["reps"] * e["calls"] for e in f)
        check("collective calls at least the repetitions' calls on every rank (%d >= %d)"
              % (c["messages"]["collective_calls"], ranks * calls), c["messages"]["collective_calls"] >= ranks * calls)
    within_budget(c, SLACK_S)


def in_flight(prof, c, e, nb):
    """The in-flight sweep of a nonblocking stream without regions: its
    step is its bytes per rank over the gcd of its records' calls per rank
    (the steps of its pattern); each bucket size of a power of two from
    64 KiB below the step, with as many calls posted at once as such
    buckets fill a step (at most 16), a prefix cut where skipped says."""
    ranks = prof["job"]["ranks"]
    g = 0
    for r in nb:
        g = math.gcd(g, r["calls"] // ranks)
    step = sum(r["bytes"] for r in nb) // ranks // g
    check("in flight: sized for the stream's %d B a step (%d steps)" % (step, g),
          e.get("in_flight_step_bytes") == step, str(e.get("in_flight_step_bytes")))
    want = []
    b = 65536
    while b < step:
        want.append((b, min(16, -(-step // b))))
        b *= 2
    got = [(x["bytes"], x.get("calls")) for x in e.get("in_flight", [])]
    name = "%s for %s on comm %s in flight" % (e["op"], e["for_op"], e["comm"])
    check("in flight: sizes and calls a prefix of %s, got %s" % (want, got), len(got) > 0 and got == want[:len(got)])
    check("in flight: at least 3 repetitions per size, 0 < best <= median",
          all(x["reps"] >= 3 and 0 < x["best_s"] <= x["p50_s"] for x in e.get("in_flight", [])))
    check("in flight: each set's minor page faults counted (an integer >= 0)",
          all(isinstance(x.get("page_faults"), int) and x["page_faults"] >= 0 for x in e.get("in_flight", [])),
          str([x.get("page_faults") for x in e.get("in_flight", [])]))
    # a fresh page's cost, measured where there are sets: between 10 ns
    # and 1 ms (bare metal about 0.5 us, some virtual machines 10 us)
    pf = c.get("page_fault_s")
    check("in flight: a fresh page's cost measured (%s s)" % pf,
          isinstance(pf, float) and 1e-8 < pf < 1e-3 if got else pf is None)
    cut = [k for k in c["skipped"] if k.startswith(name + ": sizes from ")]
    check("in flight: the budget's cut named where the sizes end",
          cut == ([] if len(got) == len(want) else
                  ["%s: sizes from %s not measured: budget" % (name, fmt_bytes(want[len(got)][0]))]), str(cut))


def refault(path, share):
    """A program whose malloc maps every block afresh (MALLOC_MMAP_THRESHOLD_
    =4096): the in-flight sets, timed on the heap as the program left it,
    fault in the memory the library takes per call, at least share of the
    pages of their calls' bytes."""
    c = section(path)
    sets = [x for e in c["collectives"] for x in e.get("in_flight", [])]
    check("in flight: sets measured", len(sets) > 0, str(c["skipped"]))
    for x in sets:
        pages = x["calls"] * x["bytes"] // 4096
        check("in flight, %d calls of %s: %s page faults a set, at least %.0f%% of their %d pages" %
              (x["calls"], fmt_bytes(x["bytes"]), x.get("page_faults"), 100 * share, pages),
              (x.get("page_faults") or 0) >= share * pages)


def fmt_bytes(b):
    """As the plugin names a size: "2 MiB", "96 KiB", "12 B"."""
    if b >= 1 << 20 and b % (1 << 20) == 0:
        return "%d MiB" % (b >> 20)
    if b >= 1024 and b % 1024 == 0:
        return "%d KiB" % (b >> 10)
    return "%d B" % b


def link_sizes(s, c, link_path, what):
    """A link's sizes: a prefix of the sweep's, from 8 B, the cut named in
    skipped at the next one (how far the budget reached is the machine's)."""
    got = [e["bytes"] for e in s]
    cut = [k for k in c["skipped"] if k.startswith(link_path + " link: sizes from ")]
    want_cut = [] if got == LINK_SIZES else ["%s link: sizes from %s not measured: budget"
                                             % (link_path, fmt_bytes(LINK_SIZES[len(got)]))]
    check(what + "sizes from 8 B, ascending, powers of two and their 1.5x, to 4 MiB or to where skipped says the "
          "budget ended them", got and got == LINK_SIZES[:len(got)] and cut == want_cut,
          "got %s; skipped %s" % (got, c["skipped"]))
    return got


def link_numbers(s, c, link_path):
    """What a loaded machine cannot move in a link's sweep: the sizes a
    prefix of the sweep's, the cut named at the next one; the timed round
    trips, each at least twice the best one-way time and half of them at
    least twice the median, fitting in the time the calibration took;
    no time under what a shared-memory round trip can take, no bandwidth
    over what memory can copy."""
    got = link_sizes(s, c, link_path, "")
    if got != LINK_SIZES:
        print("note: the budget ended the sweep at %d B (a loaded machine)" % got[-1])
    check("best <= median at every size", all(0 < e["best_s"] <= e["p50_s"] for e in s))
    check("best <= trial figure <= the slowest a trial can be at every size",
          all(e["best_s"] <= e.get("trial_s", 0) <= e["p50_s"] * e["reps"] for e in s))
    check("repetitions: at least 5 timed round trips per size", all(e["reps"] >= 5 for e in s))
    timed = sum(2 * ((e["reps"] + 1) // 2 * e["p50_s"] + e["reps"] // 2 * e["best_s"]) for e in s)
    check("the timed round trips fit in the calibration's time: at least %.3f s of %.3f s" % (timed, c["elapsed_s"]),
          timed <= c["elapsed_s"])
    if s:
        check("one-way time at 8 B above 20 ns: %.3g s" % s[0]["best_s"], s[0]["best_s"] > 20e-9)
    top = max((e["bytes"] / e["best_s"] for e in s if e["best_s"] > 0), default=0)
    check("bandwidth under 1 TB/s at every size: at most %.3g B/s" % top, top < 1e12)
    # each timed round trip is two messages of its size
    least = sum(2 * e["reps"] * e["bytes"] for e in s)
    check("messages: bytes at least what the timed round trips moved (%d >= %d)"
          % (c["messages"]["bytes"], least), c["messages"]["bytes"] >= least)


def speed(path, link_path):
    """What a loaded machine moves: how fast the link was, and so how far
    the budget took the sweep.  Two busy loops beside the two ranks on two
    cores can preempt every round trip (a best of 5.8 ms at 8 B, the sweep
    ended at 4 KiB), so test_calibrate.sh prints this for its live run and
    holds it on a calibration recorded on a quiet machine.  The bounds are
    a hundred times what the machine does unloaded (0.3 us at 8 B, GB/s
    from 64 KiB): a sweep timing the wrong thing (a sleep, the ranks asleep
    in their loop, the warm-up's page faults) misses them on every run."""
    c = section(path)
    links = [l for l in c["links"] if l["path"] == link_path] if c else []
    if not check("a %s link" % link_path, len(links) == 1):
        return
    s = links[0]["sizes"]
    got = [e["bytes"] for e in s]
    check("the sweep reached 64 KiB within the budget: to %s" % fmt_bytes(got[-1]), got[-1] >= 1 << 16)
    check("one-way time at 8 B under 50 us: %.3g s" % s[0]["best_s"], s[0]["best_s"] < 50e-6)
    # the best time: the median of a loaded machine is its scheduler's
    top = s[-1]
    bw = top["bytes"] / top["best_s"]
    check("bandwidth at %d B above 100 MB/s: %.3g B/s (median %.3g B/s)"
          % (top["bytes"], bw, top["bytes"] / top["p50_s"]), bw > 100e6)


def stream_key(r):
    return (r["layer"], r["op"], r["comm"], r["path"], r.get("region"), r.get("size_lo"), r.get("size_hi"))


def same(path, off):
    a, b = load(path), load(off)
    check("calibration on in one profile, off in the other", "calibration" in a and "calibration" not in b)
    ra = sorted((stream_key(r), r["calls"], r["bytes"]) for r in a["records"])
    rb = sorted((stream_key(r), r["calls"], r["bytes"]) for r in b["records"])
    check("the program's records: calls and bytes identical (%d records)" % len(ra), ra == rb,
          str(set(ra) ^ set(rb))[:400])
    check("the communication matrix identical", a.get("matrix") == b.get("matrix"))
    ca = a.get("callsites", {}).get("sites", [])
    cb = b.get("callsites", {}).get("sites", [])
    check("call sites: the same calls", sorted(s["calls"] for s in ca) == sorted(s["calls"] for s in cb))
    check("the communicators identical", a["communicators"] == b["communicators"])
    if "ucx" in a or "ucx" in b:
        check("the UCX layer's section identical", a.get("ucx") == b.get("ucx"))
        ucx = [r for r in a["records"] if r["layer"] == "ucx"]
        print("     (%d records of the UCX layer among them)" % len(ucx))


def budget(path):
    c = section(path)
    if not check("a calibration section", c is not None):
        return
    within_budget(c, SHORT_SLACK_S)
    check("skipped names the budget", any(k.endswith(": budget") for k in c["skipped"]), str(c["skipped"]))
    check("not complete", c["complete"] is False)


def oversubscribed(path, share):
    """A budget over 10 ms but under 10 ms times the ranks per core: nothing
    measured, no time spent, and skipped says why."""
    c = section(path)
    if not check("a calibration section", c is not None):
        return
    check("%s ranks a core: nothing measured under %g s, and skipped says why" % (share, 0.01 * float(share)),
          not c["links"] and not c["collectives"] and c["elapsed_s"] == 0 and c["complete"] is False and
          any("where %s ranks share each core" % share in k for k in c["skipped"]), str(c))


def absent(path):
    check("no calibration section", "calibration" not in load(path))


def auto(path):
    c = section(path)
    if not check("a calibration section", c is not None):
        return
    check("the default budget is at most 0.5 s: %.4g s" % c["budget_s"], 0 < c["budget_s"] <= 0.5)
    if c["budget_s"] < 0.01:
        # 1% of a short run: too little to measure anything
        check("under 10 ms: nothing measured, and skipped says why",
              not c["links"] and not c["collectives"] and c["elapsed_s"] == 0 and c["complete"] is False and
              any("under the 0.01 s a calibration needs" in k for k in c["skipped"]), str(c))
    else:
        within_budget(c, SHORT_SLACK_S)


def two_nodes(path):
    """Rank 0 alone on its node, ranks 1 and 2 on the other: both links, the
    intra-node one led by a rank other than 0."""
    prof = load(path)
    c = prof.get("calibration")
    if not check("two nodes, a calibration section", prof["job"]["nodes"] == 2 and c is not None):
        return
    node = {r["rank"]: r["node"] for r in prof["ranks"]}
    links = {l["path"]: l for l in c["links"]}
    check("an intra-node and an inter-node link", sorted(links) == ["inter-node", "intra-node"], str(sorted(links)))
    for path, same_node in (("inter-node", False), ("intra-node", True)):
        l = links.get(path)
        if not l:
            continue
        a, b = l["ranks"]
        check("%s: ranks %s %s" % (path, l["ranks"], "on one node" if same_node else "on different nodes"),
              (node[a] == node[b]) == same_node and a != b)
        # a TCP link between namespaces of a loaded 2-core machine is slow:
        # the sizes the budget allowed (one, 8 B, beside two busy loops)
        link_sizes(l["sizes"], c, path, path + ": ")
        check("%s: best <= median at every size" % path, all(0 < e["best_s"] <= e["p50_s"] for e in l["sizes"]))
        # NetPIPE's figure: the best of five trials' means, never under the best round trip
        check("%s: best <= trial figure at every size" % path,
              all(e["best_s"] <= e.get("trial_s", 0) for e in l["sizes"]))
    check("the intra-node pair is ranks 1 and 2", links.get("intra-node", {}).get("ranks") == [1, 2])
    within_budget(c, SLACK_S)


def monitoring_sent(path):
    """Open MPI's monitoring file(s): external (point-to-point) messages and bytes sent."""
    msgs = byts = 0
    for line in open(path):
        m = re.match(r"^E\t\d+\t\d+\t(\d+) bytes\t(\d+) msgs sent", line)
        if m:
            byts += int(m.group(1))
            msgs += int(m.group(2))
    return msgs, byts


def sends(prof):
    rec = [r for r in prof["records"] if r["layer"] == "mpi" and r["op"] in SENDS]
    return sum(r["calls"] for r in rec), sum(r["bytes"] for r in rec)


def monitoring(on, off, mon_on, mon_off):
    pon, poff = load(on), load(off)
    c = pon["calibration"]
    mo, mf = monitoring_sent(mon_on), monitoring_sent(mon_off)
    so, sf = sends(pon), sends(poff)
    check("the program's sends [messages, bytes] the same with and without calibration: %s" % (so,), so == sf,
          "%s vs %s" % (so, sf))
    cal = (c["messages"]["sent"], c["messages"]["bytes"])
    check("monitoring with calibration minus without = the section's messages %s" % (cal,),
          (mo[0] - mf[0], mo[1] - mf[1]) == cal, "monitoring %s and %s" % (mo, mf))
    # the rest of the plugin's own messages (the clock synchronization) are the same in both runs
    check("monitoring with calibration = program %s + calibration %s + the plugin's other messages %s"
          % (so, cal, (mf[0] - sf[0], mf[1] - sf[1])),
          mo == (so[0] + cal[0] + mf[0] - sf[0], so[1] + cal[1] + mf[1] - sf[1]), str(mo))
    check("calibration messages were sent", cal[0] > 0 and cal[1] > 0)


def main():
    what, args = sys.argv[1], sys.argv[2:]
    {"sweep": sweep, "same": same, "budget": budget, "absent": absent, "auto": auto, "two_nodes": two_nodes,
     "nonblocking": nonblocking, "speed": speed, "oversubscribed": oversubscribed, "refault": lambda path, share: refault(path, float(share)),
     "monitoring": monitoring}[what](*args)
    done()


if __name__ == "__main__":
    main()
