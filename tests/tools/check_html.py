#!/usr/bin/env python3
"""Loads an HTML report in headless Chromium, offline, and holds what it drew
to the report's JSON.

    check_html.py CHROMIUM PAGE.html REPORT.json [--screenshot FILE.png] [--expect-text TEXT]...

Chromium runs with every network request refused (a proxy on a closed port,
no name resolution); the page itself forbids loads from outside (its
Content-Security-Policy), and a blocked load is a console error.  Fails on
any console message, on errors the page recorded, on any resource it
loaded, and when a chart or its point count differs from the JSON.
--expect-text: text that must appear, as text, in the page (escaping)."""
import argparse
import html
import json
import os
import re
import subprocess
import sys
import tempfile


def fail(msg):
    print("check_html: FAIL: " + msg)
    sys.exit(1)


def close(x, y):
    """Drawn against reported: equal to the rounding of a JSON double."""
    return x is not None and y is not None and abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-300)


def chromium(binary, args, page, profile_dir):
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--user-data-dir=" + profile_dir, "--enable-logging=stderr", "--v=0"] + args + \
          ["file://" + os.path.abspath(page)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def console_lines(err):
    return [l for l in err.splitlines() if ":CONSOLE" in l]


def expect_charts(rep, summary):
    charts = {c["id"]: c for c in summary["charts"]}
    counts = {}

    def ds(chart, label_start):
        found = [d for d in chart["datasets"] if d["label"].startswith(label_start)]
        return found[0]["points"] if found else None

    max_fits = rep["html"]["max_fits"]
    nfit = 0
    for i, f in enumerate(rep["fits"][:max_fits]):
        sized = [b for b in f["bins"] if b["size"] and b["size"] > 0]
        cid = "fit-%d" % i
        if not sized:
            if cid in charts:
                fail("%s: a chart for a fit without sized bins" % cid)
            continue
        if cid not in charts:
            fail("no chart %s for %s on %s" % (cid, f["op"], f["comm"]))
        c = charts[cid]
        nfit += 1
        want = {
            "median call duration": sum(1 for b in sized if b["duration_p50_s"] and b["duration_p50_s"] > 0),
            "median transfer time": sum(1 for b in sized if b["time_source"] == "transfer" and b["p50_s"] > 0),
            "p99": sum(1 for b in sized if b["p99_s"] and b["p99_s"] > 0),
            "left out": sum(1 for b in sized if b["outlier"]),
        }
        for label, n in want.items():
            got = ds(c, label)
            if got != n:
                fail("%s (%s on %s): %s: %s points drawn, %d bins" % (cid, f["op"], f["comm"], label, got, n))
        segs = [d for d in c["datasets"] if d["label"].startswith("model")]
        if f["nonblocking"]:
            # a span's line would read as a startup and a bandwidth: none is drawn
            if segs:
                fail("%s: %d model lines drawn for a nonblocking span" % (cid, len(segs)))
        elif f["fit_ok"]:
            if len(segs) != len(f["segments"]):
                fail("%s: %d model lines drawn, the fit has %d segments" % (cid, len(segs), len(f["segments"])))
            if any(d["points"] < 2 for d in segs):
                fail("%s: a model line of fewer than 2 points" % cid)
            # the dashed lines the chart drew (report.js records them as it
            # draws, inside the plot area only) against the fit's limits
            lim = [l["bytes"] for l in f.get("protocol_limits", [])]
            if sorted(c.get("limits", [])) != sorted(lim):
                fail("%s: protocol limits drawn at %s, the fit breaks at %s" % (cid, c.get("limits"), lim))
            nh = f["n_half_bytes"]
            if (nh is not None and nh > 0) != c["shaded"] or (nh and abs(c["n_half_bytes"] - nh) > 1e-9 * nh):
                fail("%s: n_half %s marked as %s" % (cid, nh, c.get("n_half_bytes")))
        elif segs:
            fail("%s: model lines without a fit" % cid)
    counts["fit"] = nfit

    nfus = 0
    for i, ad in enumerate(rep["advice"]):
        cid = "fusion-%d" % i
        drawn = ad["share"] is not None and ad["share"] >= 0.01 and ad["model"] and ad["candidates"]
        # one call a step already, no gain: nothing to fuse, no chart (the text says so)
        drawn = drawn and not (ad["verdict"] == "no gain" and (ad["calls_per_step"] or 0) <= 1)
        if not drawn:
            if cid in charts:
                fail("%s: a chart for advice that has no model, or one call a step and no gain" % cid)
            continue
        nfus += 1
        if cid not in charts:
            fail("no fusion chart %s for %s" % (cid, ad["op"]))
        # the times the text report prints: an overlapped stream's predicted
        # time per step against its measured one, a blocking one's T(S)
        # time per step, plus the framework's time outside MPI (call_gap_s
        # once per call) as the verdict counts it
        nb = ad["nonblocking"] and ad["steps"]
        key = "predicted_s" if nb else "model_step_s"
        scale = ad["steps"] if nb else 1
        gap = ad["call_gap_s"] or 0.0
        if not close(charts[cid].get("framework_gap_s"), gap):
            fail("%s: drawn with a gap of %s, the report's is %s" % (cid, charts[cid].get("framework_gap_s"), gap))
        now = (ad["current_s"] / scale if nb else ad["model_current_step_s"]) + gap * ad["calls_per_step"]
        if not close(charts[cid].get("now_step_s"), now):
            fail("%s: calls as they are drawn at %s, the report says %s" % (cid, charts[cid].get("now_step_s"), now))
        if ad["verdict"] == "fuse":
            want = (ad["predicted_s"] / scale if nb else ad["model_step_s"]) + \
                gap * min(ad["buckets_per_step"], ad["calls_per_step"])
            if not close(charts[cid].get("advised_step_s"), want):
                fail("%s: the advised bucket drawn at %s, the report says %s" % (cid, charts[cid].get("advised_step_s"),
                                                                                 want))
        # an overlapped stream's exposed pricing: the ranks' wait for the
        # last one, and the saving if the buckets stayed hidden
        for k in ("arrival_skew_step_s", "hidden_saving_step_s"):
            want = ad[k] if nb else None
            got = charts[cid].get(k)
            if (want is None) != (got is None) or (want is not None and not close(got, want)):
                fail("%s: %s shown as %s, the report says %s" % (cid, k, got, want))
        n = sum(1 for c in ad["candidates"] if c[key] and c[key] > 0)
        if ds(charts[cid], "T(S)") != n:
            fail("%s: %s candidates drawn, %d in the advice" % (cid, ds(charts[cid], "T(S)"), n))
        if (ad["verdict"] == "fuse") != (ds(charts[cid], "advised") == 1):
            fail("%s: the advised bucket is %s" % (cid, "missing" if ad["verdict"] == "fuse" else "drawn"))
    counts["fusion"] = nfus

    groups = {}
    for c in rep["collectives"]:
        groups.setdefault((c["op"], c["comm"], c["path"]), []).append(c)
    busbw = [c for c in summary["charts"] if c["kind"] == "busbw"]
    want = [g for g in groups.values() if any(c["size"] > 0 and c["busbw_Bps"] for c in g)]
    if len(busbw) != len(want[:max_fits]):
        fail("%d busbw charts, %d collectives with payload" % (len(busbw), len(want)))
    for c, g in zip(busbw, want):
        if ds(c, "measured") != sum(1 for x in g if x["size"] > 0 and x["busbw_Bps"]):
            fail("%s: busbw points differ from the bins" % c["id"])
        ideal = sum(1 for x in g if x["size"] > 0 and x["ideal_busbw_Bps"])
        if (ds(c, "ideal") or 0) != ideal:
            fail("%s: %s ideal points drawn, %d bins with an ideal time" % (c["id"], ds(c, "ideal"), ideal))
    counts["busbw"] = len(busbw)

    nranks = rep["job"]["ranks"]
    rk = rep["html"]["ranks"]
    if rk["n"] <= 64:
        c = charts.get("ranks-all")
        if c is None or any(d["points"] != nranks for d in c["datasets"]) or len(c["datasets"]) != 3:
            fail("ranks chart: %s, want 3 datasets of %d ranks" % (c and c["datasets"], nranks))
    else:
        c = charts.get("ranks-edges")
        h = charts.get("ranks-hist")
        if c is None or h is None:
            fail("ranks: no edge or histogram chart for %d ranks" % rk["n"])
        if any(d["points"] != 16 for d in c["datasets"]):
            fail("edge ranks: %s" % c["datasets"])
        if sum(rk["histogram"]["counts"]) != rk["n"]:
            fail("histogram counts %d ranks of %d" % (sum(rk["histogram"]["counts"]), rk["n"]))
    if rep["regions"]:
        if "regions-chart" not in charts:
            fail("no regions chart")
    elif "regions-chart" in charts:
        fail("a regions chart without regions")
    m = rep["html"]["matrix"]
    if m is not None:
        c = charts.get("matrix")
        if c is None:
            fail("no matrix chart")
        pairs = m["cells"]
        if c["datasets"][0]["points"] != len(pairs) or c["bytes"] != sum(x[3] for x in pairs) or \
                c["messages"] != sum(x[2] for x in pairs):
            fail("matrix: %s drawn, %d cells of %d bytes" % (c, len(pairs), sum(x[3] for x in pairs)))
        if c.get("maps") != len(m.get("maps", [])):
            fail("matrix: %s maps drawn, %d in the page's data" % (c.get("maps"), len(m.get("maps", []))))
        counts["matrix cells"] = len(pairs)
    if summary.get("operations") != len(rep["operations"]):
        fail("operations table: %s rows, %d operations" % (summary.get("operations"), len(rep["operations"])))
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("chromium")
    ap.add_argument("page")
    ap.add_argument("report")
    ap.add_argument("--screenshot")
    ap.add_argument("--expect-text", action="append", default=[])
    a = ap.parse_args()

    with open(a.page, encoding="utf-8") as f:
        page = f.read()
    m = re.search(r'<script type="application/json" id="commfit-data">(.*?)</script>', page, re.S)
    if not m:
        fail("no embedded report data")
    rep = json.loads(m.group(1))
    with open(a.report) as f:
        full = json.load(f)
    # the page carries the report's numbers unchanged
    for key in ("job", "mpi_time", "breakdown", "operations", "fits", "collectives", "advice", "regions"):
        if rep[key] != full[key]:
            fail("embedded '%s' differs from commfit report --format json" % key)
    if (full.get("matrix") is None) != (rep["html"]["matrix"] is None) or (full.get("matrix") and (
            sum(p[3] for p in full["matrix"]["pairs"]) != sum(c[3] for c in rep["html"]["matrix"]["cells"]) or
            sum(p[2] for p in full["matrix"]["pairs"]) != sum(c[2] for c in rep["html"]["matrix"]["cells"]))):
        fail("the page's matrix does not add up to the report's")
    if re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", page, re.I):
        fail("the page refers to an outside resource")

    with tempfile.TemporaryDirectory() as tmp:
        rc, dom, err = chromium(a.chromium, ["--dump-dom"], a.page, os.path.join(tmp, "p1"))
        if rc != 0:
            fail("chromium exited %d: %s" % (rc, err[-2000:]))
        if console_lines(err):
            fail("console messages:\n" + "\n".join(console_lines(err)))
        m = re.search(r'<pre id="commfit-summary" hidden="">(.*?)</pre>', dom, re.S)
        if not m or not m.group(1).strip():
            fail("the page wrote no summary (its script did not run to the end)")
        summary = json.loads(html.unescape(m.group(1)))
        if summary["errors"]:
            fail("page errors: %s" % summary["errors"])
        if summary["resources"]:
            fail("the page loaded resources: %s" % summary["resources"])
        if not summary.get("done"):
            fail("the page's script did not finish")
        counts = expect_charts(rep, summary)
        text = html.unescape(re.sub(r"<[^>]*>", "", dom))
        for t in a.expect_text:
            if t not in text:
                fail("text %r not in the page" % t)
        if re.search(r"<img|<script>\s*window\.pwned", dom):
            fail("text from the profile became markup")
        if a.screenshot:
            rc, _, err = chromium(a.chromium, ["--screenshot=" + os.path.abspath(a.screenshot),
                                               "--window-size=1400,3000", "--hide-scrollbars"],
                                  a.page, os.path.join(tmp, "p2"))
            if rc != 0 or not os.path.exists(a.screenshot) or os.path.getsize(a.screenshot) < 10000:
                fail("no screenshot: %s" % err[-2000:])
            if console_lines(err):
                fail("console messages:\n" + "\n".join(console_lines(err)))
    print("check_html: ok: %s: %d charts (%s), %d operations, no console message, no request" %
          (a.page, len(summary["charts"]), ", ".join("%s %d" % kv for kv in counts.items()),
           summary["operations"]))


if __name__ == "__main__":
    main()
