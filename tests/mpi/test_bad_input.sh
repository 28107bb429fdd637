#!/bin/sh
# Bad settings: a clear message naming the variable, defaults used, the job
# unchanged; an unwritable output path: a message and the profile kept elsewhere.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
prog="$CF_BUILDDIR/tests/mpi/known_calls"
cd "$cf_tmp" || exit 1

COMMFIT_TABLE_SIZE=lots COMMFIT_SUMMARY=maybe COMMFIT_OUTPUT="$cf_tmp/bad-env.json" COMMFIT_TYPO=1 \
    cf_mpirun 2 -- "$prog" 2> "$cf_tmp/err.txt" \
    || cf_fail "job failed with bad settings"
cat "$cf_tmp/err.txt"
grep -q "COMMFIT_TABLE_SIZE='lots' is not a whole number" "$cf_tmp/err.txt" || cf_fail "no message for COMMFIT_TABLE_SIZE"
grep -q "COMMFIT_SUMMARY='maybe' is not a boolean" "$cf_tmp/err.txt" || cf_fail "no message for COMMFIT_SUMMARY"
grep -q "unknown variable COMMFIT_TYPO" "$cf_tmp/err.txt" || cf_fail "no message for an unknown variable"
[ "$(grep -c "COMMFIT_TABLE_SIZE=" "$cf_tmp/err.txt")" -eq 1 ] || cf_fail "the message should come once, from rank 0"
cf_check known_calls "$cf_tmp/bad-env.json" 2 > /dev/null || cf_fail "profile with default settings is wrong"
echo "ok   bad settings: messages given, defaults used, profile complete"

COMMFIT_OUTPUT=/nonexistent-dir/p.json cf_mpirun 2 -- "$prog" 2> "$cf_tmp/err2.txt"
rc=$?
cat "$cf_tmp/err2.txt"
[ $rc -eq 0 ] || cf_fail "an unwritable COMMFIT_OUTPUT changed the job's exit status ($rc)"
grep -q "cannot write the profile to COMMFIT_OUTPUT=/nonexistent-dir/p.json" "$cf_tmp/err2.txt" || cf_fail "no message"
kept=$(sed -n 's/^commfit: profile written to //p' "$cf_tmp/err2.txt")
[ -n "$kept" ] && [ -f "$kept" ] || cf_fail "the profile was not kept elsewhere"
cf_check known_calls "$kept" 2 > /dev/null || cf_fail "the kept profile is wrong"
echo "ok   unwritable output: message, exit status 0, profile kept at $kept"

# A FIFO (as a device like /dev/null would be) is refused, left as it was,
# and the profile kept under the default name.
mkfifo "$cf_tmp/out.fifo" || cf_fail "mkfifo failed"
COMMFIT_OUTPUT="$cf_tmp/out.fifo" cf_mpirun 2 -- "$prog" 2> "$cf_tmp/err3.txt" || cf_fail "job failed with a FIFO output"
cat "$cf_tmp/err3.txt"
[ -p "$cf_tmp/out.fifo" ] || cf_fail "the FIFO was replaced"
grep -q "out.fifo is a FIFO, not a file: refused" "$cf_tmp/err3.txt" || cf_fail "no message for a FIFO output"
kept=$(sed -n 's/^commfit: profile written to //p' "$cf_tmp/err3.txt")
[ -n "$kept" ] && [ -f "$kept" ] || cf_fail "the profile was not kept elsewhere"
echo "ok   FIFO output: refused with a message, left a FIFO, profile kept at $kept"

COMMFIT_DISABLE=1 COMMFIT_OUTPUT="$cf_tmp/disabled.json" cf_mpirun 2 -- "$prog" \
    || cf_fail "job failed with COMMFIT_DISABLE=1"
[ ! -e "$cf_tmp/disabled.json" ] || cf_fail "COMMFIT_DISABLE=1 still wrote a profile"
echo "ok   COMMFIT_DISABLE=1 passes every call through"
# switched off, the plugin allocates nothing: freeing its tables (here 8 MiB
# of request keys) would raise glibc's mmap threshold, and a program whose
# buffers are mapped afresh each step would run differently (faster)
probe="$CF_BUILDDIR/tests/mpi/malloc_probe"
want=$(cf_mpirun_plain 2 "$probe" 4) || cf_fail "malloc_probe failed"
got=$(COMMFIT_DISABLE=1 COMMFIT_MAX_REQUESTS=1048576 cf_mpirun 2 -- "$probe" 4) || cf_fail "malloc_probe failed"
[ "$got" = "$want" ] || cf_fail "COMMFIT_DISABLE=1 changed the program's malloc: '$got', without the plugin '$want'"
echo "ok   COMMFIT_DISABLE=1 leaves the program's malloc as it was ($got)"
# and so does the plugin switched on: it frees no large block before the program's calls
want=$(cf_mpirun_plain 2 "$probe" 1) || cf_fail "malloc_probe failed"
got=$(COMMFIT_OUTPUT="$cf_tmp/probe.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$probe" 1) || cf_fail "malloc_probe failed"
[ "$got" = "$want" ] || cf_fail "profiling changed the program's malloc: '$got', without the plugin '$want'"
echo "ok   profiled, the program's malloc is as it was ($got)"
# switched off on one rank only (MPMD launch): the ranks agree at start-up,
# nothing waits for the rank that is off, no profile
if [ "$CF_MPI_FAMILY" = mpich ]; then
    env="-env LD_PRELOAD $COMMFIT_LIB -env COMMFIT_OUTPUT $cf_tmp/half.json"
    timeout 120 "$CF_MPIRUN" -n 1 $env -env COMMFIT_DISABLE 1 "$prog" : -n 1 $env -env COMMFIT_DISABLE 0 "$prog" \
        2> "$cf_tmp/err3.txt"
else
    root=; [ "$(id -u)" = 0 ] && root=--allow-run-as-root
    env="-x LD_PRELOAD=$COMMFIT_LIB -x COMMFIT_OUTPUT=$cf_tmp/half.json"
    timeout 120 "$CF_MPIRUN" $root --oversubscribe --bind-to none --mca btl self,vader,tcp --mca pml ob1 \
        -np 1 $env -x COMMFIT_DISABLE=1 "$prog" : -np 1 $env -x COMMFIT_DISABLE=0 "$prog" 2> "$cf_tmp/err3.txt"
fi || { cat "$cf_tmp/err3.txt"; cf_fail "job with COMMFIT_DISABLE on one rank failed or hung"; }
[ ! -e "$cf_tmp/half.json" ] || cf_fail "a profile was written although a rank was off"
echo "ok   COMMFIT_DISABLE=1 on one rank of two: the job runs, profiling is off everywhere"
echo "6 passed, 0 failed"
