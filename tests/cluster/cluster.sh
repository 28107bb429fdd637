#!/bin/bash
# cluster.sh - emulate an N-node MPI cluster on one machine.
#
# Each "node" is a network namespace (cfn0, cfn1, ...) with one veth link
# to a bridge that lives in its own namespace (cfnbr), so the host's own
# interfaces, routes and firewall are never touched and no packet can leave
# the emulated cluster.  Node K has the name cfnK and the address
# 10.77.0.(K+1)/24 on its interface eth0; there is no default route.
# Open MPI reaches a node through rsh-agent.sh (its plm_rsh_agent), which
# runs the remote command in the node's namespace and in a private UTS
# namespace whose hostname is the node name, so Open MPI sees N different
# hosts: ranks on different nodes talk over TCP (through the veth links,
# where tbf can shape the rate), ranks on the same node use vader.
#
# Requirements: root, iproute2 (ip, tc with the tbf qdisc, bridge),
# util-linux (unshare, flock), Open MPI's mpirun/orted in PATH.
#
# Usage (run it, or source it and call `cfn_cluster SUBCOMMAND ...`):
#   cluster.sh available [--shaping]
#         exit 0 if the cluster can be built here; else print one line with
#         the reason and exit 77 (automake's SKIP).  --shaping also needs tbf.
#   cluster.sh up N [--rate RATE] [--burst SIZE] [--latency TIME]
#         tear down any previous cluster with the same prefix, then create
#         N nodes (1..250).  --rate shapes every node's egress with tbf
#         (tc units: 200mbit, 1gbit, 50mbps = 50 MB/s, ...).
#   cluster.sh shape RATE [--burst SIZE] [--latency TIME] [NODE...]
#         (re)shape the egress of the given nodes (default: all).
#   cluster.sh unshape [NODE...]     remove the shaping.
#   cluster.sh down                  remove everything (kills processes
#                                    still running in the namespaces).
#   cluster.sh hostfile PATH [--slots S] [--addr]
#         write an Open MPI hostfile: "cfnK slots=S" per node (S default 1,
#         or $CFN_SLOTS); --addr writes addresses instead of names.
#   cluster.sh run [--slots S] -- MPIRUN-ARGS...
#         run mpirun on node cfn0 across all nodes.  Defaults are passed as
#         OMPI_* environment variables, so any of them can be overridden by
#         a --mca/-x/--hostfile/--bind-to option in MPIRUN-ARGS:
#           plm_rsh_agent=rsh-agent.sh  plm_rsh_no_tree_spawn=1
#           btl=tcp,vader,self  pml=ob1
#           btl_tcp_if_include=oob_tcp_if_include=10.77.0.0/24
#           hwloc_base_binding_policy=none (--bind-to none)
#           rmaps_base_oversubscribe=1     (--oversubscribe)
#           orte_default_hostfile=<generated, one slot per node>
#           OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1 (--allow-run-as-root)
#         The exit status is mpirun's.
#   cluster.sh exec NODE -- CMD...   run a command on a node (its netns and
#                                    hostname), e.g. `exec cfn1 -- tc -s qdisc`
#   cluster.sh env                   print the defaults above as exports
#   cluster.sh nodes | status        list the nodes / show links and qdiscs
#
# Environment:
#   CFN_PREFIX  name prefix (default cfn).  Give each concurrently running
#               cluster its own prefix (cfn, cfnb, ...): nodes are PREFIX0..,
#               the bridge namespace PREFIXbr.  The same subnet may be reused
#               by several prefixes, since every cluster is isolated.
#   CFN_SUBNET  first three octets of the node subnet (default 10.77.0).
#   CFN_SLOTS   slots per node in the generated hostfile (default 1).
#   CFN_TBF_BURST, CFN_TBF_LATENCY  tbf defaults (64kb, 50ms).  Keep the
#               burst at least 64kb: veth sends 64 KB GSO packets.
#   CFN_VERBOSE=1  print the commands `run` executes.
#
# Example (one rank per node, forward profiler settings to every rank):
#   tests/cluster/cluster.sh available || exit $?
#   trap 'tests/cluster/cluster.sh down' EXIT
#   tests/cluster/cluster.sh up 2 --rate 200mbit
#   tests/cluster/cluster.sh run -- -np 2 -x LD_PRELOAD=$PWD/libcommfit.so \
#       -x COMMFIT_OUTPUT ./a.out
#   # two ranks per node (pairs on a node use vader):
#   tests/cluster/cluster.sh run -- -np 4 --map-by ppr:2:node ./a.out
#
# Pitfalls:
#   * Remote ranks get only what `mpirun -x` forwards (rsh-agent.sh starts
#     orted with a login-like environment, as ssh would); ranks on cfn0 are
#     started by mpirun itself and inherit its whole environment.  Do not
#     export LD_PRELOAD around `cluster.sh run` itself (it would preload
#     into ip/mpirun); pass it with -x LD_PRELOAD=...
#   * The program path must be valid on every node; the file system is
#     shared, so absolute paths or paths relative to the current directory
#     (mpirun's cwd is kept) both work.
#   * The same MCA parameter given twice on mpirun's command line is an
#     error; that is why the defaults are environment variables.
#   * tbf shapes egress only; every node's own eth0 is shaped, so each
#     direction of a node-to-node transfer is shaped once.  Traffic between
#     ranks on the same node never touches a veth and is not shaped.

if [ -n "${BASH_VERSION:-}" ] && [ "${BASH_SOURCE[0]}" != "$0" ]; then
    # Sourced: provide a function and leave the caller's shell alone.
    CFN_CLUSTER_SH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cluster.sh
    cfn_cluster() { "$CFN_CLUSTER_SH" "$@"; }
    return 0
fi

set -u

# ip, tc, bridge and sysctl live in /usr/sbin or /sbin, which a minimal
# (CI) PATH may lack.
for d in /usr/sbin /sbin; do
    case ":${PATH:-}:" in *":$d:"*) ;; *) PATH=${PATH:+$PATH:}$d ;; esac
done
export PATH

HERE=$(cd "$(dirname "$0")" && pwd)
P=${CFN_PREFIX:-cfn}
SUBNET=${CFN_SUBNET:-10.77.0}
BRNS=${P}br
STATE=${CFN_STATE_DIR:-/tmp/$P-cluster}
LOCK=/tmp/$P-cluster.lock
DEF_BURST=64kb
DEF_LATENCY=50ms

die() { echo "cluster.sh: $*" >&2; exit 1; }
note() { [ "${CFN_VERBOSE:-0}" = 1 ] && echo "cluster.sh: $*" >&2; return 0; }

check_names() {
    case $P in
        ''|*[!a-z0-9]*|[0-9]*) die "CFN_PREFIX must be [a-z][a-z0-9]* ('$P')" ;;
    esac
    [ ${#P} -le 10 ] || die "CFN_PREFIX is too long (max 10 characters)"
    case $SUBNET in
        *[!0-9.]*|*..*|.*|*.) die "CFN_SUBNET must look like 10.77.0 ('$SUBNET')" ;;
    esac
}

# Serialize up/down/shape for one prefix (flock on fd 9).
lock() {
    exec 9>"$LOCK" || die "cannot open $LOCK"
    flock -w 60 9 || die "timed out waiting for $LOCK"
}

# Node namespaces of this prefix, in numeric order.
nodes() {
    ip netns list 2>/dev/null | awk -v p="$P" '
        { n = $1; if (substr(n, 1, length(p)) != p) next
          k = substr(n, length(p) + 1); if (k !~ /^[0-9]+$/) next
          print k }' | sort -n | sed "s/^/$P/"
}

node_count() { nodes | wc -l; }

node_index() { # NAME -> K
    local k=${1#"$P"}
    case $k in ''|*[!0-9]*) die "not a node name: $1" ;; esac
    [ -e "/run/netns/$1" ] || die "no such node: $1"
    echo "$k"
}

node_addr() { echo "$SUBNET.$(( $1 + 1 ))"; }

# Kill the processes still living in a namespace (only ours: they run in
# a namespace this script created).
kill_ns_pids() {
    local ns=$1 pids i
    for i in 1 2 3 4 5 6 7 8 9 10; do
        pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
        [ -z "${pids// /}" ] && return 0
        if [ "$i" -lt 5 ]; then kill -TERM $pids 2>/dev/null
        else kill -KILL $pids 2>/dev/null; fi
        sleep 0.2
    done
}

do_down() {
    local ns
    for ns in $(nodes) $( [ -e "/run/netns/$BRNS" ] && echo "$BRNS"); do
        kill_ns_pids "$ns"
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf "$STATE"
    # Open MPI session directories and vader segments named after our node
    # names (left behind when a run is killed).
    local f host
    for f in "${TMPDIR:-/tmp}/ompi.$P"[0-9]* "/tmp/ompi.$P"[0-9]* \
             "/dev/shm/vader_segment.$P"[0-9]*; do
        [ -e "$f" ] || continue
        host=${f##*/}; host=${host#ompi.}; host=${host#vader_segment.}
        host=${host%%.*}
        [[ $host =~ ^${P}[0-9]+$ ]] && rm -rf -- "$f"
    done
    [ -z "$(nodes)" ] && [ ! -e "/run/netns/$BRNS" ] ||
        { echo "cluster.sh: could not remove all namespaces" >&2; return 1; }
}

# shape_ns NS RATE BURST LATENCY
shape_ns() {
    tc -n "$1" qdisc replace dev eth0 root tbf rate "$2" burst "$3" latency "$4" ||
        die "tc tbf failed on $1 (rate $2 burst $3 latency $4)"
}

parse_shape_opts() { # sets RATE BURST LATENCY REST[]
    BURST=${CFN_TBF_BURST:-$DEF_BURST}
    LATENCY=${CFN_TBF_LATENCY:-$DEF_LATENCY}
    REST=()
    while [ $# -gt 0 ]; do
        case $1 in
            --rate) [ $# -ge 2 ] || die "--rate needs a value"; RATE=$2; shift 2 ;;
            --rate=*) RATE=${1#*=}; shift ;;
            --burst) [ $# -ge 2 ] || die "--burst needs a value"; BURST=$2; shift 2 ;;
            --burst=*) BURST=${1#*=}; shift ;;
            --latency) [ $# -ge 2 ] || die "--latency needs a value"; LATENCY=$2; shift 2 ;;
            --latency=*) LATENCY=${1#*=}; shift ;;
            *) REST+=("$1"); shift ;;
        esac
    done
}

wait_links() { # N
    local k t ok
    for t in $(seq 1 100); do
        ok=1
        for ((k = 0; k < $1; k++)); do
            ip -n "$P$k" -o link show eth0 2>/dev/null | grep -q 'state UP' || { ok=0; break; }
            bridge -n "$BRNS" link show dev "p$k" 2>/dev/null |
                grep -q 'state forwarding' || { ok=0; break; }
        done
        [ $ok = 1 ] && return 0
        sleep 0.05
    done
    return 1
}

do_up() {
    local n=${1:-} k ns
    shift || true
    case $n in ''|*[!0-9]*) die "usage: up N [--rate RATE] [--burst SIZE] [--latency TIME]" ;; esac
    [ "$n" -ge 1 ] && [ "$n" -le 250 ] || die "N must be 1..250"
    RATE=
    parse_shape_opts "$@"
    [ ${#REST[@]} -eq 0 ] || die "up: unexpected argument '${REST[0]}'"

    do_down || die "could not remove the previous cluster"
    # From here on, a failure removes what was built.
    trap 'do_down >/dev/null 2>&1' EXIT
    mkdir -p "$STATE" || die "cannot create $STATE"

    ip netns add "$BRNS" || die "ip netns add $BRNS failed"
    ip -n "$BRNS" link set lo up
    ip -n "$BRNS" link add br0 type bridge stp_state 0 forward_delay 0 ||
        die "cannot create a bridge"
    ip -n "$BRNS" link set br0 up || die "cannot set br0 up"
    for ((k = 0; k < n; k++)); do
        ns=$P$k
        ip netns add "$ns" || die "ip netns add $ns failed"
        ip -n "$ns" link set lo up || die "lo up failed in $ns"
        # Both ends are created directly in their namespaces: the names
        # never exist in the root namespace.
        ip link add eth0 netns "$ns" type veth peer name "p$k" netns "$BRNS" ||
            die "cannot create the veth pair for $ns"
        ip -n "$BRNS" link set "p$k" master br0 || die "cannot attach p$k"
        ip -n "$BRNS" link set "p$k" up
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
            net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
        ip -n "$ns" addr add "$(node_addr "$k")/24" dev eth0 ||
            die "cannot add an address in $ns"
        ip -n "$ns" link set eth0 up || die "eth0 up failed in $ns"
        if [ -n "$RATE" ]; then shape_ns "$ns" "$RATE" "$BURST" "$LATENCY"; fi
    done
    wait_links "$n" || die "links did not come up"
    write_hostfile "$STATE/hostfile" "${CFN_SLOTS:-1}" names "$n"
    trap - EXIT
    echo "cluster.sh: up: $n node(s) ${P}0..$P$((n - 1)) on $SUBNET.0/24${RATE:+, egress shaped to $RATE}"
}

# write_hostfile PATH SLOTS names|addr [N]
write_hostfile() {
    local path=$1 slots=$2 mode=$3 n=${4:-$(node_count)} k tmp
    [ "$n" -ge 1 ] || die "the cluster is not up (no $P* namespaces)"
    case $slots in ''|*[!0-9]*|0) die "slots must be a positive integer" ;; esac
    tmp=$path.tmp.$$
    : >"$tmp" || die "cannot write $path"
    for ((k = 0; k < n; k++)); do
        if [ "$mode" = addr ]; then
            echo "$(node_addr "$k") slots=$slots" >>"$tmp"
        else
            echo "$P$k slots=$slots" >>"$tmp"
        fi
    done
    mv -f "$tmp" "$path"
}

do_hostfile() {
    local path="" slots=${CFN_SLOTS:-1} mode=names
    while [ $# -gt 0 ]; do
        case $1 in
            --slots) [ $# -ge 2 ] || die "--slots needs a value"; slots=$2; shift 2 ;;
            --slots=*) slots=${1#*=}; shift ;;
            --addr) mode=addr; shift ;;
            *) [ -z "$path" ] || die "hostfile: unexpected argument '$1'"; path=$1; shift ;;
        esac
    done
    [ -n "$path" ] || die "usage: hostfile PATH [--slots S] [--addr]"
    write_hostfile "$path" "$slots" "$mode"
}

do_shape() {
    local ns
    RATE=${1:-}
    [ -n "$RATE" ] || die "usage: shape RATE [--burst SIZE] [--latency TIME] [NODE...]"
    shift
    parse_shape_opts "$@"
    [ "$(node_count)" -ge 1 ] || die "the cluster is not up"
    [ ${#REST[@]} -gt 0 ] || mapfile -t REST < <(nodes)
    for ns in "${REST[@]}"; do
        node_index "$ns" >/dev/null
        shape_ns "$ns" "$RATE" "$BURST" "$LATENCY"
    done
}

do_unshape() {
    local ns list=("$@")
    [ ${#list[@]} -gt 0 ] || mapfile -t list < <(nodes)
    for ns in "${list[@]}"; do
        node_index "$ns" >/dev/null
        tc -n "$ns" qdisc del dev eth0 root 2>/dev/null || true
    done
}

# Defaults for mpirun, as NAME=VALUE lines; a variable already set in the
# environment wins.
mpi_env() {
    local hf=$1
    local -a kv=(
        "OMPI_MCA_plm_rsh_agent=$HERE/rsh-agent.sh"
        "OMPI_MCA_plm_rsh_no_tree_spawn=1"
        "OMPI_MCA_btl=tcp,vader,self"
        "OMPI_MCA_pml=ob1"
        "OMPI_MCA_btl_tcp_if_include=$SUBNET.0/24"
        "OMPI_MCA_oob_tcp_if_include=$SUBNET.0/24"
        "OMPI_MCA_hwloc_base_binding_policy=none"
        "OMPI_MCA_rmaps_base_oversubscribe=1"
        "OMPI_MCA_orte_default_hostfile=$hf"
        "OMPI_ALLOW_RUN_AS_ROOT=1"
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
    )
    local e name
    for e in "${kv[@]}"; do
        name=${e%%=*}
        if [ -n "${!name+x}" ]; then echo "$name=${!name}"; else echo "$e"; fi
    done
}

do_env() {
    [ "$(node_count)" -ge 1 ] || die "the cluster is not up"
    mpi_env "$STATE/hostfile" | sed "s/=\(.*\)/='\1'/; s/^/export /"
    echo "export CFN_PREFIX='$P' CFN_SUBNET='$SUBNET'"
}

# on_node NODE CMD... : run CMD in NODE's netns with NODE as hostname.
on_node() {
    local ns=$1
    shift
    exec ip netns exec "$ns" unshare --uts \
        /bin/sh -c 'hostname "$0" || exit 1; exec "$@"' "$ns" "$@"
}

do_exec() {
    local ns=${1:-}
    [ -n "$ns" ] || die "usage: exec NODE -- CMD..."
    shift
    [ "${1:-}" = -- ] && shift
    [ $# -ge 1 ] || die "usage: exec NODE -- CMD..."
    node_index "$ns" >/dev/null
    on_node "$ns" "$@"
}

do_run() {
    local slots=${CFN_SLOTS:-1} n hf
    while [ $# -gt 0 ]; do
        case $1 in
            --) shift; break ;;
            --slots) [ $# -ge 2 ] || die "--slots needs a value"; slots=$2; shift 2 ;;
            --slots=*) slots=${1#*=}; shift ;;
            *) break ;;
        esac
    done
    n=$(node_count)
    [ "$n" -ge 1 ] || die "the cluster is not up (run: cluster.sh up N)"
    command -v mpirun >/dev/null || die "mpirun not found in PATH"
    mkdir -p "$STATE"
    hf=$STATE/hostfile.$$
    write_hostfile "$hf" "$slots" names "$n"
    local -a envs
    mapfile -t envs < <(mpi_env "$hf")
    envs+=("CFN_PREFIX=$P" "CFN_SUBNET=$SUBNET" "SHELL=/bin/sh")
    note "on ${P}0: env ${envs[*]} mpirun $*"
    local rc=0
    ip netns exec "${P}0" unshare --uts env "${envs[@]}" \
        /bin/sh -c 'hostname "$0" || exit 1; exec mpirun "$@"' "${P}0" "$@" || rc=$?
    rm -f "$hf"
    return $rc
}

do_status() {
    local ns
    echo "prefix $P, subnet $SUBNET.0/24, bridge namespace $BRNS:" \
         "$([ -e "/run/netns/$BRNS" ] && echo present || echo absent)"
    for ns in $(nodes); do
        printf '%s %s ' "$ns" "$(ip -n "$ns" -br addr show dev eth0 2>/dev/null | awk '{print $2, $3}')"
        tc -n "$ns" qdisc show dev eth0 2>/dev/null | head -1
    done
}

# available [--shaping]: exit 0, or print a reason and exit 77.
do_available() {
    local shaping=0 t=${P}chk$$ why=
    [ "${1:-}" = --shaping ] && shaping=1
    skip() { echo "SKIP: $*"; exit 77; }
    [ "$(id -u)" = 0 ] || skip "emulated cluster needs root"
    for c in ip unshare flock; do
        command -v $c >/dev/null 2>&1 || skip "'$c' not found"
    done
    [ $shaping = 0 ] || command -v tc >/dev/null 2>&1 || skip "'tc' not found"
    command -v bridge >/dev/null 2>&1 || skip "'bridge' (iproute2) not found"
    ip netns add "$t" 2>/dev/null || skip "ip netns does not work here"
    {
        ip netns exec "$t" unshare --uts /bin/sh -c 'hostname cfncheck' \
            >/dev/null 2>&1 || why="cannot run in a netns with its own hostname (unshare --uts)"
        [ -n "$why" ] || ip -n "$t" link add b0 type bridge 2>/dev/null ||
            why="cannot create a bridge in a netns"
        [ -n "$why" ] || ip -n "$t" link add v0 type veth peer name v1 2>/dev/null ||
            why="cannot create veth pairs"
        if [ -z "$why" ] && [ $shaping = 1 ]; then
            ip -n "$t" link set v0 up 2>/dev/null
            tc -n "$t" qdisc add dev v0 root tbf rate 100mbit burst 64kb latency 50ms \
                2>/dev/null || why="tc qdisc tbf is not available"
        fi
    }
    ip netns del "$t" 2>/dev/null
    [ -z "$why" ] || skip "$why"
    return 0
}

check_names
cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
    available) do_available "$@" ;;
    up) lock; do_up "$@" ;;
    down) lock; do_down ;;
    shape) lock; do_shape "$@" ;;
    unshape) lock; do_unshape "$@" ;;
    hostfile) do_hostfile "$@" ;;
    run) do_run "$@" ;;
    exec) do_exec "$@" ;;
    env) do_env ;;
    nodes) nodes ;;
    status) do_status ;;
    ''|-h|--help|help) sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0" ;;
    *) die "unknown subcommand '$cmd' (try: cluster.sh help)" ;;
esac
