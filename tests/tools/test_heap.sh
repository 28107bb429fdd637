#!/bin/bash
# The tools' memory held to a ceiling that does not swing: the bytes the
# command holds in malloc's blocks at its peak, counted by a preloaded
# allocator wrapper (tests/tools/heap_peak.c), the same on every run of
# one build on one input (checked here), so that a change that makes
# report, --by-callsite, --format json or diff heavier fails.  The profile
# has the shape of `make bench-tools`' (as many communicators as ranks,
# 10 records, 12 sampled instances and 4 matrix pairs per rank, a call
# site of 8 frames per 10 ranks), where the analysis, not the file, is
# most of the peak.  Ceilings, as tenths of the bytes read (diff reads
# two files): report 3 times, issue 18's target; diff 3.5 times (at 3.24,
# its own rows besides the two analyses).  Report is at 2.97, and what
# holds it there is the analysis, measured with massif at the peak (25.4
# MB of an 8.55 MB file): the fits, 968 B each for 10 003 fitted groups
# (9.7 MB), the records at 264 B (5.3 MB), the fits' bins (3.6 MB), the
# operations (2.0 MB), the advice (1.7 MB) and indexes (1.1 MB).  It was
# 2.90 when the ceiling was set; the sampled collectives the advice reads
# for call_gap_s, 2000 rows of jansson values held through the analysis,
# added 0.81 MB (2.99), of which keeping only the columns read took back
# 0.22 MB.  Lighter than that is the analysis' structures.  The figure is
# the same on every run, so the ceiling fails only a heavier build, and
# a doubling fails by far.  (--format json, which builds the whole report
# as a tree before writing it, peaks at about 25 times: not held here.)
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"

if ldd "$commfit" 2> /dev/null | grep -q 'lib[at]san'; then
    echo "SKIP: commfit is built with a sanitizer, whose allocator the counting wrapper cannot replace"
    exit 77
fi
cc -O2 -shared -fPIC -o "$cf_tmp/heap_peak.so" "$CF_SRCDIR/tests/tools/heap_peak.c" ||
    cf_fail "cannot build heap_peak.so"
prof="$cf_tmp/p.json"
n=2000
"$CF_PYTHON" "$CF_SRCDIR/tests/tools/gen_profile.py" "$prof" --ranks $n --comms $n --records $((10 * n)) \
    --samples $((12 * n)) --pairs $((4 * n)) --sites $((n / 10)) --modules $((8 * n / 10)) ||
    cf_fail "cannot make the profile"
bytes=$(stat -c %s "$prof")

# heap ARGS...: the peak bytes of one run of commfit ARGS (output discarded)
heap() {
    rm -f "$cf_tmp/heap.txt"
    if ! LD_PRELOAD="$cf_tmp/heap_peak.so" HEAP_PEAK_OUT="$cf_tmp/heap.txt" "$commfit" "$@" > /dev/null \
        2> "$cf_tmp/err"; then
        echo "failed: $(head -n 1 "$cf_tmp/err")"
        return
    fi
    cat "$cf_tmp/heap.txt" 2> /dev/null || echo "no figure written"
}

# within WHAT TENTHS TIMES_READ ARGS...: the peak is the same on two runs
# (to 0.01 %: a block grown in place may be rounded otherwise) and at most
# TENTHS tenths of the bytes read
within() {
    local what=$1 tenths=$2 times=$3 a b read
    shift 3
    read=$((times * bytes))
    a=$(heap "$@")
    b=$(heap "$@")
    case $a$b in
    '' | *[!0-9]*)
        bad "$what: $a / $b"
        return
        ;;
    esac
    if [ $(((a > b ? a - b : b - a) * 10000)) -gt "$a" ]; then
        bad "$what: the peak differs between two runs ($a, $b bytes): it cannot hold a ceiling"
    elif [ $((a * 10)) -gt $((tenths * read)) ]; then
        bad "$what: peak $a bytes, more than $tenths tenths of the $read bytes read"
    else
        ok "$what: peak $a bytes, $(awk -v a="$a" -v f=$read 'BEGIN { printf "%.2f", a / f }') times the $read bytes read (ceiling $tenths tenths)"
    fi
}
within "report" 30 1 report "$prof"
within "report --by-callsite" 30 1 report --by-callsite "$prof"
within "diff" 35 2 diff "$prof" "$prof"

# the wrapper counts what is held, not what passed through: a report of a
# profile with 4 times the records peaks near 4 times as high (the
# analysis grows with the records), not at a fixed figure
big="$cf_tmp/big.json"
"$CF_PYTHON" "$CF_SRCDIR/tests/tools/gen_profile.py" "$big" --ranks $((4 * n)) --comms $((4 * n)) \
    --records $((40 * n)) || cf_fail "cannot make the larger profile"
small="$cf_tmp/small.json"
"$CF_PYTHON" "$CF_SRCDIR/tests/tools/gen_profile.py" "$small" --ranks $n --comms $n --records $((10 * n)) ||
    cf_fail "cannot make the smaller profile"
hs=$(heap report "$small")
hb=$(heap report "$big")
if [ -n "${hs//[0-9]/}" ] || [ -n "${hb//[0-9]/}" ]; then
    bad "report of the larger and smaller profiles: $hs / $hb"
elif [ $((hb * 10)) -ge $((hs * 30)) ] && [ $((hb * 10)) -le $((hs * 50)) ]; then
    ok "4 times the records: peak $hb against $hs bytes"
else
    bad "4 times the records: peak $hb against $hs bytes, not 3 to 5 times"
fi
cf_done
