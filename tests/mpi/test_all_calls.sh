#!/bin/sh
# Every wrapped call beyond the basic ones (tests/mpi/all_calls.c: MPI-IO,
# one-sided, neighbourhood collectives, matched probes, cancel, and the
# MPI-4 calls when the library has them): exact calls and bytes per
# operation against the program's own tally, on 2 ranks and, launched by
# `commfit run`, on 4; file I/O kept apart from the network in the analysis.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
COMMFIT_OUTPUT="$cf_tmp/all2.json" COMMFIT_SUMMARY=0 \
    cf_mpirun 2 -- "$CF_BUILDDIR/tests/mpi/all_calls" "$cf_tmp" >"$cf_tmp/tally2.txt" || cf_fail "job on 2 ranks failed"
if [ "$CF_MPI_FAMILY" = mpich ]; then
    launch=("$CF_MPIRUN" -n 4)
else
    launch=("$CF_MPIRUN" --oversubscribe --bind-to none -np 4 --mca btl self,vader,tcp --mca pml ob1)
    [ "$(id -u)" = 0 ] && launch+=(--allow-run-as-root)
fi
"$commfit" run -q -o "$cf_tmp/all4.json" -- "${launch[@]}" "$CF_BUILDDIR/tests/mpi/all_calls" "$cf_tmp" \
    >"$cf_tmp/tally4.txt" || cf_fail "commfit run of 4 ranks failed"
for np in 2 4; do
    "$commfit" report --format json "$cf_tmp/all$np.json" >"$cf_tmp/report$np.json" || cf_fail "report of $np ranks"
    cf_check tally "$cf_tmp/all$np.json" "$np" "$cf_tmp/tally$np.txt" "$cf_tmp/report$np.json" ||
        cf_fail "profile of $np ranks"
done
