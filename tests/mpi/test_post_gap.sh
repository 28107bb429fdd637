#!/bin/sh
# The framework's time after a nonblocking collective's post: the gap from
# a marked MPI_Iallreduce (each thread's first, then one after every 0 to 30
# posts skipped, drawn by a xorshift32 from a fixed seed: plugin/cf_complete.c
# cf_post_mark_slow) to the MPI_Test after it is counted (job.post_gaps:
# exactly the marks among the posts tests/mpi/post_gap.c made with nothing
# but work between, on every rank) and measured (job.post_gap_s: at least
# the 200 us the program spins, the histogram's half bucket (6.25 %) and a
# little load more at most); the gaps that hold an MPI call (the program's
# next 640 posts: an all-reduce, a region entered, recording paused and
# resumed, a communicator duplicated and freed) are not.  The TSC is asked
# for, so that ticks are not nanoseconds where it can be read.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_TIMER=tsc COMMFIT_OUTPUT="$cf_tmp/p.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/post_gap" \
    --posts 160 --gap-us 200 > "$cf_tmp/out" || cf_fail "the job failed"
"$CF_PYTHON" - "$cf_tmp/out" "$cf_tmp/p.json" <<'PY'
import json, sys
from checks import check, done
made = int(open(sys.argv[1]).read().split()[1])
job = json.load(open(sys.argv[2]))["job"]
# the marks among each rank's first made / 2 posts, as cf_post_mark_slow draws them
left, x, marks = 0, 0, 0
for i in range(made // 2):
    if left == 0:
        x = x or 2463534242
        x ^= (x << 13) & 0xffffffff
        x ^= x >> 17
        x ^= (x << 5) & 0xffffffff
        left = x % 31
        marks += 1
    else:
        left -= 1
want = 2 * marks
check("post_gaps: the marked of the %d posts followed by work alone, on both ranks (%d)" % (made, want),
      job.get("post_gaps") == want, str(job.get("post_gaps")))
gap = job.get("post_gap_s")
check("post_gap_s: the 200 us spin, within [0.96, 1.2] x", gap is not None and 0.96 * 200e-6 <= gap <= 1.2 * 200e-6,
      str(gap))
done()
PY
