#!/bin/sh
# Oversubscription is told at MPI_Init: ranks on a node against the CPUs
# they may run on (the union of their affinity masks, capped by the CPUs
# online).  Unbound (--bind-to none), every rank may use every CPU of the
# machine, so more ranks than CPUs is oversubscribed and as many is not.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
# nproc honours OMP_NUM_THREADS, which HPC users often set to 1: the CPUs the job may use
cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
for np in $((2 * cpus)) $cpus; do
    COMMFIT_OUTPUT="$cf_tmp/o$np.json" COMMFIT_SUMMARY=0 \
        cf_mpirun $np -- "$CF_BUILDDIR/examples/pingpong" --min 1 --max 1KiB --iters 10 > /dev/null \
        || cf_fail "job with $np ranks failed"
done
"$CF_PYTHON" - "$cf_tmp" "$cpus" <<'PY'
import json, sys
d, cpus = sys.argv[1], int(sys.argv[2])
from checks import check, done
for np, over in ((2 * cpus, True), (cpus, False)):
    p = json.load(open("%s/o%d.json" % (d, np)))
    j = p["job"]
    check("%d ranks on %d CPUs: oversubscribed is %s" % (np, cpus, over), j.get("oversubscribed") is over,
          "(got %r)" % j.get("oversubscribed"))
    check("%d ranks: ranks_per_node_max = %d" % (np, np), j.get("ranks_per_node_max") == np,
          "(got %r)" % j.get("ranks_per_node_max"))
    check("%d ranks: cpus_per_node_min = %d" % (np, cpus), j.get("cpus_per_node_min") == cpus,
          "(got %r)" % j.get("cpus_per_node_min"))
    per = sorted(set((r.get("node_ranks"), r.get("node_cpus")) for r in p["ranks"]))
    check("%d ranks: every rank has node_ranks %d, node_cpus %d" % (np, np, cpus), per == [(np, cpus)],
          "(got %r)" % per)
    check("%d ranks: not partial" % np, j["partial"] is False and j.get("partial_reasons") == [],
          "(%r)" % j.get("partial_reasons"))
done()
PY
