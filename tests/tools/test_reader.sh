#!/bin/bash
# How the tools read a profile: in memory bounded by the file (a profile of
# 2 000 ranks, 5 000 records, 100 000 samples, 8 000 matrix pairs and 500
# call sites: report, --by-callsite and trace within 3 times the file, diff
# within 3 times the two); call sites' strings cleaned of escape sequences
# in text and CSV; a bad matrix or call-site section is a profile that
# cannot be read (exit 2, the message naming the profile, not -o's file).
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"

cc -O2 -o "$cf_tmp/peak" "$CF_SRCDIR/tests/tools/peak_rss.c" || cf_fail "cannot build peak_rss"
big="$cf_tmp/big.json"
"$CF_PYTHON" "$CF_SRCDIR/tests/tools/gen_profile.py" "$big" --ranks 2000 --comms 500 --records 5000 \
    --samples 100000 --pairs 8000 --sites 500 || cf_fail "cannot make the profile"
size_kb=$(($(stat -c %s "$big") / 1024))

# within WHAT TIMES KB COMMAND...: the command succeeds with a peak resident
# memory of at most TIMES x KB
within() {
    local what=$1 times=$2 kb=$3
    shift 3
    if ! "$cf_tmp/peak" "$cf_tmp/peak.txt" "$@" > /dev/null 2> "$cf_tmp/err"; then
        bad "$what: failed: $(head -n 1 "$cf_tmp/err")"
        return
    fi
    local rss
    rss=$(cut -d' ' -f3 "$cf_tmp/peak.txt")
    if [ "$rss" -le $((times * kb)) ]; then
        ok "$what: peak $((rss / 1024)) MB, file(s) $((kb / 1024)) MB"
    else
        bad "$what: peak $((rss / 1024)) MB, more than $times times the $((kb / 1024)) MB of the file(s)"
    fi
}
within "report" 3 "$size_kb" "$commfit" report "$big"
within "report --by-callsite" 3 "$size_kb" "$commfit" report --by-callsite "$big"
within "report --format csv" 3 "$size_kb" "$commfit" report --format csv "$big"
within "trace" 3 "$size_kb" "$commfit" trace -o "$cf_tmp/trace.json" "$big"
within "diff" 3 $((2 * size_kb)) "$commfit" diff "$big" "$big"

# escape sequences in a call site's operation, symbol and module
"$CF_PYTHON" - "$CF_SRCDIR/tests/corpus/hpcc-shm-2/profile.json" "$cf_tmp/esc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["callsites"]["sites"][0]
s["op"] = "MPI_\x1b[2JSend"
s["stack"][0] = {"module": "/nowhere/\x1b]0;title\x07lib.so", "offset": 4097, "symbol": "fn\x1b[31m",
                 "symbol_offset": 16}
json.dump(d, open(sys.argv[2], "w"))
PY
"$commfit" report --by-callsite "$cf_tmp/esc.json" > "$cf_tmp/esc.txt" || bad "report --by-callsite of escapes"
"$commfit" report --by-callsite --format csv "$cf_tmp/esc.json" > "$cf_tmp/esc.csv" || bad "csv of escapes"
for f in esc.txt esc.csv; do
    if LC_ALL=C grep -q "$(printf '[\033\007]')" "$cf_tmp/$f"; then
        bad "$f: an escape or bell reaches the terminal"
    else
        ok "$f: no escape or bell"
    fi
done
grep -q '^ *1 MPI_?\[2JSend .* fn?\[31m+0x10 (?\]0;title?lib.so+0x1001)$' "$cf_tmp/esc.txt" &&
    ok "text: the site's operation and where, cleaned" || bad "text: $(grep -a 'Send' "$cf_tmp/esc.txt" | head -n 1)"
grep -q '^1,0,MPI_?\[2JSend,.*,fn?\[31m+0x10,,,/nowhere/?\]0;title?lib.so,0x1001$' "$cf_tmp/esc.csv" &&
    ok "csv: the site's operation, function and module, cleaned" || bad "csv: $(grep -a '^1,0' "$cf_tmp/esc.csv")"

# a bad matrix or call-site section: exit 2, one line naming the profile
"$CF_PYTHON" - "$CF_SRCDIR/tests/corpus/hpcc-shm-2/profile.json" "$cf_tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["matrix"]["pairs"][2] = [0, 99, 1, 1, 1, "mpi"]
json.dump(d, open(sys.argv[2] + "/badmatrix.json", "w"))
d = json.load(open(sys.argv[1]))
d["callsites"]["sites"][1]["stack"] = []
json.dump(d, open(sys.argv[2] + "/badsites.json", "w"))
PY
want_matrix='matrix.pairs\[2\] is not \[src, dst, messages, bytes, comm, "mpi" or "ucx"\] of ranks below 2'
want_sites='callsites.sites\[1\] needs id, op, comm, calls, bytes, time_s and a stack of 1 to 8 frames with an offset'
for c in "report badmatrix.json|$want_matrix" "report badsites.json|$want_sites" \
    "report --matrix -o $cf_tmp/F.txt badmatrix.json|$want_matrix" \
    "report --by-callsite --format csv -o $cf_tmp/F.txt badsites.json|$want_sites" \
    "report --format json -o $cf_tmp/F.txt badmatrix.json|$want_matrix" \
    "diff $CF_SRCDIR/tests/corpus/hpcc-shm-2/profile.json badsites.json|$want_sites"; do
    args=${c%%|*} want=${c#*|}
    file=${args##* }
    cmd=${args%% *}
    rm -f "$cf_tmp/F.txt"
    # shellcheck disable=SC2086
    (cd "$cf_tmp" && "$commfit" $args > "$cf_tmp/out" 2> "$cf_tmp/err")
    rc=$?
    if [ $rc -ne 2 ]; then
        bad "$args: exit $rc, want 2: $(cat "$cf_tmp/err")"
    elif [ "$(wc -l < "$cf_tmp/err")" -ne 1 ] || ! grep -q "^commfit $cmd: $file: $want\$" "$cf_tmp/err"; then
        bad "$args: want one line 'commfit $cmd: $file: ...': $(cat "$cf_tmp/err")"
    elif [ -e "$cf_tmp/F.txt" ] || [ -s "$cf_tmp/out" ]; then
        bad "$args: a report was written"
    else
        ok "$args: exit 2, $(cat "$cf_tmp/err")"
    fi
done
cf_done
