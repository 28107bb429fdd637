#!/usr/bin/env python3
"""Checks `commfit report --format json` of an allreduce size sweep.

usage: check_report_sweep.py [--live] REPORT SWEEP_OUTPUT NP [LINK_REPORT]
  --live        a sweep just run here: only what no load can move (sizes,
                calls and bytes per bin, the tables' arithmetic); the fit's
                quality and its verdicts are held on a recorded sweep
  REPORT        commfit report --format json of the sweep's profile
  SWEEP_OUTPUT  what examples/coll_sweep printed (bytes ... time_us ...), or
                its --csv output
  NP            ranks of the sweep
  LINK_REPORT   the same report made with --link (efficiency filled in)

Timing assertions are relative (the fit against the profile's own medians),
never absolute speeds.  Beside a CPU load they do not hold on a live sweep:
a 4 MiB bin three times its neighbour, or a fit with no bandwidth at all.
"""
import json
import math
import statistics
import sys

passed = 0
failed = 0


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   %s%s" % (what, ": " + detail if detail else ""))
    else:
        failed += 1
        print("FAIL %s%s" % (what, ": " + detail if detail else ""))


def finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def sweep_times(path):
    """bytes -> (time (s), timed iterations) from coll_sweep's table, or from its --csv output."""
    out = {}
    with open(path) as f:
        for line in f:
            csv = "," in line
            cols = line.split(",") if csv else line.split()
            if csv and len(cols) >= 6 and cols[2].isdigit():  # op,ranks,bytes,count,iters,time_us,...
                out[int(cols[2])] = (float(cols[5]) * 1e-6, int(cols[4]))
            elif not csv and len(cols) >= 4 and cols[0].isdigit():  # bytes count iters time_us ...
                out[int(cols[0])] = (float(cols[3]) * 1e-6, int(cols[2]))
    return out


def the_fit(rep):
    for f in rep["fits"]:
        if f["kind"] == "collective" and f["op"] == "MPI_Allreduce" and f["comm"] == "world":
            return f
    return None


def main():
    args = sys.argv[1:]
    live = args[:1] == ["--live"]
    if live:
        args = args[1:]
    rep = json.load(open(args[0]))
    sweep = sweep_times(args[1])
    np_ = int(args[2])
    # timed: a check on what the machine's speed decides, held only on a recorded sweep
    timed = (lambda *a: None) if live else check
    check("report format", rep.get("format") == "commfit-report")
    check("sweep printed its sizes", len(sweep) >= 15, "%d sizes" % len(sweep))

    f = the_fit(rep)
    check("allreduce fit on world exists", f is not None)
    if f is None:
        return
    print("     fit: %s, alpha %.3g s, B %.3g B/s, n_half %s B, R^2 %.3f, %d segment(s)"
          % (f["verdict"], f["alpha_s"] or 0, f["bandwidth_Bps"] or 0, f["n_half_bytes"], f["r2"] or 0,
             len(f["segments"])))
    timed("fit numbers", f["fit_ok"] is True and finite(f["alpha_s"]) and f["alpha_s"] >= 0
          and finite(f["bandwidth_Bps"]) and f["bandwidth_Bps"] > 0 and finite(f["r2"]))
    lo, hi = f["ci"]["alpha_s"]
    timed("alpha inside its confidence interval", finite(lo) and lo <= (f["alpha_s"] or -1) <= hi,
          "[%s, %s]" % (lo, hi))
    check("comm_size", f["comm_size"] == np_, str(f["comm_size"]))
    for sg in f["segments"]:
        print("     segment %10.0f .. %10.0f B: alpha %.3g s, B %.3g B/s"
              % (sg["size_lo"], sg["size_hi"], sg["alpha_s"] or 0, sg["bandwidth_Bps"] or float("inf")))

    bins = [b for b in f["bins"] if b["size"] > 0]
    check("one bin per swept size", sorted(int(round(b["size"])) for b in bins) == sorted(x for x in sweep if x > 0),
          "%d bins, %d sizes" % (len(bins), len(sweep)))
    # coll_sweep runs 3 untimed iterations per size before the timed ones
    want = {x: (np_ * (it + 3), np_ * (it + 3) * x) for x, (t, it) in sweep.items()}
    got = {int(round(b["size"])): (b["calls"], b["bytes"]) for b in bins}
    check("calls and bytes per size: ranks x (iterations + 3 warm-up) of that size",
          all(got.get(x) == w for x, w in want.items() if x > 0),
          str({x: (got.get(x), w) for x, w in want.items() if x > 0 and got.get(x) != w}))
    print("     %10s %8s %11s %11s %11s %7s  %s"
          % ("size", "calls", "p50", "predicted", "sweep", "startup", "verdict"))
    rel_p50, rel_sweep = [], []
    for b in bins:
        pred, p50 = b["predicted_s"], b["p50_s"]
        sw = sweep.get(int(round(b["size"])), (None, 0))[0]
        print("     %10.0f %8d %11.3g %11.3g %11.3g %6.1f%%  %s"
              % (b["size"], b["calls"], p50, pred if finite(pred) else float("nan"),
                 sw if sw else float("nan"), 100 * (b["startup_share"] or 0), b["verdict"]))
        if finite(pred) and finite(p50) and p50 > 0:
            rel_p50.append(abs(pred - p50) / p50)
        if finite(pred) and sw:
            rel_sweep.append(abs(pred - sw) / sw)
    med = statistics.median(rel_p50) if rel_p50 else float("inf")
    timed("predictions match the profile's medians (median rel. error < 35%)", med < 0.35,
          "median %.1f%%, max %.1f%%" % (100 * med, 100 * max(rel_p50 or [0])))
    med_sw = statistics.median(rel_sweep) if rel_sweep else float("inf")
    # The sweep reports the slowest rank of each iteration, the profile every call.
    timed("predictions match the sweep's own timings (median rel. error < 60%)", med_sw < 0.6,
          "median %.1f%%" % (100 * med_sw))

    small, large = bins[:2], bins[-2:]
    timed("smallest sizes are startup-bound",
          all(b["verdict"] == "startup-bound" for b in small),
          ", ".join("%d B %.0f%%" % (b["size"], 100 * (b["startup_share"] or 0)) for b in small))
    timed("largest sizes are bandwidth-bound",
          all(b["verdict"] == "bandwidth-bound" for b in large),
          ", ".join("%d B %.0f%%" % (b["size"], 100 * (b["startup_share"] or 0)) for b in large))
    timed("fit verdict", f["verdict"] in ("startup-bound", "bandwidth-bound"),
          "%s, startup %.1f%%" % (f["verdict"], 100 * (f["startup_share"] or 0)))

    colls = [c for c in rep["collectives"] if c["op"] == "MPI_Allreduce"]
    factor = 2.0 * (np_ - 1) / np_
    check("collectives table: busbw = algbw x 2(p-1)/p",
          len(colls) == len(f["bins"]) and all(
              c["size"] == 0 or abs(c["busbw_Bps"] - factor * c["algbw_Bps"]) <= 1e-9 * c["busbw_Bps"]
              for c in colls))
    ops = rep["operations"]
    timed("MPI_Allreduce leads the cost ranking", ops and ops[0]["op"] == "MPI_Allreduce",
          "%s %.1f%%" % (ops[0]["op"], 100 * ops[0]["share"]) if ops else "empty")

    if len(args) > 3:
        rl = json.load(open(args[3]))
        cl = [c for c in rl["collectives"] if c["op"] == "MPI_Allreduce" and c["size"] > 0]
        check("with --link: ideal ring time and efficiency per size",
              cl and all(finite(c["ideal_ring_s"]) and finite(c["efficiency"]) and c["efficiency"] > 0
                         and c["ideal_source"] == "link" for c in cl),
              "efficiency %.3g .. %.3g" % (min(c["efficiency"] for c in cl),
                                           max(c["efficiency"] for c in cl)) if cl else "none")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a malformed report is a failure, not a crash of the test
        failed += 1
        print("FAIL report could not be checked: %r" % (e,))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
