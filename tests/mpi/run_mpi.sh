# Helpers for the MPI integration tests (sourced).  Needs tests/env.sh.
set -u
# the inline Python scripts share tests/checks.py
export PYTHONPATH="$CF_SRCDIR/tests${PYTHONPATH:+:$PYTHONPATH}"
# ok, bad and cf_done: the shell tests' checks
. "$CF_SRCDIR/tests/checks.sh"
CF_NP_DEFAULT=${CF_NP_DEFAULT:-2}
cf_tmp=$(mktemp -d "${TMPDIR:-/tmp}/commfit-test.XXXXXX")
trap 'rm -rf "$cf_tmp"' EXIT

# cf_mpirun NP [mpirun options] -- PROGRAM ARGS: runs NP ranks with the plugin preloaded
# (MPICH's launcher passes the whole environment on; Open MPI's gets -x for each variable)
cf_mpirun() {
    local np=$1; shift
    local opts=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    if [ "$CF_MPI_FAMILY" = mpich ]; then
        "$CF_MPIRUN" -n "$np" -genv LD_PRELOAD "$COMMFIT_LIB" "${opts[@]}" "$@"
        return
    fi
    local root=() fwd=() v
    [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
    for v in $(env | sed -n 's/^\(COMMFIT_[A-Z_]*\)=.*/\1/p'); do fwd+=(-x "$v"); done
    "$CF_MPIRUN" "${root[@]}" --oversubscribe --bind-to none -np "$np" \
        --mca btl self,vader,tcp --mca pml ob1 \
        -x LD_PRELOAD="$COMMFIT_LIB" "${fwd[@]}" "${opts[@]}" "$@"
}

# cf_mpirun_plain NP PROGRAM ARGS: the same without the plugin
cf_mpirun_plain() {
    local np=$1; shift
    if [ "$CF_MPI_FAMILY" = mpich ]; then
        "$CF_MPIRUN" -n "$np" "$@"
        return
    fi
    local root=()
    [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
    "$CF_MPIRUN" "${root[@]}" --oversubscribe --bind-to none -np "$np" --mca btl self,vader,tcp --mca pml ob1 "$@"
}

cf_check() { "$CF_PYTHON" "$CF_SRCDIR/tests/mpi/check_profile.py" "$@"; }
cf_fail() { echo "FAIL: $*" >&2; exit 1; }
