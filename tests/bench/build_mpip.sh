#!/usr/bin/env bash
# Builds mpiP (LLNL's lightweight MPI profiler) from a copy of its public
# sources, for bench-ir's comparison column.  Nothing of it enters this
# repository: the sources and the build stay where the arguments say.
# Usage: tests/bench/build_mpip.sh SRC_DIR PREFIX
#   SRC_DIR  mpiP's sources (a checkout or an unpacked release)
#   PREFIX   where it is installed: PREFIX/lib/libmpiP.so
# Needs mpicc and, from Debian, binutils-dev libunwind-dev (libbfd for
# source lookup, libunwind for its stack traces).  Then:
#   make bench-ir MPIP_LIB=PREFIX/lib/libmpiP.so MPIP="-k 0"
set -eu
[ $# -eq 2 ] || { echo "usage: $0 SRC_DIR PREFIX" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"
prefix=$(cd "$2" && pwd)
[ -x "$src/configure" ] || { echo "$src: no mpiP configure script" >&2; exit 2; }
case "$prefix/" in "$(cd "$(dirname "$0")/../.." && pwd)/"*)
    echo "$prefix: inside the repository; build mpiP outside it" >&2; exit 2 ;; esac
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
# mpiP builds in its source tree: work on a copy
cp -a "$src/." "$build/"
cd "$build"
# the MPI compiler wrappers (configure checks the Fortran symbol style: mpifort,
# or gfortran; its Fortran wrappers do not build without their translation)
./configure --prefix="$prefix" --with-cc=mpicc --with-cxx=mpicxx \
    CC=mpicc CXX=mpicxx F77="$(command -v mpifort || echo gfortran)" > configure.log 2>&1 ||
    { tail -20 configure.log >&2; exit 1; }
# its wrapper generator names the builder from LOGNAME
export LOGNAME="${LOGNAME:-$(id -un)}"
make -j2 shared > make.log 2>&1 || { tail -30 make.log >&2; exit 1; }
mkdir -p "$prefix/lib"
cp libmpiP.so "$prefix/lib/"
echo "$prefix/lib/libmpiP.so"
