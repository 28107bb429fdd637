#!/usr/bin/env python3
"""Fails when the MPI library declares a function commfit neither wraps nor lists as local.

usage: check_complete.py HEADER SPEC LIST
  HEADER  the library's mpi.h, preprocessed (MPICC -E -P of '#include <mpi.h>': the files it
          includes, such as MPICH's mpi_proto.h and mpio.h, are in it)
  SPEC    plugin/mpi_calls.spec: the wrapped functions, with the forms generated from it
  LIST    plugin/mpi_local_calls.txt: names or shell patterns of the functions not wrapped
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
    names, patterns = set(), []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if not re.match(r"^MPI_[\w*?]+$", line):
                sys.exit("%s: %r is not an MPI function name or pattern" % (path, line))
            (patterns.append(line) if any(c in line for c in "*?") else names.add(line))
    return names, patterns


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip())
    with open(sys.argv[1]) as f:
        declared = set(DECL.findall(f.read()))
    wrapped = {e["name"] for e in gen_wrappers.parse(sys.argv[2])}
    names, patterns = read_list(sys.argv[3])
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
    sys.exit(1 if missing or both else 0)


if __name__ == "__main__":
    main()
