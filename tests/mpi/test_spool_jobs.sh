#!/bin/bash
# A spool belongs to one job.  (a) A job launched by hand exits early; a
# minute later `commfit run -o` with the same name runs to completion: its
# complete profile stays, the earlier spool is left for `commfit merge`, which
# will not write over the complete profile.  (b) A spool a 4-rank job left,
# then a 2-rank job with the same name: each job's parts whole, merged apart.
# (c) As two real users: a crafted part of another user's in the victim's
# spool (a newer start, the victim's nonce, shell text in its names) is
# refused with the reason in the profile, and the victim's files stay as they
# were; a part of another job (the victim's own file) is left out.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
prog="$CF_BUILDDIR/tests/mpi/abend"
root=""
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
launch() { echo "$CF_MPIRUN" $root --oversubscribe --bind-to none -np "$1" --mca btl self,vader,tcp --mca pml ob1 $grace; }
export COMMFIT_SUMMARY=0
# mpirun sends SIGKILL 1 s after its SIGTERM: a loaded machine gets 5 s to write the parts
grace="--mca odls_base_sigkill_timeout 5"
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# FILE FIELD...: prints job fields of a profile (partial, ranks, ranks_with_parts, reasons joined)
job() {
    "$CF_PYTHON" - "$@" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
j, e = p["job"], p.get("ended", {})
v = {"partial": j["partial"], "ranks": j["ranks"], "with_parts": e.get("ranks_with_parts", "-"),
     "reasons": " | ".join(j.get("partial_reasons", [])), "hosts": ",".join(r["host"] for r in p["ranks"]),
     "rank_list": ",".join(str(r["rank"]) for r in p["ranks"])}
print(" ".join(str(v[f]) for f in sys.argv[2:]))
PY
}

# a. the stale spool and the complete profile
d="$cf_tmp/a"; mkdir -p "$d/t1" "$d/t2"
COMMFIT_OUTPUT="$d/p.json" cf_mpirun 2 $grace -- "$prog" exit "$d/t1" > /dev/null 2> "$d/err1"
ls "$d/p.parts/ranks-0-255/rank-0.spill" "$d/p.parts/ranks-0-255/rank-1.spill" "$d/p.parts/job" > /dev/null \
    || { cat "$d/err1"; bad "a: the early exit left no spool"; }
"$commfit" run -o "$d/p.json" -- $(launch 2) "$prog" finish "$d/t2" > /dev/null 2> "$d/err2"
rc=$?
cat "$d/err2"
[ "$rc" = 0 ] || bad "a: commfit run of a job that finishes returned $rc"
[ "$(job "$d/p.json" partial ranks)" = "False 2" ] || bad "a: p.json is not the complete profile: $(job "$d/p.json" partial reasons)"
grep -q "^commfit run: the spool $d/p.parts holds the parts of an earlier job (pid [0-9]* on .*): \`commfit merge $d/p.parts\` makes its profile; this job's parts go to $d/p.parts\.[A-Za-z0-9]\{6\}$" "$d/err2" \
    || bad "a: no line saying the spool holds an earlier job's parts and where this job's go"
! grep -q "did not reach" "$d/err2" || bad "a: the finished job reported as unfinished"
[ "$(ls -d "$d"/p.parts.* 2> /dev/null | wc -l)" = 0 ] || bad "a: the new spool of the finished job is left: $(ls -d "$d"/p.parts.*)"
[ "$(ls "$d/p.parts/ranks-0-255")" = "$(printf 'rank-0.spill\nrank-1.spill')" ] || bad "a: the earlier job's parts were touched"
# merge beside the spool: p.json is the complete profile of a later job, not written over
sum=$(sha256sum < "$d/p.json")
"$commfit" merge "$d/p.parts" > /dev/null 2> "$d/err3"; rc=$?
cat "$d/err3"
[ "$rc" = 1 ] || bad "a: merge over the complete profile returned $rc, not 1"
grep -q "^commfit merge: $d/p.json is the complete profile of a job started at .*: not written over (-o names another file); the parts stay in $d/p.parts$" "$d/err3" \
    || bad "a: no line saying the complete profile is not written over"
[ "$(sha256sum < "$d/p.json")" = "$sum" ] || bad "a: the complete profile was changed"
"$commfit" merge -o "$d/old.json" "$d/p.parts" 2> "$d/err4" || { cat "$d/err4"; bad "a: merge -o failed"; }
[ "$(job "$d/old.json" partial ranks with_parts)" = "True 2 2" ] || bad "a: old.json: $(job "$d/old.json" partial ranks with_parts)"
[ ! -e "$d/p.parts" ] || bad "a: the merged spool is left"
[ "$fails" = 0 ] && echo "ok   a: the complete profile stays, the earlier spool is merged apart (exit 1 over p.json)"
f0=$fails

# b. a spool of a 4-rank job, then a 2-rank job with the same name, both ending early
d="$cf_tmp/b"; mkdir -p "$d/t4" "$d/t2"
COMMFIT_OUTPUT="$d/q.json" cf_mpirun 4 $grace -- "$prog" exit "$d/t4" > /dev/null 2> "$d/err4"
COMMFIT_OUTPUT="$d/q.json" cf_mpirun 2 $grace -- "$prog" exit "$d/t2" > /dev/null 2> "$d/err2"
cat "$d/err2"
beside=$(sed -n "s|^commfit: the spool $d/q.parts holds the parts of an earlier job (.*): .* this job's parts go to \(.*\)$|\1|p" "$d/err2")
[ -n "$beside" ] || bad "b: the 2-rank job does not say where its parts go"
[ "$(ls "$d/q.parts/ranks-0-255" | wc -l)" = 4 ] || bad "b: the 4-rank job's spool does not hold its 4 parts"
grep -q "commfit merge $beside\`" "$d/err2" || bad "b: the end-of-job line does not name the new spool"
"$commfit" merge -o "$d/four.json" "$d/q.parts" 2> "$d/m4" || { cat "$d/m4"; bad "b: merge of the 4-rank job failed"; }
"$commfit" merge -o "$d/two.json" "$beside" 2> "$d/m2" || { cat "$d/m2"; bad "b: merge of the 2-rank job failed"; }
cat "$d/m4" "$d/m2"
grep -q "(parts of all 4 ranks)" "$d/m4" && grep -q "(parts of all 2 ranks)" "$d/m2" || bad "b: the merges do not take all ranks of each job"
cf_check abend "$d/four.json" "$d/t4" 4 0 > /dev/null || bad "b: four.json does not hold the 4-rank job's exact calls"
cf_check abend "$d/two.json" "$d/t2" 2 0 > /dev/null || bad "b: two.json does not hold the 2-rank job's exact calls"
case "$(job "$d/four.json" reasons) $(job "$d/two.json" reasons)" in *"another job"* | *refused*) bad "b: parts left out";; esac
[ "$fails" = "$f0" ] && echo "ok   b: a 4-rank then a 2-rank job: each merged whole (exact calls), nothing left out"
f0=$fails

# c. two real users: a crafted part of another user's in the victim's spool
if [ "$(id -u)" != 0 ] || ! command -v useradd > /dev/null || ! command -v runuser > /dev/null; then
    echo "SKIP c: needs root, useradd and runuser"
else
    attacker=cfattacker$$ victim=cfvictim$$
    useradd -M -s /usr/sbin/nologin "$attacker" && useradd -M -s /usr/sbin/nologin "$victim" || bad "c: useradd failed"
    trap 'userdel "$attacker" 2> /dev/null; userdel "$victim" 2> /dev/null; rm -rf "$cf_tmp"' EXIT
    chmod 755 "$cf_tmp"
    vhome="$cf_tmp/home"; mkdir -m 700 "$vhome" "$vhome/t"; chown "$victim" "$vhome" "$vhome/t"
    proj="$cf_tmp/proj"; mkdir -m 755 "$proj"; chown "$victim" "$proj" # a project directory others can read
    echo "the victim's shell settings" > "$vhome/.bashrc"; chown "$victim" "$vhome/.bashrc"
    want=$(sha256sum < "$vhome/.bashrc")
    fwd=(); for v in $(env | sed -n 's/^\(COMMFIT_[A-Z_]*\)=.*/\1/p'); do fwd+=(-x "$v"); done
    runuser -u "$victim" -- env HOME="$vhome" TMPDIR="$vhome" COMMFIT_OUTPUT="$proj/j.json" COMMFIT_SUMMARY=0 \
        "$CF_MPIRUN" --oversubscribe --bind-to none -np 2 --mca btl self,vader,tcp --mca pml ob1 $grace \
        -x LD_PRELOAD="$COMMFIT_LIB" -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY "$prog" exit "$vhome/t" > /dev/null 2> "$vhome/err"
    spool="$proj/j.parts"
    [ -f "$spool/ranks-0-255/rank-0.spill" ] || { cat "$vhome/err"; bad "c: the victim's job left no part"; }
    # the victim shares the spool with a group (as a project directory would): others can write there
    chmod 1777 "$spool" "$spool/ranks-0-255"
    # the attacker's part: a real part made his, started later, the victim's own nonce, shell text
    # in its host, the victim's .bashrc as its job id
    nonce=$(sed -n 's/^nonce //p' "$spool/job")
    cp "$spool/ranks-0-255/rank-1.spill" "$cf_tmp/zz"; chown "$attacker" "$cf_tmp/zz"
    runuser -u "$attacker" -- "$CF_PYTHON" - "$cf_tmp/zz" "$nonce" "$vhome/.bashrc" <<'PY'
import struct, sys, time
f, nonce, target = sys.argv[1], int(sys.argv[2], 16), sys.argv[3].encode()
b = bytearray(open(f, "rb").read())
struct.pack_into("<i", b, 24, 2)                  # rank 2 of 3
struct.pack_into("<i", b, 28, 3)
struct.pack_into("<d", b, 104, time.time() + 60)  # started later than the victim's job
b[144:208] = b"$(echo pwned > /tmp/x);`id`".ljust(64, b"\0")
struct.pack_into("<Q", b, 336, nonce)
b[344:408] = target.ljust(64, b"\0")
open(f, "wb").write(b)
PY
    runuser -u "$attacker" -- cp "$cf_tmp/zz" "$spool/ranks-0-255/rank-zz.spill"
    chmod 644 "$spool/ranks-0-255/rank-zz.spill" # readable by all: its owner is what is refused
    # and a part of another job, the victim's own file (a newer start)
    cp "$spool/ranks-0-255/rank-0.spill" "$spool/ranks-0-255/rank-9.spill"
    "$CF_PYTHON" - "$spool/ranks-0-255/rank-9.spill" <<'PY'
import struct, sys, time
f = sys.argv[1]
b = bytearray(open(f, "rb").read())
struct.pack_into("<d", b, 104, time.time() + 60)
struct.pack_into("<Q", b, 336, 0x1234)
b[344:408] = b"another job".ljust(64, b"\0")
open(f, "wb").write(b)
PY
    chown "$victim" "$spool/ranks-0-255/rank-9.spill"
    runuser -u "$victim" -- env HOME="$vhome" "$commfit" merge "$spool" > /dev/null 2> "$vhome/merge"; rc=$?
    cat "$vhome/merge"
    [ "$rc" = 0 ] || bad "c: the victim's merge returned $rc"
    [ "$(sha256sum < "$vhome/.bashrc")" = "$want" ] || bad "c: the victim's .bashrc was changed"
    grep -q "^commfit: $spool/ranks-0-255/rank-zz.spill: owned by another user (uid $(id -u "$attacker")): refused$" "$vhome/merge" \
        || bad "c: merge does not say why the attacker's part is refused"
    grep -q "written to $proj/j.json$" "$vhome/merge" || bad "c: the profile is not beside the spool"
    [ "$(job "$proj/j.json" ranks with_parts rank_list)" = "2 2 0,1" ] \
        || bad "c: the profile is not the victim's 2 ranks: $(job "$proj/j.json" ranks with_parts rank_list)"
    why=$(job "$proj/j.json" reasons)
    case "$why" in *"1 parts refused ($spool/ranks-0-255/rank-zz.spill: owned by another user (uid $(id -u "$attacker")): refused)"*) ;;
        *) bad "c: the refused part is not among the profile's reasons: $why";; esac
    case "$why" in *"1 parts of another job (another job) left in the spool"*) ;;
        *) bad "c: the other job's part is not said: $why";; esac
    ! grep -q "pwned\|id\`" "$proj/j.json" || bad "c: the attacker's text reached the profile"
    cf_check abend "$proj/j.json" "$vhome/t" 2 0 > /dev/null || bad "c: the profile does not hold the victim's exact calls"
    [ -f "$spool/ranks-0-255/rank-9.spill" ] && [ -f "$spool/ranks-0-255/rank-zz.spill" ] \
        && [ ! -e "$spool/ranks-0-255/rank-0.spill" ] || bad "c: merge removed other parts than its job's"
    [ "$fails" = "$f0" ] && echo "ok   c: another user's crafted part refused (reason in the profile), the .bashrc unchanged, another job's part left"
fi
[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
