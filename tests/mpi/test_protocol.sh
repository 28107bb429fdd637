#!/bin/bash
# The library's declared protocol limits (plugin/cf_protocol.c): the
# profile's "protocol" section must hold exactly what Open MPI's own
# ompi_info says of the same parameters in the same environment, follow a
# limit changed at launch (OMPI_MCA_btl_vader_eager_limit), list the TCP
# limit for intra-node messages when no shared-memory BTL is open, and the
# report's joint point-to-point fit must break at the eager limit of a
# ping-pong sweep.  Under the UCX PML the BTL limits must not be used, and
# the report must say why.  Under MPICH, which declares none of the listed
# variables, the section is empty.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
pp="$CF_BUILDDIR/examples/pingpong"

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
    at = any(a["size_hi"] < eager and b["size_lo"] >= eager - 128 for a, b in zip(segs, segs[1:]))
    check("%s: the joint fit breaks at the eager limit %d" % (name, eager),
          eager in used and at, "limits %s, segments %s" % (used, [(s["size_lo"], s["size_hi"]) for s in segs]))
    top = [p for p in r["protocol_limits"] if p["path"] == "intra-node"]
    check("%s: the report lists the path's limits, used" % name,
          len(top) == 1 and top[0]["unused_why"] is None and eager in [l["bytes"] for l in top[0]["limits"]], str(top))
txt = open("%s/def.txt" % d).read()
check("text: the limits the fit breaks at, by name",
      "breaks at the library's protocol limits:" in txt and "(btl_vader_eager_limit)" in txt)
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
exec "$CF_PYTHON" - "$cf_tmp" <<'PY'
import json, sys
from checks import check, done
d = sys.argv[1]
r = json.load(open(d + "/ucx.rep.json"))
f = [f for f in r["fits"] if f["op"] == "p2p" and f["path"] == "intra-node"][0]
top = [p for p in r["protocol_limits"] if p["path"] == "intra-node"]
check("ucx: the joint fit breaks at no BTL limit", f["protocol_limits"] == [], str(f["protocol_limits"]))
check("ucx: the report says why they are not used",
      len(top) == 1 and top[0]["limits"] == [] and "UCX" in (top[0]["unused_why"] or ""), str(top))
check("ucx: so does the text", "not used: the UCX layer carried" in open(d + "/ucx.txt").read())
done()
PY
