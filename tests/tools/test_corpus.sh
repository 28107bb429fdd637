#!/bin/sh
# The analysis against the recorded corpus (tests/corpus/<case>/): profiles
# of ping-pong and allreduce sweeps on shared memory, UCX, TCP loopback and
# tbf-shaped links between emulated nodes, NetPIPE and LAMMPS, each with the
# times its program measured itself in the same run.  `commfit report` must
# predict those times per size bin, find the shaped links' payload rates,
# give the verdicts the physics gives, agree with NetPIPE on the reference
# link, and advise an application nothing it would lose by.  No MPI job runs
# here: the profiles are checked in (tests/corpus/record.sh re-records them).
# CORPUS_CASES="case ..." limits the run to some cases; CORPUS_VERBOSE=1 prints
# every size bin next to its truth.
corpus="$CF_SRCDIR/tests/corpus"
[ -d "$corpus" ] || { echo "FAIL: no corpus at $corpus"; exit 1; }
v=
[ "${CORPUS_VERBOSE:-0}" = 1 ] && v=-v
# shellcheck disable=SC2086
exec "$CF_PYTHON" "$CF_SRCDIR/tests/tools/check_corpus.py" $v "$CF_BUILDDIR/tools/commfit" "$corpus" ${CORPUS_CASES:-}
