#!/bin/bash
# Files a job makes in a directory other users share (a 1777 scratch
# directory): as two real users, an attacker plants symbolic links and a
# spool under the names the victim's job will use.  The victim's files stay
# as they were, its parts go to a private spool it is told of, the spool is
# 0700 and the parts 0600, and merge takes no part of another user.
# Needs root (to make the two users); runs the jobs as the victim.
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to make two users"; exit 77; }
command -v useradd > /dev/null && command -v userdel > /dev/null && command -v runuser > /dev/null \
    || { echo "SKIP: useradd, userdel or runuser missing"; exit 77; }
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
attacker=cfattacker$$ victim=cfvictim$$
useradd -M -s /usr/sbin/nologin "$attacker" || { echo "SKIP: useradd failed"; exit 77; }
useradd -M -s /usr/sbin/nologin "$victim" || { userdel "$attacker"; echo "SKIP: useradd failed"; exit 77; }
trap 'userdel "$attacker" 2> /dev/null; userdel "$victim" 2> /dev/null; rm -rf "$cf_tmp"' EXIT
chmod 755 "$cf_tmp"
commfit="$CF_BUILDDIR/tools/commfit"
as_victim() { runuser -u "$victim" -- env TMPDIR="$vtmp" HOME="$vhome" "$@"; }
as_attacker() { runuser -u "$attacker" -- "$@"; }
# NP PROGRAM ARGS: a job of the victim's (not root: no --allow-run-as-root), with the plugin
# and the COMMFIT_ variables of the caller
mpi() {
    local np=$1 fwd=() v; shift
    for v in $(env | sed -n 's/^\(COMMFIT_[A-Z_]*\)=.*/\1/p'); do fwd+=(-x "$v"); done
    runuser -u "$victim" -- env TMPDIR="$vtmp" HOME="$vhome" $(env | grep '^COMMFIT_') \
        "$CF_MPIRUN" --oversubscribe --bind-to none -np "$np" --mca btl self,vader,tcp --mca pml ob1 \
        -x LD_PRELOAD="$COMMFIT_LIB" -x TMPDIR "${fwd[@]}" "$@"
}
shared="$cf_tmp/shared"; mkdir -m 1777 "$shared"
vhome="$cf_tmp/home"; mkdir -m 700 "$vhome"; chown "$victim" "$vhome"
vtmp="$vhome/tmp"; mkdir -m 700 "$vtmp"; chown "$victim" "$vtmp"
secret="$vhome/secret"; echo "the victim's own data" > "$secret"; chmod 600 "$secret"; chown "$victim" "$secret"
sum() { sha256sum "$1" | cut -d' ' -f1; }
want=$(sum "$secret")
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { [ "$fails" = "$f0" ] && echo "ok   $*"; f0=$fails; } # when the case had no failure
f0=0

# a. the attacker makes the victim's spool first, a link where rank 0's temporary part goes
d="$vhome/a"; mkdir "$d"; chown "$victim" "$d"
as_attacker mkdir -m 777 "$shared/a.parts" "$shared/a.parts/ranks-0-255"
for name in rank-0.spill.tmp rank-0.spill rank-1.spill.tmp rank-1.spill; do
    as_attacker ln -s "$secret" "$shared/a.parts/ranks-0-255/$name"
done
COMMFIT_OUTPUT="$shared/a.json" mpi 2 "$CF_BUILDDIR/tests/mpi/abend" exit "$d" > /dev/null 2> "$d/err"
cat "$d/err"
[ "$(sum "$secret")" = "$want" ] || bad "a: the victim's file was written through the planted link"
priv=$(sed -n 's/^commfit: the spool .* is refused (.*): the parts go to \(.*\)$/\1/p' "$d/err" | head -1)
if [ -z "$priv" ]; then
    bad "a: no line saying the spool is refused and where the parts go"
elif [ ! -f "$priv/ranks-0-255/rank-0.spill" ] || [ -L "$priv/ranks-0-255/rank-0.spill" ]; then
    bad "a: the part is not in the private spool $priv"
else
    grep -q "commfit merge $priv" "$d/err" || bad "a: the end-of-job line does not name the private spool"
    ok "a: the planted spool is refused, the part is in $priv, the victim's file unchanged"
    # c. the spool, its subdirectory and the parts are the victim's alone
    for f in "$priv" "$priv/ranks-0-255"; do
        [ "$(stat -c %a:%U "$f")" = "700:$victim" ] || bad "c: $f is $(stat -c %a:%U "$f"), not 700:$victim"
    done
    for f in "$priv"/ranks-0-255/rank-*.spill; do
        [ "$(stat -c %a:%U "$f")" = "600:$victim" ] || bad "c: $f is $(stat -c %a:%U "$f"), not 600:$victim"
    done
    ok "c: spool and subdirectory 0700, parts 0600 (checked)"
fi
# c, the spool the job makes itself where none is
d="$vhome/c"; mkdir "$d"; chown "$victim" "$d"
COMMFIT_OUTPUT="$d/c.json" mpi 2 "$CF_BUILDDIR/tests/mpi/abend" exit "$d" > /dev/null 2> "$d/err"
for f in "$d/c.parts" "$d/c.parts/ranks-0-255"; do
    [ "$(stat -c %a "$f" 2> /dev/null)" = 700 ] || bad "c: $f is $(stat -c %a "$f" 2>&1), not 700"
done
for f in "$d"/c.parts/ranks-0-255/rank-0.spill "$d"/c.parts/ranks-0-255/rank-1.spill; do
    [ "$(stat -c %a "$f" 2> /dev/null)" = 600 ] || bad "c: $f is $(stat -c %a "$f" 2>&1), not 600"
done
ok "c: a spool made by the job: 0700, its parts 0600"

# b. links planted for the profile's temporary name (NAME.tmp.<pid>) of the next few thousand pids
d="$vhome/b"; mkdir "$d"; chown "$victim" "$d"
next=$(($(cat /proc/sys/kernel/ns_last_pid 2> /dev/null || echo $$) + 1))
as_attacker sh -c 'i=$1; while [ $i -lt $(($1 + 3000)) ]; do ln -s "$2" "$3.tmp.$i"; i=$((i + 1)); done' \
    sh "$next" "$secret" "$shared/b.json"
COMMFIT_OUTPUT="$shared/b.json" mpi 2 "$CF_BUILDDIR/examples/pingpong" -n 10 > /dev/null 2> "$d/err" \
    || { cat "$d/err"; bad "b: the job failed"; }
[ "$(sum "$secret")" = "$want" ] || bad "b: the victim's file was written through a planted temporary link"
if [ -f "$shared/b.json" ] && [ ! -L "$shared/b.json" ] && [ "$(stat -c %U "$shared/b.json")" = "$victim" ] \
    && "$CF_PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$shared/b.json"; then
    ok "b: planted temporary links: the victim's file unchanged, the profile written"
else
    bad "b: $shared/b.json is not the victim's profile: $(ls -l "$shared/b.json" 2>&1)"
fi
# b, the profile's own name a link of the attacker's: refused, the default name used
as_attacker ln -s "$secret" "$shared/b2.json"
(cd "$d" && COMMFIT_OUTPUT="$shared/b2.json" mpi 2 "$CF_BUILDDIR/examples/pingpong" -n 10 > /dev/null 2> "$d/err2")
[ "$(sum "$secret")" = "$want" ] || bad "b: the victim's file was written through the attacker's link"
grep -q "symbolic link of another user" "$d/err2" || { cat "$d/err2"; bad "b: no line refusing the link"; }
ls "$d"/commfit-*.json > /dev/null 2>&1 || bad "b: no profile under the default name"
ok "b: the attacker's link as the profile's name is refused, the default name written"

# d. merge takes no part of another user's, and no link
d="$vhome/d"; mkdir -m 700 "$d" "$d/m.parts"; chown "$victim" "$d" "$d/m.parts"
src=$(ls "$vhome"/c/c.parts/ranks-0-255/rank-0.spill 2> /dev/null || ls "$priv"/ranks-0-255/rank-0.spill)
cp "$src" "$d/m.parts/rank-0.spill"; chown "$attacker" "$d/m.parts/rank-0.spill"
chmod 644 "$d/m.parts/rank-0.spill" # readable: the owner is what is refused
ln -s "$src" "$d/m.parts/rank-1.spill"; chown -h "$victim" "$d/m.parts/rank-1.spill"
as_victim "$commfit" merge -o "$d/m.json" "$d/m.parts" > /dev/null 2> "$d/err" && bad "d: merge took the parts"
cat "$d/err"
grep -q "rank-0.spill: owned by another user" "$d/err" || bad "d: no reason for the other user's part"
grep -q "rank-1.spill: a symbolic link: refused" "$d/err" || bad "d: no reason for the link"
[ ! -e "$d/m.json" ] || bad "d: a profile was made from the refused parts"
ok "d: merge refuses a part of another user and a link, and says why"

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
