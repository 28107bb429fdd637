#!/bin/sh
# Fortran programs are seen (tests/mpi/fortran_calls.F90, through `use mpi`,
# `use mpi_f08` and mpif.h): exact calls and bytes per operation against the
# program's own tally, with MPI_IN_PLACE, MPI_STATUS_IGNORE and
# MPI_STATUSES_IGNORE as Fortran passes them.  Open MPI's Fortran bindings
# call PMPI_ directly and get the plugin's Fortran wrappers, which must
# answer to every name gfortran gives a Fortran MPI call; MPICH's call the
# C functions.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
[ -n "$CF_MPIFC" ] || { echo "no MPI Fortran compiler: skipped"; exit 77; }
src="$CF_SRCDIR/tests/mpi/fortran_calls.F90"
$CF_MPIFC -cpp -DUSE_MODULE -o "$cf_tmp/fmod" "$src" || cf_fail "cannot build the use-mpi program"
$CF_MPIFC -cpp -DUSE_F08 -o "$cf_tmp/f08" "$src" || cf_fail "cannot build the use-mpi_f08 program"
# gfortran 12 refuses mpif.h's choice buffers of several types unless told
$CF_MPIFC -cpp -fallow-argument-mismatch -o "$cf_tmp/fh" "$src" || cf_fail "cannot build the mpif.h program"
# MPICH's mpi_f08 bindings call its internal (PMPI) functions: not seen there
progs="fmod fh f08"
[ "$CF_MPI_FAMILY" = mpich ] && progs="fmod fh"
for prog in $progs; do
    for np in 2 4; do
        COMMFIT_OUTPUT="$cf_tmp/$prog$np.json" COMMFIT_SUMMARY=0 \
            cf_mpirun "$np" -- "$cf_tmp/$prog" "$cf_tmp" >"$cf_tmp/$prog$np.txt" || cf_fail "$prog on $np ranks failed"
        cf_check tally "$cf_tmp/$prog$np.json" "$np" "$cf_tmp/$prog$np.txt" || cf_fail "profile of $prog on $np ranks"
    done
done
if [ "$CF_MPI_FAMILY" = openmpi ]; then
    # every Fortran wrapper under its five names: mpi_send_, mpi_send__ (-fsecond-underscore), mpi_send,
    # MPI_SEND, mpi_send_f08_
    nm -D --defined-only "$COMMFIT_LIB" | awk '$2 == "T" { print $3 }' | "$CF_PYTHON" -c '
import re, sys
names = set(sys.stdin.read().split())
base = sorted(n[:-1] for n in names if re.match(r"^mpi_[a-z_]+[a-z]_$", n))
missing = [b for b in base if not {b, b + "_", b + "__", b.upper(), b + "_f08_"} <= names]
print("%s %d Fortran wrappers, each under 5 names%s" % ("FAIL" if missing or len(base) < 50 else "ok  ", len(base),
      ": missing for " + " ".join(missing) if missing else ""))
sys.exit(1 if missing or len(base) < 50 else 0)' || cf_fail "Fortran names"
fi
