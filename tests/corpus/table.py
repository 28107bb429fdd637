#!/usr/bin/env python3
"""Print the corpus table of README.md from the cases' own files.

Usage: tests/corpus/table.py [CORPUS_DIR]

One row per case directory: what ran (program, transport, ranks, shaping),
the truth its program measured in the same run (truth.csv, or LAMMPS's
timing breakdown from meta.json), and what the checker expects of B (the
shaped payload rate, or NetPIPE on the same path).  Re-run after
record.sh and paste the output over the README's table.
"""
import csv
import json
import os
import sys


def human_size(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0:
            return "%d %s" % (b // f, unit)
    return "%d B" % b


def human_time(s):
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= f:
            return "%.3g %s" % (s / f, unit)
    return "%.3g us" % (s / 1e-6)


def row(d, case):
    m = json.load(open(os.path.join(d, case, "meta.json")))
    prog = os.path.basename(m["program"][0]) if m.get("program") else "?"
    trainer = m.get("trainer")
    if trainer:  # examples/torch_train.py under /usr/bin/python3
        prog = "torch_train.py %s %s" % (trainer["model"], trainer["mode"])
    if prog == "coll_sweep":
        prog = "coll_sweep allreduce"
    if "--sizes" in m.get("program", []):
        prog += " (%s sizes)" % m["program"][m["program"].index("--sizes") + 1]
    what = "%s, %s; %d ranks, %d/node" % (prog, m.get("transport", "?"), m["ranks"], m["ranks_per_node"])
    if m.get("cluster") and "--rate" in m["cluster"]:
        c = m["cluster"]
        what += "; tbf %s burst %s" % (c[c.index("--rate") + 1], c[c.index("--burst") + 1])
    exp = m.get("expect", {})
    if trainer:
        if trainer["mode"].startswith("overlap"):
            # the call alone where the trainer timed it (wait_ms_mean), else with the Python around it
            wait = ("MPI_Waitall", trainer["wait_ms_mean"]) if "wait_ms_mean" in trainer else (
                "MPI_Waitall with the Python around it", trainer["exchange_ms_mean"])
        else:
            wait = ("exchange", trainer["exchange_ms_mean"])
        truth = "step %.3g ms (median, slowest rank), %s %.3g ms/step" % ((trainer["step_ms_median"],) + wait)
        if os.path.isfile(os.path.join(d, case, "truth.csv")):
            rows = [(int(r["size_bytes"]), float(r["time_s"]))
                    for r in csv.DictReader(open(os.path.join(d, case, "truth.csv")))]
            truth += "; per call, median: %s %s .. %s %s" % (human_size(rows[0][0]), human_time(rows[0][1]),
                                                            human_size(rows[-1][0]), human_time(rows[-1][1]))
    elif exp.get("monitoring"):
        truth = "Open MPI's monitoring of the job without the profiler: point-to-point messages and bytes per pair"
        if exp.get("mpip"):
            truth += "; mpiP's report of another: calls per operation, bytes sent"
    elif "lammps" in m:
        l = m["lammps"]
        truth = "log.lammps: loop %.3g s, Comm avg %.3g s (%.1f%%)" % (
            l["loop_time_s"], l["comm"]["avg_s"], l["comm"]["total_pct"])
    else:
        rows = [(int(r["size_bytes"]), float(r["time_s"])) for r in csv.DictReader(open(os.path.join(d, case, "truth.csv")))]
        kind = ("NetPIPE one-way" if prog == "NPopenmpi" else
                "median per rank" if prog.startswith("coll_sweep") else "one-way (half RTT)")
        truth = "%s: %s %s .. %s %s" % (kind, human_size(rows[0][0]), human_time(rows[0][1]),
                                       human_size(rows[-1][0]), human_time(rows[-1][1]))
    if "bandwidth_Bps" in exp:
        want = "%.4g MB/s payload rate (tol %d%%)" % (exp["bandwidth_Bps"] / 1e6, 100 * exp.get("bandwidth_tol", 0.1))
    elif "netpipe" in m:
        n = m["netpipe"]
        want = "%s: %s, peak %.3g GB/s (reference link within 25%%)" % (
            "NetPIPE same path" if not n.get("source") else "its own ping-pong",
            human_time(n["latency_s"]), n["peak_Bps"] / 1e9)
    elif "diff" in exp:
        want = "commfit diff against %s: each side's exchange and step, and the saving, to the trainers' timers" % (
            exp["diff"]["against"])
    elif exp.get("monitoring"):
        want = "none claimed (messages and bytes equal to the monitoring's%s; no framework setting; waits apart)" % (
            ", calls to mpiP's" if exp.get("mpip") else "")
    elif trainer and not os.path.isfile(os.path.join(d, case, "truth.csv")):
        want = "none claimed (a nonblocking stream: no B; its fusion advice is checked by make bench-fusion)"
    else:
        want = "none claimed (truth per size only)"
    return "| %s | %s | %s | %s |" % (case, what, truth, want)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    print("| case | what | truth (program's own, same run) | expected B |")
    print("| --- | --- | --- | --- |")
    for case in sorted(os.listdir(d)):
        if os.path.isfile(os.path.join(d, case, "meta.json")):
            print(row(d, case))


main()
