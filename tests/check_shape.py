#!/usr/bin/env python3
"""Hold the shape of the source tree (docs/CodeStyle.md, "The shape").

usage: check_shape.py [--root DIR] [--baseline FILE] [--graph]

Fails (exit status 1, one line per finding) on
  - a citation of a .md document that is not in the tree, or of a section
    (a link's #anchor, or the document's name followed by a quoted
    heading) that the document lacks,
    in the code and scripts of plugin/, lib/, tools/, tests/, examples/
    and in the documents themselves;
  - a circle of files within plugin/, lib/ or tools/: a unit is x.c with
    its header x.h, and x -> y when x.c or x.h includes "y.h";
  - an include that points the wrong way: lib/ includes nothing of
    plugin/ or tools/ (nor mpi.h), plugin/ nothing of tools/, tools/
    nothing of plugin/;
  - a plugin module that includes another module's header, or uses what
    another module defines: the modules are those the list in
    plugin/cf_modules.c registers (the plugin headers it includes), each
    with the files only it includes (cf_refresh, the spill's thread);
  - a file of the core that includes a module's header or calls what a
    module defines (the core names no module; the list is the only file
    that does), the generated wrappers included (the headers gen_wrappers.py
    writes into them);
  - a unit of plugin/ that is neither a module of the list nor one of the
    core's (CORE, SERVICES below), or one that is both;
  - a C function of plugin/, lib/ or tools/ longer than 120 lines.
The circles and long functions that exist today are listed in the baseline
(tests/shape_baseline.txt): one of them fails only when it grows; an entry
that is gone or has shrunk is printed as a warning, so that the baseline
shrinks with the code.  --graph prints the include graph of each part.
"""
import argparse
import os
import re
import sys

PARTS = ("plugin", "lib", "tools")
MAX_LINES = 120
# where a part's #include "x.h" is looked for: its own directory, then the
# -I directories of Makefile.am (lib, then plugin)
SEARCH = ("lib", "plugin")
# which parts each part may include (docs/architecture.md, "The floors")
MAY_INCLUDE = {"plugin": {"plugin", "lib"}, "lib": {"lib"}, "tools": {"tools", "lib"}}
# where citations are looked for
CITING_DIRS = ("plugin", "lib", "tools", "tests", "examples", "docs", ".ci")
CITING_TOP = ("README.md", "Makefile.am", "configure.ac", "bootstrap.sh")
CITING_EXT = (".c", ".h", ".py", ".sh", ".spec", ".txt", ".F90", ".am", ".ac",
              ".js", ".css", ".md", ".in", "")
SKIP_DIRS = {".git", "autom4te.cache", "m4", "build", "b"}
# the list of the plugin's modules, the only file that names them all
# (docs/architecture.md, "How to add a module"), and the descriptor type's
# header it includes besides theirs
MODULE_LIST = "cf_modules"
MODULE_TYPE = "cf_module.h"
# the core of the plugin (docs/architecture.md, "What each room may touch"):
# its state and the hot path's inline helpers (cf_runtime, cf_site, cf_clock,
# cf_payload), the module descriptor, the start and the end of the run, the
# hand-written wrappers, and the UCX layer's operation names with the
# interface of the generated UCP wrappers, which the core reads
CORE = ("cf_runtime", "cf_site", "cf_clock", "cf_payload", "cf_module", "cf_init", "cf_lifecycle", "cf_merge",
        "cf_complete", "cf_objects", "cf_fortran", "cf_ucx_names", "cf_ucx_calls")
# the services beside the core: not modules, because the hot path calls
# them inline (the sampler, request tracking), every record's key carries
# them (the regions), the start and the end of the run call them by name
# (the clocks across ranks, the sampler's section), or what two modules
# share lives there (the collective helpers, the output's names)
SERVICES = ("cf_coll", "cf_request", "cf_output", "cf_sample", "cf_sync", "cf_region")
# writes the wrappers of the specs, which are the core's: the headers it
# writes into them are included by the core
GENERATOR = "gen_wrappers.py"
GEN_INCLUDE_RE = re.compile(r'#\s*include\s+\\?"([\w.]+\.h)\\?"')

DOC_RE = re.compile(r"(?<![\w./$}-])((?:\.\./|\./)*[\w./-]*[\w-]\.md)(#[\w-]*)?"
                    r"(?:[,:]? +\\?\"([A-Za-z`][^\"\\\n]*)\\?\")?")
# the README by its name alone, with a quoted heading: README "Usage"
README_RE = re.compile(r"\bREADME[,:]? +\\?\"([A-Za-z`][^\"\\\n]*)\\?\"")
URL_RE = re.compile(r"\w+://\S+")
HEAD_RE = re.compile(r"^(#{1,6}) +(.*?) *#*$")


class Report:
    def __init__(self):
        self.errors = []
        self.notes = []

    def error(self, msg):
        self.errors.append(msg)

    def note(self, msg):
        self.notes.append(msg)


# ---- citations ----

def anchor_of(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped."""
    h = heading.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def headings(path, cache):
    if path not in cache:
        names, anchors = set(), set()
        seen = {}
        in_code = False
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("```"):
                    in_code = not in_code
                    continue
                m = None if in_code else HEAD_RE.match(line)
                if not m:
                    continue
                text = m.group(2)
                names.add(text.replace("`", "").strip().lower())
                a = anchor_of(text)
                n = seen.get(a, 0)
                seen[a] = n + 1
                anchors.add(a if n == 0 else "%s-%d" % (a, n))
        cache[path] = (names, anchors)
    return cache[path]


def citing_files(root):
    for top in CITING_TOP:
        p = os.path.join(root, top)
        if os.path.isfile(p):
            yield top
    for d in CITING_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames[:] = sorted(x for x in dirnames if x not in SKIP_DIRS)
            for fn in sorted(filenames):
                ext = os.path.splitext(fn)[1]
                rel = os.path.relpath(os.path.join(dirpath, fn), root)
                # recorded profiles and their logs are data, not text that cites
                if rel.startswith(os.path.join("tests", "corpus")) and ext not in (".md", ".py", ".sh"):
                    continue
                if ext in CITING_EXT and not fn.endswith((".log", ".trs")):
                    yield rel


def resolve_doc(root, citing, name):
    """The file a citation names: beside the citing file, else from the top,
    else in docs/; None when it is nowhere in the tree."""
    here = os.path.dirname(citing)
    tries = [os.path.join(here, name), name]
    if "/" not in name:
        tries.append(os.path.join("docs", name))
    for t in tries:
        p = os.path.normpath(os.path.join(root, t))
        if not (p == root or p.startswith(root + os.sep)):
            continue  # outside the tree is not in the repository
        if os.path.isfile(p):
            return p
    return None


def check_citations(root, rep):
    cache = {}
    count = 0
    for rel in citing_files(root):
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
        except OSError:
            continue
        is_md = rel.endswith(".md")
        for no, line in enumerate(lines, 1):
            line = URL_RE.sub(" ", line)
            if is_md:
                # a link to a section of the same document
                for m in re.finditer(r"\]\(#([\w-]+)\)", line):
                    count += 1
                    if m.group(1) not in headings(path, cache)[1]:
                        rep.error("%s:%d: links to #%s, which %s has no heading for"
                                  % (rel, no, m.group(1), rel))
            for m in README_RE.finditer(line):
                count += 1
                top = os.path.join(root, "README.md")
                if m.group(1).replace("`", "").strip().lower() not in headings(top, cache)[0]:
                    rep.error("%s:%d: cites README, \"%s\", but README.md has no such heading"
                              % (rel, no, m.group(1)))
            seen = set()
            for m in DOC_RE.finditer(line):
                name, anchor, section = m.group(1), m.group(2), m.group(3)
                if m.group(0) in seen:
                    continue  # a link whose text is its target: one citation
                seen.add(m.group(0))
                count += 1
                doc = resolve_doc(root, rel, name)
                if doc is None:
                    rep.error("%s:%d: cites %s, which is not in the repository" % (rel, no, name))
                    continue
                docrel = os.path.relpath(doc, root)
                names, anchors = headings(doc, cache)
                if anchor and len(anchor) > 1 and anchor[1:] not in anchors:
                    rep.error("%s:%d: cites %s%s, but %s has no such section"
                              % (rel, no, name, anchor, docrel))
                if section and section.replace("`", "").strip().lower() not in names:
                    rep.error("%s:%d: cites %s, \"%s\", but %s has no such heading"
                              % (rel, no, name, section, docrel))
    return count


# ---- includes ----

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


# made by the build (in the source tree when it is built in place)
GENERATED = {"cf_ops.h", "cf_wrappers.c", "cf_ucx_ops.h", "cf_ucx_wrappers.c", "cf_assets.c", "config.h"}


def part_files(root, part):
    d = os.path.join(root, part)
    if not os.path.isdir(d):
        return []
    return sorted(f for f in os.listdir(d) if f.endswith((".c", ".h")) and f not in GENERATED)


def find_header(root, part, name):
    """(directory of the tree, file name) of the header #include "name" in
    part finds; None when it is not in the tree (generated, or a system
    header in quotes)."""
    for d in (part,) + SEARCH:
        p = os.path.normpath(os.path.join(root, d, name))
        if os.path.isfile(p) and p.startswith(root + os.sep):
            rel = os.path.relpath(p, root)
            return os.path.dirname(rel) or ".", os.path.basename(rel)
    return None


def top_level(s):
    """The text outside every brace (declarations and definitions' heads,
    not function bodies, initializers or struct members)."""
    out, depth = [], 0
    for c in s:
        if c == "{":
            depth += 1
            out.append(" ")
        elif c == "}":
            depth = max(0, depth - 1)
            out.append(";" if depth == 0 else " ")
        elif depth == 0:
            out.append(c)
    return "".join(out)


def braces(s):
    """For each character, whether it is inside braces."""
    out, depth = [], 0
    for c in s:
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        out.append(depth > 0)
    return out


KEYWORDS = {"if", "while", "for", "switch", "sizeof", "return", "do", "else", "case"}


def external_definitions(s):
    """Names of the functions and variables a stripped C text defines with
    external linkage (not static, not extern, not a typedef)."""
    names = set()
    lines = s.split("\n")
    for name, first, _ in functions(s):
        # the words before the name, back to the previous declaration
        k = first - 1
        head = lines[k]
        while k > 0 and not re.search(r"[;}]\s*$", lines[k - 1]) and lines[k - 1].strip():
            k -= 1
            head = lines[k] + " " + head
        if not re.search(r"\bstatic\b", head.split(name + "(")[0] if name + "(" in head else head):
            names.add(name)
    for stmt in top_level(s).split(";"):
        st = " ".join(stmt.split())
        if not st or "(" in st.split("=", 1)[0] or re.search(r"\b(static|extern|typedef)\b", st):
            continue
        head = st.split("=", 1)[0].strip()
        m = re.search(r"\s\**(\w+)\s*(\[[^\]]*\]\s*)*$", head)
        if m and m.group(1) not in KEYWORDS:
            names.add(m.group(1))
    return names


def unit_texts(root, part):
    """{unit: (stripped text of its .c, stripped text of its .h)}."""
    out = {}
    for fn in part_files(root, part):
        with open(os.path.join(root, part, fn), encoding="utf-8", errors="replace") as f:
            text = strip_c(f.read())
        c, h = out.get(fn[:-2], ("", ""))
        out[fn[:-2]] = (text, h) if fn.endswith(".c") else (c, text)
    return out


def include_graph(root, rep):
    """units[part] = {unit: set of units of the same part it uses}, where a
    unit is x.c with its header x.h, and x uses y when x calls a function or
    names a variable that y.c (or y.h, inline) defines, or includes y.h of a
    header-only y; cross[(from, to)] = #includes between parts; via[part] =
    {(x, y): the names that make the edge}."""
    units, cross, via = {}, {}, {}
    for part in PARTS:
        texts = unit_texts(root, part)
        owner = {}
        for unit, (c, h) in texts.items():
            defs = external_definitions(c) | {n for n, _, _ in functions(h)}
            for name in defs:
                owner.setdefault(name, set()).add(unit)
        g = {u: set() for u in texts}
        via[part] = {}
        for unit, (c, h) in texts.items():
            own = external_definitions(c) | {n for n, _, _ in functions(c) + functions(h)}
            # a header uses what its inline bodies name; its prototypes use nothing
            body = "".join(ch for ch, inside in zip(h, braces(h)) if inside)
            for word in set(re.findall(r"\b[A-Za-z_]\w*\b", c + "\n" + body)) - own:
                for o in owner.get(word, ()):
                    if o != unit and len(owner[word]) == 1:
                        g[unit].add(o)
                        via[part].setdefault((unit, o), set()).add(word)
        for fn in part_files(root, part):
            with open(os.path.join(root, part, fn), encoding="utf-8", errors="replace") as f:
                text = f.read()
            unit = fn[:-2]
            if part == "lib" and re.search(r'^\s*#\s*include\s*[<"]mpi\.h[>"]', text, re.M):
                rep.error("lib/%s includes mpi.h: lib/ has no MPI (docs/architecture.md)" % fn)
            for inc in INCLUDE_RE.findall(text):
                found = find_header(root, part, inc)
                if found is None:
                    continue  # generated (cf_ops.h) or a system header in quotes
                to, inc = found
                cross[(part, to)] = cross.get((part, to), 0) + 1
                if to != part:
                    if to in PARTS and to not in MAY_INCLUDE[part]:
                        rep.error("%s/%s includes %s/%s: %s/ must not include %s/ (docs/architecture.md)"
                                  % (part, fn, to, inc, part, to))
                    continue
                target = inc[:-2]
                if target != unit and target in texts and not texts[target][0] \
                        and fn.endswith(".c"):
                    g[unit].add(target)
                    via[part].setdefault((unit, target), set()).add("#include \"%s\"" % inc)
        units[part] = g
    return units, cross, via


def plugin_includes(root):
    """{unit of plugin/: set of units of plugin/ whose header it includes},
    and [(file, header unit)] for each of those includes."""
    inc, lines = {}, []
    for fn in part_files(root, "plugin"):
        with open(os.path.join(root, "plugin", fn), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name in INCLUDE_RE.findall(text):
            found = find_header(root, "plugin", name)
            if found is None or found[0] != "plugin":
                continue
            target = found[1][:-2]
            if target != fn[:-2]:
                inc.setdefault(fn[:-2], set()).add(target)
                lines.append((fn, found[1]))
    return inc, lines


def plugin_modules(root, inc):
    """{unit: its module} for the units of plugin/ that belong to a module:
    each module the list registers (a plugin header the list includes, the
    descriptor type's aside), and a unit whose header is included by the
    files of one module alone (a module's own helper)."""
    owner = {u: u for u in inc.get(MODULE_LIST, ()) if u + ".h" != MODULE_TYPE}
    changed = True
    while changed:
        changed = False
        for u in sorted({t for ts in inc.values() for t in ts} - set(owner)):
            users = {owner.get(f) for f, ts in inc.items() if u in ts}
            if len(users) == 1 and None not in users:
                owner[u] = users.pop()
                changed = True
    return owner


def shared_by_modules(inc, owner):
    """{unit: modules} for the units not of a module whose header only
    files of two modules or more include: a helper they share, which goes
    beside the core (or to lib), not a door from one module into another."""
    out = {}
    for u in sorted({t for ts in inc.values() for t in ts} - set(owner)):
        users = {owner.get(f) for f, ts in inc.items() if u in ts}
        if None not in users and len(users) > 1:
            out[u] = sorted(users)
    return out


def check_modules(root, units, via, rep):
    """A module never includes another module's header nor uses what another
    module defines (docs/architecture.md, "What each room may touch")."""
    inc, lines = plugin_includes(root)
    owner = plugin_modules(root, inc)
    for u, mods in shared_by_modules(inc, owner).items():
        rep.error("plugin/%s.h is included by the modules %s alone: put what they share beside the core "
                  "(docs/architecture.md)" % (u, ", ".join(mods)))
    for fn, header in lines:
        mine, theirs = owner.get(fn[:-2]), owner.get(header[:-2])
        if mine and theirs and mine != theirs:
            rep.error("plugin/%s includes plugin/%s: the module %s includes the module %s's header; reach it "
                      "through the core or a hook of the list (docs/architecture.md)" % (fn, header, mine, theirs))
    for u, vs in sorted(units.get("plugin", {}).items()):
        for v in sorted(vs):
            mine, theirs = owner.get(u), owner.get(v)
            if mine and theirs and mine != theirs:
                rep.error("plugin/%s uses %s of plugin/%s: the module %s uses the module %s (docs/architecture.md)"
                          % (u, ", ".join(sorted(via["plugin"][(u, v)])[:4]), v, mine, theirs))
    return owner


def check_core(root, owner, graph, via, rep):
    """The core names no module: no file of the core (nor the wrappers it
    generates) includes a module's header; every unit of plugin/ is a module
    of the list or the core's, not both (docs/architecture.md, "What each
    room may touch")."""
    inc, lines = plugin_includes(root)
    core = set(CORE) | set(SERVICES)
    units = sorted({fn[:-2] for fn in part_files(root, "plugin")})
    for u in units:
        if u == MODULE_LIST:
            continue
        if u in owner and u in core:
            rep.error("plugin/%s is a module of the list (%s) and listed as the core's in tests/check_shape.py"
                      % (u, owner[u]))
        elif u not in owner and u not in core:
            rep.error("plugin/%s is neither a module of the list nor the core's: register it in plugin/%s.c, or "
                      "add it to CORE or SERVICES of tests/check_shape.py and to docs/architecture.md"
                      % (u, MODULE_LIST))
    gen = os.path.join(root, "plugin", GENERATOR)
    if os.path.isfile(gen):
        with open(gen, encoding="utf-8", errors="replace") as f:
            for name in GEN_INCLUDE_RE.findall(f.read()):
                found = find_header(root, "plugin", name)
                if found is not None and found[0] == "plugin":
                    lines.append((GENERATOR, found[1]))
    n = 0
    for fn, header in lines:
        mine, theirs = fn[:-2], owner.get(header[:-2])
        if fn == GENERATOR:
            mine = None
        elif mine == MODULE_LIST or mine in owner:
            continue
        n += 1
        if theirs:
            what = "the wrappers it writes include" if fn == GENERATOR else "the core includes"
            rep.error("plugin/%s includes plugin/%s: %s the module %s's header; the core names no module "
                      "(what the hot path needs inline goes in a header of the core, as cf_site.h; "
                      "docs/architecture.md)" % (fn, header, what, theirs))
    # nor calls one: what the core's inline code calls lives in the core
    for u in sorted(core):
        for v in sorted(graph.get("plugin", {}).get(u, ())):
            if v in owner:
                rep.error("plugin/%s uses %s of plugin/%s: the core calls the module %s; the core names no module "
                          "(move what the core calls beside it; docs/architecture.md)"
                          % (u, ", ".join(sorted(via["plugin"][(u, v)])[:4]), v, owner[v]))
    return n


def sccs(g):
    """Strongly connected components (Tarjan), those of more than one unit."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(out)


def a_cycle(g, comp):
    """One cycle through the first unit of a component, as a path."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(g[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


# ---- functions ----

_STRIPPED = {}


def strip_c(text):
    """Comments, strings and preprocessor lines blanked, newlines kept."""
    if text not in _STRIPPED:
        _STRIPPED[text] = _strip_c(text)
        _STRIPPED[_STRIPPED[text]] = _STRIPPED[text]
    return _STRIPPED[text]


def _strip_c(text):
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        at_line_start = c == "\n"
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(s, i, step, opening, closing):
    """Where the bracket at s[i] is closed, walking by step (-1: backwards)."""
    depth = 0
    while 0 <= i < len(s):
        if s[i] == opening:
            depth += 1
        elif s[i] == closing:
            depth -= 1
            if depth == 0:
                break
        i += step
    return i


_FUNCTIONS = {}


def functions(text):
    """(name, first line, last line) of each function definition."""
    if text not in _FUNCTIONS:
        _FUNCTIONS[text] = _functions(strip_c(text))
    return _FUNCTIONS[text]


def _functions(s):
    found = []
    depth = 0
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "{":
            if depth == 0:
                # a definition: ") {" after the parameter list, not "= {"
                j = i - 1
                while j >= 0 and s[j].isspace():
                    j -= 1
                if j >= 0 and s[j] == ")":
                    k = matching(s, j, -1, ")", "(") - 1
                    while k >= 0 and s[k].isspace():
                        k -= 1
                    end = k + 1
                    while k >= 0 and (s[k].isalnum() or s[k] == "_"):
                        k -= 1
                    name = s[k + 1:end]
                    if name and not name[0].isdigit() and name not in ("if", "while", "for", "switch", "sizeof"):
                        first = s.count("\n", 0, k + 1) + 1
                        e = matching(s, i, 1, "{", "}")
                        last = s.count("\n", 0, e) + 1
                        found.append((name, first, last))
                        i = e + 1
                        continue
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        i += 1
    return found


def long_functions(root):
    out = []
    for part in PARTS:
        for fn in part_files(root, part):
            if not fn.endswith(".c"):
                continue
            with open(os.path.join(root, part, fn), encoding="utf-8", errors="replace") as f:
                text = f.read()
            for name, first, last in functions(text):
                length = last - first + 1
                if length > MAX_LINES:
                    out.append(("%s/%s" % (part, fn), name, length))
    return out


# ---- baseline ----

def read_baseline(root, path, rep):
    circles, funcs = [], {}
    if not path or not os.path.exists(path):
        return circles, funcs
    shown = os.path.relpath(path, root)
    with open(path) as f:
        for no, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if words[0] == "circle" and len(words) >= 4:
                circles.append((words[1].rstrip("/:"), sorted(words[2:])))
            elif words[0] == "function" and len(words) == 4 and words[3].isdigit():
                funcs.setdefault(words[2], []).append((words[1], int(words[3])))
            else:
                rep.error("%s:%d: not a baseline line (circle PART UNIT UNIT...; function FILE NAME LINES)"
                          % (shown, no))
    return circles, funcs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--baseline", default=None, help="default: ROOT/tests/shape_baseline.txt")
    ap.add_argument("--graph", action="store_true", help="print the include graph of each part")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    baseline = a.baseline or os.path.join(root, "tests", "shape_baseline.txt")
    if not os.path.isdir(os.path.join(root, "lib")):
        print("check_shape: %s is not a commfit source tree (no lib/)" % root, file=sys.stderr)
        return 2
    rep = Report()
    known_circles, known_funcs = read_baseline(root, baseline, rep)

    ncite = check_citations(root, rep)

    units, cross, via = include_graph(root, rep)
    circles = {part: sccs(g) for part, g in units.items()}
    owner = check_modules(root, units, via, rep)
    ncore = check_core(root, owner, units, via, rep)
    if a.graph:
        for part in PARTS:
            g = units[part]
            print("%s/: %d units, %d edges (x -> y: x calls or names what y defines)"
                  % (part, len(g), sum(len(v) for v in g.values())))
            for u in sorted(g):
                if g[u]:
                    print("  %-22s -> %s" % (u, " ".join(sorted(g[u]))))
        mods = {}
        for u, m in owner.items():
            mods.setdefault(m, []).append(u)
        print("plugin/ modules (%s.c): %s" % (MODULE_LIST, ", ".join(
            "+".join([m] + sorted(set(us) - {m})) for m, us in sorted(mods.items()))))
        print("plugin/ core: %s; its services: %s" % (", ".join(sorted(CORE)), ", ".join(sorted(SERVICES))))
        print("between parts (includes): " + ", ".join(
            "%s -> %s %d" % (f, t, n) for (f, t), n in sorted(cross.items()) if f != t))
        for part in PARTS:
            if not circles[part]:
                print("%s/: no circle" % part)
            for comp in circles[part]:
                print("%s/: circle of %d files: %s" % (part, len(comp), " -> ".join(a_cycle(units[part], comp))))
                print("  members: %s" % " ".join(comp))
                for u in comp:
                    for v in sorted(units[part][u] & set(comp)):
                        names = sorted(via[part][(u, v)])
                        print("    %s -> %s: %s%s" % (u, v, ", ".join(names[:4]),
                                                      " ..." if len(names) > 4 else ""))
    used = set()
    for part in PARTS:
        for comp in circles[part]:
            home = [i for i, (p, c) in enumerate(known_circles) if p == part and set(comp) <= set(c)]
            if home:
                used.update(home)
                if comp != known_circles[home[0]][1]:
                    rep.note("%s/: the known circle of %d files is now %d: %s (update tests/shape_baseline.txt)"
                             % (part, len(known_circles[home[0]][1]), len(comp), " ".join(comp)))
                continue
            grew = [c for p, c in known_circles if p == part and set(c) < set(comp)]
            what = ("the known circle %s grew to" % " ".join(grew[0])) if grew else "new circle of files:"
            rep.error("%s/: %s %s (each uses the next; cut one edge)"
                      % (part, what, " -> ".join(a_cycle(units[part], comp))))
    for i, (part, comp) in enumerate(known_circles):
        if i not in used:
            rep.note("%s/: the circle %s is gone: remove its line from tests/shape_baseline.txt"
                     % (part, " ".join(comp)))

    longs = long_functions(root)
    seen = set()
    for fn, name, length in longs:
        entries = known_funcs.get(name, [])
        entry = next((e for e in entries if e[0] == fn), entries[0] if entries else None)
        if entry is None:
            rep.error("%s: %s() is %d lines, over the limit of %d (cut it where its comments put headings)"
                      % (fn, name, length, MAX_LINES))
            continue
        seen.add(name)
        if length > entry[1]:
            rep.error("%s: %s() grew from %d to %d lines (limit %d; the baseline holds only what exists)"
                      % (fn, name, entry[1], length, MAX_LINES))
        elif length < entry[1]:
            rep.note("%s: %s() is down from %d to %d lines: lower its line in tests/shape_baseline.txt"
                     % (fn, name, entry[1], length))
    for name, entries in sorted(known_funcs.items()):
        if name not in seen:
            rep.note("%s: %s() is no longer over %d lines (or gone): remove its line from tests/shape_baseline.txt"
                     % (entries[0][0], name, MAX_LINES))

    for msg in rep.notes:
        print("check_shape: warning: " + msg)
    for msg in rep.errors:
        print("check_shape: FAIL: " + msg)
    print("check_shape: %d citations, %d circles (%d known), %d functions over %d lines (%d known), "
          "%d includes of the core none of a module, %d modules none using another: %s"
          % (ncite, sum(len(c) for c in circles.values()), len(known_circles),
             len(longs), MAX_LINES, len(known_funcs), ncore, len(set(owner.values())),
             "FAIL" if rep.errors else "ok"))
    return 1 if rep.errors else 0


if __name__ == "__main__":
    sys.exit(main())
