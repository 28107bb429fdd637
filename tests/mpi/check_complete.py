#!/usr/bin/env python3
"""Fails when the MPI library declares a function commfit neither wraps nor lists as local.

usage: check_complete.py HEADER SPEC LIST [FORTRAN_LIB PLUGIN_SYMBOLS]
  HEADER  the library's mpi.h, preprocessed (MPICC -E -P of '#include <mpi.h>': the files it
          includes, such as MPICH's mpi_proto.h and mpio.h, are in it)
  SPEC    plugin/mpi_calls.spec: the wrapped functions, with the forms generated from it
  LIST    plugin/mpi_local_calls.txt: names or shell patterns of the functions not wrapped;
          lines "fortran: NAME" name wrapped functions whose Fortran binding is not
  FORTRAN_LIB, PLUGIN_SYMBOLS  the symbols the library's mpif.h bindings define and those the
          plugin exports (nm -D --defined-only), for a library whose Fortran bindings pass the
          C wrappers by (Open MPI): each binding of a wrapped function must be wrapped too
"""
import fnmatch
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugin"))
import gen_wrappers  # noqa: E402

# a declaration: a return type, the name, its parameters (one level of nested parentheses) and ';'
DECL = re.compile(r"[\w*\s]\b(MPI_[A-Z][A-Za-z0-9_]*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*"
                  r"(?:__attribute__\s*\(\(.*?\)\)\s*)*;")


def read_list(path):
    names, patterns, fortran = set(), [], set()
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("fortran:"):
                fortran.add(line.split(":", 1)[1].strip())
                continue
            if not re.match(r"^MPI_[\w*?]+$", line):
                sys.exit("%s: %r is not an MPI function name or pattern" % (path, line))
            (patterns.append(line) if any(c in line for c in "*?") else names.add(line))
    return names, patterns, fortran


def symbols(path):
    """Defined symbols of an nm -D --defined-only listing."""
    with open(path) as f:
        return {x.split()[-1] for x in f if len(x.split()) >= 3}


def main():
    if len(sys.argv) not in (4, 6):
        sys.exit(__doc__.strip())
    with open(sys.argv[1]) as f:
        declared = set(DECL.findall(f.read()))
    wrapped = {e["name"] for e in gen_wrappers.parse(sys.argv[2])}
    names, patterns, fortran = read_list(sys.argv[3])
    if len(declared) < 100:
        sys.exit("%s: only %d MPI functions found: not a preprocessed mpi.h?" % (sys.argv[1], len(declared)))
    missing = sorted(n for n in declared - wrapped
                     if n not in names and not any(fnmatch.fnmatchcase(n, p) for p in patterns))
    both = sorted(names & wrapped)
    print("%d MPI functions declared, %d of them wrapped (%d in the spec), %d listed as not wrapped"
          % (len(declared), len(declared & wrapped), len(wrapped), len(declared - wrapped) - len(missing)))
    for n in missing:
        print("FAIL %s: declared by the library, neither wrapped (%s) nor listed (%s)"
              % (n, sys.argv[2], sys.argv[3]))
    for n in both:
        print("FAIL %s: wrapped, yet listed as not wrapped in %s" % (n, sys.argv[3]))
    bad = len(missing) + len(both)
    if len(sys.argv) == 6:
        lib, plugin = symbols(sys.argv[4]), symbols(sys.argv[5])
        by_lower = {n.lower(): n for n in wrapped}
        bound = sorted(by_lower[x[:-1]] for x in lib if x.endswith("_") and not x.endswith("__") and x[:-1] in by_lower)
        unwrapped = [n for n in bound if n.lower() + "_" not in plugin and n not in fortran]
        stale = sorted(n for n in fortran if n.lower() + "_" in plugin)
        print("%d wrapped functions have a Fortran binding in %s: %d wrapped from Fortran, %d listed as not"
              % (len(bound), sys.argv[4], len(bound) - len(unwrapped) - len(fortran & set(bound)),
                 len(fortran & set(bound))))
        for n in unwrapped:
            print("FAIL %s: its Fortran binding %s_ is neither wrapped nor listed (fortran: %s)" % (n, n.lower(), n))
        for n in stale:
            print("FAIL %s: its Fortran binding is wrapped, yet listed as not" % n)
        bad += len(unwrapped) + len(stale)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
