#!/usr/bin/env bash
# Set up, build and either run the demo or the whole test suite.
#   ./bootstrap.sh demo   install what is missing, build, run the demo
#   ./bootstrap.sh test   install what is missing, build, run every test, then
#                         the MPI tests again against MPICH (build-mpich)
#   ./bootstrap.sh bench  also install what the benchmarks need (NetPIPE, mpiP's
#                         build dependencies), build, run make bench-ir
# Builds out of tree in ./build (Open MPI) and ./build-mpich.  Needs Debian 12 (or a machine with the
# packages below) and root or sudo for the package step.
set -euo pipefail
cd "$(dirname "$0")"
top=$PWD
what=${1:-demo}
case "$what" in demo|test|bench) ;; *) echo "usage: $0 demo|test|bench" >&2; exit 2 ;; esac

packages=(gcc gfortran make autoconf automake libtool pkg-config python3 openmpi-bin libopenmpi-dev mpich libmpich-dev
          libjansson-dev libcmocka-dev libucx-dev libpapi-dev iproute2 procps libjs-chart.js chromium
          binutils python3-torch python3-mpi4py valgrind slurm-wlm munge lammps lammps-examples)
# bench-netpipe runs NetPIPE; tests/bench/build_mpip.sh builds mpiP with libbfd and libunwind
[ "$what" = bench ] && packages+=(netpipe-openmpi binutils-dev libunwind-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    echo "== installing: ${missing[*]}"
    "${sudo[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# mpirun refuses root unless told; CI and containers run as root
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
werror=()
[ "${CI:-}" = true ] && werror=(--enable-werror)

echo "== building"
autoreconf -fi > /dev/null
mkdir -p build
cd build
[ -f Makefile ] && [ ../configure -ot Makefile ] || ../configure --quiet "${werror[@]}" PYTHON=python3
make -j"$(nproc)" > make.log 2>&1 || { tail -50 make.log; exit 1; }

if [ "$what" = demo ]; then
    export COMMFIT_LIB=$PWD/.libs/libcommfit.so
    commfit=./tools/commfit
    launch=(mpirun --oversubscribe --bind-to none -np 4 --mca btl self,vader,tcp --mca pml ob1)
    train=(./examples/dp_train --model tiny --steps 30 --region --compute-us 1000)
    echo "== demo 1/3: a data-parallel training loop on 4 ranks, one allreduce per gradient tensor"
    "$commfit" run -o demo-per-tensor.json -- "${launch[@]}" "${train[@]}"
    echo
    echo "== demo 2/3: commfit report build/demo-per-tensor.json"
    "$commfit" report demo-per-tensor.json
    bucket=$("$commfit" report --format json demo-per-tensor.json | python3 -c '
import json, sys
a = [x for x in json.load(sys.stdin)["advice"] if x["op"] == "MPI_Allreduce" and x["verdict"] == "fuse"]
print(a[0]["bucket_bytes"] if a else 0)')
    if [ "$bucket" != 0 ]; then
        echo
        echo "== demo 3/3: the same loop with the advised $bucket-byte buckets, and what changed"
        "$commfit" run -q -o demo-bucketed.json -- "${launch[@]}" "${train[@]}" --bucket "$bucket"
        "$commfit" diff demo-per-tensor.json demo-bucketed.json
    fi
    exit 0
fi

if [ "$what" = bench ]; then
    echo "== make bench-ir (instructions per call: the same figures on a busy machine)"
    make bench-ir
    echo
    echo "the others want a quiet machine (docs/benchmarks.md): make -C build bench-netpipe,"
    echo "bench-fusion, bench-tools, bench; against mpiP: bash tests/bench/build_mpip.sh MPIP_SOURCE DIR,"
    echo "then make -C build bench-ir MPIP_LIB=DIR/lib/libmpiP.so"
    exit 0
fi

# run_suite DIR CONFIGURE_ARGS...: configure in DIR if needed, build, run its tests
run_suite() {
    local dir=$1; shift
    mkdir -p "$top/$dir"
    cd "$top/$dir"
    [ -f Makefile ] && [ ../configure -ot Makefile ] || ../configure --quiet "${werror[@]}" PYTHON=python3 "$@"
    # the build in parallel, the tests one at a time: several of them time
    # messages, and two cores shared by concurrent jobs would only add noise
    make -j"$(nproc)" check TESTS= > check-build.log 2>&1 || { tail -50 check-build.log; return 1; }
    local rc=0
    make check > check.log 2>&1 || rc=$?
    grep -E "^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):" check.log || true
    if [ $rc -ne 0 ]; then
        for log in $(grep -l -E "^:test-result: (FAIL|ERROR)" $(find . -name '*.trs')); do
            echo "---- $dir/${log%.trs}.log"; tail -40 "${log%.trs}.log"
        done
    fi
    return $rc
}

status=0
echo "== running the test suite (Open MPI)"
run_suite build || status=$?
echo "== running the MPI tests under MPICH"
run_suite build-mpich MPICC=mpicc.mpich || status=$?
cd "$top"
# the totals of the two runs (not every .trs: a test dropped from a list leaves its old one)
cat build/check.log build-mpich/check.log 2>/dev/null | awk '
    /^# PASS:/ { p += $3 } /^# (FAIL|ERROR|XPASS):/ { f += $3 } /^# SKIP:/ { s += $3 }
    END { printf "commfit: %d passed, %d failed, %d skipped\n", p, f, s }'

exit $status
