"""Several nonblocking all-reduces in flight at once against the same
calls one after another (bench_fusion.sh, part "inflight").

A trainer that posts its fused buckets from gradient hooks and polls only
when it posts leaves them all running when its final MPI_Waitall starts;
commfit's calibration times one MPI_Iallreduce and its MPI_Wait.  Per
size, the median over REPS of: K blocking MPI_Allreduce; K times one
MPI_Iallreduce then its MPI_Wait; K MPI_Iallreduce posted, then one
MPI_Waitall.  usage: inflight.py [K] [REPS] [SIZE ...]"""
import sys
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
k = int(sys.argv[1]) if len(sys.argv) > 1 else 4
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
sizes = [int(s) for s in sys.argv[3:]] or [65536, 262144, 1048576]


def median(f):
    ts = []
    for _ in range(reps + 2):
        comm.Barrier()
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    ts = sorted(ts[2:])
    return ts[len(ts) // 2]


if comm.rank == 0:
    print("inflight: %d ranks, %d calls of each size, median of %d" % (comm.size, k, reps))
    print("%10s %12s %12s %12s %8s %8s" % ("bytes", "blocking", "one by one", "in flight", "1by1/bl", "infl/1by1"))
for s in sizes:
    bufs = [np.ones(s // 4, np.float32) for _ in range(k)]

    def blocking():
        for b in bufs:
            comm.Allreduce(MPI.IN_PLACE, b, op=MPI.SUM)

    def one_by_one():
        for b in bufs:
            comm.Iallreduce(MPI.IN_PLACE, b, op=MPI.SUM).Wait()

    def in_flight():
        MPI.Request.Waitall([comm.Iallreduce(MPI.IN_PLACE, b, op=MPI.SUM) for b in bufs])

    t = [median(f) for f in (blocking, one_by_one, in_flight)]
    if comm.rank == 0:
        print("%10d %9.3f ms %9.3f ms %9.3f ms %8.2f %8.2f" % (s, t[0] * 1e3, t[1] * 1e3, t[2] * 1e3, t[1] / t[0],
                                                              t[2] / t[1]))
