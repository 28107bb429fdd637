#!/usr/bin/env bash
# A one-node Slurm for the tests, on this machine:
#   tests/slurm/slurm.sh start   install slurm-wlm and munge if missing (root),
#                                write the config, start munged, slurmctld, slurmd
#   tests/slurm/slurm.sh stop    stop the daemons this script started (by their pid files)
#   tests/slurm/slurm.sh env     print the variables that point the commands at it
# Everything lives in $CF_SLURM_DIR (default /tmp/commfit-slurm): config, keys,
# sockets, logs, pid files.  Its own ports, so a Slurm of the machine is left alone.
# start prints nothing and exits 0 when Slurm runs; else one line saying why
# not, exit 77 (the tests skip).  proctrack/cgroup, else proctrack/linuxproc.
# Each node has the machine's CPUs; a Slurm already up with nodes of other
# CPUs is restarted when CF_SLURM_ALONE=1 (no other test run uses it), else
# left to its runs (exit 77).
#
# CF_SLURM_NODES=2: two nodes instead, cfsl0 and cfsl1, network namespaces of
# tests/cluster/cluster.sh (10.78.0.1 and .2 on a bridge), each slurmd in its
# own namespace with its own host name; slurmctld (host name cfslctl) in
# cfsl0's.  The commands reach it from there only: `env` also sets
# CF_SLURM_IN, the prefix that runs a command in cfsl0's namespace.
# proctrack/linuxproc: the two slurmd share the machine's cgroups.
set -u
dir=${CF_SLURM_DIR:-/tmp/commfit-slurm}
host=$(hostname -s)
port=${CF_SLURM_PORT:-16817}
nodes=${CF_SLURM_NODES:-1}
cluster="$(cd "$(dirname "$0")/.." && pwd)/cluster/cluster.sh"
export CFN_PREFIX=cfsl CFN_SUBNET=10.78.0
in_ns="ip netns exec cfsl0" # where the commands reach a two-node Slurm
[ "$nodes" = 2 ] && host=cfsl0
cli() { if [ "$nodes" = 2 ]; then $in_ns "$@"; else "$@"; fi; }
# the CPUs of a node: the machine's, not what OMP_NUM_THREADS or OMP_THREAD_LIMIT say to nproc
# (a node of CPUs=1 never starts a job of 2 ranks: srun waits for it without end)
cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)

say_env() {
    echo "export SLURM_CONF=$dir/slurm.conf"
    [ "$nodes" = 2 ] && echo "export CF_SLURM_IN='$in_ns'"
    return 0
}

stop_one() { # name: stop the daemon whose pid file is ours, wait for it
    local pidf=$dir/$1.pid pid
    [ -s "$pidf" ] || return 0
    pid=$(cat "$pidf")
    # only the process that our pid file names, and only if it is still that daemon
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "${1%-*}"; then
        kill -TERM "$pid" 2> /dev/null
        for _ in $(seq 50); do
            kill -0 "$pid" 2> /dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2> /dev/null && kill -KILL "$pid" 2> /dev/null
    fi
    rm -f "$pidf"
}

stop() {
    if [ -s "$dir/slurmctld.pid" ] && [ -f "$dir/slurm.conf" ]; then
        # jobs left over die with slurmd; cancel them first so that nothing lingers
        SLURM_CONF=$dir/slurm.conf cli scancel --full --quiet -u "$(id -un)" 2> /dev/null
    fi
    stop_slurmd
    stop_one slurmctld
    stop_one munged
    [ "$nodes" = 2 ] && "$cluster" down > /dev/null 2>&1
    return 0
}

stop_slurmd() {
    stop_one slurmd
    stop_one slurmd-cfsl0
    stop_one slurmd-cfsl1
}

skip() {
    echo "slurm: $*" >&2
    stop
    exit 77
}

install() {
    command -v slurmctld > /dev/null && command -v slurmd > /dev/null && command -v munged > /dev/null && return 0
    [ "$(id -u)" = 0 ] || skip "slurm-wlm and munge are not installed (and we are not root to install them)"
    command -v apt-get > /dev/null || skip "slurm-wlm and munge are not installed (no apt-get)"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge; } \
        > "$dir/install.log" 2>&1 || skip "cannot install slurm-wlm and munge (see $dir/install.log)"
    # the packages start system daemons of their own on some machines: not ours to keep
}

config() { # proctrack
    local tmpfs="" ctl=$host nodelines="NodeName=$host CPUs=$cpus State=UNKNOWN" list=$host sd=slurmd
    if [ "$nodes" = 2 ]; then
        # TmpFS of each node its own: PMIx makes its directories there, by job and step
        ctl="cfslctl(10.78.0.1)" list="cfsl[0-1]" sd="slurmd-%n" tmpfs="TmpFS=$dir/tmp-%n"
        nodelines="NodeName=cfsl0 NodeAddr=10.78.0.1 CPUs=$cpus State=UNKNOWN
NodeName=cfsl1 NodeAddr=10.78.0.2 CPUs=$cpus State=UNKNOWN"
    fi
    cat > "$dir/slurm.conf" << EOF
ClusterName=commfit
SlurmctldHost=$ctl
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/$sd
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/$sd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/$sd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/$1
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SchedulerType=sched/builtin
ReturnToService=2
KillWait=3
MinJobAge=300
$tmpfs
InactiveLimit=0
SlurmdTimeout=30
MessageTimeout=20
$nodelines
PartitionName=debug Nodes=$list Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    cat > "$dir/cgroup.conf" << EOF
CgroupPlugin=autodetect
IgnoreSystemd=yes
ConstrainCores=no
ConstrainRAMSpace=no
EOF
}

wait_node() { # seconds: until the nodes take jobs
    local want=$nodes
    for _ in $(seq $(($1 * 5))); do
        state=$(SLURM_CONF=$dir/slurm.conf cli sinfo -h -N -o %t 2> /dev/null | grep -c '^\(idle\|mix\|alloc\)')
        [ "$state" -ge "$want" ] && return 0
        sleep 0.2
    done
    return 1
}

on_node() { # K NAME CMD...: CMD in node K's network namespace, with the host name NAME
    local k=$1 name=$2
    shift 2
    SLURM_CONF=$dir/slurm.conf nsenter --net=/run/netns/cfsl$k unshare --uts \
        sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
}

start_slurm() { # proctrack: 0 when the node came up
    config "$1"
    mkdir -p "$dir/state" "$dir/spool"
    rm -rf "$dir/state"/* "$dir/spool"/*
    mkdir -p "$dir/spool/slurmd" "$dir/spool/slurmd-cfsl0" "$dir/spool/slurmd-cfsl1" "$dir/tmp-cfsl0" "$dir/tmp-cfsl1"
    if [ "$nodes" = 2 ]; then
        # each daemon in cfsl0's or cfsl1's network namespace, with a host name of its own; by
        # nsenter, not `ip netns exec`, which mounts a /sys of its own without the cgroups
        on_node 0 cfslctl slurmctld -i > "$dir/slurmctld.out" 2>&1 || return 1
        for k in 0 1; do
            on_node $k cfsl$k slurmd -N cfsl$k > "$dir/slurmd-cfsl$k.out" 2>&1 || return 1
        done
    else
        SLURM_CONF=$dir/slurm.conf slurmctld -i > "$dir/slurmctld.out" 2>&1 || return 1
        SLURM_CONF=$dir/slurm.conf slurmd > "$dir/slurmd.out" 2>&1 || return 1
    fi
    wait_node 20 || return 1
    # a job must run to the end, not just the node be there
    local out
    out=$(SLURM_CONF=$dir/slurm.conf cli timeout 20 srun -N "$nodes" -n "$nodes" -t 1 true 2>&1) ||
        { echo "$out" > "$dir/probe.log"; return 1; }
}

start() {
    mkdir -p "$dir"
    chmod 700 "$dir"
    install
    [ "$cpus" -ge 2 ] || skip "the jobs of the tests run 2 ranks on a node, and this machine has $cpus CPU"
    if [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2> /dev/null && wait_node 1; then
        # already ours and up; but a node of fewer CPUs than the machine's (started by an older
        # slurm.sh under OMP_NUM_THREADS=1) holds the jobs of 2 ranks pending: restarted when no
        # other test run uses it (CF_SLURM_ALONE=1), else not used
        had=$(sed -n 's/^NodeName=[^ ]* .*CPUs=\([0-9]*\).*/\1/p' "$dir/slurm.conf" | head -1)
        [ "$had" = "$cpus" ] && return 0
        if [ "${CF_SLURM_ALONE:-0}" != 1 ]; then
            echo "slurm: the Slurm of $dir, in use by another test run, has nodes of CPUs=$had, not this machine's $cpus" >&2
            exit 77 # left to that run
        fi
    fi
    stop
    if [ "$nodes" = 2 ]; then
        why=$("$cluster" available) || skip "no two nodes: ${why#SKIP: }"
        "$cluster" up 2 > "$dir/cluster.out" 2>&1 || skip "no two nodes: $(tail -1 "$dir/cluster.out")"
    fi
    # munge: a key of our own, a socket of our own
    [ -s "$dir/munge.key" ] || { dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2> /dev/null && chmod 400 "$dir/munge.key"; }
    mkdir -p "$dir/munge"
    chmod 700 "$dir/munge"
    munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
        --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" > "$dir/munged.out" 2>&1 ||
        skip "munged does not start: $(tail -1 "$dir/munged.out")"
    # proctrack/cgroup as a site would; linuxproc where a container's cgroups refuse it
    # (CF_SLURM_PROCTRACK=linuxproc tries only that)
    if [ "${CF_SLURM_PROCTRACK:-cgroup}" = cgroup ] && [ "$nodes" = 1 ] && start_slurm cgroup; then
        echo cgroup > "$dir/proctrack"
        return 0
    fi
    stop_slurmd
    stop_one slurmctld
    if start_slurm linuxproc; then
        echo linuxproc > "$dir/proctrack"
        return 0
    fi
    skip "slurmctld/slurmd do not take jobs here: $(tail -1 "$dir"/slurmd*.log 2> /dev/null | tail -1)"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
env) say_env ;;
*)
    echo "usage: $0 start|stop|env" >&2
    exit 2
    ;;
esac
