#!/usr/bin/env python3
"""Generate wrappers and their operation list from a spec.

usage: gen_wrappers.py SPEC OUT_OPS_H OUT_WRAPPERS_C         MPI functions (mpi_calls.spec)
       gen_wrappers.py --ucx SPEC OUT_OPS_H OUT_WRAPPERS_C   UCP functions beneath MPI (ucx_calls.spec)
"""
import re
import sys

KINDS = {"send", "recv", "sendrecv", "probe", "iprobe", "isend", "irecv", "psend", "precv", "coll",
         "isendrecv", "io", "iio", "rma", "irma", "sync", "local"}
PROFILE_KIND = {"send": "p2p", "recv": "p2p", "sendrecv": "p2p", "isend": "p2p", "irecv": "p2p",
                "psend": "p2p", "precv": "p2p", "probe": "probe", "iprobe": "probe",
                "coll": "collective", "isendrecv": "p2p", "io": "io", "iio": "io", "rma": "rma", "irma": "rma",
                "sync": "sync", "local": "local"}
# the attributes each kind needs
NEEDS = {"io": ("file",), "iio": ("file", "bytes", "request"), "rma": ("win", "peer", "bytes"),
         "irma": ("win", "peer", "bytes", "request"), "sync": ("win",), "local": ("bytes",),
         "isendrecv": ("comm", "peer", "bytes", "request", "tag")}
ATTRS = {"comm", "peer", "bytes", "status", "request", "flag", "nb", "tag", "root", "file", "win", "mpi", "c",
         "init", "match"}


class SpecError(Exception):
    pass


def param_name(param):
    """Last identifier of one C parameter declaration."""
    names = re.findall(r"[A-Za-z_]\w*", param.split("[")[0])
    if not names:
        raise SpecError("cannot find a name in parameter %r" % param)
    return names[-1]


def read_spec(path, name_re, what):
    """(line number, name, kind, parameters, attributes) of every entry of a spec:
    NAME | KIND | PARAMETERS | key=value; key=value..."""
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = [x.strip() for x in line.split("|")]
            if len(fields) != 4:
                raise SpecError("%s:%d: expected 4 fields separated by '|'" % (path, lineno))
            name, kind, params, attrs = fields
            if not re.match(name_re, name):
                raise SpecError("%s:%d: %r is not %s" % (path, lineno, name, what))
            attr = {}
            for a in filter(None, (x.strip() for x in attrs.split(";"))):
                if "=" not in a:
                    raise SpecError("%s:%d: attribute %r is not key=value" % (path, lineno, a))
                k, v = a.split("=", 1)
                attr[k.strip()] = v.strip()
            yield lineno, name, kind, params, attr


def large_count(params):
    """The parameters of the MPI-4 large-count (_c) form: counts are MPI_Count, displacements MPI_Aint."""
    out = []
    for p in (x.strip() for x in params.split(",")):
        p = re.sub(r"^int (\w*count)$", r"MPI_Count \1", p)
        p = re.sub(r"^const int (\w*counts)\[\]$", r"const MPI_Count \1[]", p)
        p = re.sub(r"^const int (\w*displs)\[\]$", r"const MPI_Aint \1[]", p)
        out.append(p)
    return ", ".join(out)


def large_bytes(expr):
    """The payload expression of a _c form: the helpers over count arrays take MPI_Count ones."""
    return re.sub(r"\b(cf_sum_counts|cf_sum_counts_w|cf_payload_rooted_v)\(", r"\1_c(", expr)


def variant(e, name, kind, params, extra_attr, mpi):
    v = dict(e, name=name, kind=kind, params=params, names=[param_name(p) for p in params.split(",")],
             attr=dict(e["attr"], **extra_attr), mpi=max(e["mpi"], mpi))
    return v


def parse(path):
    entries = []
    for lineno, name, kind, params, attr in read_spec(path, r"^MPI_\w+$", "an MPI function name"):
        where = "%s:%d: %s" % (path, lineno, name)
        mpi = int(attr.get("mpi", "3"))
        if kind.startswith("custom:"):
            entries.append(dict(name=name, kind="custom", pkind=kind.split(":", 1)[1],
                                params=params, attr=attr, mpi=mpi))
            continue
        if kind not in KINDS:
            raise SpecError("%s:%d: unknown kind %r" % (path, lineno, kind))
        unknown = set(attr) - ATTRS
        if unknown:
            raise SpecError("%s: unknown attribute %s" % (where, ", ".join(sorted(unknown))))
        plist = [p.strip() for p in params.split(",")]
        names = [param_name(p) for p in plist]
        if any(n.startswith("cf_") for n in names):
            raise SpecError("%s: a parameter named cf_* would be hidden by the wrapper's own" % where)
        need = NEEDS.get(kind, ("comm",) + (("bytes",) if kind not in ("recv", "probe", "iprobe") else ()))
        for req in need:
            if req not in attr:
                raise SpecError("%s:%d: %s needs attribute %r" % (path, lineno, name, req))
        if kind == "io" and "bytes" not in attr and "status" not in attr:
            raise SpecError("%s: a file access takes its bytes from 'status' or 'bytes'" % where)
        e = dict(name=name, kind=kind, pkind=PROFILE_KIND[kind], params=params, names=names, attr=attr, mpi=mpi)
        forms = [e]
        if kind == "coll" and attr.get("nb") == "yes":
            forms.append(variant(e, "MPI_I" + name[4].lower() + name[5:], "icoll",
                                 "MPI_Comm comm, MPI_Request *request" if params == "MPI_Comm comm"
                                 else params + ", MPI_Request *request", {"request": "request"}, 3))
        if kind == "coll" and "init" in attr:  # persistent collective
            forms.append(variant(e, name + "_init", "pcoll", params + ", MPI_Info info, MPI_Request *request",
                                 {"request": "request"}, int(attr["init"])))
        if "c" in attr:  # the large-count forms of every form
            large = [variant(f, f["name"] + "_c", f["kind"], large_count(f["params"]),
                             {"bytes": large_bytes(f["attr"]["bytes"])} if "bytes" in f["attr"] else {},
                             int(attr["c"]))
                     for f in forms if large_count(f["params"]) != f["params"]]
            if not large:
                raise SpecError("%s: c=%s but no count parameter to make MPI_Count" % (where, attr["c"]))
            forms += large
        entries += forms
    return entries


def call(e, replace=None):
    args = [replace.get(n, n) if replace else n for n in e["names"]]
    return "P%s(%s)" % (e["name"], ", ".join(args))


def memo_args(bytes_expr, peer=None):
    """(count, datatype) when a call's payload is one cf_bytes(count,
    datatype), perhaps scaled by its communicator's size, or 0: what the memo
    of its call site (cf_site.h) may key it on; None otherwise."""
    if bytes_expr.strip() == "0":
        return ("0", "MPI_DATATYPE_NULL")
    m = re.findall(r"cf_bytes\((\w+), (\w+)\)", bytes_expr)
    if len(m) != 1:
        return None
    rest = re.sub(r"cf_bytes\(\w+, \w+\)", "", bytes_expr)
    words = set(re.findall(r"[A-Za-z_]\w*", rest))
    if not words <= {"cf_comm_size", "cf_comm_local_size", "cf_c", "uint64_t", "MPI_PROC_NULL", peer}:
        return None
    return m[0]


def wrapper(e, head=None):
    """The C wrapper of an entry; with head (the lines of a Fortran wrapper up
    to the call, see fortran_head), the recording that follows the call."""
    a = e["attr"]
    op = "CF_OP_" + e["name"]
    k = e["kind"]
    # a call a memo can hold (cf_site.h): a blocking send or collective, or
    # the post of a matched nonblocking one, whose payload is cf_bytes of
    # its count and datatype; its wrapper is in two parts
    keyed = memo_args(a["bytes"], a.get("peer")) if not head and "bytes" in a else None
    memo = keyed if k in ("send", "coll") else None
    post_memo = keyed if k in ("isend", "irecv", "icoll") and a.get("match") != "no" else None
    split = bool(memo or post_memo)
    hit = []  # split: the memo's hit, in the part the exported wrapper reaches first
    if split:
        out = ["static int __attribute__((noinline)) cf_full_%s(%s)" % (e["name"], e["params"]), "{",
               "    void *cf_ra;",
               "    int cf_handed;",
               "    cf_thread_t *cf_t = cf_take(%s, &cf_ra, &cf_handed);" % op]
    else:
        out = head or ["int %s(%s)" % (e["name"], e["params"]), "{",
                       "    cf_thread_t *cf_t = cf_enter(%s);" % op]
    if head:
        pass
    elif e["kind"] == "coll":
        out += ["    if (!cf_t) {",
                "        cf_coll_passed(%s);" % e["attr"]["comm"],
                "        return %s;" % call(e),
                "    }"]
    else:
        out += ["    if (!cf_t)",
                "        return %s;" % call(e)]
    # where the program called MPI: the return address of this function
    if not split:
        out.append("    void *cf_ra = __builtin_return_address(0);")
    repl = {}
    if "status" in a and not head:
        st = a["status"]
        out.append("    MPI_Status cf_st;")
        out.append("    MPI_Status *cf_sp = %s == MPI_STATUS_IGNORE ? &cf_st : %s;" % (st, st))
        repl[st] = "cf_sp"
    # a call that returned an error moved nothing: counted by operation and
    # error class (cf_fail), booked as no traffic; past here cf_rc is MPI_SUCCESS
    fail = "cf_fail(cf_t, %s, cf_rc, cf_t0, cf_t1)" % op
    timed = ["    uint64_t cf_t0, cf_t1;",
             "    int cf_rc;",
             "    CF_TIMED(cf_t0, cf_t1, cf_rc = %s);" % call(e, repl),
             "    if (__builtin_expect(cf_rc != MPI_SUCCESS, 0))",
             "        return %s;" % fail]
    if "peer" in a and k in ("send", "isend", "psend", "sendrecv", "irecv", "precv", "isendrecv", "rma", "irma"):
        # nothing moves to or from MPI_PROC_NULL
        a = dict(a, bytes="%s == MPI_PROC_NULL ? 0 : %s" % (a["peer"], a["bytes"]))
    posted = k in ("isend", "irecv", "psend", "precv", "icoll", "pcoll", "isendrecv", "iio", "irma")
    if memo or post_memo:
        # a call that repeats its site's last call is recorded from what that
        # call resolved to (cf_site.h), found before the MPI call, so that
        # the hit needs after it the memo, not the arguments.  The hit's part
        # holds the hit timed by the TSC; the full path, out of line, holds it
        # too for the calls that reach it unentered (another clock, hooks, a
        # build without tail calls) and fills the memo (cf_site.h, "a wrapper
        # in two parts").
        count, dtype = memo or post_memo
        dest = "CF_MEMO_ANY_DEST" if k in ("coll", "icoll") else a["peer"]
        body = []
        if posted:
            # the time inside the call, converted once: MPI time, and the post's share of its record
            body.append("    uint64_t cf_pns = cf_ticks_to_ns(cf_t1 - cf_t0);")
            body.append("    cf_t->mpi_ns += cf_pns;")
        if k == "send":
            body.append("    cf_memo_record(cf_t, cf_s, cf_m, cf_t0, cf_t1);")
            body.append("    cf_memo_sent(cf_t, cf_m, %s, cf_t0);" % a["tag"])
        elif k == "coll":
            body.append("    cf_memo_record(cf_t, cf_s, cf_m, cf_t0, cf_t1);")
            body.append("    cf_coll_sample_memo(cf_t, cf_m, %s, cf_t0, cf_t1);" % a.get("root", "-1"))
        else:
            body.append("    cf_req_post_memo(cf_t, *%s, cf_m, %s, cf_t0, cf_pns, %s);"
                        % (a["request"], "%(flags)s", a["tag"] if k != "icoll" else "0"))
            body.append("    cf_site_add(cf_s, cf_m->nb, cf_t0, cf_t1);")
        if k == "icoll":  # the framework's time from here to the completion call that follows (cf_post_gap)
            body.append("    cf_post_mark(cf_t, cf_t0, cf_t1);")
        find = ["    cf_site_t *cf_s = cf_site_first(cf_t, %s, cf_ra);" % op,
                "    const cf_memo_t *cf_m = cf_s ? cf_memo_of(cf_s, %s, cf_ra, %s, %s, %s, %s) : NULL;"
                % (op, a["comm"], dtype, count, dest)]
        # in the hit's part (cf_t entered by cf_enter_split: the TSC is the clock)
        hit += find + ["    if (cf_m) {",
                       "        uint64_t cf_t0 = cf_tsc();",
                       "        int cf_rc = %s;" % call(e, repl),
                       "        uint64_t cf_t1 = cf_tsc();"]
        hit += ["    " + l for l in timed[3:]] + ["    " + l for l in body]
        hit += ["        cf_leave_fast(cf_t);", "        return cf_rc;", "    }"]
        # in the full path: not for a call handed to it, which missed
        out += [find[0].replace("= cf_site_first(", "= cf_handed ? NULL : cf_site_first("), find[1],
                "    if (cf_m) {"]
        out += ["    " + l for l in timed] + ["    " + l for l in body]
        out += ["        cf_leave(cf_t);", "        return cf_rc;", "    }"]
    if head:
        out += ["    if (__builtin_expect(cf_rc != MPI_SUCCESS, 0)) {", "        %s;" % fail, "        return;", "    }"]
    else:
        out += timed
    if posted:
        out.append("    cf_t->mpi_ns += cf_ticks_to_ns(cf_t1 - cf_t0);")
    # what the call's object belongs to: a communicator, a file's or a window's
    if "comm" in a:
        out.append("    cf_comm_t *cf_c = cf_comm_get(%s);" % a["comm"])
    elif "file" in a:
        out.append("    const cf_comm_t *cf_c = cf_file_comm(%s);" % a["file"])
    elif "win" in a:
        out.append("    const cf_comm_t *cf_c = cf_win_comm(%s);" % a["win"])
    if memo or post_memo:
        out.append("    cf_s = cf_site_of(cf_t, %s, cf_comm_id(cf_c), cf_ra);" % op)
    if k in ("send", "coll"):
        path = "cf_comm_peer_path(cf_c, %s)" % a["peer"] if k == "send" else "cf_c ? cf_c->path : CF_PATH_SELF"
        out.append("    uint64_t cf_nb = %s;" % a["bytes"])
        out.append("    uint64_t cf_k = cf_record_call(cf_t, %s, cf_comm_id(cf_c), %s, cf_nb, cf_t0, cf_t1);"
                   % (op, path))
        site = "%s, cf_comm_id(cf_c), cf_ra, cf_nb" % op
        if k == "send":
            out.append("    cf_p2p_sent(cf_t, cf_comm_id(cf_c), cf_world_of(cf_c, %s), %s, cf_k, cf_nb, cf_t0, 1);"
                       % (a["peer"], a["tag"]))
        else:
            out.append("    cf_coll_sample(cf_t, cf_c, cf_k, %s, cf_t0, cf_t1);" % a.get("root", "-1"))
    elif k in ("io", "rma", "sync", "local"):
        # not messages: no sampling.  A file access moves what its status says
        # unless the spec gives the bytes; one-sided calls are classed by their
        # target's path, file accesses and local calls as self
        nb = "0" if k == "sync" else a.get("bytes") or "cf_status_bytes(cf_sp)"
        path = {"io": "CF_PATH_SELF", "local": "CF_PATH_SELF", "rma": "cf_comm_peer_path(cf_c, %s)" % a.get("peer"),
                "sync": "cf_comm_peer_path(cf_c, %s)" % a["peer"] if "peer" in a else "cf_c ? cf_c->path : CF_PATH_SELF"}[k]
        comm = "CF_COMM_ID_NONE" if k == "local" else "cf_comm_id(cf_c)"
        site = "%s, %s, cf_ra, %s" % (op, comm, nb)
        out.append("    cf_record_call(cf_t, %s, %s, %s, %s, cf_t0, cf_t1);" % (op, comm, path, nb))
    elif k in ("recv", "probe", "iprobe"):
        got = "*%s" % a["flag"] if k == "iprobe" else "1"
        out.append("    int cf_got = %s;" % got)
        out.append("    uint64_t cf_b = cf_got ? cf_status_bytes(cf_sp) : 0;")
        site = "%s, cf_comm_id(cf_c), cf_ra, cf_b" % op
        out.append("    int cf_src = cf_got ? cf_sp->MPI_SOURCE : %s;" % a["peer"])
        out.append("    uint64_t cf_k = cf_record_call(cf_t, %s, cf_comm_id(cf_c), cf_comm_peer_path(cf_c, cf_src), "
                   "cf_b, cf_t0, cf_t1);" % op)
        if k == "recv":
            out.append("    if (cf_got)")
            out.append("        cf_p2p_received(cf_t, cf_comm_id(cf_c), cf_world_of(cf_c, cf_src), cf_sp->MPI_TAG, cf_k, "
                       "cf_b, cf_t0, cf_t1);")
        else:
            out.append("    (void)cf_k;")
    elif k == "sendrecv":
        out.append("    uint64_t cf_sb = %s;" % a["bytes"])
        out.append("    uint64_t cf_rb = cf_status_bytes(cf_sp);")
        site = "%s, cf_comm_id(cf_c), cf_ra, cf_sb > cf_rb ? cf_sb : cf_rb" % op
        out.append("    int cf_peer = %s != MPI_PROC_NULL ? %s : cf_sp->MPI_SOURCE;" % (a["peer"], a["peer"]))
        out.append("    uint64_t cf_k = cf_record_call(cf_t, %s, cf_comm_id(cf_c), cf_comm_peer_path(cf_c, cf_peer), "
                   "cf_sb > cf_rb ? cf_sb : cf_rb, cf_t0, cf_t1);" % op)
        # the call counts once among its record's eligible calls, with its receive
        out.append("    cf_p2p_sent(cf_t, cf_comm_id(cf_c), cf_world_of(cf_c, %s), %s, cf_k, cf_sb, cf_t0, 0);"
                   % (a["peer"], a["tag"]))
        out.append("    cf_p2p_received(cf_t, cf_comm_id(cf_c), cf_world_of(cf_c, cf_sp->MPI_SOURCE), "
                   "cf_sp->MPI_TAG, cf_k, cf_rb, cf_t0, cf_t1);")
    else:  # isend, irecv, psend, precv, icoll, pcoll, isendrecv, iio, irma: timed from post to completion
        flags = {"isend": "0", "irecv": "CF_REQ_RECV", "psend": "CF_REQ_PERSISTENT",
                 "precv": "CF_REQ_RECV | CF_REQ_PERSISTENT", "icoll": "CF_REQ_COLL",
                 "pcoll": "CF_REQ_COLL | CF_REQ_PERSISTENT", "isendrecv": "CF_REQ_NOMSG",
                 "iio": "CF_REQ_NOMSG | CF_REQ_STATUS", "irma": "CF_REQ_NOMSG"}[k]
        if a.get("match") == "no":  # partitioned: not matched with the messages of the sampler
            flags += " | CF_REQ_NOMSG"
        path = {"icoll": "cf_c ? cf_c->path : CF_PATH_SELF", "pcoll": "cf_c ? cf_c->path : CF_PATH_SELF",
                "iio": "CF_PATH_SELF"}.get(k, "cf_comm_peer_path(cf_c, %s)" % a.get("peer"))
        if post_memo:
            dest, tag = (a["peer"], a["tag"]) if k != "icoll" else ("-1", "0")
            out[:] = [l % {"flags": flags} if "%(flags)s" in l else l for l in out]
            hit[:] = [l % {"flags": flags} if "%(flags)s" in l else l for l in hit]
        # the call site of a nonblocking call: its posted bytes, the time of the call itself
        out.append("    uint64_t cf_nb = %s;" % a["bytes"])
        site = "%s, cf_comm_id(cf_c), cf_ra, cf_nb" % op
        peer_tag = "%s, %s" % (a["peer"], a["tag"]) if "tag" in a else "%s, 0" % a.get("peer", "-1")
        out.append("    cf_req_post(cf_t, *%s, %s, cf_c, %s, cf_nb, %s, cf_t0, cf_t1, %s);"
                   % (a["request"], op, path, flags, peer_tag))
        if post_memo:
            out.append("    if (cf_s) {")
            out.append("        cf_site_add(cf_s, cf_nb, cf_t0, cf_t1);")
            out.append("        cf_memo_fill(cf_t, cf_s, cf_c, %s, %s, %s, %s, cf_key_of(%s, cf_comm_id(cf_c), %s, cf_nb), "
                       "cf_nb, cf_world_of(cf_c, %s), %s);"
                       % (dtype, count, dest, tag, op, path, dest, "CF_MEMO_MSG" if k == "isend" else "0"))
            out.append("    }")
            site = None
    if memo:
        out.append("    if (cf_s) {")
        out.append("        cf_site_add(cf_s, cf_nb, cf_t0, cf_t1);")
        if k == "send":
            out.append("        cf_memo_fill(cf_t, cf_s, cf_c, %s, %s, %s, %s, cf_k, cf_nb, cf_world_of(cf_c, %s), "
                       "CF_MEMO_REC | CF_MEMO_MSG);" % (dtype, count, a["peer"], a["tag"], a["peer"]))
        else:
            out.append("        cf_memo_fill(cf_t, cf_s, cf_c, %s, %s, CF_MEMO_ANY_DEST, 0, cf_k, cf_nb, -1, CF_MEMO_REC);"
                       % (dtype, count))
        out.append("    }")
    elif site:
        out.append("    cf_site_note(cf_t, %s, cf_t0, cf_t1);" % site)
    if k == "icoll":
        out.append("    cf_post_mark(cf_t, cf_t0, cf_t1);")
    out.append("    cf_leave(cf_t);")
    out.append("    return;" if head else "    return cf_rc;")
    out.append("}")
    if split:
        full = "cf_full_%s(%s)" % (e["name"], ", ".join(e["names"]))
        fast = "cf_fast_%s(%s)" % (e["name"], ", ".join(e["names"]))
        out += ["", "static int __attribute__((noinline)) cf_fast_%s(%s)" % (e["name"], e["params"]),
                "{",
                "    cf_thread_t *cf_t = cf_enter_split(%s);" % op,
                "    if (__builtin_expect(cf_t != NULL, 1)) {",
                "        void *cf_ra = __builtin_return_address(0);"]
        out += ["    " + l for l in hit]
        out += ["        cf_hand(cf_t, cf_ra);",
                "    } else {",
                "        cf_hand_site(__builtin_return_address(0));",
                "    }",
                "    return %s;" % full,
                "}",
                "",
                "int %s(%s)" % (e["name"], e["params"]),
                "{",
                "    if (__builtin_expect(!cf_split_fast(), 0)) {",
                "        cf_hand_site(__builtin_return_address(0));",
                "        return %s;" % full,
                "    }",
                "    return %s;" % fast,
                "}"]
    if e["mpi"] > 3:  # a function of a later standard: wrapped where the library has it
        out = ["#if MPI_VERSION >= %d" % e["mpi"]] + out + ["#endif"]
    return "\n".join(out)


# ---- Fortran (mpif.h and use mpi): every argument by reference, handles
# as MPI_Fint, an ierr at the end.  The wrapper calls the library's own
# Fortran entry (pmpi_..._), which converts the arguments as it always
# does, and records the call from the C handles converted with the _f2c
# functions; plugin/cf_fortran.c has the rest. ----
FORTRAN_KINDS = {"send", "recv", "sendrecv", "isend", "irecv", "psend", "precv", "coll", "icoll", "probe", "iprobe",
                 "io", "iio", "rma", "irma", "sync", "local"}
F2C = {"MPI_Datatype": "PMPI_Type_f2c", "MPI_Comm": "PMPI_Comm_f2c", "MPI_Op": "PMPI_Op_f2c",
       "MPI_File": "PMPI_File_f2c", "MPI_Win": "PMPI_Win_f2c", "MPI_Group": "PMPI_Group_f2c"}


def fortran_params(e):
    """(Fortran parameter declarations, C locals before the call, C locals after it), or None
    when a parameter has no plain Fortran form here (arrays of handles)."""
    decl, pre, post = [], [], []
    for p, n in zip((x.strip() for x in e["params"].split(",")), e["names"]):
        t = p[:p.rindex(n)].strip()
        if t in ("const void *", "void *"):
            decl.append("void *%s_f" % n)
            pre.append("    CF_UNUSED const void *%s = cf_f_buffer(%s_f);" % (n, n))
        elif t == "int" and not p.endswith("]"):
            decl.append("MPI_Fint *%s_f" % n)
            pre.append("    CF_UNUSED int %s = (int)*%s_f;" % (n, n))
        elif t == "const int" and p.endswith("[]"):
            decl.append("const MPI_Fint *%s" % n)  # MPI_Fint is int (cf_fortran.c checks)
        elif t in F2C:
            decl.append("MPI_Fint *%s_f" % n)
            pre.append("    CF_UNUSED %s %s = %s(*%s_f);" % (t, n, F2C[t], n))
        elif t in ("MPI_Offset", "MPI_Aint"):  # INTEGER(KIND=MPI_OFFSET_KIND / MPI_ADDRESS_KIND)
            decl.append("%s *%s_f" % (t, n))
            pre.append("    CF_UNUSED %s %s = *%s_f;" % (t, n, n))
        elif t == "MPI_Request *":
            decl.append("MPI_Fint *%s_f" % n)
            post.append("    MPI_Request cf_req = cf_rc == MPI_SUCCESS ? PMPI_Request_f2c(*%s_f) : MPI_REQUEST_NULL;" % n)
            post.append("    MPI_Request *%s = &cf_req;" % n)
        elif t == "MPI_Status *":
            decl.append("MPI_Fint *%s_f" % n)
        elif t == "int *":  # a logical flag
            decl.append("MPI_Fint *%s_f" % n)
            post.append("    CF_UNUSED int cf_flag = *%s_f != 0, *%s = &cf_flag;" % (n, n))
        else:
            return None
    return decl, pre, post


def fortran_head(e, decl, pre, post):
    a = e["attr"]
    lower = e["name"].lower()
    real_args = []
    for d, n in zip(decl, e["names"]):
        real_args.append("cf_fsp" if n == a.get("status") else n if d.startswith("const MPI_Fint *") else n + "_f")
    real_args.append("cf_ierr")
    out = ["typedef void cf_ft_%s(%s, MPI_Fint *ierr);" % (lower, ", ".join(decl)),
           "CF_FORTRAN_API void %s_(%s, MPI_Fint *ierr)" % (lower, ", ".join(decl)), "{",
           "    MPI_Fint cf_ierr_own = 0, *cf_ierr = ierr ? ierr : &cf_ierr_own; /* optional in mpi_f08 */",
           "    static void *cf_fn;",
           "    cf_ft_%s *cf_real = (cf_ft_%s *)cf_fortran_real(&cf_fn, \"p%s\");" % (lower, lower, lower),
           "    if (!cf_real) {",
           "        *cf_ierr = MPI_ERR_INTERN;",
           "        return;",
           "    }",
           "    cf_thread_t *cf_t = cf_enter(CF_OP_%s);" % e["name"],
           "    if (!cf_t) {"]
    if e["kind"] == "coll":
        out.append("        cf_coll_passed(PMPI_Comm_f2c(*%s_f));" % a["comm"])
    out += ["        cf_real(%s);" % ", ".join(n if n != "cf_fsp" else a["status"] + "_f" for n in real_args),
            "        return;", "    }"]
    if "status" in a:
        st = a["status"]
        out.append("    MPI_Fint cf_fst[CF_F_STATUS_INTS];")
        out.append("    MPI_Fint *cf_fsp = cf_f_status_ignored(%s_f) ? cf_fst : %s_f;" % (st, st))
    out += ["    uint64_t cf_t0 = cf_ticks();",
            "    cf_real(%s);" % ", ".join(real_args),
            "    uint64_t cf_t1 = cf_ticks();",
            "    CF_UNUSED int cf_rc = (int)*cf_ierr;"]
    out += pre + post
    if "status" in a:
        out += ["    CF_UNUSED MPI_Status cf_st, *cf_sp = &cf_st;",
                "    if (cf_rc == MPI_SUCCESS)",
                "        PMPI_Status_f2c(cf_fsp, &cf_st);"]
    return out


def fortran_wrappers(entries):
    out = []
    for e in entries:
        if e["kind"] not in FORTRAN_KINDS or e["mpi"] > 3 or e["name"].endswith("_c"):
            continue
        conv = fortran_params(e)
        if conv is None:
            continue
        out.append(wrapper(e, fortran_head(e, *conv)) +
                   "\nCF_FORTRAN_EXPORT(%s, %s)" % (e["name"].lower(), e["name"].upper()))
    return out


# ---- the UCP functions of the UCX layer (ucx_calls.spec) ----
UCX_KINDS = {"send", "recv", "rma", "atomic"}
# form: what the wrapper returns
UCX_FORMS = {"nbx": "ucs_status_ptr_t", "nb": "ucs_status_ptr_t", "nbr": "ucs_status_t",
             "nbi": "ucs_status_t", "call": "ucs_status_ptr_t"}
UCX_RETURNS = {"void": "void", "status": "ucs_status_t", "request": "ucs_status_ptr_t"}
UCX_DONE = {"send": "CF_UCX_SEND", "tag_recv": "CF_UCX_TAG_RECV", "stream_recv": "CF_UCX_STREAM_RECV"}
UCX_PARAM_FLAGS = {"fast_cmpl", "no_imm_cmpl", "force_imm_cmpl"}
UCX_ATTRS = {"form", "ep", "worker", "buffer", "count", "datatype", "bytes", "extra", "done", "param", "via",
             "fields", "callback", "inplace", "returns", "before"}


def ucx_check(e, where):
    """Checks the attributes of one operation against its form."""
    a, names, form = e["attr"], e["names"], e["attr"].get("form")

    def need(key, present=True):
        if (key in a) != present:
            raise SpecError("%s: %s attribute %r" % (where, "needs" if present else "form %s takes no" % form, key))

    def is_param(key):
        if a[key] not in names:
            raise SpecError("%s: %s=%s is not one of its parameters" % (where, key, a[key]))

    if form not in UCX_FORMS:
        raise SpecError("%s: form=%s is not one of %s" % (where, form, ", ".join(sorted(UCX_FORMS))))
    if ("ep" in a) == ("worker" in a):
        raise SpecError("%s: needs one of the attributes 'ep' and 'worker'" % where)
    is_param("ep" if "ep" in a else "worker")
    if "bytes" in a:
        for k in ("buffer", "count", "datatype"):
            need(k, False)
    else:
        need("buffer")
        need("count")
        if form != "nbx":
            need("datatype")
    done = a.get("done", "send")
    if done not in UCX_DONE or (done == "send") != (e["kind"] != "recv"):
        raise SpecError("%s: done=%s does not fit kind %s" % (where, done, e["kind"]))
    need("param", form == "nbx")
    if form == "nbx":
        is_param("param")
    need("via", form in ("nb", "nbr"))
    if form not in ("nb", "nbr"):
        need("fields", False)
    need("callback", form == "nb")
    if form == "nb":
        is_param("callback")
    for k in ("returns", "before"):
        need(k, False)
    inplace = a.get("inplace")
    if inplace is not None and form in ("nbi", "call"):
        raise SpecError("%s: form %s is timed over the call: inplace does not apply" % (where, form))
    if inplace == "info" and (form != "nbx" or done != "tag_recv"):
        raise SpecError("%s: inplace=info is for tag receives of form nbx" % where)
    if inplace not in (None, "none", "info") and not (inplace.startswith("*") and inplace[1:] in names):
        raise SpecError("%s: inplace=%s is neither info, none nor *PARAMETER" % (where, inplace))


def ucx_fields(e, where):
    """The ucp_request_param_t that UCX builds for an old form, as a C initializer."""
    mask, init = [], []
    for f in filter(None, (x.strip() for x in e["attr"].get("fields", "").split(","))):
        name, _, value = (x.strip() for x in f.partition("="))
        if name in UCX_PARAM_FLAGS:
            if value:
                raise SpecError("%s: the flag %r takes no value" % (where, name))
            mask.append("UCP_OP_ATTR_FLAG_" + name.upper())
            continue
        if not re.match(r"^[a-z_]+$", name) or not (value or name in e["names"]):
            raise SpecError("%s: field %r is neither NAME=EXPRESSION, a parameter nor a flag" % (where, f))
        mask.append("UCP_OP_ATTR_FIELD_" + name.upper())
        init.append(".%s = %s" % (name, value or name))
    return "{%s}" % ", ".join([".op_attr_mask = %s" % (" | ".join(mask) or "0")] + init)


def parse_ucx(path):
    entries = []
    for lineno, name, kind, params, attr in read_spec(path, r"^ucp_\w+$", "a UCP function name"):
        where = "%s:%d: %s" % (path, lineno, name)
        plist = [p.strip() for p in params.split(",")] if params not in ("", "void") else []
        names = [param_name(p) for p in plist]
        if any(n.startswith("cf_") for n in names):
            raise SpecError("%s: a parameter named cf_* would be hidden by the wrapper's own" % where)
        unknown = set(attr) - UCX_ATTRS
        if unknown:
            raise SpecError("%s: unknown attribute %s" % (where, ", ".join(sorted(unknown))))
        e = dict(name=name, kind=kind, params=params, names=names, attr=attr, op=False, where=where)
        if kind in UCX_KINDS:
            e.update(op=True, pkind=kind)
            ucx_check(e, where)
            if e["attr"]["form"] in ("nb", "nbr"):
                e["fields"] = ucx_fields(e, where)
        elif kind.startswith("custom:") and kind[7:] in UCX_KINDS:
            e.update(kind="custom", op=True, pkind=kind[7:])
        elif kind == "pass":
            if attr.get("returns") not in UCX_RETURNS or "before" not in attr or set(attr) - {"returns", "before"}:
                raise SpecError("%s: pass needs returns=void|status|request and before=CALL, nothing else" % where)
        elif kind not in ("custom", "lookup"):
            raise SpecError("%s: unknown kind %r" % (where, kind))
        elif attr:
            raise SpecError("%s: %s takes no attributes" % (where, kind))
        entries.append(e)
    byname = {e["name"]: e for e in entries}
    for e in entries:
        via = e["attr"].get("via")
        if not via or not e["op"] or e["kind"] == "custom":
            continue
        m = re.match(r"^(ucp_\w+)\((.*)\)$", via)
        target = byname.get(m.group(1)) if m else None
        if not target or target["attr"].get("form") != "nbx":
            raise SpecError("%s: via=%s is not a call of a function of form nbx in the spec" % (e["where"], via))
        args = [x.strip() for x in m.group(2).split(",")]
        if len(args) != len(target["names"]) - 1:
            raise SpecError("%s: via=%s: %s takes %d arguments before its request parameters" %
                            (e["where"], via, target["name"], len(target["names"]) - 1))
        e["via"] = (target["name"], ", ".join(args))
    return entries


def ucx_missing(ret):
    """What a wrapper returns when no UCP library defines the function."""
    return "cf_ucx_missing(__func__)" if ret == "ucs_status_t" else "UCS_STATUS_PTR(cf_ucx_missing(__func__))"


def ucx_wrapper(e):
    """One UCP operation: passed through when the layer is off (a test, and a
    tail call of the next definition), else recorded by ucx_recorded(e)."""
    name, args = e["name"], ", ".join(e["names"])
    # the recorded part apart: its locals, whose addresses it passes on,
    # would keep a frame around the call passed through
    rec = ucx_recorded(e).replace("%s %s(" % (UCX_FORMS[e["attr"]["form"]], name),
                                  "static __attribute__((noinline)) %s cf_ucx_rec_%s(" % (UCX_FORMS[e["attr"]["form"]], name), 1)
    out = [rec, "",
           "%s %s(%s)" % (UCX_FORMS[e["attr"]["form"]], name, e["params"]), "{",
           "    if (cf_ucx_passing()) {",
           # the definition found already (the recorded part looks it up the first time)
           "        __typeof__(&%s) cf_real = atomic_load_explicit(&cf_ucx_fn[CF_UCX_FN_%s], memory_order_acquire);"
           % (name, name),
           "        if (cf_real)",
           "            return cf_real(%s);" % args,
           "    }",
           "    return cf_ucx_rec_%s(%s);" % (name, args),
           "}"]
    return "\n".join(out)


def ucx_recorded(e):
    """One UCP operation: posted with our callback and timed to its completion,
    or timed over the call (see cf_ucx_begin)."""
    a, name, form = e["attr"], e["name"], e["attr"]["form"]
    ret = UCX_FORMS[form]
    args = ", ".join(e["names"])
    missing = ucx_missing(ret)
    if "bytes" in a:
        data = "ucp_dt_make_contig(1), NULL, %s" % a["bytes"]
    else:
        data = "%s, %s, %s" % (a.get("datatype") or "cf_ucx_param_dt(%s)" % a["param"], a["buffer"], a["count"])

    def begin(param_in, param_out, old_cb, can_time):
        return "cf_ucx_begin(&cf_ps, CF_UCX_OP_%s, %s, %s, %s, %s, %s, %s, %s, %s)" % (
            name, UCX_DONE[a.get("done", "send")], a.get("ep", "NULL"), data, a.get("extra", "0"), param_in,
            param_out, old_cb, can_time)

    inplace = a.get("inplace")
    if inplace == "info":
        got = ("cf_r == NULL && cf_how == CF_UCX_TIMED ? cf_ucx_recv_length(%s, &cf_info, cf_caller, cf_ps.bytes) "
               ": cf_ps.bytes" % a["param"])
    elif inplace == "none":
        got = "0"
    elif inplace:
        got = "cf_r == NULL && %s ? %s : cf_ps.bytes" % (inplace[1:], inplace)
    else:
        got = "cf_ps.bytes"
    out = ["%s %s(%s)" % (ret, name, e["params"]), "{"]
    if form in ("nbx", "nbi", "call"):
        out.append("    __typeof__(&%s) cf_real = CF_UCX_REAL(%s);" % (name, name))
        real = "cf_real"
    else:
        out.append("    __typeof__(&%s) cf_nbx = CF_UCX_REAL(%s);" % (e["via"][0], e["via"][0]))
        out.append("    __typeof__(&%s) cf_%s = CF_UCX_REAL(%s);" % (name, form, name))
        out.append("    const ucp_request_param_t cf_param = %s;" % e["fields"])
        real = "cf_" + form
    out.append("    cf_ucx_post_t cf_ps;")
    if form in ("nbi", "call"):  # no completion callback: timed over the call
        out += ["    if (!cf_real)",
                "        return %s;" % missing,
                "    if (%s == CF_UCX_PASS)" % begin("NULL", "NULL", "NULL", "0"),
                "        return cf_real(%s);" % args,
                "    cf_ucx_busy++;"]
        if form == "nbi":
            out += ["    ucs_status_t cf_st = cf_real(%s);" % args,
                    "    cf_ucx_busy--;",
                    "    cf_ucx_end(&cf_ps, cf_ucx_status_ptr(cf_st), cf_ps.bytes);",
                    "    return cf_st;"]
        else:
            out += ["    ucs_status_ptr_t cf_r = cf_real(%s);" % args,
                    "    cf_ucx_busy--;",
                    "    return cf_ucx_end(&cf_ps, cf_r, cf_ps.bytes);"]
        return "\n".join(out + ["}"])
    out.append("    ucp_request_param_t cf_p;")
    if inplace == "info":
        out.append("    ucp_tag_recv_info_t cf_info = {0}, *cf_caller = NULL;")
    out += ["    if (!%s)" % real, "        return %s;" % missing]
    if form == "nbx":
        out.append("    int cf_how = %s;" % begin(a["param"], "&cf_p", "NULL", "1"))
    else:  # posted through the _nbx form when it is there
        old_cb = "(cf_ucx_oldcb_t)%s" % a["callback"] if form == "nb" else "NULL"
        out.append("    int cf_how = %s;" % begin("&cf_param", "&cf_p", old_cb, "cf_nbx != NULL"))
    out += ["    if (cf_how == CF_UCX_PASS)", "        return %s(%s);" % (real, args)]
    if inplace == "info":
        out += ["    if (cf_how == CF_UCX_TIMED)", "        cf_caller = cf_ucx_recv_info(&cf_p, &cf_info);"]
    if form == "nbr":
        out += ["    if (cf_how == CF_UCX_UNTIMED) {",
                "        cf_ucx_busy++;",
                "        ucs_status_t cf_st = cf_nbr(%s);" % args,
                "        cf_ucx_busy--;",
                "        cf_ucx_end(&cf_ps, cf_ucx_status_ptr(cf_st), cf_ps.bytes);",
                "        return cf_st;",
                "    }"]
    out.append("    cf_ucx_busy++;")
    if form == "nbx":
        fwd = ", ".join("cf_how == CF_UCX_TIMED ? &cf_p : %s" % n if n == a["param"] else n for n in e["names"])
        out.append("    ucs_status_ptr_t cf_r = cf_real(%s);" % fwd)
    elif form == "nb":
        out.append("    ucs_status_ptr_t cf_r = cf_how == CF_UCX_TIMED ? cf_nbx(%s, &cf_p) : cf_nb(%s);"
                   % (e["via"][1], args))
    else:
        out.append("    ucs_status_ptr_t cf_r = cf_nbx(%s, &cf_p);" % e["via"][1])
    out.append("    cf_ucx_busy--;")
    if form != "nbr":
        out.append("    return cf_ucx_end(&cf_ps, cf_r, %s);" % got)
    else:  # as UCX's own _nbr forms: a send in flight is UCS_INPROGRESS, a posted receive UCS_OK
        out.append("    cf_r = cf_ucx_end(&cf_ps, cf_r, %s);" % got)
        if e["kind"] == "recv":
            out.append("    return UCS_PTR_IS_ERR(cf_r) ? UCS_PTR_STATUS(cf_r) : UCS_OK;")
        else:
            out.append("    return cf_r == NULL ? UCS_OK : UCS_PTR_IS_ERR(cf_r) ? UCS_PTR_STATUS(cf_r) "
                       ": UCS_INPROGRESS;")
    return "\n".join(out + ["}"])


def ucx_pass(e):
    """A function forwarded after a call of the layer's own (before=)."""
    ret = UCX_RETURNS[e["attr"]["returns"]]
    name, args = e["name"], ", ".join(e["names"])
    out = ["%s %s(%s)" % (ret, name, e["params"]), "{",
           "    __typeof__(&%s) cf_real = CF_UCX_REAL(%s);" % (name, name)]
    if ret == "void":  # nothing to say when there is no next definition
        out += ["    %s;" % e["attr"]["before"],
                "    if (cf_real) {",
                "        cf_ucx_busy++;",
                "        cf_real(%s);" % args,
                "        cf_ucx_busy--;",
                "    }"]
    else:
        out += ["    if (!cf_real)",
                "        return %s;" % ucx_missing(ret),
                "    %s;" % e["attr"]["before"],
                "    cf_ucx_busy++;",
                "    %s cf_r = cf_real(%s);" % (ret, args),
                "    cf_ucx_busy--;",
                "    return cf_r;"]
    return "\n".join(out + ["}"])


def main_ucx(spec, ops_h, wrappers_c):
    entries = parse_ucx(spec)
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        raise SpecError("a function is listed twice")
    ops = [e for e in entries if e["op"]]
    if len(ops) > 127:
        raise SpecError("more than 127 operations do not fit the record key")
    with open(ops_h, "w") as f:
        f.write("/* Generated by gen_wrappers.py from ucx_calls.spec: do not edit. */\n")
        f.write("#ifndef CF_UCX_OPS_H\n#define CF_UCX_OPS_H\n\n")
        f.write("/* X(name, kind in the profile) for every UCP operation, in spec order */\n")
        f.write("#define CF_UCX_OPS(X) \\\n")
        f.write(" \\\n".join('    X(%s, "%s")' % (e["name"], e["pkind"]) for e in ops))
        f.write("\n\n/* X(name) for every other UCP function the layer wraps or calls */\n")
        f.write("#define CF_UCX_HELPERS(X) \\\n")
        f.write(" \\\n".join("    X(%s)" % e["name"] for e in entries if not e["op"]))
        f.write("\n\n#endif\n")
    with open(wrappers_c, "w") as f:
        f.write("/* Generated by gen_wrappers.py from ucx_calls.spec: do not edit. */\n")
        f.write('#include "cf_ucx_calls.h"\n\n')
        for e in entries:
            if e["kind"] == "pass":
                f.write(ucx_pass(e) + "\n\n")
            elif e["op"] and e["kind"] != "custom":
                f.write(ucx_wrapper(e) + "\n\n")


# Whether the compiler made the dispatch of a wrapper in two parts tail
# calls, in this file with its flags (cf_site.h, cf_tail_calls): a dispatch
# of seven arguments, one on the stack, as MPI_Isend's
TAIL_PROBE = """/* cf_tail_calls (cf_site.h): the return address a dispatch saw, and the one
 * the function it reached saw; equal when the dispatch was a tail call */
static void *cf_probe_ra[2];
static int __attribute__((noinline, noclone)) cf_probe_part(const void *a, int b, void *c, int d, int e, void *f,
                                                             void **g)
{
    cf_probe_ra[1] = __builtin_return_address(0);
    __asm__ volatile("" : : "r"(a), "r"(c), "r"(f), "r"(g) : "memory");
    return b + d + e;
}
static int __attribute__((noinline, noclone)) cf_probe_dispatch(const void *a, int b, void *c, int d, int e, void *f,
                                                                 void **g)
{
    cf_probe_ra[0] = __builtin_return_address(0);
    if (__builtin_expect(!cf_split_fast(), 0))
        return cf_probe_part(a, b, c, d, e, f, g);
    return cf_probe_part(a, b + 1, c, d, e, f, g);
}
int cf_tail_calls(void)
{
    void *g = NULL;
    cf_probe_ra[0] = cf_probe_ra[1] = NULL;
    if (cf_probe_dispatch(NULL, 1, NULL, 2, 3, NULL, &g) < 0)
        return 0;
    return cf_probe_ra[0] != NULL && cf_probe_ra[0] == cf_probe_ra[1];
}

"""


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--ucx":
        try:
            main_ucx(*sys.argv[2:])
        except (SpecError, OSError) as err:
            sys.exit("gen_wrappers.py: %s" % err)
        return
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip())
    try:
        entries = parse(sys.argv[1])
    except (SpecError, OSError) as err:
        sys.exit("gen_wrappers.py: %s" % err)
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        sys.exit("gen_wrappers.py: a function is listed twice")
    if len(entries) > 510:
        sys.exit("gen_wrappers.py: more than 510 operations do not fit the record key")
    with open(sys.argv[2], "w") as f:
        f.write("/* Generated by gen_wrappers.py from mpi_calls.spec: do not edit. */\n")
        f.write("#ifndef CF_OPS_H\n#define CF_OPS_H\n\n")
        f.write("/* X(name, kind in the profile) for every wrapped function, in spec order */\n")
        f.write("#define CF_MPI_OPS(X) \\\n")
        f.write(" \\\n".join('    X(%s, "%s")' % (e["name"], e["pkind"]) for e in entries))
        f.write("\n\n/* X(name) for every blocking collective: the sampler considers each of its calls */\n")
        f.write("#define CF_MPI_COLL_SAMPLED(X) \\\n")
        f.write(" \\\n".join("    X(%s)" % e["name"] for e in entries if e["kind"] == "coll"))
        f.write("\n\n#endif\n")
    with open(sys.argv[3], "w") as f:
        f.write("/* Generated by gen_wrappers.py from mpi_calls.spec: do not edit. */\n")
        f.write('#include "cf_runtime.h"\n#include "cf_site.h"\n#include "cf_payload.h"\n#include "cf_sample.h"\n#include "cf_request.h"\n#include "cf_objects.h"\n\n')
        for e in entries:
            if e["kind"] != "custom":
                f.write(wrapper(e) + "\n\n")
        f.write(TAIL_PROBE)
        # the Fortran bindings of Open MPI call PMPI_ directly: they get wrappers of their own
        f.write("#include \"cf_fortran.h\"\n#if CF_FORTRAN\n#define CF_UNUSED __attribute__((unused))\n\n")
        for w in fortran_wrappers(entries):
            f.write(w + "\n\n")
        f.write("#endif\n")


if __name__ == "__main__":
    main()
