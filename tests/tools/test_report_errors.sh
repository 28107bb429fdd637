#!/bin/sh
# commfit report on input it cannot use: a missing, truncated, corrupt,
# wrong-version or foreign file gives one line naming the file and the
# problem and exit status 2, never a crash; bad options give a message and
# the usage.  A valid profile gives the report with its verdict first.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
good="$cf_tmp/good.json"

COMMFIT_OUTPUT="$good" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/examples/coll_sweep" \
    --op allreduce --min 8 --max 64KiB --iters 20 > /dev/null || cf_fail "could not make a profile"
[ -s "$good" ] || cf_fail "no profile written"
size=$(wc -c < "$good")

# expect_error WHAT FILE [PATTERN]: exit 2, nothing on stdout, one line
# "commfit report: FILE: ..." on stderr (matching PATTERN when given)
expect_error() {
    what=$1 file=$2 pattern=${3:-}
    "$commfit" report "$file" > "$cf_tmp/out" 2> "$cf_tmp/err"
    rc=$?
    lines=$(wc -l < "$cf_tmp/err")
    first=$(head -n 1 "$cf_tmp/err")
    if [ $rc -ne 2 ]; then
        bad "$what: exit status $rc, want 2"; cat "$cf_tmp/err"
    elif [ "$lines" -ne 1 ] || [ -s "$cf_tmp/out" ]; then
        bad "$what: want exactly one line on stderr and nothing on stdout"; cat "$cf_tmp/err"
    else
        case $first in
        "commfit report: $file: "?*)
            if [ -n "$pattern" ] && ! printf '%s\n' "$first" | grep -q -- "$pattern"; then
                bad "$what: '$first' does not say '$pattern'"
            else
                ok "$what: $first"
            fi ;;
        *) bad "$what: '$first' does not name the file" ;;
        esac
    fi
}

expect_error "missing file" "$cf_tmp/nope.json" "cannot open"
expect_error "directory" "$cf_tmp" "is a directory"
: > "$cf_tmp/empty.json"
expect_error "empty file" "$cf_tmp/empty.json" "truncated or empty"
for cut in 1 16 $((size / 10)) $((size / 3)) $((size / 2)) $((size * 9 / 10)) $((size - 3)); do
    head -c "$cut" "$good" > "$cf_tmp/cut$cut.json"
    expect_error "truncated at $cut of $size bytes" "$cf_tmp/cut$cut.json" "truncated"
done
sed 's/"version": 1/"version": 99/' "$good" > "$cf_tmp/v99.json"
expect_error "wrong version" "$cf_tmp/v99.json" "version 99 is not supported"
sed 's/"version": 1/"version": "1"/' "$good" > "$cf_tmp/vstr.json"
expect_error "version not an integer" "$cf_tmp/vstr.json" "version"
sed 's/"calls"/"kalls"/' "$good" > "$cf_tmp/nocalls.json"
expect_error "a record without calls" "$cf_tmp/nocalls.json" "'calls' is missing"
sed 's/"p50": [0-9.e-]*/"p50": "fast"/' "$good" > "$cf_tmp/p50str.json"
expect_error "a median that is not a number" "$cf_tmp/p50str.json" "not a number"
sed 's/"records"/"recs"/' "$good" > "$cf_tmp/norecords.json"
expect_error "no records" "$cf_tmp/norecords.json" "'records'"
# bytes flipped in the middle of the file
head -c $((size / 2)) "$good" > "$cf_tmp/garbage.json"
printf '\001\377{]]"\\' >> "$cf_tmp/garbage.json"
tail -c +$((size / 2 + 7)) "$good" >> "$cf_tmp/garbage.json"
expect_error "corrupt bytes" "$cf_tmp/garbage.json" "not valid JSON"
printf '{"hello": "world"}\n' > "$cf_tmp/foreign.json"
expect_error "JSON that is not a profile" "$cf_tmp/foreign.json" "not a commfit profile"
printf '[1, 2, 3]\n' > "$cf_tmp/array.json"
expect_error "a JSON array" "$cf_tmp/array.json" "not a JSON object"
"$CF_PYTHON" -c 'import random, sys; random.seed(7); sys.stdout.buffer.write(bytes(random.randrange(256) for _ in range(4096)))' \
    > "$cf_tmp/random.bin"
expect_error "random bytes" "$cf_tmp/random.bin"
# every cut of the first 2 kB and a sample of the rest: exit 2, never a crash
crashes=0
cut=0
while [ $cut -lt "$size" ]; do
    head -c "$cut" "$good" > "$cf_tmp/c.json"
    "$commfit" report "$cf_tmp/c.json" > /dev/null 2>&1
    rc=$?
    [ $rc -eq 2 ] || { crashes=$((crashes + 1)); echo "     cut at $cut: exit status $rc"; }
    if [ $cut -lt 2048 ]; then cut=$((cut + 7)); else cut=$((cut + 97)); fi
done
[ $crashes -eq 0 ] && ok "truncations at every 7th/97th byte: exit status 2" || bad "$crashes truncations did not exit with 2"

# usage errors: a message and the usage, exit 2
expect_usage() {
    what=$1; shift
    "$commfit" report "$@" > "$cf_tmp/out" 2> "$cf_tmp/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q "^commfit report: " "$cf_tmp/err" && grep -q "^Usage: commfit report" "$cf_tmp/err"; then
        ok "$what: $(head -n 1 "$cf_tmp/err")"
    else
        bad "$what: exit status $rc"; cat "$cf_tmp/err"
    fi
}
expect_usage "no profile"
expect_usage "unknown option" --frobnicate "$good"
expect_usage "bad --link unit" --link 400Gx/s,5us "$good"
expect_usage "--link without a time" --link 400Gb/s "$good"
expect_usage "bad --format" --format xml "$good"
# other runs (commfit report PROFILE RUN...): one that cannot be read gives
# its line and exit 2, nothing on stdout and no report file left behind
"$commfit" report -o "$cf_tmp/two.txt" "$good" "$cf_tmp/cut16.json" > "$cf_tmp/out" 2> "$cf_tmp/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l < "$cf_tmp/err")" -eq 1 ] && [ ! -s "$cf_tmp/out" ] && [ ! -e "$cf_tmp/two.txt" ] &&
    grep -q "^commfit report: $cf_tmp/cut16.json: .*truncated" "$cf_tmp/err"; then
    ok "a truncated second run: $(cat "$cf_tmp/err")"
else
    bad "a truncated second run: exit status $rc"; cat "$cf_tmp/err"
fi
expect_usage "a profile given twice" "$good" "$good"
cp "$good" "$cf_tmp/again.json"
# a copy adds no information: every stream with a verdict is matched (runs
# 2; one without stays runs 1), its verdict, bucket and saving are the one
# run's, and the runs spread nothing
"$commfit" report --format json "$good" > "$cf_tmp/one.json" 2> "$cf_tmp/err" &&
"$commfit" report --format json "$good" "$cf_tmp/again.json" > "$cf_tmp/two.json" 2>> "$cf_tmp/err" &&
    "$CF_PYTHON" - "$cf_tmp/one.json" "$cf_tmp/two.json" <<'EOF_COPY' &&
import json, math, sys
one, two = (json.load(open(f))["advice"] for f in sys.argv[1:3])
assert len(one) == len(two) and any(a["verdict"] for a in one), one
def same(x, y):
    if x is None or y is None:
        return x is y
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-15)
for a, b in zip(one, two):
    assert a["runs"] == 1 and b["runs"] == (2 if a["verdict"] else 1), (a["verdict"], a["runs"], b["runs"])
    for k in ("verdict", "bucket_bytes"):
        assert a.get(k) == b.get(k), (k, a.get(k), b.get(k))
    for k in ("predicted_saving_s", "saving_step_s"):
        assert same(a.get(k), b.get(k)), (k, a.get(k), b.get(k))
    assert b["saving_run_spread_step_s"] in (None, 0), b["saving_run_spread_step_s"]
EOF_COPY
    ok "a copy of the profile as a second run: the one run's advice, no spread" ||
    { bad "a copy of the profile as a second run"; cat "$cf_tmp/err"; }
"$commfit" report --help > "$cf_tmp/out" 2>&1 && grep -q "^Usage: commfit report" "$cf_tmp/out" \
    && ok "--help: exit status 0" || bad "--help"
"$commfit" 2>&1 | grep -q "report" && ok "commfit lists the report command" || bad "report is not listed"

# the valid profile: exit 0, the verdict first, then the tables
if "$commfit" report "$good" > "$cf_tmp/report.txt" 2> "$cf_tmp/err"; then
    # after the header: report, job, prog, MPI, a WARNING, a blank line
    if awk 'NR <= 7 && $0 == "VERDICT" { f = 1 } END { exit !f }' "$cf_tmp/report.txt"; then
        ok "valid profile: the report opens with its verdict"
    else
        bad "valid profile: no verdict at the top"; head "$cf_tmp/report.txt"
    fi
    for section in OPERATIONS FITS "SIZE BINS" COLLECTIVES RANKS; do
        grep -q "^$section" "$cf_tmp/report.txt" || bad "valid profile: no $section table"
    done
    grep -q "MPI_Allreduce on world: .* of MPI time, .*-bound" "$cf_tmp/report.txt" \
        && ok "valid profile: MPI_Allreduce has a verdict" || bad "valid profile: no verdict for MPI_Allreduce"
else
    bad "valid profile: exit status $?"; cat "$cf_tmp/err"
fi
"$commfit" report --format json "$good" > "$cf_tmp/r.json" \
    && "$CF_PYTHON" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["format"]=="commfit-report" and r["fits"] and r["collectives"]' "$cf_tmp/r.json" \
    && ok "valid profile: --format json parses" || bad "valid profile: --format json"
"$commfit" report --format csv --link 400Gb/s,5us "$good" > "$cf_tmp/r.csv" \
    && "$CF_PYTHON" -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and {r["row"] for r in rows} == {"fit", "bin"}, rows[:2]
assert all(len(r) == len(rows[0]) for r in rows)
assert any(r["efficiency"] for r in rows if r["row"] == "bin")' "$cf_tmp/r.csv" \
    && ok "valid profile: --format csv has fit and bin rows" || bad "valid profile: --format csv"

cf_done
