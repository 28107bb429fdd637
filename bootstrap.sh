#!/usr/bin/env bash
# Set up, build and either run the demo or the whole test suite.
#   ./bootstrap.sh demo   install what is missing, build, run the demo
#   ./bootstrap.sh test   install what is missing, build, run every test
# Builds out of tree in ./build.  Needs Debian 12 (or a machine with the
# packages below) and root or sudo for the package step.
set -euo pipefail
cd "$(dirname "$0")"
top=$PWD
what=${1:-demo}
case "$what" in demo|test) ;; *) echo "usage: $0 demo|test" >&2; exit 2 ;; esac

packages=(gcc make autoconf automake libtool pkg-config python3 openmpi-bin libopenmpi-dev
          libjansson-dev libcmocka-dev libucx-dev libpapi-dev iproute2 procps)
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
    echo "== demo: a data-parallel training loop on 4 ranks, one allreduce per gradient tensor"
    export COMMFIT_LIB=$PWD/.libs/libcommfit.so
    ./tools/commfit run -o demo-profile.json -- mpirun --oversubscribe --bind-to none -np 4 \
        --mca btl self,vader,tcp --mca pml ob1 ./examples/dp_train --model small --steps 20
    if ./tools/commfit --help | grep -q "^  report"; then
        echo "== commfit report build/demo-profile.json"
        ./tools/commfit report demo-profile.json
    fi
    exit 0
fi

echo "== running the test suite"
status=0
# the build in parallel, the tests one at a time: several of them time
# messages, and two cores shared by concurrent jobs would only add noise
make -j"$(nproc)" check TESTS= > check-build.log 2>&1 || { tail -50 check-build.log; exit 1; }
make check > check.log 2>&1 || status=$?
grep -E "^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):" check.log || true
if [ $status -ne 0 ]; then
    for log in $(grep -l -E "^:test-result: (FAIL|ERROR)" $(find . -name '*.trs')); do
        echo "---- ${log%.trs}.log"; tail -40 "${log%.trs}.log"
    done
fi
find . -name '*.trs' -exec cat {} + | awk '
    /^:test-result: PASS/ { p++ } /^:test-result: (FAIL|ERROR|XPASS)/ { f++ } /^:test-result: SKIP/ { s++ }
    END { printf "commfit: %d passed, %d failed, %d skipped\n", p, f, s }'

exit $status
