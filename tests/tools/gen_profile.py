#!/usr/bin/env python3
"""Write a synthetic commfit profile of a given size, for timing the tools.

Usage: gen_profile.py OUT.json [--ranks N] [--comms N] [--records N] [--samples N]
                       [--sites N] [--modules N] [--pairs N] [--seed S]

The profile is consistent (what `commfit report` accepts): N ranks on nodes
of 16, communicators of up to 64 ranks, records spread over the
communicators, operations and power-of-two size bins with times from
T = 2 us + M / 5 GB/s, and collective samples for `commfit trace`;
--sites call sites of 8 frames each over --modules distinct modules (for
`report --by-callsite`), --pairs communication matrix pairs.
"""
import argparse
import json
import random

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--ranks", type=int, default=16)
ap.add_argument("--comms", type=int, default=1)
ap.add_argument("--records", type=int, default=100)
ap.add_argument("--samples", type=int, default=0)
ap.add_argument("--sites", type=int, default=0)
ap.add_argument("--modules", type=int, default=1)
ap.add_argument("--pairs", type=int, default=0)
ap.add_argument("--seed", type=int, default=1)
a = ap.parse_args()
rnd = random.Random(a.seed)
P = a.ranks
ops = [("MPI_Allreduce", "collective"), ("MPI_Bcast", "collective"), ("MPI_Send", "p2p"),
       ("MPI_Recv", "p2p"), ("MPI_Isend", "p2p"), ("MPI_Wait", "completion")]
nodes = (P + 15) // 16
wall = 10.0


def tstats(calls, size):
    t = 2e-6 + size / 5e9
    s = t * calls
    return {"sum": s, "min": t * 0.8, "max": t * 3, "p50": t, "p99": t * 2}


with open(a.out, "w") as f:
    w = f.write
    job = {"ranks": P, "nodes": nodes, "wall_s": wall, "partial": False, "partial_reasons": [],
           "oversubscribed": False, "ranks_per_node_max": min(P, 16), "cpus_per_node_min": 16,
           "mpi_library": "Open MPI v4.1.4", "start_time": "2026-12-01T00:00:00Z",
           "clock_hz": 2.4e9, "memcpy_Bps": 1e10}
    w('{"format": "commfit-profile", "version": 1, "job": %s,\n"ranks": [\n' % json.dumps(job))
    for r in range(P):
        mpi = wall * (0.3 + 0.1 * rnd.random())
        w(json.dumps({"rank": r, "node": r // 16, "host": "n%05d" % (r // 16), "wall_s": wall,
                      "mpi_s": mpi, "wait_s": mpi * 0.1, "transfer_s": mpi * 0.2, "dropped": 0,
                      "node_ranks": min(16, P - (r // 16) * 16), "node_cpus": 16}))
        w(",\n" if r + 1 < P else "\n")
    w('],\n"communicators": [\n')
    for c in range(a.comms):
        size = P if c == 0 else min(P, 2 ** rnd.randint(1, 6))
        w(json.dumps({"id": c + 1, "label": "world" if c == 0 else "c%x" % (c * 2654435761 % 2**36),
                      "name": "MPI_COMM_WORLD" if c == 0 else "", "size": size,
                      "nodes": max(1, size // 16)}))
        w(",\n" if c + 1 < a.comms else "\n")
    w('],\n"regions": [],\n"records": [\n')
    for i in range(a.records):
        op, kind = ops[i % len(ops)]
        comm = 1 + (i // len(ops)) % a.comms
        b = (i // (len(ops) * a.comms)) % 24
        lo, hi = (0, 0) if kind == "completion" else (2 ** b, 2 ** (b + 1) - 1)
        size = 0 if kind == "completion" else 1.5 * 2 ** b
        calls = rnd.randint(1, 5000)
        rec = {"layer": "mpi", "op": op, "kind": kind, "comm": comm,
               "path": "intra-node" if i % 3 else "inter-node",
               "size_lo": lo, "size_hi": hi, "calls": calls, "bytes": int(calls * size),
               "time_s": tstats(calls, size)}
        w(json.dumps(rec))
        w(",\n" if i + 1 < a.records else "\n")
    w('],\n"region_entries": {},\n')
    w('"sampling": {"first": 64, "every": 16, "collective_calls": %d, "collective_calls_incomplete": 0, '
      '"messages_matched": 0, "messages_receive_posted_late": 0, "messages_unmatched": 0, '
      '"not_sampled_buffer_full": 0},\n' % a.samples)
    w('"samples": {"time_origin": "seconds since rank 0 entered MPI_Init, on rank 0\'s clock", '
      '"columns": ["rank", "comm", "seq", "op", "enter_s", "leave_s", "wait_s"], "collectives": [\n')
    t = 0.0
    for i in range(a.samples):
        r = i % P
        if r == 0:
            t += 1e-4
        w(json.dumps([r, 1, i // P, "MPI_Allreduce", t + 1e-6 * rnd.random(), t + 2e-5, 1e-6]))
        w(",\n" if i + 1 < a.samples else "\n")
    w("]}")
    if a.pairs:
        w(',\n"matrix": {"ranks": %d, "columns": ["src", "dst", "messages", "bytes", "comm", "source"], '
          '"pairs": [\n' % P)
        for i in range(a.pairs):
            src = i % P
            dst = (src + 1 + i // P) % P
            msgs = rnd.randint(1, 1000)
            w(json.dumps([src, dst, msgs, msgs * 1024, 1, "mpi"]))
            w(",\n" if i + 1 < a.pairs else "\n")
        w('], "lost_messages": 0}')
    if a.sites:
        # modules that do not exist: addr2line is not run, the report gives module+offset
        w(',\n"callsites": {"depth": 8, "lost_calls": 0, "complete": true, "sites": [\n')
        for i in range(a.sites):
            op = ops[i % len(ops)][0]
            calls = rnd.randint(1, 5000)
            stack = [{"module": "/nonexistent/lib%d.so" % ((i * 8 + j) % a.modules), "offset": 4096 + 16 * i + j,
                      "symbol": "fn%d" % j, "symbol_offset": 16 * j} for j in range(8)]
            w(json.dumps({"id": i + 1, "op": op, "comm": 1, "calls": calls, "bytes": calls * 64,
                          "time_s": calls * 2e-6, "min_s": 1e-6, "max_s": 1e-4, "ranks": P, "stack": stack}))
            w(",\n" if i + 1 < a.sites else "\n")
        w("]}")
    w("}\n")
