#!/usr/bin/env bash
# Builds mpiP (LLNL's lightweight MPI profiler) from its public sources, for
# the comparison columns of make bench-mpip and make bench-ir.  Nothing of it
# enters this repository: the sources and the build stay where the arguments say.
# Usage: tests/bench/build_mpip.sh SRC PREFIX
#   SRC     mpiP's sources: a checkout or an unpacked release; a git repository
#           (a clone or a bare mirror: its HEAD, or MPIP_REV=3.5 for a tag); or
#           a URL that git clones (https://github.com/LLNL/mpiP.git, with MPIP_REV)
#           (the 3.5 release does not build against binutils 2.39 or later; its
#           main branch, 3.5-18-g8ff38c3, does)
#   PREFIX  where it is installed: PREFIX/lib/libmpiP.so
# Needs mpicc, python3 (mpiP generates its wrappers), git for a repository
# or URL, and from Debian binutils-dev libunwind-dev (libbfd for source
# lookup, libunwind for its stack traces).  Then:
#   make bench-mpip MPIP_LIB=PREFIX/lib/libmpiP.so
#   make bench-ir MPIP_LIB=PREFIX/lib/libmpiP.so MPIP="-k 0"
set -eu
[ $# -eq 2 ] || { echo "usage: $0 SRC PREFIX" >&2; exit 2; }
src=$1
prefix=$(realpath -m "$2")
case "$prefix/" in "$(cd "$(dirname "$0")/../.." && pwd)/"*)
    echo "$prefix: inside the repository; build mpiP outside it" >&2; exit 2 ;; esac
need=()
for t in mpicc python3; do command -v $t >/dev/null || need+=("$t"); done
for h in bfd.h libunwind.h; do
    echo "#include <$h>" | mpicc -E -x c - >/dev/null 2>&1 || need+=("<$h>")
done
[ ${#need[@]} -eq 0 ] || {
    echo "building mpiP needs ${need[*]} (Debian: apt-get install binutils-dev libunwind-dev)" >&2; exit 2; }
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
# mpiP builds in its source tree: work on a copy
if [ -d "$src" ] && [ -x "$src/configure" ]; then
    cp -a "$src/." "$build/"
    what="$src"
elif [ -d "$src" ] && { [ -e "$src/.git" ] ||
    [ "$(git -C "$src" rev-parse --is-bare-repository 2>/dev/null)" = true ]; }; then
    rev=${MPIP_REV:-HEAD}
    git -C "$src" rev-parse -q --verify "$rev^{commit}" >/dev/null ||
        { echo "$src: no revision $rev to build" >&2; exit 2; }
    git -C "$src" archive --format=tar "$rev" | tar -x -C "$build"
    what="$src at $(git -C "$src" describe --tags --always "$rev")"
elif [ ! -e "$src" ] && case $src in *://* | *@*:*) true ;; *) false ;; esac; then
    command -v git >/dev/null || { echo "cloning $src needs git" >&2; exit 2; }
    git clone --quiet --depth 1 ${MPIP_REV:+--branch "$MPIP_REV"} "$src" "$build" ||
        { echo "$src: could not clone it (give a local copy of mpiP's sources instead)" >&2; exit 2; }
    what="$src at $(git -C "$build" rev-parse --short HEAD)"
else
    echo "$src: neither mpiP's sources (no configure script), a git repository nor a URL" >&2; exit 2
fi
[ -x "$build/configure" ] || { echo "$src: no mpiP configure script" >&2; exit 2; }
cd "$build"
# the MPI compiler wrappers (configure checks the Fortran symbol style: mpifort,
# or gfortran; its Fortran wrappers do not build without their translation)
./configure --prefix="$prefix" --with-cc=mpicc --with-cxx=mpicxx \
    CC=mpicc CXX=mpicxx F77="$(command -v mpifort || echo gfortran)" > configure.log 2>&1 ||
    { tail -20 configure.log >&2; exit 1; }
# its wrapper generator names the builder from LOGNAME
export LOGNAME="${LOGNAME:-$(id -un)}"
make -j2 shared > make.log 2>&1 || { tail -30 make.log >&2; exit 1; }
mkdir -p "$prefix/lib" || exit 2
cp libmpiP.so "$prefix/lib/"
echo "mpiP from $what" > "$prefix/lib/libmpiP.source"
echo "$prefix/lib/libmpiP.so"
