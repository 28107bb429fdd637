#!/usr/bin/env python3
"""Checks a profile made under Slurm against the program's own tally.

usage: check_slurm.py rank PROFILE DIR RANK [refresh|signal]
    PROFILE holds the records of one rank of tests/mpi/abend.c (its part
    alone, merged), DIR its tallies.  A part written at a signal: every call
    exact, the loop's allreduce up to 1 more than the tally (the call the
    signal interrupted).  A part of the last refresh: the calls before the
    loop exact, the loop's between 1 and the tally, and the reason says so.
    The third argument, when given, is the kind the part must be.
usage: check_slurm.py merged PROFILE DIR RANK=KIND...
    a profile of every rank, each part of the KIND given (signal,
    refresh, or any of them, the reasons saying which): the calls before the loop exact, the loop's within the bounds
    above summed; settled: a part of a refresh after the rank's last call
    (abend settle), every count exact
usage: check_slurm.py refreshed PROFILE DIR KILLED
    every rank's records end at a refresh, and the reason says when: a
    time after each rank's last call (DIR/settled.RANK) and not after
    KILLED (seconds since the epoch), and the seconds after MPI_Init
usage: check_slurm.py hosts PROFILE HOST...
    rank r ran on the r-th HOST, and the profile counts the distinct ones as nodes
usage: check_slurm.py job PROFILE KEY=VALUE...
    the profile's job.scheduler has these values (time_limit_s a number)
"""
import calendar
import glob
import json
import re
import struct
import sys
import time

from checks import check, done


def records(prof):
    got = {}
    for r in prof["records"]:
        if r["layer"] == "mpi":
            k = (r["op"], r.get("region"), r["size_lo"])
            got[k] = got.get(k, 0) + r["calls"]
    return got


def tally(d, r):
    with open("%s/tally.%d" % (d, r), "rb") as f:
        return dict(zip(("pid", "phase", "allreduce", "bcast", "send", "recv", "barrier", "region", "loop"),
                        struct.unpack("9q", f.read(72))))


KNOWN = (("allreduce", ("MPI_Allreduce", None, 64)), ("bcast", ("MPI_Bcast", None, 512)),
         ("send", ("MPI_Send", None, 256)), ("recv", ("MPI_Recv", None, 256)),
         ("barrier", ("MPI_Barrier", None, 0)), ("region", ("MPI_Allreduce", "step", 8)))
LOOP = ("MPI_Allreduce", None, 4)


def named(reason):
    """The ranks a reason names: "rank 3 ...", "ranks 0, 2-5 ..."."""
    m = re.search(r"\branks? ([0-9][0-9, -]*) (ended by|killed with)", reason)
    out = set()
    for part in (m.group(1).replace(" ", "").split(",") if m else []):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def merged(path, d, kinds):
    prof = json.load(open(path))
    why = prof["job"]["partial_reasons"]
    kind = dict(k.split("=") for k in kinds)
    t = {int(r): tally(d, int(r)) for r in kind}
    for r, k in kind.items():
        said = [w for w in why if int(r) in named(w)]
        refresh = bool(said) and "last refresh" in said[0]
        signal = bool(said) and "ended by SIG" in said[0]
        ok = refresh if k in ("refresh", "settled") else signal if k == "signal" else refresh != signal
        if k == "any":
            kind[r] = "refresh" if refresh else "signal"
        check("rank %s: its part is of a %s, and the reasons say so" % (r, k), ok, str(said))
    got = records(prof)
    for name, key in KNOWN:
        want = sum(x[name] for x in t.values())
        check("%s calls as tallied" % name, got.get(key, 0) == want, "%d vs %d" % (got.get(key, 0), want))
    lo = sum(t[int(r)]["loop"] if k in ("signal", "settled") else 1 for r, k in kind.items())
    hi = sum(t[int(r)]["loop"] + (k == "signal") for r, k in kind.items())
    loop = got.get(LOOP, 0)
    check("loop allreduces: %d .. %d" % (lo, hi), lo <= loop <= hi, str(loop))


def rank(path, d, r, kind=None):
    prof = json.load(open(path))
    t = tally(d, r)
    why = " | ".join(prof["job"]["partial_reasons"])
    check("rank %d: the profile holds it alone" % r, [x["rank"] for x in prof["ranks"]] == [r],
          str([x["rank"] for x in prof["ranks"]]))
    refresh = "last refresh" in why
    signal = "ended by SIG" in why
    check("rank %d: its part was written at a signal or a refresh, and the reasons say which" % r,
          refresh != signal, why)
    if kind:
        check("rank %d: the part is of a %s" % (r, kind), (refresh if kind == "refresh" else signal), why)
    got = records(prof)
    for name, key in KNOWN:
        check("rank %d: %s calls as tallied" % (r, name), got.get(key, 0) == t[name],
              "%d vs %d" % (got.get(key, 0), t[name]))
    loop = got.get(LOOP, 0)
    if refresh:
        check("rank %d: loop allreduces up to the refresh: 1 .. the tally" % r, 1 <= loop <= t["loop"],
              "%d vs %d" % (loop, t["loop"]))
    else:
        check("rank %d: loop allreduces: the tally, or 1 more" % r, t["loop"] <= loop <= t["loop"] + 1,
              "%d vs %d" % (loop, t["loop"]))


def refreshed(path, d, killed):
    prof = json.load(open(path))
    ranks = [x["rank"] for x in prof["ranks"]]
    why = [w for w in prof["job"]["partial_reasons"] if "last refresh" in w]
    check("one reason for the refreshed parts, naming every rank", len(why) == 1 and named(why[0]) == set(ranks),
          str(why))
    m = re.search(r"last refresh, at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)(?: to (\d\d:\d\d:\d\dZ))?, "
                  r"(\d+)(?: to (\d+))? s after MPI_Init", why[0] if why else "")
    check("the reason says the refresh's time and its seconds after MPI_Init", m is not None, str(why))
    if not m:
        return
    first = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ"))
    last = first if not m.group(2) else calendar.timegm(time.strptime(m.group(1)[:11] + m.group(2),
                                                                       "%Y-%m-%dT%H:%M:%SZ"))
    settled = max(float(open(f).read()) for f in glob.glob("%s/settled.*" % d))
    check("the refresh after the last call, before the kill: %d .. %d within %.0f .. %s" %
          (first, last, settled, killed), int(settled) <= first <= last <= float(killed), why[0])


def hosts(path, want):
    prof = json.load(open(path))
    got = [r["host"] for r in sorted(prof["ranks"], key=lambda r: r["rank"])]
    check("the ranks' hosts", got == want, "%s vs %s" % (got, want))
    check("nodes: %d" % len(set(want)), prof["job"]["nodes"] == len(set(want)), str(prof["job"]["nodes"]))


def job(path, pairs):
    prof = json.load(open(path))
    s = prof["job"].get("scheduler", {})
    for kv in pairs:
        k, v = kv.split("=", 1)
        check("job.scheduler.%s" % k, str(s.get(k)) == v, "%r vs %r" % (s.get(k), v))


if __name__ == "__main__":
    if sys.argv[1] == "rank":
        rank(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
    elif sys.argv[1] == "merged":
        merged(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "hosts":
        hosts(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "refreshed":
        refreshed(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        job(sys.argv[2], sys.argv[3:])
    done()
