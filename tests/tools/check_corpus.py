#!/usr/bin/env python3
"""Hold `commfit report` to the recorded corpus (tests/corpus/<case>/).

Usage: check_corpus.py COMMFIT CORPUS_DIR [CASE...] [-v]

For every case: run `COMMFIT report --format json profile.json` and compare
with what the program measured itself in the same run (truth.csv) and what
the physics of the path says (meta.json `expect`):

  truth      for each expected fit, every size bin's time within 25 % of
             the program's (15 % from 128 KiB up) as the fitted line
             (predicted_s) and the predictor (prediction_s) give it; a bin
             is matched
             with the truth sizes inside [size_lo, size_hi], the truth
             interpolated linearly to the bin's mean size
  bandwidth  the fit's bandwidth_Bps within bandwidth_tol of the expected
             payload rate (shaped links)
  verdict    the smallest bin's and the largest bin's verdicts
  limits     where the profile holds the library's declared eager limit
             for the path and the sweep has 3 sizes on each side: the
             joint fit breaks there
  reference  references[] of the path against NetPIPE's latency (time of
             its smallest message) and peak throughput (or the program's own
             ping-pong, meta `netpipe.source`); `strict`: no "uncertain" escape
  no_fuse / nonblocking_not_cost   (applications) no advice to fuse, and
             no nonblocking operation ranked as a cost in the verdict
  overlap    (overlapped exchanges) the stream's time is the time blocked in
             Wait/Test charged to it, within 25 % of the program's own timer
             around its completion calls; no span carries a share, startup
             share or verdict; what the overlap hid is stated; the headline
             claims no startup or bandwidth dominance the fits do not explain
  diff       (a pair: the program run again with buckets) `commfit diff A B`
             measures the stream per step on both sides: calls per step as
             each trainer made them, the exchange (MPI time and the
             framework's measured time per call) within [75 %, 105 %] of each
             trainer's timer around its MPI calls, the saving B - A of the same
             sign as the trainers' and within [60 %, 110 %] of it, the step's
             period within 2 % of each trainer's step time, and the text says
             what B saved and what A said
  calibrated (a run with a calibration budget) the profile's calibration timed
             the nonblocking operation itself for the stream, from 8 B; its
             size bins within the sizes calibrated are priced on it, and no
             candidate whose buckets lie within them on the line

One line per check, "ok" or "FAIL" with the numbers; exit 1 on any FAIL.
-v prints the size-by-size comparison of every truth check.
"""
import csv
import math
import shutil
import statistics
import re
import json
import os
import subprocess
import sys
import tempfile

TOL_SMALL = 0.25
TOL_LARGE = 0.15
LARGE_FROM = 131072

# NetPIPE against the reference link: alpha is the model's time of an empty
# message and NetPIPE's latency its time of the smallest (8 B) one; on every
# path here 8/B is under 1 % of alpha, so the two are the same quantity and
# get the tolerance of the truth check at small sizes (25 %).  NetPIPE's peak
# is the best M/T over its sizes, which under T = alpha + M/B is below B and
# approaches it at large M; on shared memory it peaks at cache-resident sizes
# (up to ~10 % above the 4 MiB throughput on this kind of machine), and the
# truth check lets a fit miss large-message times by 15 %: 25 % again.
REF_TOL = 0.25

verbose = "-v" in sys.argv
args = [a for a in sys.argv[1:] if a != "-v"]
if len(args) < 2:
    sys.stderr.write(__doc__)
    sys.exit(2)
commfit, corpus, only = args[0], args[1], args[2:]
fails = 0
passed = 0


# Known limits (tests/corpus/known.json): {case: [{"check": substring of the
# check's name, "why": reason}]}.  A failing check that matches one is
# printed KNOWN with its reason and numbers and does not fail the run; one
# that passes again is printed ok (and its entry can go).  Every other check
# is held as it is.
known_limits = {}
known = 0


def check(case, what, ok, detail=""):
    global fails, passed, known
    why = None
    for k in known_limits.get(case, []):
        if k["check"] in what:
            why = k["why"]
    if ok and why:
        # a known limit that holds again: say so, so that its entry goes
        detail += " (listed in known.json, passes now: remove the entry)"
        why = None
    if ok:
        passed += 1
    elif why:
        known += 1
    else:
        fails += 1
    tag = "ok  " if ok else "KNOWN" if why else "FAIL"
    print("%s %s: %s: %s%s" % (tag, case, what, detail, " [known limit: %s]" % why if why else ""))


def human_size(n):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f:
            return "%.3g %s" % (n / f, unit)
    return "%.3g B" % n


def human_time(t):
    if t is None:
        return "-"
    if t < 0:
        return "-" + human_time(-t)
    if t >= 1e-3:
        return "%.3g ms" % (t * 1e3)
    if t >= 1e-6:
        return "%.3g us" % (t * 1e6)
    return "%.3g ns" % (t * 1e9)


def rel(a, b):
    return (a - b) / b


def read_truth(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.append((float(r["size_bytes"]), float(r["time_s"])))
    return sorted(rows)


def truth_at(rows, lo, hi, size):
    """Truth time at `size`, from the truth sizes inside [lo, hi]."""
    inside = [r for r in rows if lo <= r[0] <= hi]
    if not inside:
        return None
    if len(inside) == 1:
        return inside[0][1]
    below = [r for r in inside if r[0] <= size]
    above = [r for r in inside if r[0] >= size]
    if not below:
        return above[0][1]
    if not above:
        return below[-1][1]
    (s0, t0), (s1, t1) = below[-1], above[0]
    if s1 == s0:
        return t0
    return t0 + (t1 - t0) * (size - s0) / (s1 - s0)


def find_fit(rep, sel):
    cands = [f for f in rep.get("fits", []) if f.get("op") == sel["op"]
             and all(f.get(k) == v for k, v in sel.items() if k != "op")]
    return cands[0] if cands else None


def fit_name(sel):
    s = sel["op"]
    if sel.get("joint"):
        s += " (joint)"
    if "path" in sel:
        s += " " + sel["path"]
    if "comm" in sel:
        s += " on " + sel["comm"]
    return s


def check_truth(case, name, fit, truth, exp, key="predicted_s", what="predicted"):
    tol_s = exp.get("truth_tol_small", TOL_SMALL)
    tol_l = exp.get("truth_tol_large", TOL_LARGE)
    large = exp.get("large_from", LARGE_FROM)
    bins = [b for b in fit.get("bins", []) if b.get("size_hi") is not None and b.get("size_hi", 0) > 0]
    rows = []
    covered = set()
    for b in bins:
        lo, hi = b["size_lo"], b["size_hi"]
        t = truth_at(truth, lo, hi, b["size"])
        if t is None:
            continue
        covered.update(s for s, _ in truth if lo <= s <= hi)
        p = b.get(key)
        tol = tol_l if b["size"] >= large else tol_s
        err = rel(p, t) if p is not None else None
        rows.append((b["size"], t, p, err, tol, err is not None and abs(err) <= tol))
    missing = [s for s, _ in truth if s not in covered]
    if verbose:
        print("     %-12s %10s %10s %8s  (%s)" % ("size", "truth", "predicted", "error", what))
        for s, t, p, e, tol, ok in rows:
            print("     %-12s %10s %10s %8s%s" % (human_size(s), human_time(t), human_time(p),
                                                  "-" if e is None else "%+.0f%%" % (100 * e),
                                                  "" if ok else "  > %d%%" % (100 * tol)))
    bad = [r for r in rows if not r[5]]
    worst = max(rows, key=lambda r: float("inf") if r[3] is None else abs(r[3]) / r[4]) if rows else None
    detail = "%d/%d sizes within %d%% (%d%% from %s)" % (len(rows) - len(bad), len(rows), 100 * tol_s, 100 * tol_l,
                                                        human_size(large))
    if worst:
        detail += "; worst %s: predicted %s, truth %s (%s)" % (
            human_size(worst[0]), human_time(worst[2]), human_time(worst[1]),
            "no prediction" if worst[3] is None else "%+.0f%%" % (100 * worst[3]))
    if bad:
        detail += "; out: " + ", ".join("%s %s" % (human_size(r[0]), "-" if r[3] is None else "%+.0f%%" % (100 * r[3]))
                                        for r in bad)
    if missing:
        detail += "; truth sizes in no bin: " + ", ".join(human_size(s) for s in missing)
    check(case, "%s %s vs truth" % (name, what), rows and not bad and not missing, detail)


# What the report predicts a call of a bin's size takes, two ways: the
# fitted line (predicted_s, the model that states alpha, B and the
# verdicts), and the predictor that fusion advice and ideal times use
# (prediction_s, cf_predict.h: at a size the program measured, commfit's
# median for it, so this holds commfit's measurement to the program's own
# timer).  The report also gives the predictor with the bin left out
# (prediction_loo_s), which is not held here.
PREDICTIONS = (("predicted_s", "predicted"), ("prediction_s", "predictor"))


def check_predictions(case, name, fit, truth, exp):
    for key, what in PREDICTIONS:
        check_truth(case, name, fit, truth, exp, key, what)


def check_fit(case, rep, truth, sel, exp):
    name = fit_name(sel)
    fit = find_fit(rep, sel)
    if fit is None:
        check(case, "%s fit present" % name, False,
              "fits: " + ", ".join("%s/%s/%s" % (f["op"], f.get("path"), f.get("comm")) for f in rep.get("fits", [])))
        return
    # The program's truth is a message time (a ping-pong's half round trip)
    # or a collective's; an operation of its own (MPI_Send) is fitted on
    # what that call costs and is held to its own measured medians.
    against = sel.get("against", "measured" if sel["op"] in ("MPI_Send", "MPI_Recv") else "truth")
    if against == "measured":
        own = sorted((b["size"], b["p50_s"]) for b in fit.get("bins", []) if b.get("size", 0) > 0 and b.get("p50_s"))
        # the predictor at a measured size is that median: only the line is
        # held to it
        check_truth(case, name + " (against its own medians)", fit, own, exp)
    elif truth:
        check_predictions(case, name, fit, truth, exp)
    if against == "measured":
        # a call's own cost (an eager send returns once its bytes are
        # copied out): the link's rate and the message's verdict are the
        # joint fit's to give
        return
    if sel.get("joint"):
        # the eager limit the library declared for the path (profile section
        # "protocol"), where the sweep has sizes on both sides: the joint
        # fit breaks there
        path = sel.get("path")
        declared = [l["bytes"] for p in rep.get("protocol_limits", []) if p["path"] == path
                    for l in p["limits"] if "eager" in l["name"]]
        sizes_ = [s for s, _ in truth or []]
        for L in declared:
            below = [s for s in sizes_ if s < L - 128]
            above = [s for s in sizes_ if s > L]
            if len(below) < 3 or len(above) < 3:
                continue
            segs = fit.get("segments", [])
            # one segment ends at or below the limit, the next starts at most
            # a header's length below it (a bin's mean size can lie above it)
            at = any(a["size_hi"] <= L and b["size_lo"] >= L - 128 for a, b in zip(segs, segs[1:]))
            check(case, "%s breaks at the declared eager limit" % name,
                  at and L in [l["bytes"] for l in fit.get("protocol_limits", [])],
                  "limit %d B; fit's limits %s; segments %s" % (
                      L, [l["bytes"] for l in fit.get("protocol_limits", [])],
                      ", ".join("%s..%s" % (human_size(g["size_lo"]), human_size(g["size_hi"])) for g in segs)))
    if "bandwidth_Bps" in exp:
        want, tol, got = exp["bandwidth_Bps"], exp.get("bandwidth_tol", 0.10), fit.get("bandwidth_Bps")
        check(case, "%s bandwidth vs the link's payload rate" % name,
              got is not None and abs(rel(got, want)) <= tol,
              "B %s, payload rate %.4g MB/s%s (tolerance %d%%)" % (
                  "none" if got is None else "%.4g MB/s" % (got / 1e6), want / 1e6,
                  "" if got is None else ", %.2fx" % (got / want), 100 * tol))
    # the smallest and largest bins of the program's own sweep (a program may
    # also send other sizes, e.g. NetPIPE's 4-byte synchronisation)
    sizes = [s for s, _ in truth or []]
    bins = sorted((b for b in fit.get("bins", []) if b.get("size", 0) > 0 and
                   (not sizes or any(b["size_lo"] <= s <= b["size_hi"] for s in sizes))), key=lambda b: b["size"])
    for key, b in (("verdict_small", bins[0] if bins else None), ("verdict_large", bins[-1] if bins else None)):
        if key in exp:
            got = b.get("verdict") if b else None
            check(case, "%s verdict of the %s bin" % (name, "smallest" if key == "verdict_small" else "largest"),
                  got == exp[key], "%s: %s (want %s)" % (human_size(b["size"]) if b else "no bin", got, exp[key]))


def check_reference(case, rep, meta, exp):
    ref = exp["reference"]
    path = ref.get("path", meta.get("path"))
    np_ = meta["netpipe"]
    refs = [r for r in rep.get("references", []) if r.get("path") == path]
    if not refs:
        check(case, "reference link of %s present" % path, False,
              "references: %s" % [r.get("path") for r in rep.get("references", [])])
        return
    r = refs[0]
    a_tol, b_tol = ref.get("alpha_tol", REF_TOL), ref.get("bandwidth_tol", REF_TOL)
    a, b = r.get("alpha_s"), r.get("bandwidth_Bps")
    print("     %-26s %14s %14s" % ("%s (%s)" % (path, r.get("source")), "latency/alpha", "bandwidth"))
    print("     %-26s %14s %11.4g MB/s" % ("NetPIPE" if not np_.get("source") else "program's ping-pong",
                                             human_time(np_["latency_s"]), np_["peak_Bps"] / 1e6))
    print("     %-26s %14s %14s" % ("commfit reference", human_time(a),
                                     "-" if b is None else "%.4g MB/s" % (b / 1e6)))
    if rep.get("job", {}).get("oversubscribed"):
        # More ranks than CPUs: a call's time includes waiting for one, and no
        # link can be measured; what commfit must do is say so, not match.
        why = r.get("uncertain_why") or ""
        check(case, "reference link of an oversubscribed run marked uncertain (%s)" % path,
              "CPUs" in why, "uncertain_why: %r (alpha %s, NetPIPE %s)" % (
                  why, human_time(a), human_time(np_["latency_s"])))
        return
    why = r.get("uncertain_why")
    # strict: the case's traffic can pin the link down, so saying "uncertain" does not pass
    if why and not ref.get("strict") and not (a is not None and abs(rel(a, np_["latency_s"])) <= a_tol and
                    b is not None and abs(rel(b, np_["peak_Bps"])) <= b_tol):
        # The project's rule for a number that cannot be defended: say so, and
        # why.  An application whose traffic cannot pin the link down (no
        # small blocking messages, spans instead of transfers) passes here
        # only by saying it; the numbers are printed above all the same.
        check(case, "reference link of %s: off NetPIPE, and marked uncertain" % path, True,
              "alpha %s vs %s, B %s vs %.4g MB/s; uncertain: %s" % (
                  human_time(a), human_time(np_["latency_s"]), "none" if b is None else "%.4g MB/s" % (b / 1e6),
                  np_["peak_Bps"] / 1e6, why))
        return
    check(case, "reference alpha vs NetPIPE latency (%s)" % path,
          a is not None and abs(rel(a, np_["latency_s"])) <= a_tol,
          "alpha %s, NetPIPE %s at %d B%s (tolerance %d%%)" % (
              human_time(a), human_time(np_["latency_s"]), np_["latency_size_bytes"],
              "" if a is None else ", %+.0f%%" % (100 * rel(a, np_["latency_s"])), 100 * a_tol))
    check(case, "reference B vs NetPIPE peak bandwidth (%s)" % path,
          b is not None and abs(rel(b, np_["peak_Bps"])) <= b_tol,
          "B %s, NetPIPE peak %.4g MB/s at %s%s (tolerance %d%%)" % (
              "none" if b is None else "%.4g MB/s" % (b / 1e6), np_["peak_Bps"] / 1e6,
              human_size(np_["peak_size_bytes"]),
              "" if b is None else ", %.2fx" % (b / np_["peak_Bps"]), 100 * b_tol))


def check_app(case, rep, text, exp):
    if exp.get("no_fuse"):
        fuse = [a for a in rep.get("advice", []) if a.get("verdict") == "fuse"]
        check(case, "no advice to fuse", not fuse,
              "; ".join("%s on %s: fuse into %s B (saves %s)" % (a["op"], a.get("comm"), a.get("bucket_bytes"),
                                                                human_time(a.get("predicted_saving_s")))
                        for a in fuse) or "%d advice entries, none 'fuse'" % len(rep.get("advice", [])))
    if exp.get("nonblocking_not_cost"):
        nb = [o for o in rep.get("operations", []) if o.get("nonblocking")]
        # the JSON's per-operation verdicts: a nonblocking call returns at once,
        # its cost shows in the wait that completes it, so it may not carry a
        # startup-/bandwidth-bound verdict or advice as if its time were a transfer
        costed = [o for o in nb if o.get("verdict") in ("startup-bound", "bandwidth-bound")]
        check(case, "no nonblocking operation with a cost verdict (JSON operations[])", not costed,
              "; ".join("%s on %s: %s, %.1f%% of MPI time" % (o["op"], o.get("comm"), o.get("verdict"),
                                                             100 * (o.get("share") or 0)) for o in costed)
              or "%d nonblocking operations: %s" % (len(nb), ", ".join(sorted({o["op"] for o in nb}))))
        head = text.split("\nOPERATIONS", 1)[0]
        named = [w for w in ("MPI_Irecv", "MPI_Isend") if w in head]
        check(case, "text report before OPERATIONS does not name MPI_Irecv/MPI_Isend", not named,
              "named: %s" % ", ".join(named) if named else "%d lines checked" % len(head.splitlines()))


def monitoring_sent(d):
    """Open MPI's monitoring files of the case: (src, dst) -> [messages, bytes] of point-to-point (E lines)."""
    import glob
    sent = {}
    for path in sorted(glob.glob(os.path.join(d, "mon.*.prof"))):
        for line in open(path):
            m = re.match(r"^E\t(\d+)\t(\d+)\t(\d+) bytes\t(\d+) msgs sent", line)
            if m:
                s, t, b, n = map(int, m.groups())
                sent[(s, t)] = [n, b]
    return sent


def mpip_report(path):
    """mpiP's report (MPIP="-k 0"): {op: [calls, bytes sent]} summed over the ranks, from its callsite
    tables' all-ranks rows ("*"); bytes as mpiP prints them, four significant digits."""
    text = open(path).read()
    out = {}

    def rows(title):
        start = text.index("@--- " + title)
        for line in text[start:text.index("@---", start + 5)].splitlines():
            f = line.split()
            if len(f) >= 8 and f[1].isdigit() and f[2] == "*":
                yield f
    for f in rows("Callsite Time statistics"):
        out.setdefault("MPI_" + f[0], [0, 0.0])[0] += int(f[3])
    for f in rows("Callsite Message Sent statistics"):
        out.setdefault("MPI_" + f[0], [0, 0.0])[1] += float(f[7])
    return out


# polls: how many a program makes depends on when its messages come, run to run
MPIP_POLLS = ("MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome", "MPI_Iprobe", "MPI_Improbe")
# mpiP's sent bytes of a call that sends one block to each rank is one block (its send count); commfit's
# payload is every block the call moves out, the communicator's size times that
MPIP_ONE_BLOCK = ("MPI_Allgather", "MPI_Alltoall")


def traffic_ops():
    """The operations commfit records as point-to-point, collective or completion calls, from the spec
    its wrappers are generated from (plugin/mpi_calls.spec): the MPI_I and _init forms of collectives too."""
    spec = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugin", "mpi_calls.spec")
    kinds = ("send", "recv", "sendrecv", "isend", "irecv", "psend", "precv", "isendrecv", "coll", "custom:p2p",
             "custom:completion")
    ops = set()
    for line in open(spec):
        f = [x.strip() for x in line.split("|")]
        if line.startswith("#") or len(f) < 4 or f[1] not in kinds:
            continue
        ops.add(f[0])
        if "nb=yes" in f[3]:
            ops.add("MPI_I" + f[0][4:].lower()[:1] + f[0][5:])
        if "init=4" in f[3]:
            ops.add(f[0] + "_init")
    return ops


def check_mpip(case, d, p):
    """Calls per operation against mpiP's of the same job without commfit, and the bytes where both count
    the same thing: point-to-point sends (mpiP counts no received bytes) and the collectives it sizes alike."""
    mp = mpip_report(os.path.join(d, "mpip.txt"))
    got = {}
    size = {c["id"]: c["size"] for c in p["communicators"]}
    for r in p["records"]:
        if r["layer"] == "mpi" and r["kind"] in ("p2p", "collective", "completion"):
            g = got.setdefault(r["op"], [0, 0, set()])
            g[0] += r["calls"]
            g[1] += r["bytes"]
            g[2].add(size.get(r["comm"]))
    # both sides' operations: one commfit lost altogether is missing from its records, not zero there
    traffic = traffic_ops()
    ops = sorted(o for o in set(got) | {o for o in mp if o in traffic}
                 if o not in MPIP_POLLS and (got.get(o, [0])[0] or o in mp))
    got = {o: got.get(o, [0, 0, set()]) for o in ops}
    bad = [(o, got[o][0], mp.get(o, [0])[0]) for o in ops if got[o][0] != mp.get(o, [0])[0]]
    check(case, "calls of each of %d operations = mpiP's of the job without the profiler (polls aside)" % len(ops),
          len(ops) >= 10 and not bad, str(bad or [(o, got[o][0]) for o in ops]))
    cmp = []
    for o in ops:
        if o not in mp or not mp[o][1]:
            continue
        scale = 1
        if o in MPIP_ONE_BLOCK:
            sizes = got[o][2]
            if len(sizes) != 1 or None in sizes:
                continue
            scale = sizes.pop()
        cmp.append((o, got[o][1], mp[o][1] * scale))
    off = [c for c in cmp if abs(c[1] - c[2]) > 5e-4 * c[2]]
    check(case, "bytes sent of %d operations = mpiP's to its four digits (all-gather, all-to-all: x the "
          "communicator's size)" % len(cmp), len(cmp) >= 6 and not off, str(off or cmp))


def check_real_app(case, rep, d, prof, exp):
    """A real application's run: its point-to-point messages against Open MPI's monitoring of the same job
    without the profiler, what the profile says of the program, the advice's framework settings, the waits."""
    p = json.load(open(prof))
    job = p.get("job", {})
    if exp.get("mpip"):
        check_mpip(case, d, p)
    if exp.get("monitoring"):
        truth = monitoring_sent(d)
        cols = p["matrix"]["columns"]
        got = {}
        for row in p["matrix"]["pairs"]:
            r = dict(zip(cols, row))
            if r.get("source", "mpi") == "mpi":
                c = got.setdefault((r["src"], r["dst"]), [0, 0])
                c[0] += r["messages"]
                c[1] += r["bytes"]
        check(case, "point-to-point messages and bytes per pair = Open MPI's monitoring of the job without the profiler",
              bool(truth) and got == truth, "commfit %s, monitoring %s" % (sorted(got.items()), sorted(truth.items())))
    if "program" in exp:
        check(case, "job.program", job.get("program") == exp["program"], str(job.get("program")))
    if "frameworks" in exp:
        check(case, "job.frameworks", job.get("frameworks") == exp["frameworks"], str(job.get("frameworks")))
    if exp.get("no_framework_settings"):
        named = [(a["op"], a.get("ddp_bucket_cap_mb"), a.get("horovod_fusion_threshold"),
                  [c["name"] for c in a.get("candidates", []) if c.get("name")]) for a in rep.get("advice", [])]
        bad = [n for n in named if n[1] is not None or n[2] is not None or n[3]]
        check(case, "no framework's setting or named default for a job that loaded none (%d advice entries)" % len(named),
              named and not bad, str(bad or named))
        fuse = [a for a in rep.get("advice", []) if a.get("verdict") == "fuse"]
        check(case, "an advised bucket says the program merges the calls itself",
              all("the program would merge a step's calls" in (a.get("fuse_how") or "") for a in fuse),
              "; ".join("%s: %s" % (a["op"], a.get("fuse_how")) for a in fuse) or "no fuse verdict")
        text = subprocess.run([commfit, "report", prof], capture_output=True, text=True).stdout
        one = [a for a in rep.get("advice", []) if a.get("calls_per_step") == 1]
        check(case, "the text names no framework setting, and a stream of one call a step '1 call/step'",
              "bucket_cap_mb" not in text and "HOROVOD_FUSION_THRESHOLD" not in text
              and not re.search(r"(?<![\d.])1 calls/step", text) and (not one or " 1 call/step" in text),
              "%d streams at one call a step" % len(one))
    if exp.get("waiting"):
        # the breakdown's waiting: the fitted or uncertain collectives' shares times their wait shares
        bd = rep["breakdown"]
        want = sum(o["share"] * o["wait_share"] for o in rep["operations"]
                   if o.get("kind") == "collective" and not o.get("nonblocking") and o.get("wait_share") is not None
                   and o.get("bytes", 0) > 0  # a barrier's time is synchronization already
                   and o.get("verdict") in ("startup-bound", "bandwidth-bound", "uncertain"))
        check(case, "breakdown.waiting %.4f = the collectives' shares x their sampled wait shares %.4f" %
              (bd.get("waiting") or 0, want), want > 0 and abs((bd.get("waiting") or 0) - want) <= 1e-9 + 1e-6 * want,
              str(bd))
        split = bd["startup"] + bd["payload"] + bd["no_payload"] + bd["unexplained"] + bd["uncertain"] + \
            bd["blocked"] + bd["waiting"] + (bd.get("io") or 0)
        check(case, "the breakdown's parts add up to the ranked time", abs(split - 1) < 1e-9, str(bd))


def check_overlap(case, rep, text, meta, exp):
    want = exp["overlap"]
    op, comm = want["op"], want.get("comm", "world")
    check(case, "the profile charges completion calls to requests", rep.get("mpi_time", {}).get("waits_charged") is True)
    ops = [o for o in rep.get("operations", []) if o["op"] == op and o["comm"] == comm]
    if not ops:
        check(case, "%s on %s ranked" % (op, comm), False, "operations: %s" % [o["op"] for o in rep["operations"]])
        return
    o = ops[0]
    ranks = rep.get("job", {}).get("ranks") or 1
    check(case, "%s on %s ranked by its blocked time, with a share of the ranked time" % (op, comm),
          o.get("share") is not None and 0 < o["share"] <= 1, "share %s" % o.get("share"))
    truth = want.get("blocked_per_rank_s")
    if truth:
        got = (o.get("blocked_s") or 0) / ranks
        check(case, "blocked time against the program's own timer around its completion calls",
              abs(rel(got, truth)) <= TOL_SMALL, "commfit %s per rank, program %s (%+.0f%%)" % (
                  human_time(got), human_time(truth), 100 * rel(got, truth)))
    spans = [f for f in rep.get("fits", []) if f.get("nonblocking")]
    bad = [f["op"] for f in spans if f.get("startup_share") is not None or f.get("verdict") is not None or
           any(b.get("startup_share") is not None or b.get("verdict") is not None for b in f.get("bins", []))]
    bad += [x["op"] for x in rep.get("operations", []) if x.get("nonblocking") and
            (x.get("startup_share") is not None or x.get("verdict") is not None)]
    check(case, "no span carries a startup share or a verdict", not bad, ", ".join(bad) or "%d span fits" % len(spans))
    adv = [a for a in rep.get("advice", []) if a.get("nonblocking")]
    wall = rep.get("job", {}).get("wall_s") or rep.get("mpi_time", {}).get("wall_mean_s")
    over = [a for a in adv if (a.get("share") or 0) > 1 or (wall and (a.get("current_s") or 0) > wall)]
    check(case, "advice on nonblocking streams prices no span sums", not over,
          "; ".join("%s: share %s, %s of a %s run" % (a["op"], a.get("share"), human_time(a.get("current_s")),
                                                      human_time(wall)) for a in over) or "%d streams" % len(adv))
    comp = [x for x in rep.get("operations", []) if x.get("kind") == "completion"]
    left = sum(x["time_s"] for x in comp if x["op"].startswith("MPI_Wait"))
    check(case, "the Wait calls keep only what they did not charge", left <= 0.05 * o["time_s"],
          "%s left in Wait calls against %s charged to %s" % (human_time(left), human_time(o["time_s"]), op))
    bd = rep.get("breakdown", {})
    explained = (bd.get("startup") or 0) + (bd.get("payload") or 0)
    claims = rep.get("headline", "").startswith(("Startup dominates", "Bandwidth dominates"))
    check(case, "the headline claims a dominance only where the fits explain the time", not claims or explained >= 0.25,
          "%r; fitted operations explain %.1f%%" % (rep.get("headline"), 100 * explained))
    if o.get("hidden") is not None:
        check(case, "what the overlap hid: 1 - blocked / blocking, in [0, 1]",
              0 <= o["hidden"] <= 1 and abs(o["hidden"] - max(0.0, min(1.0, 1 - o["time_s"] / o["blocking_s"]))) < 1e-6,
              "hidden %.3f, blocked %s, blocking %s (%s)" % (o["hidden"], human_time(o["time_s"]),
                                                            human_time(o["blocking_s"]), o.get("blocking_source")))
    # a fused overlapped stream's saving leaves out the program's time around
    # each post outside MPI (bindings, request lists), or with the gap after
    # a post measured (call_gap_s) its time before each post: the advice says so
    fused = [a for a in adv if a.get("verdict") == "fuse"]
    fusion = text.split("\nFUSION ADVICE", 1)[1] if "\nFUSION ADVICE" in text else ""
    check(case, "a fused overlapped stream's advice says what it does not price",
          fusion.count("not priced: the program's own time around each post outside MPI") ==
          len([a for a in fused if a.get("framework_saving_s") is None]) and
          fusion.count("the framework's cost per post; not priced: its time before each post") ==
          len([a for a in fused if a.get("framework_saving_s") is not None]),
          "%d fused nonblocking streams, %d lines" % (len(fused), fusion.count("not priced:")))
    # nor the buckets in flight together at the final wait, where there are two or more
    # priced at the calibration's in-flight ratio where it measured one
    several = [a for a in fused if (a.get("buckets_per_step") or 0) >= 2]
    priced = [a for a in several if a.get("in_flight_ratio") is not None]
    flight = "not priced: the calibration times one bucket at a time;"
    check(case, "a fused overlapped stream of several buckets says they were timed one at a time",
          fusion.count(flight) == len(several) - len(priced),
          "%d fused nonblocking streams of 2 buckets a step or more, %d lines" % (len(several), fusion.count(flight)))
    # and, priced in flight: where the calibration timed the sets after its
    # other sweeps (no page faults recorded), that the program's allocator
    # may cost them more; where it counted their page faults on the heap as
    # the program left it, that they faulted in afresh, if a quarter of
    # their pages or more did
    old = [a for a in priced if a.get("in_flight_page_faults") is None]
    refault = [a for a in priced if a.get("in_flight_page_faults") is not None and
               a["in_flight_page_faults"] >= 0.25 * a["in_flight_calls"] * a["bucket_bytes"] / 4096]
    pages = "not priced: the memory MPI takes per bucket, if the program's malloc hands it back"
    check(case, "buckets priced in flight without their page faults say what the program's allocator may add",
          fusion.count(pages) == len(old), "%d priced in flight so, %d lines" % (len(old), fusion.count(pages)))
    faulted = "priced in: the program's malloc hands back the memory MPI takes per bucket"
    check(case, "buckets in flight that faulted their pages in afresh say so and how to keep them",
          fusion.count(faulted) == len(refault) and
          all("%.0f page faults a set of %d calls" % (a["in_flight_page_faults"], a["in_flight_calls"]) in fusion
              for a in refault), "%d faulted, %d lines" % (len(refault), fusion.count(faulted)))
    check(case, "a fused overlapped stream priced in flight says at what ratio",
          all("in flight: %.0f buckets posted together priced at %.2fx" % (a["buckets_per_step"], a["in_flight_ratio"])
              in fusion for a in priced), "%d priced in flight" % len(priced))
    check(case, "hidden_note (the HTML's line) is the text's, on every fused stream with a hidden end",
          all((a.get("hidden_note") is not None) == (a.get("verdict") == "fuse" and a.get("hidden_saving_step_s") is not None)
              and (a.get("hidden_note") is None or ("          %s\n" % a["hidden_note"]) in fusion) for a in adv),
          "%d notes" % len([a for a in adv if a.get("hidden_note")]))
    check(case, "in_flight_notes (the HTML's lines) are the text's, one for each of its lines on the buckets in flight",
          all(all(("          %s\n" % l) in fusion for l in a.get("in_flight_notes") or []) for a in adv) and
          sum(len(a.get("in_flight_notes") or []) for a in adv) ==
          len(several) + len(old) + len(refault), "%d notes" % sum(len(a.get("in_flight_notes") or []) for a in adv))
    verdict = text.split("\nFUSION ADVICE", 1)[0]
    line = [l for l in verdict.splitlines() if "%s on %s: " % (op, comm) in l and "Wait/Test" in l]
    check(case, "the verdict tells the overlap", bool(line) and
          ("the overlap hid" in line[0] or "how much the overlap hid is uncertain" in line[0]),
          line[0].strip()[:300] if line else "not in the VERDICT")
    # the verdict and the advice agree: a stream the advice fuses is not
    # one the verdict says fusing would not help; the verdict points to a
    # price only where the advice gives one, and says the polls go with the
    # calls only where the advice pays them per call
    mine = [a for a in fused if a["op"] == op and a.get("comm") == comm]
    check(case, "the verdict does not say fusing would not help a stream the advice fuses",
          not (mine and line and "would not help" in line[0]),
          "advice: %s; verdict: %s" % ([a.get("bucket_bytes") for a in mine], line[0].strip()[-160:] if line else "-"))
    own = [a for a in adv if a["op"] == op and a.get("comm") == comm]
    if line and "FUSION ADVICE prices" in line[0]:
        check(case, "the verdict points to a price the advice gives",
              bool(own) and own[0].get("verdict") is not None, "advice: %s" % [a.get("verdict") for a in own])
        check(case, "the verdict says the polls go with the calls as the advice pays them",
              ("and the polls that go with the posts" in line[0]) == bool(own[0].get("polls_with_posts")),
              "polls_with_posts %s" % own[0].get("polls_with_posts"))


def fusion_block(text, op, comm):
    """The lines of one stream in the text report's FUSION ADVICE."""
    fusion = text.split("\nFUSION ADVICE", 1)[1].split("\n\n", 1)[0] if "\nFUSION ADVICE" in text else ""
    out, inside = [], False
    for l in fusion.splitlines():
        if l.startswith("  ") and not l.startswith("   "):
            inside = l.startswith("  %s on %s " % (op, comm))
        if inside:
            out.append(l)
    return "\n".join(out)


CAND_LINE = re.compile(r"^    ((?:DDP|Horovod)[^:]*): (\d+) calls?/step, (uncertain: )?(saves|adds) ([\d.]+)% "
                       r"\(\+-([\d.]+)%, (\w+)\)(, and [\d.]+ [mun]?s/step outside MPI)?(.*)$")
cand_seen = {"uncertain": 0, "priced": 0}


def check_candidates(case, text):
    """The frameworks' default buckets in the text FUSION ADVICE: a figure
    whose uncertainty is as large as itself reads "uncertain", with what
    would settle it; the others stand as figures."""
    for l in text.split("\nFUSION ADVICE", 1)[-1].splitlines():
        m = CAND_LINE.match(l)
        if not m:
            continue
        name, vague, gain, unc, src, rest = m.group(1), m.group(3), float(m.group(5)), float(m.group(6)), m.group(7), m.group(9)
        want = unc >= gain
        settle = "calibration.skipped" in rest if src == "model" else "run's spread" in rest
        # equal as printed (to 0.1 %): the report decided on the unrounded figures, either reading stands
        tie = unc == gain
        check(case, "%s: %s%% +-%s%%: %s" % (name, m.group(5), m.group(6), "uncertain, and what settles it" if want else "a figure"),
              (tie or bool(vague) == want) and (settle if vague else rest == ""), l.strip())
        cand_seen["uncertain" if want else "priced"] += 1


def check_poll_excess(case, rep, text, prof, meta):
    """A nonblocking stream's polls beyond their median (the Tests that
    completed nothing: their time over calls x p50, from the profile's own
    records) are its share by posts, kept in its prediction: the report
    says so where they are a tenth of its polls or more."""
    recs = json.load(open(prof)).get("records", [])
    over = sum(max(0.0, r["time_s"]["sum"] - r["calls"] * r["time_s"]["p50"]) for r in recs
               if r.get("layer") == "mpi" and r.get("kind") == "completion" and r["op"].startswith("MPI_Test") and
               r.get("size_hi") == 0 and not (r.get("blocked_s") or 0) > 0 and (r["time_s"].get("p50") or 0) > 0)
    ops = rep.get("operations", [])
    polls = sum(o["time_s"] for o in ops if o.get("kind") == "completion" and o["op"].startswith("MPI_Test"))
    posted = sum(o["calls"] for o in ops if o.get("nonblocking") and o.get("kind") != "io")
    for a in [a for a in rep.get("advice", []) if a.get("nonblocking") and a.get("poll_s") is not None]:
        want = min(polls, over) * a["calls"] / posted / a["comm_size"] if posted else 0.0
        got = a.get("poll_excess_s")
        check(case, "%s: polls beyond their median %s a rank, from the records" % (a["op"], human_time(want)),
              got is not None and abs(got - want) <= 1e-6 * max(want, 1e-9), "poll_excess_s %s" % got)
        # said where the advice pays the polls per call and the tails are a tenth of them
        said = a.get("polls_with_posts") and got and got >= 0.1 * a["poll_s"]
        block = fusion_block(text, a["op"], a["comm"])
        check(case, "%s: the report %s the polls' tails" % (a["op"], "states" if said else "does not state"),
              ("polls beyond their median: " in block) == bool(said), "%s of %s" % (got, a["poll_s"]))
        if said:
            check(case, "%s: polls_note (the HTML's line) is the text's line" % a["op"],
                  ("    polls beyond their median: %s\n" % a.get("polls_note")) in block, str(a.get("polls_note")))
        check_poll_load(case, a, recs, json.load(open(prof)), meta, got, block if said else None)
        # the blocked excess (or a disturbed run) is said, the HTML's line the text's
        note, want = a.get("disturbed_note"), bool((a.get("blocked_excess_s") or 0) > 0 or a.get("disturbed"))
        check(case, "%s: disturbed_note %s, and is the text's line" % (a["op"], "given" if want else "null"),
              (note is not None) == want and (note is None or ("    %s\n" % note) in block), str(note))


def check_poll_load(case, a, recs, p, meta, excess, block):
    """The part of the polls' tails load can hold (poll_load_s): the
    preemptions the ranks recorded per step of the step region
    (ranks[].step_preemptions, its period step_s) that land in the
    stream's polls, each at most the longest poll, at most the tails; null
    where the profile has no preemptions.  Where the trainer counted its
    own (getrusage over its timed steps, meta's trainer), the profile's
    are held to them."""
    ranks = [r for r in p.get("ranks", []) if r.get("step_preemptions") is not None and r.get("step_s")
             and r.get("step_region") == a.get("steps_region")]
    got = a.get("poll_load_s")
    if not ranks or a.get("steps_source") != "region":
        check(case, "%s: no poll_load_s without the step's preemptions" % a["op"], got is None, str(got))
        return
    pre = sum(r["step_preemptions"] for r in ranks) / len(ranks)
    # the highest rank's rate, at the upper end of its count (N + 2 sqrt(N + 1) + 1)
    n = a["steps"]
    rate = max((r["step_preemptions"] * n + 2 * math.sqrt(r["step_preemptions"] * n + 1) + 1) / (n * r["step_s"])
               for r in ranks)
    longest = max(r["time_s"]["max"] for r in recs
                  if r.get("layer") == "mpi" and r.get("kind") == "completion" and r["op"].startswith("MPI_Test") and
                  r.get("size_hi") == 0 and not (r.get("blocked_s") or 0) > 0 and (r["time_s"].get("p50") or 0) > 0)
    want = min(excess, rate * a["poll_s"] * longest)
    check(case, "%s: poll_load_s %s: %.2f preemptions a step (%.0f a second at most) in polls of %s a step, the "
          "longest %s" % (a["op"], human_time(want), pre, rate, human_time(a["poll_s"] / a["steps"]), human_time(longest)),
          got is not None and abs(got - want) <= 1e-5 * max(want, 1e-9), str(got))
    check(case, "%s: step_preemptions is the ranks' mean" % a["op"],
          a.get("step_preemptions") is not None and abs(a["step_preemptions"] - pre) <= 1e-5 * max(pre, 1), "")
    if block is not None:
        check(case, "%s: the text says the context switches and the contention" % a["op"],
              "%.1f involuntary context switches a step" % pre in block and
              "of the tails, about %s/step is CPU contention" % human_time(want / a["steps"]) in block, "")
    tr = meta.get("trainer") or {}
    if tr.get("preempted_per_step") is not None:
        # the plugin's bookkeeping (entries, the count per step) against the
        # trainer's own reading of the same counter over its timed steps
        truth = tr["preempted_per_step"]
        check(case, "%s: step_preemptions %.2f against the trainer's own getrusage count %.2f" % (a["op"], pre, truth),
              abs(pre - truth) <= max(0.5, 0.25 * truth), "")
    if tr.get("poll_offcpu_ms_mean") is not None:
        # the truth of the estimate: the hooks' polls timed against the
        # thread's CPU time (time.thread_time) by the trainer; commfit's
        # contention in the polls must not fall short of it
        off = tr["poll_offcpu_ms_mean"] / 1e3
        est = want / a["steps"]
        check(case, "%s: the polls' time off the CPU the trainer measured, %s a step, within commfit's estimate "
              "of their contention, %s a step (x1.5 + 10 us)" % (a["op"], human_time(off), human_time(est)),
              off <= 1.5 * est + 10e-6, "")


def check_calibrated(case, rep, prof, exp):
    want = exp["calibrated"]
    op, comm = want["op"], want.get("comm", "world")
    p = json.load(open(prof))
    cal = p.get("calibration") or {}
    ids = {m["id"] for m in p.get("communicators", []) if comm in (m.get("label"), m.get("user_name"))}
    cols = [e for e in cal.get("collectives", []) if e["op"] == op and e["for_op"] == op and e["comm"] in ids]
    got = [x["bytes"] for x in cols[0]["sizes"]] if cols else []
    check(case, "the calibration timed %s itself for the program's %s on %s, from 8 B" % (op, op, comm),
          len(cols) == 1 and got and got[0] == 8 and got == sorted(got) and
          all(x["reps"] >= 3 and 0 < x["best_s"] <= x["p50_s"] for x in cols[0]["sizes"]),
          "sizes %s; collectives %s" % (got, [(e["op"], e["for_op"], e["comm"]) for e in cal.get("collectives", [])]))
    adv = [a for a in rep.get("advice", []) if a["op"] == op and a["comm"] == comm]
    check(case, "advice for %s on %s" % (op, comm), len(adv) == 1 and adv[0].get("model"))
    if len(adv) != 1 or not adv[0].get("model"):
        return
    a = adv[0]
    hi = got[-1] if got else 0
    fits = [f for f in rep.get("fits", []) if f["op"] == op and f["comm"] == comm]
    bins = [x for f in fits for x in f["bins"] if x.get("size")]
    within = [x for x in bins if x["size"] <= hi]
    off = ["%.0f B: %s" % (x["size"], x.get("prediction_source")) for x in within
           if x.get("prediction_source") != "calibration"]
    check(case, "its own sizes within the %d B calibrated priced on the calibration (%d of %d bins)"
          % (hi, len(within), len(bins)), len(within) >= 2 and not off, "; ".join(off))
    # a candidate's buckets hold its size, or a larger tensor alone, and at
    # most the step's bytes: on the line only where they may pass hi
    big = max((x["size"] for x in bins), default=0)
    line = [c["name"] or c["bucket_bytes"] for c in a.get("candidates", []) if c["time_source"] == "model" and
            min(max(c["bucket_bytes"], big), a["bytes_per_step"]) <= hi]
    check(case, "no candidate whose buckets lie within the calibrated sizes priced on the line", not line,
          "on the line: %s" % line)
    check(case, "no reason points to a blocking run", "blocking would" not in (a.get("reason") or ""),
          a.get("reason") or "")


def check_memory(case, rep, text, prof, exp):
    """Memory faulted in afresh every step (ranks[].step_minor_faults): a
    stream's advice says so, with the mean per rank, exactly where it is a
    quarter of the stream's pages a step or more (a nonblocking stream's
    faults are the ranks' mean); the recording says whether this one does
    (expect.refaults)."""
    ranks = json.load(open(prof)).get("ranks", [])
    fusion = text.split("\nFUSION ADVICE", 1)[1] if "\nFUSION ADVICE" in text else ""
    nb = [a for a in rep.get("advice", []) if a.get("nonblocking")]
    for a in nb:
        region = a.get("steps_region") if a.get("steps_source") == "region" else None
        per = [r["step_minor_faults"] for r in ranks
               if r.get("step_minor_faults") is not None and r.get("step_region") == region]
        want = sum(per) / len(per) if per and region else None
        got = a.get("step_page_faults")
        check(case, "%s on %s: the faults per step are the ranks' mean" % (a["op"], a["comm"]),
              (want is None and got is None) or (want is not None and got is not None and abs(got - want) <= 1e-6 * max(1.0, want)),
              "advice %s, ranks %s" % (got, per))
    # the documented rule, against the report's own verdict on it: every
    # stream, blocking or not, whose faults are a quarter of its pages a step
    streams = [a for a in rep.get("advice", []) if a.get("bytes_per_step")]
    shown = [a for a in streams if a.get("step_page_faults") is not None and
             a["step_page_faults"] >= 0.25 * a["bytes_per_step"] / 4096]
    check(case, "step_refaulted is the rule's: a quarter of the stream's 4 KiB pages a step or more",
          all(a.get("step_refaulted") is (a in shown if a.get("step_page_faults") is not None else None)
              for a in streams), str([(a.get("step_page_faults"), a.get("step_refaulted")) for a in streams]))
    check(case, "a memory line for each stream faulting a quarter of its pages a step or more",
          fusion.count("    memory: ") == len(shown) and
          all("memory: %.0f minor page faults a step" % a["step_page_faults"] in fusion for a in shown),
          "%d such streams, %d lines" % (len(shown), fusion.count("    memory: ")))
    # the JSON's memory_note (the HTML's line) is the text's sentence, and only there
    check(case, "memory_note: the text's memory line for each such stream, null for the others",
          all((a.get("memory_note") is not None) == (a in shown) for a in streams) and
          all(("    memory: %s\n" % a["memory_note"]) in fusion for a in shown),
          str([a.get("memory_note") for a in streams]))
    # a nonblocking stream's buckets priced with the calibration's fresh
    # page where the profile has one: the share of the stream's pages
    # refaulted (at most all) less the set's own faults, at that cost; one
    # bucket a step half of it (cf_advice.h, "Refaults")
    pf = (json.load(open(prof)).get("calibration") or {}).get("page_fault_s")
    for a in [x for x in shown if x.get("nonblocking")]:
        pages = a["bytes_per_step"] / 4096
        full = min(1.0, a["step_page_faults"] / pages) * pages
        cands = a.get("candidates") or []
        if pf is None:
            check(case, "%s on %s: no fresh page measured, no refaults priced, and the line says so" % (a["op"], a["comm"]),
                  a.get("refault_step_s") is None and all(c.get("refault_step_s") is None for c in cands) and
                  "profile with them to price the buckets" in fusion, str(a.get("refault_step_s")))
            continue
        ok = abs((a.get("page_fault_s") or 0) - pf) <= 1e-6 * pf and all(
            c.get("refault_pages_per_step") is not None and
            0 <= c["refault_pages_per_step"] <= (1.0 if c["buckets_per_step"] >= 2 else 0.5) * full + 1e-6 and
            abs(c["refault_step_s"] - c["refault_pages_per_step"] * pf) <= 1e-9 + 1e-5 * c["refault_step_s"]
            for c in cands)
        check(case, "%s on %s: every candidate's refaults priced at the fresh page's %.3g s, within the stream's %.0f pages"
              % (a["op"], a["comm"], pf, full), ok, str([(c.get("buckets_per_step"), c.get("refault_pages_per_step"))
                                                       for c in cands][:6]))
        check(case, "%s on %s: the memory line says the buckets are priced with it" % (a["op"], a["comm"]),
              "the buckets are priced with it: %.0f pages a step" % a["refault_pages_per_step"] in fusion,
              str(a.get("refault_pages_per_step")))
    # a blocking stream's: one bucket's temporary buffer refaulted, stated
    # at the fresh page's cost beside a price that leaves it out
    for a in [x for x in shown if not x.get("nonblocking")]:
        if pf is None:
            check(case, "%s on %s: no fresh page measured, no refaults stated" % (a["op"], a["comm"]),
                  a.get("refault_step_s") is None and "one bucket's temporary buffer would cost" not in fusion,
                  str(a.get("refault_step_s")))
            continue
        # the advised bucket's (else the best one's: at most the step's pages)
        top = a["bytes_per_step"] / 4096
        pages = min(a["bucket_bytes"] / 4096, top, a["step_page_faults"]) if a.get("bucket_bytes") else None
        got = a.get("refault_pages_per_step")
        check(case, "%s on %s: one bucket's temporary buffer stated, not priced: %s pages at %.3g s"
              % (a["op"], a["comm"], "%.0f" % pages if pages else "<= %.0f" % top, pf),
              a.get("refault_priced") is False and got is not None and
              (abs(got - pages) <= 1e-6 * pages + 1e-6 if pages else 0 < got <= top + 1e-6) and
              "one bucket's temporary buffer would cost %.0f pages a step" % a["refault_pages_per_step"] in fusion and
              all(c.get("exposed_step_s") is None for c in a.get("candidates") or []),
              str((a.get("refault_priced"), a.get("refault_pages_per_step"))))
    want = exp.get("refaults")
    if want:
        a = [x for x in streams if x["op"] == want["op"] and x["comm"] == want["comm"]]
        check(case, "%s on %s: %s" % (want["op"], want["comm"], "memory faulted in afresh every step, said" if
                                       want["memory_line"] else "no memory faulted in afresh to speak of"),
              bool(a) and (a[0] in shown) == want["memory_line"],
              "step_page_faults %s, %s B a step" % (a[0].get("step_page_faults"), a[0].get("bytes_per_step"))
              if a else "no advice entry")


def check_in_flight(case, rep, prof, exp):
    """The calibration timed the stream's bucket sizes in flight together
    (calls = the buckets of a step, at most 16), and an advised size of
    two buckets or more that it reached is priced at the measured ratio:
    the set's median over calls x the one-at-a-time median there,
    interpolated to the advice's buckets (cf_calib_inflight_ratio)."""
    want = exp["in_flight"]
    cal = json.load(open(prof)).get("calibration", {})
    ents = [e for e in cal.get("collectives", []) if e.get("for_op") == want["op"]]
    f = ents[0].get("in_flight", []) if ents else []
    step = ents[0].get("in_flight_step_bytes") if ents else None
    check(case, "the calibration timed %s's buckets in flight" % want["op"],
          bool(f) and all(x["calls"] == min(16, -(-step // x["bytes"])) for x in f),
          str([(x["bytes"], x.get("calls")) for x in f]))
    adv = [a for a in rep.get("advice", []) if a["op"] == want["op"] and a.get("comm") == want["comm"]]
    if not adv or adv[0].get("verdict") != "fuse" or adv[0].get("buckets_per_step", 0) < 2:
        return
    a = adv[0]
    one = {x["bytes"]: x["p50_s"] for x in ents[0]["sizes"]}
    at = [x for x in f if x["bytes"] == a["bucket_bytes"]]
    if not at or a["bucket_bytes"] not in one:
        check(case, "the advised buckets, beyond the in-flight sweep, are said not priced",
              a.get("in_flight_ratio") is None, str(a.get("in_flight_ratio")))
        return
    x = at[0]
    r = x["p50_s"] / (x["calls"] * one[a["bucket_bytes"]])
    m = a["buckets_per_step"]
    r = r if m >= x["calls"] else 1 + (r - 1) * (m - 1) / (x["calls"] - 1)
    check(case, "the advised %d B buckets priced in flight at %.3f" % (a["bucket_bytes"], r),
          a.get("in_flight_ratio") is not None and abs(a["in_flight_ratio"] - r) < 1e-6 * r,
          str(a.get("in_flight_ratio")))


def check_gap(case, rep, d, exp):
    """The framework's time between back-to-back calls of a blocking
    stream, read by report from the profile's sampled calls: present, at
    least what a Python loop costs, and at most what the trainer's own
    exchange timer leaves outside commfit's MPI time per call."""
    want = exp["call_gap"]
    adv = [a for a in rep.get("advice", []) if a["op"] == want["op"] and a.get("comm") == want.get("comm", "world")]
    gap = adv[0].get("call_gap_s") if adv else None
    if gap is None:
        check(case, "call_gap_s of %s" % want["op"], False, "no call_gap_s in the report's advice")
        return
    a = adv[0]
    check_gap_counted(case, a, gap)
    if a.get("nonblocking"):
        check_post_gap(case, a, gap, d, want)
        return
    rows = list(csv.DictReader(open(os.path.join(d, "steps.csv"))))
    ex = sum(float(r["exchange_s_mean"]) for r in rows) / len(rows)
    hi = (ex - a["current_s"] / a["steps"]) / a["calls_per_step"]
    check(case, "call_gap_s within [a Python loop's cost, the trainer's exchange timer outside MPI per call]",
          want["min_s"] <= gap <= hi, "%s between calls; bounds %s and %s" % (human_time(gap), human_time(want["min_s"]),
                                                                            human_time(hi)))


def trainer(meta):
    return meta.get("trainer", {})


def check_diff(case, d, meta, exp):
    """`commfit diff A B`, A the same trainer run before B without the
    buckets.  The trainers' post timer (post_ms_mean: the hooks'
    MPI_Iallreduce and MPI_Testall with mpi4py's binding around them) and
    wait timer (wait_ms_mean: the MPI_Waitall call) hold what commfit
    measures, plus the binding's time outside MPI that commfit sees only
    from the post to the poll after it (call_gap_s): so commfit's exchange
    lies a little under the trainer's, and its saving under the trainers'
    by what the binding's time falls with the calls.  A blocking trainer's
    exchange timer (exchange_ms_mean: its all-reduces with the Python
    around each) holds the calls and the gaps between them."""
    want = exp["diff"]
    ad = os.path.join(corpus, want["against"])
    ma = json.load(open(os.path.join(ad, "meta.json")))
    run = subprocess.run([commfit, "diff", "--format", "json", os.path.join(ad, "profile.json"),
                          os.path.join(d, "profile.json")], capture_output=True, text=True)
    txt = subprocess.run([commfit, "diff", os.path.join(ad, "profile.json"), os.path.join(d, "profile.json")],
                         capture_output=True, text=True)
    name = "diff against %s" % want["against"]
    if run.returncode != 0 or txt.returncode != 0:
        check(case, name, False, "exit %d/%d: %s" % (run.returncode, txt.returncode, run.stderr.strip()))
        return
    rows = [o for o in json.loads(run.stdout)["operations"]
            if o["op"] == want["op"] and o["comm"] == {"a": want["comm"], "b": want["comm"]}]
    e = rows[0]["measured_per_step"] if rows else None
    if e is None:
        check(case, name + ": %s on %s measured per step on both sides" % (want["op"], want["comm"]), False,
              "row %s" % (rows[0] if rows else "missing"))
        return
    ta, tb = trainer(ma), trainer(meta)
    check(case, name + ": calls per step as the trainers made them",
          abs(e["calls_per_step"]["a"] - ta["buckets_per_step"]) < 0.5 and
          abs(e["calls_per_step"]["b"] - tb["buckets_per_step"]) < 0.5,
          "%s against %s, %s" % (e["calls_per_step"], ta["buckets_per_step"], tb["buckets_per_step"]))
    check(case, name + ": bytes per step as the trainers moved them",
          all(abs(e["bytes_per_step"][k] - t["bytes_per_step"]) <= 0.001 * t["bytes_per_step"]
              for k, t in (("a", ta), ("b", tb))),
          "%s against %s, %s" % (e["bytes_per_step"], ta["bytes_per_step"], tb["bytes_per_step"]))
    mine, theirs = {}, {}
    overlap = str(ta.get("mode", "")).startswith("overlap")
    for k, t in (("a", ta), ("b", tb)):
        mine[k] = e["mpi_step_s"][k] + (e["framework_step_s"][k] or 0.0)
        theirs[k] = ((t["post_ms_mean"] + t["wait_ms_mean"]) if str(t.get("mode", "")).startswith("overlap")
                     else t["exchange_ms_mean"]) / 1e3
        check(case, name + ": %s's exchange within [75 %%, 105 %%] of its trainer's timer" % k.upper(),
              0.75 * theirs[k] <= mine[k] <= 1.05 * theirs[k],
              "%s (MPI %s, outside %s) against %s" % (human_time(mine[k]), human_time(e["mpi_step_s"][k]),
                                                      human_time(e["framework_step_s"][k] or 0.0), human_time(theirs[k])))
        st = e["step_period_s"][k]
        check(case, name + ": %s's step period within 2 %% of its trainer's step time" % k.upper(),
              st is not None and abs(st - t["step_ms_mean"] / 1e3) <= 0.02 * t["step_ms_mean"] / 1e3,
              "%s against %s" % (st and human_time(st), human_time(t["step_ms_mean"] / 1e3)))
    # a blocking side of under 3 calls a step has no gap of its own: the
    # other side's per call, times its calls, and the text says so
    calls, fws = e["calls_per_step"], e["framework_step_s"]
    for k, o in (("a", "b"), ("b", "a")):
        want = not overlap and calls[k] < 3 <= calls[o]
        got = (e.get("framework_gap_borrowed") or {}).get(k)
        check(case, name + ": %s's framework time %s" % (k.upper(), "borrowed" if want else "its own"),
              got is want and (not want or (fws[o] is not None and fws[k] is not None and
                                            abs(fws[k] - fws[o] / calls[o] * calls[k]) <= 1e-6 * fws[o])) and
              (not want or ("%s's calls, too few a step to measure it, at %s's" % (k.upper(), o.upper())) in txt.stdout),
              "borrowed %s, framework %s, calls %s" % (e.get("framework_gap_borrowed"), fws, calls))
    sv, tsv = e["saving_step_s"], theirs["a"] - theirs["b"]
    if abs(tsv) >= 0.05 * theirs["a"]:
        check(case, name + ": the saving B - A within [60 %, 110 %] of the trainers', same sign",
              e["with_framework"] and sv * tsv > 0 and 0.6 * abs(tsv) <= abs(sv) <= 1.1 * abs(tsv),
              "%s against %s" % (human_time(sv), human_time(tsv)))
    else:
        # a saving under 5 % of the exchange is within one run's noise: held in
        # absolute terms, to 2 % of A's exchange
        check(case, name + ": the saving B - A within 2 % of A's exchange of the trainers' (under 5 % of it)",
              e["with_framework"] and abs(sv - tsv) <= 0.02 * theirs["a"],
              "%s against %s (A's exchange %s)" % (human_time(sv), human_time(tsv), human_time(theirs["a"])))
    verdict = e.get("a_verdict")
    said = "A advised buckets of" if verdict == "fuse" else "A %s" % verdict
    check(case, name + ": the text says A's verdict and what B %s" % ("saves" if sv > 0 else "costs"),
          said in txt.stdout and ("B %s " % ("saves" if sv > 0 else "costs")) in txt.stdout, said)
    # nonblocking: the saving reads under the trainers' by the bindings' time
    # before each post, which the text names; a blocking stream's gap holds it
    unmeasured = "not counted: the framework's time before each post" in txt.stdout
    check(case, name + ": the text %s the framework's time before each post" % ("names" if overlap else "does not name"),
          unmeasured == overlap, txt.stdout[-400:])
    # where A measured its lead (job.post_lead_s, a poll to the next post),
    # the bound: A's lead once per post B removes, and the trainers' saving
    # no larger than the measured one plus that bound (10 % for one pair's
    # noise); the text states it
    pa = json.load(open(os.path.join(ad, "profile.json")))["job"]
    lead, up = pa.get("post_lead_s"), e.get("framework_lead_step_s")
    if overlap and lead is not None and pa.get("post_leads", 0) >= 8:
        bound = lead * (calls["a"] - calls["b"])
        check(case, name + ": the bound of the time before each post: A's lead %s x the %g posts B removes" %
              (human_time(lead), calls["a"] - calls["b"]),
              up is not None and abs(up - bound) <= 1e-6 * bound + 1e-12 and e.get("framework_lead_side") == "a",
              "%s (side %s) against %s" % (up, e.get("framework_lead_side"), bound))
        check(case, name + ": the trainers' saving within the measured one plus that bound (+10 %)",
              up is not None and tsv <= 1.1 * (sv + up),
              "%s against %s + %s" % (human_time(tsv), human_time(sv), human_time(up or 0.0)))
        check(case, name + ": the text states the bound", "so B saves up to %s a step more" % human_time(bound)
              in txt.stdout, txt.stdout[-500:])
        # against A's own post timer (post_ms_mean: its MPI_Iallreduce and
        # MPI_Testall with the Python around them): what it holds outside
        # commfit's MPI time per post, beyond the gap commfit counts, is
        # binding time around the post that the lead must bound
        rj = json.loads(subprocess.run([commfit, "report", "--format", "json", os.path.join(ad, "profile.json")],
                                       capture_output=True, text=True).stdout)
        aa = [x for x in rj["advice"] if x["op"] == rows[0]["op"] and x["comm"] == exp["diff"]["comm"]][0]
        inside = (ta["post_ms_mean"] / 1e3 - (aa["post_s"] + aa["poll_s"]) / aa["steps"]) / aa["calls_per_step"] - \
            pa["post_gap_s"]
        check(case, name + ": A's lead at least the binding time its trainer's post timer holds beyond the gap",
              inside <= lead, "%s against %s" % (human_time(inside), human_time(lead)))
    else:
        check(case, name + ": no bound without A's lead", up is None, str(up))


def check_gap_counted(case, a, gap):
    """Each candidate's saving as the verdict judges it is its MPI saving
    per step (blocking: the predictor's, now against the candidate;
    nonblocking: the measured time against its predicted run) and the gap
    once per call it removes."""
    bad, n = [], 0
    for c in a.get("candidates") or []:
        if c.get("saving_step_s") is None:
            continue
        n += 1
        if a.get("nonblocking"):
            mpi = (a["current_s"] - c["predicted_s"]) / a["steps"]
        else:
            mpi = a["model_current_step_s"] - c["model_step_s"]
        want = mpi + gap * (a["calls_per_step"] - min(c["buckets_per_step"], a["calls_per_step"]))
        if abs(c["saving_step_s"] - want) > 1e-6 * abs(want) + 1e-12:
            bad.append("%s: %s vs %s" % (c["bucket_bytes"], c["saving_step_s"], want))
    check(case, "every candidate's saving_step_s: its MPI saving and the gap once per call removed "
          "(%d candidates priced)" % n, not bad and n > 0, "; ".join(bad))


def check_post_gap(case, a, gap, d, want):
    """A nonblocking stream's call_gap_s: the profile's job.post_gap_s (a
    post to the completion call after it), at least a Python call's cost
    and at most what the trainer's own post timer (its MPI_Iallreduce,
    MPI_Testall and the Python between, post_ms_mean) leaves beyond
    commfit's MPI time in the posts and polls, per post; the advised
    buckets save it once per post removed (framework_saving_s) and the
    text says so."""
    job = json.load(open(os.path.join(d, "profile.json")))["job"]
    check(case, "call_gap_s is the profile's post_gap_s (%s gaps)" % job.get("post_gaps"),
          job.get("post_gap_s") == gap and a.get("call_gap_pairs") == job.get("post_gaps"),
          "%s vs %s" % (gap, job.get("post_gap_s")))
    tr = json.load(open(os.path.join(d, "meta.json")))["trainer"]
    hi = (tr["post_ms_mean"] / 1e3 - (a["post_s"] + a["poll_s"]) / a["steps"]) / a["calls_per_step"]
    check(case, "post gap within [a Python call's cost, the trainer's post timer outside MPI per post]",
          want["min_s"] <= gap <= hi, "%s after a post; bounds %s and %s" % (human_time(gap), human_time(want["min_s"]),
                                                                            human_time(hi)))
    if a.get("verdict") == "fuse":
        fw = gap * (a["calls_per_step"] - a["buckets_per_step"]) * a["steps"]
        check(case, "framework_saving_s: the gap once per post the buckets remove",
              a.get("framework_saving_s") is not None and abs(a["framework_saving_s"] - fw) <= 1e-9 * fw,
              "%s vs %s" % (a.get("framework_saving_s"), fw))
        text = subprocess.run([commfit, "report", os.path.join(d, "profile.json")], capture_output=True,
                              text=True).stdout
        ddp = [l for l in text.splitlines() if l.strip().startswith("DDP default (25 MiB): 1 call/step")]
        check(case, "the text's DDP default line names the framework's time it removes beside its MPI saving",
              len(ddp) == 1 and re.search(r"\), and [0-9.]+ [mun]?s/step outside MPI(;|$)", ddp[0]) is not None, str(ddp))
        check(case, "the text's outside MPI line names the post gap, and no 'not priced' line",
              "from a post to the completion call after it (median over the ranks, %d gaps)" % job["post_gaps"]
              in text and "not priced: the program's own time around each post" not in text, "")
        check(case, "outside_mpi_note (the HTML's line) is the text's line",
              a.get("outside_mpi_note") is not None and ("          %s\n" % a["outside_mpi_note"]) in text,
              str(a.get("outside_mpi_note")))
    else:
        check(case, "no framework_saving_s without fusion", a.get("framework_saving_s") is None,
              str(a.get("framework_saving_s")))


def check_disturbed(case, rep, exp):
    """A blocking stream whose run measured more than twice its
    predictor per step, beyond twice the predictor's uncertainty, is said
    to be disturbed, and no other; meta's expect.disturbed names the
    streams a case must say it of, and those it must not."""
    adv = [a for a in rep.get("advice", []) if not a.get("nonblocking") and a.get("measured_over_model") is not None]
    for a in adv:
        step, now = a["current_s"] / a["steps"], a["model_current_step_s"]
        want = a["measured_over_model"] > 2 and step - now > 2 * a["model"]["current_step_uncertainty_s"]
        check(case, "%s: disturbed %s (measured %.3g s a step, predictor %.3g s)" % (a["op"], want, step, now),
              a.get("disturbed") is want and abs(a["measured_over_model"] - step / now) < 1e-6 * step / now)
    for op, want in exp.get("disturbed", {}).items():
        got = [a.get("disturbed") for a in adv if a["op"] == op]
        check(case, "%s: the run %s disturbed" % (op, "is" if want else "is not"), got == [want], str(got))


def stream_of(rep, op, comm):
    adv = [a for a in rep.get("advice", []) if a["op"] == op and a.get("comm") == comm]
    return adv[0] if adv else None


def runs_expected(reps):
    """The advice over runs (cf_advice.h, "Several runs"), recomputed from
    each run's own report: its verdict, and per candidate its saving and
    uncertainty as the verdict judges them and its predicted run time.
    Returns (verdict, bucket, saving, uncertainty, spread, run saving per
    step) or None where this run's advice stands."""
    n, fuse = len(reps), sum(r["verdict"] == "fuse" for r in reps)
    a = reps[0]
    cands = []
    for c in a.get("candidates") or []:
        sv, unc, run, mpi = [], [], [], []
        for r in reps:
            x = [d for d in r.get("candidates") or [] if d["bucket_bytes"] == c["bucket_bytes"]]
            if not x or None in (x[0].get("saving_step_s"), x[0].get("saving_uncertainty_step_s"), x[0].get("predicted_s")):
                break
            sv.append(x[0]["saving_step_s"])
            # its MPI part: less the gap once per call removed (cf_advice_eligible)
            mpi.append(sv[-1] - (r.get("call_gap_s") or 0.0) *
                       (r["calls_per_step"] - min(x[0]["buckets_per_step"], r["calls_per_step"])))
            unc.append(x[0]["saving_uncertainty_step_s"])
            run.append((r["current_s"] - x[0]["predicted_s"]) / r["steps"])
        else:
            spread = (max(sv) - min(sv)) / 2
            cands.append((c["bucket_bytes"], statistics.median(sv), math.hypot(statistics.median(unc), spread), spread,
                          statistics.median(run), statistics.median(mpi)))
    if not cands or fuse == 0:
        return None
    # judged by its MPI loss where the MPI part loses (cf_advice_eligible);
    # the figures stay the medians
    judged = {c[0]: (c[5] if c[5] < 0 else c[1]) for c in cands}
    best = max(cands, key=lambda c: judged[c[0]])
    # the step's time for the stream: MPI, and the framework's outside it
    # once per call where the gap was measured (call_gap_s)
    ref = statistics.median([(r["model_current_step_s"] if not r["nonblocking"] else r["current_s"] / r["steps"]) +
                             (r.get("call_gap_s") or 0.0) * r["calls_per_step"] for r in reps])
    if fuse == n:
        j = judged
        ok = [c for c in cands if j[c[0]] > c[2] and j[c[0]] >= 0.05 * ref]
        if ok:
            ti = max(ok, key=lambda c: j[c[0]])
            pick = [c for c in cands if j[c[0]] > c[2] and ref - j[c[0]] <= (ref - j[ti[0]]) * 1.05][0]
            return ("fuse",) + pick[:5]
        return ("no gain" if judged[best[0]] > best[2] else "uncertain", None) + best[1:5]
    return ("uncertain", None) + best[1:5]


def close(x, y):
    return x is None and y is None or (x is not None and y is not None and abs(x - y) <= 1e-6 * max(abs(x), abs(y)) + 1e-12)


def check_runs(case, rep, prof, exp):
    """Fusion advice over several runs of one program (commfit report A B
    ...), held to each run's own report: the verdict, bucket, saving,
    uncertainty, spread and predicted saving recomputed from the runs'
    candidates by the documented rule (runs_expected), and this run's
    advice where no run advises fusion.  The same run twice (a copy)
    keeps its advice with no spread; a run without the profile's streams
    is named on stderr and leaves the advice alone (runs 1)."""
    want = exp["runs"]
    single = {}

    def alone(path):
        if path not in single:
            r = subprocess.run([commfit, "report", "--format", "json", path], capture_output=True, text=True)
            single[path] = stream_of(json.loads(r.stdout), want["op"], want["comm"]) if r.returncode == 0 else None
        return single[path]

    a = stream_of(rep, want["op"], want["comm"])
    for combo in want["combine"]:
        others = [os.path.join(corpus, c, "profile.json") for c in combo]
        run = subprocess.run([commfit, "report", "--format", "json", prof] + others, capture_output=True, text=True)
        name = "over %d runs (with %s)" % (len(combo) + 1, ", ".join(combo))
        if run.returncode != 0:
            check(case, name, False, "exit %d: %s" % (run.returncode, run.stderr.strip()))
            continue
        both = stream_of(json.loads(run.stdout), want["op"], want["comm"])
        reps = [a] + [alone(o) for o in others]
        if both is None or None in reps:
            check(case, name + ": %s on %s in every run" % (want["op"], want["comm"]), False, "missing")
            continue
        check(case, name + ": runs %d" % len(reps), both.get("runs") == len(reps), str(both.get("runs")))
        e = runs_expected(reps)
        verdicts = "/".join(r["verdict"] for r in reps)
        if e is None:
            keys = ("verdict", "bucket_bytes", "saving_step_s", "saving_uncertainty_step_s", "predicted_saving_s")
            check(case, name + ": no run advises fusion (%s): this run's advice, no spread" % verdicts,
                  all(close(both.get(k), a.get(k)) if isinstance(a.get(k), float) else both.get(k) == a.get(k)
                      for k in keys) and both.get("saving_run_spread_step_s") is None,
                  str({k: both.get(k) for k in keys + ("saving_run_spread_step_s",)}))
            continue
        verdict, bucket, sv, unc, spread, run_sv = e
        ok = (both["verdict"] == verdict and both.get("bucket_bytes") == bucket and close(both["saving_step_s"], sv) and
              close(both["saving_uncertainty_step_s"], unc) and close(both["saving_run_spread_step_s"], spread))
        if verdict == "fuse":
            ok = ok and close(both["predicted_saving_s"] / both["steps"], run_sv)
        elif verdict == "uncertain" and "fuse" in verdicts:
            ok = ok and (both["reason"] == "the runs disagree") == (verdicts.count("fuse") < len(reps))
        check(case, name + " (%s): %s %s, saving %s +- %s a step, spread %s" % (
            verdicts, verdict, bucket, human_time(sv), human_time(unc), human_time(spread)), ok,
            "got %s %s, %s +- %s, spread %s: %s" % (both["verdict"], both.get("bucket_bytes"),
                                                    human_time(both["saving_step_s"]),
                                                    human_time(both["saving_uncertainty_step_s"]),
                                                    human_time(both.get("saving_run_spread_step_s") or 0), both.get("why")))
        txt = subprocess.run([commfit, "report", prof] + others, capture_output=True, text=True).stdout
        check(case, name + ": the text report says so",
              "over %d runs of the program: the verdict and the saving above are their medians" % len(reps) in txt)
    # the same run twice (a copy: a path given twice is refused): its own advice, no spread
    copy = os.path.join(tmpdir, case + "-copy.json")
    shutil.copyfile(prof, copy)
    twice = stream_of(json.loads(subprocess.run([commfit, "report", "--format", "json", prof, copy],
                                                capture_output=True, text=True).stdout), want["op"], want["comm"])
    keys = ("verdict", "bucket_bytes", "saving_step_s", "saving_uncertainty_step_s", "predicted_saving_s")
    spread = twice.get("saving_run_spread_step_s") if twice else None
    check(case, "the same run twice: its own advice (%s), no spread" % a["verdict"],
          twice is not None and twice.get("runs") == 2 and spread in (0, None) and
          all(close(twice.get(k), a.get(k)) if isinstance(a.get(k), float) else twice.get(k) == a.get(k) for k in keys),
          str(twice and {k: twice.get(k) for k in keys + ("runs", "saving_run_spread_step_s")}))
    dup = subprocess.run([commfit, "report", prof, prof], capture_output=True, text=True)
    check(case, "a profile given twice is refused", dup.returncode == 2 and "given twice" in dup.stderr,
          dup.stderr.strip().splitlines()[0] if dup.stderr.strip() else "exit %d" % dup.returncode)
    if want.get("unmatched"):
        u = os.path.join(corpus, want["unmatched"], "profile.json")
        ur = subprocess.run([commfit, "report", "--format", "json", prof, u], capture_output=True, text=True)
        alone_u = stream_of(json.loads(ur.stdout), want["op"], want["comm"])
        check(case, "a run without any of the profile's streams is named on stderr",
              ("commfit report: %s: none of its collective streams" % u) in ur.stderr, ur.stderr.strip())
        check(case, "a run without the stream (%s) leaves the advice alone" % want["unmatched"],
              alone_u is not None and alone_u.get("runs") == 1 and all(alone_u.get(k) == a.get(k) for k in keys),
              str(alone_u and {k: alone_u.get(k) for k in keys + ("runs",)}))


tmpdir = tempfile.mkdtemp(prefix="check_corpus.")


def main():
    kpath = os.path.join(corpus, "known.json")
    if os.path.isfile(kpath):
        known_limits.update(json.load(open(kpath)))
    cases = sorted(d for d in os.listdir(corpus) if os.path.isfile(os.path.join(corpus, d, "meta.json")))
    if only:
        cases = [c for c in cases if c in only]
        missing = set(only) - set(cases)
        if missing:
            check("corpus", "cases present", False, "no such case: " + ", ".join(sorted(missing)))
    for case in cases:
        d = os.path.join(corpus, case)
        meta = json.load(open(os.path.join(d, "meta.json")))
        exp = meta.get("expect", {})
        prof = os.path.join(d, "profile.json")
        run = subprocess.run([commfit, "report", "--format", "json", prof], capture_output=True, text=True)
        if run.returncode != 0:
            check(case, "commfit report", False, "exit %d: %s" % (run.returncode, run.stderr.strip()))
            continue
        rep = json.loads(run.stdout)
        # More ranks on the machine than its cores: commfit must see it (the
        # emulated nodes of one host share its cores) and say it first.
        host = meta.get("host", {})
        if meta.get("ranks") and host.get("cores"):
            want = meta["ranks"] > host["cores"]
            got = rep.get("job", {}).get("oversubscribed")
            said = any("oversubscribed" in c for c in rep.get("caveats", []))
            check(case, "oversubscription %s" % ("detected and stated" if want else "not claimed"),
                  got == want and said == want, "%d ranks on %d cores: oversubscribed %s, caveat %s" % (
                      meta["ranks"], host["cores"], got, said))
        truth = None
        if exp.get("fits"):
            truth = read_truth(os.path.join(d, "truth.csv"))
        for sel in exp.get("fits", []):
            check_fit(case, rep, truth, sel, exp)
        if "reference" in exp:
            check_reference(case, rep, meta, exp)
        if "call_gap" in exp:
            check_gap(case, rep, d, exp)
        check_disturbed(case, rep, exp)
        if rep.get("advice"):
            cand_text = subprocess.run([commfit, "report", prof], capture_output=True, text=True).stdout
            check_candidates(case, cand_text)
        if exp.get("no_fuse") or exp.get("nonblocking_not_cost") or exp.get("overlap"):
            txt = subprocess.run([commfit, "report", prof], capture_output=True, text=True)
            check(case, "commfit report (text)", txt.returncode == 0, "exit %d" % txt.returncode)
            check_app(case, rep, txt.stdout, exp)
            if exp.get("overlap"):
                check_overlap(case, rep, txt.stdout, meta, exp)
                check_poll_excess(case, rep, txt.stdout, prof, meta)
            check_memory(case, rep, txt.stdout, prof, exp)
        elif exp.get("refaults"):
            txt = subprocess.run([commfit, "report", prof], capture_output=True, text=True)
            check(case, "commfit report (text)", txt.returncode == 0, "exit %d" % txt.returncode)
            check_memory(case, rep, txt.stdout, prof, exp)
        if exp.get("calibrated"):
            check_calibrated(case, rep, prof, exp)
        if exp.get("in_flight"):
            check_in_flight(case, rep, prof, exp)
        if exp.get("runs"):
            check_runs(case, rep, prof, exp)
        if exp.get("diff"):
            check_diff(case, d, meta, exp)
        if exp.get("monitoring") or exp.get("mpip") or "program" in exp:
            check_real_app(case, rep, d, prof, exp)
    if not only:
        check("corpus", "framework defaults both priced and uncertain among the cases",
              cand_seen["uncertain"] > 0 and cand_seen["priced"] > 0, "%r" % cand_seen)
    print("%d known limits (tests/corpus/known.json)" % known)
    print("%d passed, %d failed" % (passed, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    try:
        rc = main()
        shutil.rmtree(tmpdir, ignore_errors=True)
        sys.exit(rc)
    except Exception:  # a broken corpus or checker is a hard error (automake's 99), not a failed check
        import traceback
        traceback.print_exc()
        sys.exit(99)
