#!/bin/bash
# The shape of the tree (docs/CodeStyle.md, "The shape"): tests/check_shape.py
# passes on the tree as it is, with its baseline, and fails, naming what and
# where, on a copy with a circle of files, a function of 130 lines, a known
# function that grew, a known circle that grew, an include from lib/ into
# plugin/, and citations of a document, a section and a heading that are not
# there; a baseline line that is gone is a warning, not a failure.
set -u
src=${CF_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
py=${CF_PYTHON:-python3}
check="$src/tests/check_shape.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commfit-shape.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/checks.sh"
# the suffix of a document's name, kept out of this file's own text so that
# the planted citations below are not citations of this file
md=md

# expect NAME STATUS TEXT [ARGS...]: check_shape.py ARGS exits STATUS and
# prints a line holding TEXT
expect() {
    local name=$1 want=$2 text=$3
    shift 3
    "$py" "$check" "$@" > "$tmp/out" 2>&1
    local rc=$?
    local line
    line=$(grep -F -- "$text" "$tmp/out" | head -n 1)
    if [ "$rc" -ne "$want" ]; then
        bad "$name: exit $rc, expected $want"
        sed 's/^/     /' "$tmp/out" | tail -n 20
    elif [ -z "$line" ]; then
        bad "$name: no line with '$text'"
        sed 's/^/     /' "$tmp/out" | tail -n 20
    else
        ok "$name: exit $rc: $line"
    fi
}

# ---- the tree itself ----
expect "the tree" 0 ": ok" --root "$src"
"$py" "$check" --root "$src" --graph > "$tmp/graph" 2>&1
between=$(grep '^between parts' "$tmp/graph")
if [ -z "$between" ]; then
    bad "--graph: no line on the includes between parts"
elif grep -q -E 'lib -> (plugin|tools)|plugin -> tools|tools -> plugin' <<< "$between"; then
    bad "--graph: something points back up: $between"
else
    ok "--graph: $between; $(grep -c -E '^(plugin|lib|tools)/: [0-9]+ units' "$tmp/graph") parts"
fi

# ---- planted faults, each on a fresh copy ----
mkdir "$tmp/pristine"
for d in plugin lib tools tests examples docs .ci; do
    [ -d "$src/$d" ] && cp -r "$src/$d" "$tmp/pristine/"
done
for f in README.md Makefile.am configure.ac bootstrap.sh; do
    [ -f "$src/$f" ] && cp "$src/$f" "$tmp/pristine/"
done
fresh() {
    rm -rf "$tmp/tree"
    cp -r "$tmp/pristine" "$tmp/tree"
}
t="$tmp/tree"

# unit NAME CALLS...: lib/NAME.c defines NAME() calling each of CALLS, and
# lib/NAME.h declares it
unit() {
    local name=$1 c
    shift
    printf 'int %s(void);\n' "$name" > "$t/lib/$name.h"
    {
        printf '#include "%s.h"\n' "$name"
        for c in "$@"; do printf '#include "%s.h"\n' "$c"; done
        printf 'int %s(void)\n{\n    int n = 0;\n' "$name"
        for c in "$@"; do printf '    n += %s();\n' "$c"; done
        printf '    return n;\n}\n'
    } > "$t/lib/$name.c"
}

fresh
unit cf_plant_a cf_plant_b
unit cf_plant_b cf_plant_a
expect "a new circle" 1 "FAIL: lib/: new circle of files: cf_plant_a -> cf_plant_b -> cf_plant_a" --root "$t"
# known, it passes; a third file joining it fails
echo "circle lib cf_plant_a cf_plant_b" >> "$t/tests/shape_baseline.txt"
expect "a known circle" 0 ": ok" --root "$t"
unit cf_plant_b cf_plant_c
unit cf_plant_c cf_plant_a
expect "a known circle grown" 1 \
    "FAIL: lib/: the known circle cf_plant_a cf_plant_b grew to cf_plant_a -> cf_plant_b -> cf_plant_c -> cf_plant_a" \
    --root "$t"

# long N: tools/cf_plant_long.c holds cf_plant_long() of N lines
long() {
    {
        printf 'int cf_plant_long(int x)\n{\n'
        for ((i = 0; i < $1 - 4; i++)); do printf '    x += %d;\n' "$i"; done
        printf '    return x;\n}\n'
    } > "$t/tools/cf_plant_long.c"
}
fresh
long 130
expect "a function of 130 lines" 1 \
    "FAIL: tools/cf_plant_long.c: cf_plant_long() is 130 lines, over the limit of 120" --root "$t"
long 120
expect "a function of 120 lines" 0 ": ok" --root "$t"
long 130
echo "function tools/cf_plant_long.c cf_plant_long 130" >> "$t/tests/shape_baseline.txt"
expect "a known long function" 0 ": ok" --root "$t"
long 131
expect "a known long function grown" 1 "FAIL: tools/cf_plant_long.c: cf_plant_long() grew from 130 to 131 lines" \
    --root "$t"
long 125
expect "a known long function shrunk" 0 "warning: tools/cf_plant_long.c: cf_plant_long() is down from 130 to 125" \
    --root "$t"

fresh
echo "function lib/cf_gone.c cf_gone 200" >> "$t/tests/shape_baseline.txt"
expect "a baseline function gone" 0 "warning: lib/cf_gone.c: cf_gone() is no longer over 120 lines" --root "$t"
fresh
echo "circle tools cf_gone_x cf_gone_y" >> "$t/tests/shape_baseline.txt"
expect "a baseline circle gone" 0 "warning: tools/: the circle cf_gone_x cf_gone_y is gone" --root "$t"
fresh
echo "function lib/cf_text.c" >> "$t/tests/shape_baseline.txt"
expect "a malformed baseline line" 1 "shape_baseline.txt:" --root "$t"

fresh
echo '#include "cf_runtime.h"' >> "$t/lib/cf_text.c"
expect "lib/ including plugin/" 1 "FAIL: lib/cf_text.c includes plugin/cf_runtime.h: lib/ must not include plugin/" \
    --root "$t"
fresh
echo '#include "../tools/cf_html.h"' >> "$t/plugin/cf_clock.c"
expect "plugin/ including tools/" 1 "FAIL: plugin/cf_clock.c includes tools/cf_html.h: plugin/ must not include tools/" \
    --root "$t"
fresh
echo '#include <mpi.h>' >> "$t/lib/cf_units.h"
expect "lib/ including mpi.h" 1 "FAIL: lib/cf_units.h includes mpi.h: lib/ has no MPI" --root "$t"

fresh
n=$(($(wc -l < "$t/lib/cf_text.c") + 1))
echo "/* the payload convention: docs/cf_missing.$md */" >> "$t/lib/cf_text.c"
expect "a citation of a missing document" 1 \
    "FAIL: lib/cf_text.c:$n: cites docs/cf_missing.$md, which is not in the repository" --root "$t"
fresh
echo "/* see ../shared/DESIGN.$md */" >> "$t/plugin/cf_clock.c"
expect "a citation outside the tree" 1 "cites ../shared/DESIGN.$md, which is not in the repository" --root "$t"
fresh
echo "# (docs/models.$md, \"No such heading\")" >> "$t/tests/bench.sh"
expect "a citation of a missing heading" 1 \
    "cites docs/models.$md, \"No such heading\", but docs/models.$md has no such heading" --root "$t"
fresh
echo "See [the limits](docs/models.$md#no-such-section)." >> "$t/README.md"
expect "a link to a missing section" 1 "cites docs/models.$md#no-such-section, but docs/models.$md has no such section" \
    --root "$t"
fresh
echo "See [usage](#no-such-heading)." >> "$t/docs/fusion.$md"
expect "a link within a document" 1 "links to #no-such-heading, which docs/fusion.$md has no heading for" --root "$t"

expect "not a source tree" 2 "is not a commfit source tree" --root "$tmp/pristine/docs"

cf_done
