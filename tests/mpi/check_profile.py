#!/usr/bin/env python3
"""Checks numbers in a commfit profile against what a test program did.

usage: check_profile.py CHECK PROFILE [ARGS...]
  known_calls PROFILE NP     the calls of tests/mpi/known_calls.c
  corner_cases PROFILE NP    the calls of tests/mpi/corner_cases.c
  threads PROFILE NP T K     T threads per rank, K exchanges each
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
        key = tuple(label.get(r["comm"], "-") if k == "comm" else r[k] for k in by)
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


def known_calls(prof, p):
    expect("job.ranks", prof["job"]["ranks"], p)
    expect("job.partial", prof["job"]["partial"], False)
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
    check_calls(t, "MPI_Waitall", "-", 10, 20 * 4096)
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
    expect("send path (one node)", paths, {"intra-node"})


def corner_cases(prof, p):
    t = totals(prof, by=("op", "comm", "path"))
    expect("job.partial", prof["job"]["partial"], False)
    # MPI_PROC_NULL: counted, no payload, path self
    expect("Send to MPI_PROC_NULL", t.get(("MPI_Send", "world", "self")), [p, 0])
    expect("Recv from MPI_PROC_NULL", t.get(("MPI_Recv", "world", "self")), [p, 0])
    t2 = totals(prof)
    # rank 0 sends: 2 of count 0, a derived type of 32 bytes, 40 bytes to an
    # ANY_SOURCE receive posted for 4000, 56 bytes to an Irecv posted for 8000
    check_calls(t2, "MPI_Send", "world", p + 5, 32 + 40 + 56)
    check_calls(t2, "MPI_Recv", "world", p + 4, 32 + 40)
    check_calls(t2, "MPI_Irecv", "world", 1, 56)
    check_calls(t2, "MPI_Allreduce", "world", 2 * p, 2 * p * 80)
    # one with MPI_IN_PLACE and MPI_DATATYPE_NULL, one of the checksums
    check_calls(t2, "MPI_Gather", "world", 2 * p, 2 * p * p * 8)
    check_calls(t2, "MPI_Scatter", "world", p, p * p * 8)
    check_calls(t2, "MPI_Alltoall", "world", p, p * p * 4)
    check_calls(t2, "MPI_Allgatherv", "world", p, p * sum(range(1, p + 1)) * 4)
    check_calls(t2, "MPI_Bcast", "world", p, 0)


def threads(prof, p, nt, k):
    t = totals(prof)
    expect("job.partial", prof["job"]["partial"], False)
    check_calls(t, "MPI_Isend", "world", p * nt * k, p * nt * k * 64)
    check_calls(t, "MPI_Irecv", "world", p * nt * k, p * nt * k * 64)
    check_calls(t, "MPI_Waitall", "-", p * nt * k, p * nt * k * 128)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    check, prof = sys.argv[1], load(sys.argv[2])
    args = [int(x) for x in sys.argv[3:]]
    {"known_calls": known_calls, "corner_cases": corner_cases, "threads": threads}[check](prof, *args)
    print("%d passed, %d failed" % (checks - failures, failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
