#!/usr/bin/env python3
"""Checks `commfit report --format json` of an allreduce size sweep.

usage: check_report_sweep.py REPORT SWEEP_OUTPUT NP [LINK_REPORT]
  REPORT        commfit report --format json of the sweep's profile
  SWEEP_OUTPUT  what examples/coll_sweep printed (bytes ... time_us ...)
  NP            ranks of the sweep
  LINK_REPORT   the same report made with --link (efficiency filled in)

Timing assertions are relative (the fit against the profile's own medians),
never absolute speeds, so that a loaded 2-core machine passes.
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
    """bytes -> time (s) from coll_sweep's table."""
    out = {}
    with open(path) as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 4 and cols[0].isdigit():
                out[int(cols[0])] = float(cols[3]) * 1e-6
    return out


def the_fit(rep):
    for f in rep["fits"]:
        if f["kind"] == "collective" and f["op"] == "MPI_Allreduce" and f["comm"] == "world":
            return f
    return None


def main():
    rep = json.load(open(sys.argv[1]))
    sweep = sweep_times(sys.argv[2])
    np_ = int(sys.argv[3])
    check("report format", rep.get("format") == "commfit-report")
    check("sweep printed its sizes", len(sweep) >= 15, "%d sizes" % len(sweep))

    f = the_fit(rep)
    check("allreduce fit on world exists", f is not None)
    if f is None:
        return
    check("fit numbers", f["fit_ok"] is True and finite(f["alpha_s"]) and f["alpha_s"] >= 0
          and finite(f["bandwidth_Bps"]) and f["bandwidth_Bps"] > 0 and finite(f["r2"]),
          "alpha %.3g s, B %.3g B/s, n_half %s B, R^2 %.3f, %d segment(s)"
          % (f["alpha_s"] or 0, f["bandwidth_Bps"] or 0, f["n_half_bytes"], f["r2"] or 0,
             len(f["segments"])))
    lo, hi = f["ci"]["alpha_s"]
    check("alpha inside its confidence interval", finite(lo) and lo <= f["alpha_s"] <= hi,
          "[%s, %s]" % (lo, hi))
    check("comm_size", f["comm_size"] == np_, str(f["comm_size"]))
    for s in f["segments"]:
        print("     segment %10.0f .. %10.0f B: alpha %.3g s, B %.3g B/s"
              % (s["size_lo"], s["size_hi"], s["alpha_s"], s["bandwidth_Bps"] or float("inf")))

    bins = [b for b in f["bins"] if b["size"] > 0]
    check("one bin per swept size", len(bins) >= len(sweep) - 1,
          "%d bins, %d sizes" % (len(bins), len(sweep)))
    print("     %10s %8s %11s %11s %11s %7s  %s"
          % ("size", "calls", "p50", "predicted", "sweep", "startup", "verdict"))
    rel_p50, rel_sweep = [], []
    for b in bins:
        pred, p50 = b["predicted_s"], b["p50_s"]
        sw = sweep.get(int(round(b["size"])))
        print("     %10.0f %8d %11.3g %11.3g %11.3g %6.1f%%  %s"
              % (b["size"], b["calls"], p50, pred, sw if sw else float("nan"),
                 100 * (b["startup_share"] or 0), b["verdict"]))
        if finite(pred) and finite(p50) and p50 > 0:
            rel_p50.append(abs(pred - p50) / p50)
        if finite(pred) and sw:
            rel_sweep.append(abs(pred - sw) / sw)
    med = statistics.median(rel_p50) if rel_p50 else float("inf")
    check("predictions match the profile's medians (median rel. error < 35%)", med < 0.35,
          "median %.1f%%, max %.1f%%" % (100 * med, 100 * max(rel_p50 or [0])))
    med_sw = statistics.median(rel_sweep) if rel_sweep else float("inf")
    # The sweep reports the slowest rank of each iteration, the profile every call.
    check("predictions match the sweep's own timings (median rel. error < 60%)", med_sw < 0.6,
          "median %.1f%%" % (100 * med_sw))

    small, large = bins[:2], bins[-2:]
    check("smallest sizes are startup-bound",
          all(b["verdict"] == "startup-bound" for b in small),
          ", ".join("%d B %.0f%%" % (b["size"], 100 * b["startup_share"]) for b in small))
    check("largest sizes are bandwidth-bound",
          all(b["verdict"] == "bandwidth-bound" for b in large),
          ", ".join("%d B %.0f%%" % (b["size"], 100 * b["startup_share"]) for b in large))
    check("fit verdict", f["verdict"] in ("startup-bound", "bandwidth-bound"),
          "%s, startup %.1f%%" % (f["verdict"], 100 * f["startup_share"]))

    colls = [c for c in rep["collectives"] if c["op"] == "MPI_Allreduce"]
    factor = 2.0 * (np_ - 1) / np_
    check("collectives table: busbw = algbw x 2(p-1)/p",
          len(colls) == len(f["bins"]) and all(
              c["size"] == 0 or abs(c["busbw_Bps"] - factor * c["algbw_Bps"]) <= 1e-9 * c["busbw_Bps"]
              for c in colls))
    ops = rep["operations"]
    check("MPI_Allreduce leads the cost ranking", ops and ops[0]["op"] == "MPI_Allreduce",
          "%s %.1f%%" % (ops[0]["op"], 100 * ops[0]["share"]) if ops else "empty")

    if len(sys.argv) > 4:
        rl = json.load(open(sys.argv[4]))
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
