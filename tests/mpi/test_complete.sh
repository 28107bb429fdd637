#!/bin/sh
# Every function the MPI library's mpi.h declares is wrapped (generated
# from plugin/mpi_calls.spec) or on the documented list of calls that move
# no data (plugin/mpi_local_calls.txt); with Open MPI, so is the Fortran
# binding of every wrapped function.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
printf '#include <mpi.h>\n' >"$cf_tmp/h.c"
$CF_MPICC -E -P "$cf_tmp/h.c" >"$cf_tmp/mpi.h" || cf_fail "cannot preprocess mpi.h with $CF_MPICC"
fortran=()
# Open MPI's Fortran bindings call PMPI_: each binding of a wrapped function must be wrapped too
if [ "$CF_MPI_FAMILY" = openmpi ] && [ -n "$CF_MPIFC" ]; then
    printf "      program t\n      include 'mpif.h'\n      integer ierr\n      call MPI_Init(ierr)\n      end\n" \
        > "$cf_tmp/t.f"
    $CF_MPIFC -o "$cf_tmp/t" "$cf_tmp/t.f" || cf_fail "cannot build a Fortran program with $CF_MPIFC"
    lib=$(ldd "$cf_tmp/t" | awk '$1 ~ /^libmpi_mpifh/ { print $3 }')
    [ -n "$lib" ] || cf_fail "no libmpi_mpifh in the Fortran program"
    nm -D --defined-only "$lib" > "$cf_tmp/fortran.sym"
    nm -D --defined-only "$COMMFIT_LIB" > "$cf_tmp/plugin.sym"
    fortran=("$cf_tmp/fortran.sym" "$cf_tmp/plugin.sym")
fi
"$CF_PYTHON" "$CF_SRCDIR/tests/mpi/check_complete.py" "$cf_tmp/mpi.h" "$CF_SRCDIR/plugin/mpi_calls.spec" \
    "$CF_SRCDIR/plugin/mpi_local_calls.txt" "${fortran[@]}" || cf_fail "functions neither wrapped nor listed"
