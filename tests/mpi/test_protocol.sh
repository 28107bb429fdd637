#!/bin/bash
# The library's declared protocol limits (plugin/cf_protocol.c): the
# profile's "protocol" section must hold exactly what Open MPI's own
# ompi_info says of the same parameters in the same environment, follow a
# limit changed at launch (OMPI_MCA_btl_vader_eager_limit), list the TCP
# limit for intra-node messages when no shared-memory BTL is open, and the
# report's joint point-to-point fit must break at the eager limit of a
# ping-pong sweep, or say why not (the live sweep; a recorded quiet one must
# break there).  Under the UCX PML (with and without the UCX layer's
# records) the BTL limits must not be used, and the report must say why.
# Under MPICH, which declares none of the listed variables, the section is
# empty.  On both, the job's thread level must hold through MPI_Finalize.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
pp="$CF_BUILDDIR/examples/pingpong"

# thread_level_ok OUTPUT: every rank saw, inside MPI_Finalize, the thread
# level its MPI_Init_thread provided (reading the library's variables at
# finalize must not change it)
thread_level_ok() {
    "$CF_PYTHON" - "$1" <<'PY'
import sys
from checks import check, done
rows = [l.split() for l in open(sys.argv[1]) if l.startswith("rank ")]
check("the thread level holds through MPI_Finalize on every rank",
      len(rows) == 2 and all(r[3] == r[5] and int(r[3]) >= 0 for r in rows), str(rows))
done()
PY
}
COMMFIT_OUTPUT="$cf_tmp/tl.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/thread_level" \
    > "$cf_tmp/tl.out" || cf_fail "thread_level: job failed"
thread_level_ok "$cf_tmp/tl.out" || exit 1
# it read the variables (its messages of two sizes ask for them); a job
# without blocking point-to-point calls of two sizes does not
"$CF_PYTHON" - "$cf_tmp/tl.json" <<'PY' || exit 1
import json, sys
from checks import check, done
sec = json.load(open(sys.argv[1]))["protocol"]
check("blocking messages of two sizes: the limits read", "not_read" not in sec, str(sec))
done()
PY
COMMFIT_OUTPUT="$cf_tmp/nop2p.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$CF_BUILDDIR/examples/coll_sweep" --min 8 --max 64KiB -i 5 \
    > /dev/null || cf_fail "coll_sweep: job failed"
"$CF_PYTHON" - "$cf_tmp/nop2p.json" <<'PY' || exit 1
import json, sys
from checks import check, done
sec = json.load(open(sys.argv[1]))["protocol"]
check("collectives only: the limits not read, and why",
      sec["limits"] == [] and "point-to-point" in sec.get("not_read", ""), str(sec))
done()
PY

if [ "$CF_MPI_FAMILY" = mpich ]; then
    COMMFIT_OUTPUT="$cf_tmp/m.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$pp" --min 8 --max 64KiB -i 20 \
        > /dev/null || cf_fail "job failed"
    exec "$CF_PYTHON" - "$cf_tmp/m.json" <<'PY'
import json, sys
from checks import check, done
sec = json.load(open(sys.argv[1])).get("protocol")
check("MPICH: a protocol section, with no limits", sec is not None and sec["limits"] == [], str(sec))
done()
PY
fi

command -v ompi_info > /dev/null || cf_fail "no ompi_info"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
# run [mpirun options] -- PROGRAM ARGS: 2 ranks with the plugin, the PML
# and BTLs as the options say
run() {
    local opts=() v fwd=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    for v in $(env | sed -n 's/^\(COMMFIT_[A-Z_]*\)=.*/\1/p'); do fwd+=(-x "$v"); done
    "$CF_MPIRUN" "${root[@]}" --oversubscribe --bind-to none -np 2 "${opts[@]}" \
        -x LD_PRELOAD="$COMMFIT_LIB" "${fwd[@]}" "$@"
}
OB1=(--mca pml ob1 --mca btl self,vader,tcp)
UCX_PML=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any)
# ompi_info's value of a parameter, in the environment it is called with
param() { ompi_info --param btl "$1" --level 9 --parsable | sed -n "s/^mca:btl:$1:param:$2:value://p"; }
sweep() { # NAME [mpirun options]: a ping-pong sweep, profile NAME.json, report NAME.rep.json
    local name=$1; shift
    COMMFIT_OUTPUT="$cf_tmp/$name.json" COMMFIT_SUMMARY=0 run "$@" -- "$pp" --min 8 --max 1MiB \
        > /dev/null || cf_fail "$name: job failed"
    "$commfit" report --format json "$cf_tmp/$name.json" > "$cf_tmp/$name.rep.json" || cf_fail "$name: report"
    "$commfit" report "$cf_tmp/$name.json" > "$cf_tmp/$name.txt" || cf_fail "$name: text report"
}

sweep def "${OB1[@]}"
want_def="btl_vader_max_inline_send=$(param vader btl_vader_max_inline_send) btl_vader_eager_limit=$(param vader btl_vader_eager_limit) btl_tcp_eager_limit=$(param tcp btl_tcp_eager_limit)"
export OMPI_MCA_btl_vader_eager_limit=8192
sweep big "${OB1[@]}" -x OMPI_MCA_btl_vader_eager_limit
want_big="btl_vader_eager_limit=$(param vader btl_vader_eager_limit)"
unset OMPI_MCA_btl_vader_eager_limit
sweep tcp --mca pml ob1 --mca btl self,tcp
want_tcp="btl_tcp_eager_limit=$(param tcp btl_tcp_eager_limit)"
# COMMFIT_PROTOCOL=0: not read, no section; the fit on its own
COMMFIT_PROTOCOL=0 COMMFIT_OUTPUT="$cf_tmp/off.json" COMMFIT_SUMMARY=0 run "${OB1[@]}" -- "$pp" --min 8 --max 64KiB -i 20 \
    > /dev/null || cf_fail "off: job failed"
"$CF_PYTHON" -c 'import json, sys; sys.exit("protocol" in json.load(open(sys.argv[1])))' "$cf_tmp/off.json" \
    || cf_fail "COMMFIT_PROTOCOL=0 left a protocol section"
echo "ok   COMMFIT_PROTOCOL=0: no protocol section"

"$commfit" report --format json "$CF_SRCDIR/tests/corpus/shm-pingpong10-2/profile.json" > "$cf_tmp/rec.rep.json" ||
    cf_fail "report of the recorded sweep"
"$CF_PYTHON" - "$cf_tmp" "$want_def" "$want_big" "$want_tcp" <<'PY' || exit 1
import json, sys
from checks import check, done
d, want_def, want_big, want_tcp = sys.argv[1:]
def kv(s):
    return {k: int(v) for k, v in (w.split("=") for w in s.split())}
def limits(name):
    return json.load(open("%s/%s.json" % (d, name)))["protocol"]["limits"]
def by_path(ls, path):
    return {l["name"]: l["bytes"] for l in ls if l["path"] == path}
wd, wb, wt = kv(want_def), kv(want_big), kv(want_tcp)
check("ompi_info gives the three defaults", len(wd) == 3 and all(v > 0 for v in wd.values()), str(wd))
ld = limits("def")
check("default: intra-node = vader's two, as ompi_info says",
      by_path(ld, "intra-node") == {k: v for k, v in wd.items() if "vader" in k}, str(ld))
check("default: inter-node = TCP's, as ompi_info says",
      by_path(ld, "inter-node") == {"btl_tcp_eager_limit": wd["btl_tcp_eager_limit"]}, str(ld))
check("eager limit set at launch: the profile says %d, as ompi_info does" % wb["btl_vader_eager_limit"],
      by_path(limits("big"), "intra-node").get("btl_vader_eager_limit") == wb["btl_vader_eager_limit"] == 8192,
      str(limits("big")))
lt = limits("tcp")
check("btl self,tcp: no vader limits; TCP's for intra-node too",
      by_path(lt, "intra-node") == wt and by_path(lt, "inter-node") == wt, str(lt))

def joint(name):
    r = json.load(open("%s/%s.rep.json" % (d, name)))
    return r, [f for f in r["fits"] if f["op"] == "p2p" and f["path"] == "intra-node"][0]
for name, eager in (("def", wd["btl_vader_eager_limit"]), ("big", 8192),
                    ("tcp", wt["btl_tcp_eager_limit"])):
    r, f = joint(name)
    used = [l["bytes"] for l in f["protocol_limits"]]
    segs = f["segments"]
    # a break at the limit: a segment ends below it, the next starts within
    # a header's length below it or above it
    at = any(a["size_hi"] <= eager and b["size_lo"] >= eager - 128 for a, b in zip(segs, segs[1:]))
    why = f.get("protocol_limits_unused_why")
    # Whether a break pays is the sweep's scatter: over TCP loopback the
    # eager switch is small next to the socket's own knees, and beside a
    # CPU load a live shared-memory sweep's bins scatter so that the fit
    # without the limit predicted better (8192 B, at a load of 12).  Then
    # the report must say so; the break itself is held below on a sweep
    # recorded on a quiet machine.
    check("%s: the joint fit breaks at the eager limit %d, or says why not" % (name, eager),
          (eager in used and at and (why is None or name == "tcp")) or
          (not used and why and "predicts better" in why),
          "limits %s, unused: %s, segments %s" % (used, why, [(s["size_lo"], s["size_hi"]) for s in segs]))
    top = [p for p in r["protocol_limits"] if p["path"] == "intra-node"]
    check("%s: the report lists the path's limits, used" % name,
          len(top) == 1 and top[0]["unused_why"] is None and eager in [l["bytes"] for l in top[0]["limits"]], str(top))
# the 10-size sweep recorded on a quiet machine (its limits in its profile),
# analysed by this build: the break at vader's eager limit is taken
r = json.load(open("%s/rec.rep.json" % d))
f = [f for f in r["fits"] if f["op"] == "p2p" and f["path"] == "intra-node"][0]
segs = f["segments"]
check("recorded sweep: the joint fit breaks at the eager limit 4096",
      4096 in [l["bytes"] for l in f["protocol_limits"]] and
      any(a["size_hi"] <= 4096 and b["size_lo"] >= 4096 - 128 for a, b in zip(segs, segs[1:])),
      "limits %s, segments %s" % (f["protocol_limits"], [(s["size_lo"], s["size_hi"]) for s in segs]))
txt = open("%s/def.txt" % d).read()
# the text follows the live fit: it names the break where the fit took it,
# and does not claim one where the fit declined it
if joint("def")[1]["protocol_limits"]:
    check("text: the limits the fit breaks at, by name",
          "breaks at the library's protocol limits:" in txt and "(btl_vader_eager_limit)" in txt)
else:
    check("text: a fit that declined the limits does not claim to break at them",
          "breaks at the library's protocol limits:" not in txt)
check("the PML the job used: ob1 in all three",
      all(json.load(open("%s/%s.json" % (d, n)))["protocol"]["pml"] == "ob1" for n in ("def", "big", "tcp")))
done()
PY

# Under the UCX PML the BTLs carry no point-to-point message: their limits
# are in the profile (the components are open) but not used.
if ! "$CF_MPIRUN" "${root[@]}" --oversubscribe --bind-to none -np 2 "${UCX_PML[@]}" "$pp" --min 8 --max 64 -i 5 \
        > /dev/null 2>&1; then
    echo "the UCX PML does not start here: its part is not checked"
    exit 0
fi
sweep ucx "${UCX_PML[@]}"
# the same without the UCX layer's records: the profile's PML alone says it
COMMFIT_UCX=0 sweep ucx0 "${UCX_PML[@]}"
exec "$CF_PYTHON" - "$cf_tmp" <<'PY'
import json, sys
from checks import check, done
d = sys.argv[1]
for name in ("ucx", "ucx0"):
    check("%s: the profile names the PML: ucx" % name,
          json.load(open("%s/%s.json" % (d, name)))["protocol"]["pml"] == "ucx")
    r = json.load(open("%s/%s.rep.json" % (d, name)))
    f = [f for f in r["fits"] if f["op"] == "p2p" and f["path"] == "intra-node"][0]
    top = [p for p in r["protocol_limits"] if p["path"] == "intra-node"]
    check("%s: the joint fit breaks at no BTL limit" % name, f["protocol_limits"] == [], str(f["protocol_limits"]))
    check("%s: the report says why they are not used" % name,
          len(top) == 1 and top[0]["limits"] == [] and "PML is not ob1" in (top[0]["unused_why"] or ""), str(top))
    check("%s: so does the text" % name, "not used: the job's PML is not ob1" in open("%s/%s.txt" % (d, name)).read())
done()
PY
