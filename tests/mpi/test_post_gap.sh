#!/bin/sh
# The framework's time after a nonblocking collective's post: the gap from
# a marked MPI_Iallreduce (each thread's first, then one after every 0 to 62
# posts skipped, drawn by a xorshift32 from a fixed seed: plugin/cf_runtime.c
# cf_post_mark_slow) to the MPI_Wait after it is counted (job.post_gaps:
# exactly the marks among the posts tests/mpi/post_gap.c made with nothing
# but work between, on every rank) and measured (job.post_gap_s: at least
# the 200 us the program spins, the histogram's half bucket (6.25 %) and a
# little load more at most); the gaps that hold an MPI call (the program's
# next 640 posts: an all-reduce, a region entered, recording paused and
# resumed, a communicator duplicated and freed) are not; the last 160
# posts' are.  A measured gap
# arms the next post, which is marked too and measures its lead, the time
# from that MPI_Wait to it (job.post_leads: exactly the armed posts whose
# lead holds no MPI call; job.post_lead_s: the 80 us spun before each
# post, the shortest tenth); a measured gap of an armed post arms none, and
# the last 160 posts' gaps arm posts whose lead holds an all-reduce, which
# are not counted.  The TSC is asked for, so that ticks are not nanoseconds
# where it can be read.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
COMMFIT_TIMER=tsc COMMFIT_OUTPUT="$cf_tmp/p.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/post_gap" \
    --posts 160 --gap-us 200 --lead-us 80 > "$cf_tmp/out" || cf_fail "the job failed"
"$CF_PYTHON" - "$cf_tmp/out" "$cf_tmp/p.json" <<'PY'
import json, sys
from checks import check, done
made = int(open(sys.argv[1]).read().split()[1])
job = json.load(open(sys.argv[2]))["job"]
# the marks among each rank's posts, as cf_post_mark_slow draws them and
# cf_post_gap arms them: 6 kinds of made / 2 posts, gaps measured in the
# first and the last kind, leads where the post before was not of the last
per = made // 2
left, x, marks, leads, armed = 0, 0, 0, 0, False
for i in range(6 * per):
    kind = i // per
    if left == 0:
        forced, armed = armed, False
        if forced and (i - 1) // per != 5:
            leads += 1
        x = x or 2463534242
        x ^= (x << 13) & 0xffffffff
        x ^= x >> 17
        x ^= (x << 5) & 0xffffffff
        left = x % 63
        if kind in (0, 5):
            marks += 1
            if not forced:
                left, armed = 0, True
    else:
        left -= 1
want = 2 * marks
check("post_gaps: the marked of the %d posts followed by work alone, on both ranks (%d)" % (2 * made, want),
      job.get("post_gaps") == want, str(job.get("post_gaps")))
gap = job.get("post_gap_s")
check("post_gap_s: the 200 us spin, within [0.96, 1.2] x", gap is not None and 0.96 * 200e-6 <= gap <= 1.2 * 200e-6,
      str(gap))
check("post_leads: the armed posts after a gap with work alone before them, on both ranks (%d)" % (2 * leads),
      job.get("post_leads") == 2 * leads, str(job.get("post_leads")))
lead = job.get("post_lead_s")
check("post_lead_s: the 80 us spin, within [0.9, 1.2] x", lead is not None and 0.9 * 80e-6 <= lead <= 1.2 * 80e-6,
      str(lead))
done()
PY
