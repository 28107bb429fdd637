#!/bin/bash
# The merge of spooled parts against hostile files: CF_FUZZ_CASES (default
# 3000) spools made from a real job's by tests/tools/fuzz_merge.py
# (truncation, bit flips, hostile counts and values, sparse files) are merged
# by tests/tools/fuzz_merge.c built twice: with ASan and UBSan (any report
# fails), and with UBSan alone under a memory limit (ulimit -v).  No
# allocation of the merge may exceed what the spool's files justify (8 times
# their bytes, and 1 MiB), every profile it makes must pass the profile's
# reader, and `commfit report` must read it.  Also: make fuzz-merge.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
cases=${CF_FUZZ_CASES:-3000}
batch=250
rngseed=${CF_FUZZ_SEED:-19}
cc=${CC:-cc}
commfit="$CF_BUILDDIR/tools/commfit"
# the driver and the core library's C sources, as Makefile.am lists them
core=$(${MAKE:-make} -s --no-print-directory -C "$CF_BUILDDIR" core-sources) || cf_fail "make core-sources failed"
src=("$CF_SRCDIR/tests/tools/fuzz_merge.c")
for f in $core; do
    case $f in *.c) src+=("$CF_SRCDIR/$f") ;; esac
done
[ ${#src[@]} -gt 8 ] || cf_fail "the core library's sources: only '$core'"
flags=(-std=gnu11 -O1 -g -fno-omit-frame-pointer -I"$CF_BUILDDIR" -I"$CF_SRCDIR/lib"
    -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc)
# skip only where the compiler has no sanitizers; a driver that does not
# build is a failure
echo 'int main(void) { return 0; }' > "$cf_tmp/probe.c"
"$cc" -fsanitize=address,undefined "$cf_tmp/probe.c" -o "$cf_tmp/probe" 2> "$cf_tmp/cc.log" \
    || { cat "$cf_tmp/cc.log"; echo "SKIP: $cc cannot build with -fsanitize=address,undefined"; exit 77; }
# the whole core library, twice: built side by side
"$cc" "${flags[@]}" -fsanitize=address,undefined -fno-sanitize-recover=all "${src[@]}" -ljansson -lm \
    -o "$cf_tmp/fuzz_asan" &
asan=$!
"$cc" "${flags[@]}" -fsanitize=undefined -fno-sanitize-recover=all "${src[@]}" -ljansson -lm \
    -o "$cf_tmp/fuzz_ubsan"
ubsan=$?
wait $asan || cf_fail "cannot build the ASan driver"
[ $ubsan = 0 ] || cf_fail "cannot build the UBSan driver"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:exitcode=98

# the seed: the spool of a real 2-rank job that exits early (regions, communicators, records)
seed="$cf_tmp/seed"; mkdir -p "$seed/t"
COMMFIT_OUTPUT="$seed/s.json" COMMFIT_SUMMARY=0 cf_mpirun 2 --mca odls_base_sigkill_timeout 5 -- \
    "$CF_BUILDDIR/tests/mpi/abend" exit "$seed/t" > /dev/null 2>&1
[ -f "$seed/s.parts/ranks-0-255/rank-1.spill" ] && [ -f "$seed/s.parts/ranks-0-255/rank-0.spill" ] \
    || cf_fail "the seed job left no parts"
"$cf_tmp/fuzz_asan" "$cf_tmp" "$seed/s.parts" > "$cf_tmp/seed.out" || cf_fail "the seed does not merge"
echo "seed: $(ls -l "$seed"/s.parts/ranks-0-255 | awk 'NR > 1 { printf "%s %s B; ", $9, $5 }')"

t0=$(date +%s)
written=0 merged=0 refused=0 largest=0
kinds="$cf_tmp/kinds"; : > "$kinds"
for ((first = 0; first < cases; first += batch)); do
    n=$((cases - first < batch ? cases - first : batch))
    d="$cf_tmp/cases"; out="$cf_tmp/out"; rm -rf "$d" "$out"; mkdir -p "$d" "$out"
    "$CF_PYTHON" "$CF_SRCDIR/tests/tools/fuzz_merge.py" "$seed/s.parts" "$d" "$first" "$n" "$rngseed" >> "$kinds" \
        || cf_fail "fuzz_merge.py failed"
    spools=(); for ((i = first; i < first + n; i++)); do spools+=("$d/$i"); done
    "$cf_tmp/fuzz_asan" "$out" "${spools[@]}" > "$cf_tmp/asan.out" 2> "$cf_tmp/asan.err"; rc=$?
    if [ "$rc" != 0 ] || grep -q "runtime error\|AddressSanitizer\|LeakSanitizer\|FAIL" "$cf_tmp/asan.err"; then
        grep -v "^commfit: " "$cf_tmp/asan.err" | head -40
        echo "last case done: $(tail -1 "$cf_tmp/asan.out")"
        cf_fail "ASan/UBSan driver: exit $rc in cases $first-$((first + n - 1))"
    fi
    # the same under a memory limit, without ASan (whose shadow memory a limit would refuse)
    (ulimit -v 262144; "$cf_tmp/fuzz_ubsan" "$out" "${spools[@]}") > "$cf_tmp/ubsan.out" 2> "$cf_tmp/ubsan.err"; rc=$?
    if [ "$rc" != 0 ] || grep -q "runtime error\|FAIL" "$cf_tmp/ubsan.err"; then
        grep -v "^commfit: " "$cf_tmp/ubsan.err" | head -40
        cf_fail "UBSan driver under ulimit -v 262144: exit $rc in cases $first-$((first + n - 1))"
    fi
    cmp -s "$cf_tmp/asan.out" "$cf_tmp/ubsan.out" || cf_fail "the two drivers do not agree on cases $first-$((first + n - 1))"
    merged=$((merged + $(awk '$2 == 0' "$cf_tmp/asan.out" | wc -l)))
    refused=$((refused + $(awk '$2 != 0' "$cf_tmp/asan.out" | wc -l)))
    l=$(awk 'BEGIN { m = 0 } $3 > m { m = $3 } END { print m }' "$cf_tmp/asan.out")
    [ "$l" -gt "$largest" ] && largest=$l
    for f in "$out"/*.json; do
        [ -e "$f" ] || continue
        "$commfit" report "$f" > /dev/null 2> "$cf_tmp/report.err" \
            || { cat "$cf_tmp/report.err"; cf_fail "commfit report cannot read the merged $f"; }
        written=$((written + 1))
    done
done
t=$(($(date +%s) - t0))
echo "ok   $cases cases in $t s: $merged merged ($written profiles, each read by commfit report), $refused refused;" \
    "no sanitizer report; largest allocation $largest B"
echo "     kinds: $(awk '{ print $2 }' "$kinds" | tr '+' '\n' | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')"
[ "$merged" -gt 0 ] && [ "$refused" -gt 0 ] || cf_fail "the cases do not both merge and fail"
