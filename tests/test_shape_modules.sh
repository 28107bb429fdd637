#!/bin/bash
# A plugin module never includes another module's header nor uses what
# another module defines (docs/architecture.md, "What each room may touch"):
# tests/check_shape.py passes on the tree, whose modules are those the list
# in plugin/cf_modules.c registers (the spill with its refresh thread), and
# fails, naming the file and both modules, on a copy where a module includes
# another's header, where one calls another's function without its header,
# where a second module includes the header of the spill's own thread, and
# where a module newly added to the list includes the spill's header.
# The core names no module: the check fails on a copy where a file of the
# core includes a module's header (the end of the run, the papi module's;
# request tracking, the call-site module's, as the hot path did before
# cf_site.h), where one calls a module's function inline without its
# header (as the sampler's inline matrix count did before its table's
# probe moved beside it), where the generated wrappers would, where a new file of
# plugin/ is neither registered nor listed as the core's, and where a
# service of the core (the sampler) is registered as a module.  The list,
# cf_modules.c, is the only file that includes every module's header.
set -u
src=${CF_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/tests/checks.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/commfit-shape-mod.XXXXXX")
trap 'rm -rf "$work"' EXIT
# what check_shape.py reads: the three parts, and the documents with what cites them
keep="plugin lib tools tests examples docs README.md Makefile.am configure.ac bootstrap.sh"
t="$work/tree"
fresh() {
    rm -rf "$t" && mkdir "$t"
    (cd "$src" && tar cf - $(for k in $keep .ci; do [ -e "$k" ] && echo "$k"; done)) |
        tar xf - -C "$t"
}

# expect NAME STATUS TEXT: the check on the copy exits STATUS with a line holding TEXT
expect() {
    "${CF_PYTHON:-python3}" "$src/tests/check_shape.py" --root "$t" > "$work/out" 2>&1
    local rc=$? line
    line=$(grep -F -- "$3" "$work/out" | head -n 1)
    if [ "$rc" -eq "$2" ] && [ -n "$line" ]; then
        ok "$1: exit $rc: $line"
    else
        bad "$1: exit $rc (expected $2), line with '$3': ${line:-none}"
        tail -n 20 "$work/out" | sed 's/^/     /'
    fi
}

fresh
expect "the tree" 0 "modules none using another: ok"
"${CF_PYTHON:-python3}" "$src/tests/check_shape.py" --root "$t" --graph > "$work/graph" 2>&1
mods=$(grep '^plugin/ modules' "$work/graph")
want="plugin/ modules (cf_modules.c): cf_calibrate, cf_callsite, cf_failed, cf_matrix, cf_null, cf_papi, cf_protocol, cf_spill+cf_refresh, cf_ucx"
if [ "$mods" = "$want" ]; then
    ok "--graph: the 9 modules of the list, the spill with its refresh thread"
else
    bad "--graph: '$mods', expected '$want'"
fi

fresh
echo '#include "cf_papi.h"' >> "$t/plugin/cf_calibrate.c"
expect "a module including another's header" 1 \
    "FAIL: plugin/cf_calibrate.c includes plugin/cf_papi.h: the module cf_calibrate includes the module cf_papi's header"

fresh
printf 'json_t *cf_failed_section(const cf_fin_t *f);\nvoid cf_plant(void) { (void)cf_failed_section(NULL); }\n' \
    >> "$t/plugin/cf_protocol.c"
expect "a module calling another's function" 1 \
    "FAIL: plugin/cf_protocol uses cf_failed_section of plugin/cf_failed: the module cf_protocol uses the module cf_failed"

fresh
echo '#include "cf_refresh.h"' >> "$t/plugin/cf_papi.c"
echo 'void cf_plant(void) { cf_refresh_stop(); }' >> "$t/plugin/cf_papi.c"
expect "a module including the spill's thread" 1 \
    "FAIL: plugin/cf_refresh.h is included by the modules cf_papi, cf_spill alone"

fresh
printf '#include "cf_module.h"\njson_t *cf_plant_section(const cf_fin_t *f);\n' > "$t/plugin/cf_plant.h"
printf '#include "cf_plant.h"\n#include "cf_spill.h"\njson_t *cf_plant_section(const cf_fin_t *f) { (void)f; return NULL; }\n' \
    > "$t/plugin/cf_plant.c"
sed -i 's/^#include "cf_papi.h"$/#include "cf_papi.h"\n#include "cf_plant.h"/' "$t/plugin/cf_modules.c"
expect "a module added to the list, including the spill's header" 1 \
    "FAIL: plugin/cf_plant.c includes plugin/cf_spill.h: the module cf_plant includes the module cf_spill's header"

fresh
echo '#include "cf_papi.h"' >> "$t/plugin/cf_merge.c"
expect "the core including a module's header" 1 \
    "FAIL: plugin/cf_merge.c includes plugin/cf_papi.h: the core includes the module cf_papi's header"

fresh
echo '#include "cf_callsite.h"' >> "$t/plugin/cf_request.c"
expect "the hot path including the call-site module's header" 1 \
    "FAIL: plugin/cf_request.c includes plugin/cf_callsite.h: the core includes the module cf_callsite's header"

fresh
sed -i 's/#include "cf_site.h"/#include "cf_callsite.h"/' "$t/plugin/gen_wrappers.py"
grep -q 'include "cf_callsite.h"' "$t/plugin/gen_wrappers.py" || bad "plant: gen_wrappers.py writes no include of cf_site.h"
expect "the generated wrappers including a module's header" 1 \
    "FAIL: plugin/gen_wrappers.py includes plugin/cf_callsite.h: the wrappers it writes include the module cf_callsite's header"

fresh
printf 'json_t *cf_failed_section(const cf_fin_t *f);\nstatic inline void cf_plant(void) { (void)cf_failed_section(NULL); }\n' \
    >> "$t/plugin/cf_sample.h"
expect "the core calling a module's function inline, without its header" 1 \
    "FAIL: plugin/cf_sample uses cf_failed_section of plugin/cf_failed: the core calls the module cf_failed"

fresh
printf '#include "cf_runtime.h"\nvoid cf_plant(void);\nvoid cf_plant(void) {}\n' > "$t/plugin/cf_plant.c"
expect "a file of plugin/ neither a module nor the core's" 1 \
    "FAIL: plugin/cf_plant is neither a module of the list nor the core's"

fresh
sed -i 's/^#include "cf_papi.h"$/#include "cf_papi.h"\n#include "cf_sample.h"/' "$t/plugin/cf_modules.c"
expect "a service of the core registered as a module" 1 \
    "FAIL: plugin/cf_sample is a module of the list (cf_sample) and listed as the core's"

cf_done
