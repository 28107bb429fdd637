#!/bin/bash
# selftest.sh - check the emulated cluster (cluster.sh, rsh-agent.sh).
#
#   1. bring up 2 nodes, run hello.c with one rank per node and check that
#      the ranks report different hostnames (the emulated node names) and
#      that a variable forwarded with `mpirun -x` reaches both ranks;
#   2. check that ranks on one node can talk over vader alone while ranks
#      on different nodes cannot (so they use TCP through the veth links);
#   3. shape every node's egress with tbf and check that the 1 MB ping-pong
#      throughput falls to about the shaped rate.
# Exit status: 0 pass, 77 skip (no root / namespaces / tbf / Open MPI), 1 fail.
#
# Environment: CFN_PREFIX (default cfnst, so that a cluster brought up by
# hand with the default prefix is left alone), CFN_SELFTEST_MBIT (shaped rate
# in Mbit/s, default 200), CFN_SELFTEST_TIMEOUT (seconds per mpirun, 120).

set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER=$HERE/cluster.sh
export CFN_PREFIX=${CFN_PREFIX:-cfnst}
MBIT=${CFN_SELFTEST_MBIT:-200}
TMO=${CFN_SELFTEST_TIMEOUT:-120}
P=$CFN_PREFIX

"$CLUSTER" available --shaping || exit $?
for c in mpicc mpirun timeout; do
    command -v $c >/dev/null 2>&1 || { echo "SKIP: '$c' not found"; exit 77; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cfn-selftest.XXXXXX") || exit 1
cleanup() {
    "$CLUSTER" down >/dev/null 2>&1 || "$CLUSTER" down
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
    echo "FAIL: $*"
    if [ -n "${LAST_LOG:-}" ] && [ -f "$LAST_LOG" ]; then
        echo "---- output of the last run ($LAST_LOG) ----"
        cat "$LAST_LOG"
        echo "----"
    fi
    exit 1
}

# mpi LOGNAME MPIRUN-ARGS... : run through the cluster, output in $WORK/LOGNAME
mpi() {
    local name=$1
    shift
    LAST_LOG=$WORK/$name.log
    # In the background, so that a signal runs the traps at once; the
    # teardown then kills whatever still runs in the namespaces.
    (cd "$WORK" && exec timeout -k 5 "$TMO" "$CLUSTER" run -- "$@") \
        >"$LAST_LOG" 2>&1 </dev/null &
    wait $!
}

# field LOG KEY [LINE-PATTERN] : value of KEY=... on the first matching line
field() {
    grep -e "${3:-.}" "$1" | head -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

mpicc -O2 -o "$WORK/hello" "$HERE/hello.c" >"$WORK/build.log" 2>&1 ||
    { cat "$WORK/build.log"; fail "could not build hello.c"; }

"$CLUSTER" up 2 || fail "cluster.sh up 2"

# 1. one rank per node, different hostnames, -x forwarding
export COMMFIT_SELFTEST=forwarded-$$
mpi plain -np 2 -x COMMFIT_SELFTEST ./hello -n 5 -e COMMFIT_SELFTEST ||
    fail "mpirun across 2 nodes failed"
[ "$(grep -c '^HELLO ' "$WORK/plain.log")" = 2 ] || fail "expected 2 HELLO lines"
h0=$(field "$WORK/plain.log" host '^HELLO rank=0 ')
h1=$(field "$WORK/plain.log" host '^HELLO rank=1 ')
echo "rank 0 on '$h0', rank 1 on '$h1' (this machine: '$(hostname)')"
[ -n "$h0" ] && [ -n "$h1" ] || fail "missing hostnames"
[ "$h0" != "$h1" ] || fail "both ranks report the same hostname '$h0'"
[ "$h0" = "${P}0" ] && [ "$h1" = "${P}1" ] ||
    fail "expected hostnames ${P}0 and ${P}1"
[ "$(grep -c "env=$COMMFIT_SELFTEST\$" "$WORK/plain.log")" = 2 ] ||
    fail "COMMFIT_SELFTEST was not forwarded to both ranks by -x"
free=$(field "$WORK/plain.log" mbps_best '^PINGPONG ')
[ -n "$free" ] || fail "no PINGPONG result"
echo "unshaped: 1 MB ping-pong $free MB/s"

# 2. transports: vader within a node, not across nodes
mpi vader-same -np 2 --host "${P}1:2" --mca btl vader,self ./hello -n 2 ||
    fail "two ranks on one node could not communicate over vader"
echo "same node, btl vader,self: $(field "$WORK/vader-same.log" mbps_best '^PINGPONG ') MB/s"
if mpi vader-cross -np 2 --mca btl vader,self ./hello -n 1 &&
        grep -q '^PINGPONG ' "$WORK/vader-cross.log"; then
    LAST_LOG=$WORK/vader-cross.log
    fail "ranks on different nodes communicated over vader: nodes are not separate hosts"
fi
echo "different nodes, btl vader,self: unreachable, as expected"

# 3. shaping
"$CLUSTER" shape "${MBIT}mbit" || fail "cluster.sh shape ${MBIT}mbit"
mpi shaped -np 2 ./hello -n 5 || fail "mpirun across 2 shaped nodes failed"
shaped=$(field "$WORK/shaped.log" mbps_best '^PINGPONG ')
[ -n "$shaped" ] || fail "no PINGPONG result with shaping"
expect=$(awk -v m="$MBIT" 'BEGIN { printf "%.1f", m / 8 }')
echo "shaped to ${MBIT}mbit (= $expect MB/s): 1 MB ping-pong $shaped MB/s"
awk -v s="$shaped" -v e="$expect" -v f="$free" 'BEGIN {
        ok = (s >= 0.5 * e && s <= 1.2 * e && f >= 2 * s)
        exit !ok }' ||
    fail "shaped throughput $shaped MB/s is not about $expect MB/s (unshaped $free MB/s)"

"$CLUSTER" down || fail "cluster.sh down"
[ -z "$("$CLUSTER" nodes)" ] || fail "namespaces left after down"
echo "PASS"
exit 0
