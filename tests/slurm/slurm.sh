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
set -u
dir=${CF_SLURM_DIR:-/tmp/commfit-slurm}
host=$(hostname -s)
port=${CF_SLURM_PORT:-16817}

say_env() {
    echo "export SLURM_CONF=$dir/slurm.conf"
}

stop_one() { # name: stop the daemon whose pid file is ours, wait for it
    local pidf=$dir/$1.pid pid
    [ -s "$pidf" ] || return 0
    pid=$(cat "$pidf")
    # only the process that our pid file names, and only if it is still that daemon
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "$1"; then
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
        SLURM_CONF=$dir/slurm.conf scancel --full --quiet -u "$(id -un)" 2> /dev/null
    fi
    stop_one slurmd
    stop_one slurmctld
    stop_one munged
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
    cat > "$dir/slurm.conf" << EOF
ClusterName=commfit
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
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
InactiveLimit=0
SlurmdTimeout=30
MessageTimeout=20
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    cat > "$dir/cgroup.conf" << EOF
CgroupPlugin=autodetect
IgnoreSystemd=yes
ConstrainCores=no
ConstrainRAMSpace=no
EOF
}

wait_node() { # seconds: until the node takes jobs
    for _ in $(seq $(($1 * 5))); do
        state=$(SLURM_CONF=$dir/slurm.conf sinfo -h -n "$host" -o %t 2> /dev/null)
        case "$state" in idle* | mix* | alloc*) return 0 ;; esac
        sleep 0.2
    done
    return 1
}

start_slurm() { # proctrack: 0 when the node came up
    config "$1"
    mkdir -p "$dir/state" "$dir/spool"
    rm -rf "$dir/state"/* "$dir/spool"/*
    SLURM_CONF=$dir/slurm.conf slurmctld -i > "$dir/slurmctld.out" 2>&1 || return 1
    SLURM_CONF=$dir/slurm.conf slurmd > "$dir/slurmd.out" 2>&1 || return 1
    wait_node 20 || return 1
    # a job must run to the end, not just the node be there
    local out
    out=$(SLURM_CONF=$dir/slurm.conf timeout 20 srun -n 1 -t 1 true 2>&1) || { echo "$out" > "$dir/probe.log"; return 1; }
}

start() {
    mkdir -p "$dir"
    chmod 700 "$dir"
    install
    if [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2> /dev/null && wait_node 1; then
        return 0 # already ours and up
    fi
    stop
    # munge: a key of our own, a socket of our own
    [ -s "$dir/munge.key" ] || { dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2> /dev/null && chmod 400 "$dir/munge.key"; }
    mkdir -p "$dir/munge"
    chmod 700 "$dir/munge"
    munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
        --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" > "$dir/munged.out" 2>&1 ||
        skip "munged does not start: $(tail -1 "$dir/munged.out")"
    # proctrack/cgroup as a site would; linuxproc where a container's cgroups refuse it
    # (CF_SLURM_PROCTRACK=linuxproc tries only that)
    if [ "${CF_SLURM_PROCTRACK:-cgroup}" = cgroup ] && start_slurm cgroup; then
        echo cgroup > "$dir/proctrack"
        return 0
    fi
    stop_one slurmd
    stop_one slurmctld
    if start_slurm linuxproc; then
        echo linuxproc > "$dir/proctrack"
        return 0
    fi
    skip "slurmctld/slurmd do not take jobs here: $(tail -1 "$dir/slurmd.log" 2> /dev/null)"
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
