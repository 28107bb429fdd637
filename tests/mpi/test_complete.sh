#!/bin/sh
# Every function the MPI library's mpi.h declares is wrapped (generated
# from plugin/mpi_calls.spec) or on the documented list of calls that move
# no data (plugin/mpi_local_calls.txt).
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
printf '#include <mpi.h>\n' >"$cf_tmp/h.c"
$CF_MPICC -E -P "$cf_tmp/h.c" >"$cf_tmp/mpi.h" || cf_fail "cannot preprocess mpi.h with $CF_MPICC"
"$CF_PYTHON" "$CF_SRCDIR/tests/mpi/check_complete.py" "$cf_tmp/mpi.h" "$CF_SRCDIR/plugin/mpi_calls.spec" \
    "$CF_SRCDIR/plugin/mpi_local_calls.txt" || cf_fail "functions of mpi.h neither wrapped nor listed"
