#!/usr/bin/env python3
"""Generate the MPI wrappers and the operation list from mpi_calls.spec.

usage: gen_wrappers.py SPEC OUT_OPS_H OUT_WRAPPERS_C
"""
import re
import sys

KINDS = {"send", "recv", "sendrecv", "probe", "iprobe", "isend", "irecv", "psend", "precv", "coll"}
PROFILE_KIND = {"send": "p2p", "recv": "p2p", "sendrecv": "p2p", "isend": "p2p", "irecv": "p2p",
                "psend": "p2p", "precv": "p2p", "probe": "probe", "iprobe": "probe",
                "coll": "collective"}


class SpecError(Exception):
    pass


def param_name(param):
    """Last identifier of one C parameter declaration."""
    names = re.findall(r"[A-Za-z_]\w*", param.split("[")[0])
    if not names:
        raise SpecError("cannot find a name in parameter %r" % param)
    return names[-1]


def parse(path):
    entries = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = [x.strip() for x in line.split("|")]
            if len(fields) != 4:
                raise SpecError("%s:%d: expected 4 fields separated by '|'" % (path, lineno))
            name, kind, params, attrs = fields
            if not re.match(r"^MPI_\w+$", name):
                raise SpecError("%s:%d: %r is not an MPI function name" % (path, lineno, name))
            attr = {}
            for a in filter(None, (x.strip() for x in attrs.split(";"))):
                if "=" not in a:
                    raise SpecError("%s:%d: attribute %r is not key=value" % (path, lineno, a))
                k, v = a.split("=", 1)
                attr[k.strip()] = v.strip()
            if kind.startswith("custom:"):
                entries.append(dict(name=name, kind="custom", pkind=kind.split(":", 1)[1],
                                    params=params, attr=attr))
                continue
            if kind not in KINDS:
                raise SpecError("%s:%d: unknown kind %r" % (path, lineno, kind))
            plist = [p.strip() for p in params.split(",")]
            names = [param_name(p) for p in plist]
            for req in ("comm",) + (("bytes",) if kind not in ("recv", "probe", "iprobe") else ()):
                if req not in attr:
                    raise SpecError("%s:%d: %s needs attribute %r" % (path, lineno, name, req))
            e = dict(name=name, kind=kind, pkind=PROFILE_KIND[kind], params=params, names=names, attr=attr)
            entries.append(e)
            if kind == "coll" and attr.get("nb") == "yes":
                nb = dict(e)
                nb["name"] = "MPI_I" + name[4].lower() + name[5:]
                nb["kind"] = "icoll"
                nb["params"] = params + ", MPI_Request *request" if params != "MPI_Comm comm" else \
                    "MPI_Comm comm, MPI_Request *request"
                nb["names"] = names + ["request"]
                nb["attr"] = dict(attr, request="request")
                entries.append(nb)
    return entries


def call(e, replace=None):
    args = [replace.get(n, n) if replace else n for n in e["names"]]
    return "P%s(%s)" % (e["name"], ", ".join(args))


def wrapper(e):
    a = e["attr"]
    op = "CF_OP_" + e["name"]
    k = e["kind"]
    out = ["int %s(%s)" % (e["name"], e["params"]), "{",
           "    cf_thread_t *cf_t = cf_enter(%s);" % op,
           "    if (!cf_t)",
           "        return %s;" % call(e)]
    repl = {}
    if "status" in a:
        st = a["status"]
        out.append("    MPI_Status cf_st;")
        out.append("    MPI_Status *cf_sp = %s == MPI_STATUS_IGNORE ? &cf_st : %s;" % (st, st))
        repl[st] = "cf_sp"
    out.append("    uint64_t cf_t0 = cf_ticks();")
    out.append("    int cf_rc = %s;" % call(e, repl))
    out.append("    uint64_t cf_t1 = cf_ticks();")
    out.append("    cf_comm_t *cf_c = cf_comm_get(%s);" % a["comm"])
    ok = "cf_rc == MPI_SUCCESS"
    if "peer" in a and k in ("send", "isend", "psend"):
        # nothing moves to or from MPI_PROC_NULL
        a = dict(a, bytes="%s == MPI_PROC_NULL ? 0 : %s" % (a["peer"], a["bytes"]))
    if k in ("send", "coll"):
        path = "cf_comm_peer_path(cf_c, %s)" % a["peer"] if k == "send" else "cf_c ? cf_c->path : CF_PATH_SELF"
        out.append("    uint64_t cf_k = cf_record_call(cf_t, %s, cf_comm_id(cf_c), %s, %s, cf_t0, cf_t1);"
                   % (op, path, a["bytes"]))
        if k == "send":
            out.append("    if (%s)" % ok)
            out.append("        cf_p2p_sent(cf_t, cf_comm_id(cf_c), cf_world_of(cf_c, %s), %s, cf_k, cf_t0);"
                       % (a["peer"], a["tag"]))
        else:
            out.append("    cf_coll_sample(cf_c, cf_k, %s, cf_t0, cf_t1);" % a.get("root", "-1"))
    elif k in ("recv", "probe", "iprobe"):
        got = ok + (" && *%s" % a["flag"] if k == "iprobe" else "")
        out.append("    int cf_got = %s;" % got)
        out.append("    uint64_t cf_b = cf_got ? cf_status_bytes(cf_sp) : 0;")
        out.append("    int cf_src = cf_got ? cf_sp->MPI_SOURCE : %s;" % a["peer"])
        out.append("    uint64_t cf_k = cf_record_call(cf_t, %s, cf_comm_id(cf_c), cf_comm_peer_path(cf_c, cf_src), cf_b, "
                   "cf_t0, cf_t1);" % op)
        if k == "recv":
            out.append("    if (cf_got)")
            out.append("        cf_p2p_received(cf_t, cf_comm_id(cf_c), cf_world_of(cf_c, cf_src), cf_sp->MPI_TAG, cf_k, "
                       "cf_t0, cf_t1);")
        else:
            out.append("    (void)cf_k;")
    elif k == "sendrecv":
        out.append("    uint64_t cf_sb = %s;" % a["bytes"])
        out.append("    uint64_t cf_rb = %s ? cf_status_bytes(cf_sp) : 0;" % ok)
        out.append("    int cf_peer = %s != MPI_PROC_NULL ? %s : cf_sp->MPI_SOURCE;" % (a["peer"], a["peer"]))
        out.append("    uint64_t cf_k = cf_record_call(cf_t, %s, cf_comm_id(cf_c), cf_comm_peer_path(cf_c, cf_peer), "
                   "cf_sb > cf_rb ? cf_sb : cf_rb, cf_t0, cf_t1);" % op)
        out.append("    if (%s) {" % ok)
        out.append("        cf_p2p_sent(cf_t, cf_comm_id(cf_c), cf_world_of(cf_c, %s), %s, cf_k, cf_t0);"
                   % (a["peer"], a["tag"]))
        out.append("        cf_p2p_received(cf_t, cf_comm_id(cf_c), cf_world_of(cf_c, cf_sp->MPI_SOURCE), "
                   "cf_sp->MPI_TAG, cf_k, cf_t0, cf_t1);")
        out.append("    }")
    else:  # isend, irecv, psend, precv, icoll: timed from post to completion
        flags = {"isend": "0", "irecv": "CF_REQ_RECV", "psend": "CF_REQ_PERSISTENT",
                 "precv": "CF_REQ_RECV | CF_REQ_PERSISTENT", "icoll": "CF_REQ_COLL"}[k]
        path = "cf_c ? cf_c->path : CF_PATH_SELF" if k == "icoll" else "cf_comm_peer_path(cf_c, %s)" % a["peer"]
        out.append("    cf_t->mpi_ns += cf_ticks_to_ns(cf_t1 - cf_t0);")
        out.append("    if (%s)" % ok)
        peer_tag = "-1, 0" if k == "icoll" else "%s, %s" % (a["peer"], a["tag"])
        out.append("        cf_req_post(cf_t, *%s, %s, cf_c, %s, %s, %s, cf_t0, %s);"
                   % (a["request"], op, path, a["bytes"], flags, peer_tag))
    out.append("    cf_leave(cf_t);")
    out.append("    return cf_rc;")
    out.append("}")
    return "\n".join(out)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip())
    try:
        entries = parse(sys.argv[1])
    except (SpecError, OSError) as err:
        sys.exit("gen_wrappers.py: %s" % err)
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        sys.exit("gen_wrappers.py: a function is listed twice")
    if len(entries) > 126:
        sys.exit("gen_wrappers.py: more than 126 operations do not fit the record key")
    with open(sys.argv[2], "w") as f:
        f.write("/* Generated by gen_wrappers.py from mpi_calls.spec: do not edit. */\n")
        f.write("#ifndef CF_OPS_H\n#define CF_OPS_H\n\n")
        f.write("/* X(name, kind in the profile) for every wrapped function, in spec order */\n")
        f.write("#define CF_MPI_OPS(X) \\\n")
        f.write(" \\\n".join('    X(%s, "%s")' % (e["name"], e["pkind"]) for e in entries))
        f.write("\n\n#endif\n")
    with open(sys.argv[3], "w") as f:
        f.write("/* Generated by gen_wrappers.py from mpi_calls.spec: do not edit. */\n")
        f.write('#include "cf_runtime.h"\n#include "cf_payload.h"\n#include "cf_sample.h"\n\n')
        for e in entries:
            if e["kind"] != "custom":
                f.write(wrapper(e) + "\n\n")


if __name__ == "__main__":
    main()
