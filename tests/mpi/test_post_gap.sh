#!/bin/sh
# The framework's time after a nonblocking collective's post: the gap from
# an MPI_Iallreduce to the MPI_Test after it, one post in 16 from each
# thread's first (CF_POST_GAP_EVERY), is counted (job.post_gaps: exactly
# those of the posts tests/mpi/post_gap.c made with nothing but work
# between, on every rank) and measured (job.post_gap_s: at least the 200 us
# the program spins, a fifth more at most); the gaps that hold an MPI call
# (the program's next 480 posts: an all-reduce, a region entered, recording
# paused and resumed) are not.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_OUTPUT="$cf_tmp/p.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/post_gap" \
    --posts 160 --gap-us 200 > "$cf_tmp/out" || cf_fail "the job failed"
"$CF_PYTHON" - "$cf_tmp/out" "$cf_tmp/p.json" <<'PY'
import json, sys
from checks import check, done
made = int(open(sys.argv[1]).read().split()[1])
job = json.load(open(sys.argv[2]))["job"]
want = 2 * -(-(made // 2) // 16)  # posts 0, 16, ... of each rank's first 160
check("post_gaps: one in 16 of the %d posts followed by work alone, on both ranks (%d)" % (made, want),
      job.get("post_gaps") == want, str(job.get("post_gaps")))
gap = job.get("post_gap_s")
# the histogram's midpoint is within 3.2 % of the value; the spin is at least 200 us
check("post_gap_s: the 200 us spin, within [0.96, 1.2] x", gap is not None and 0.96 * 200e-6 <= gap <= 1.2 * 200e-6,
      str(gap))
done()
PY
