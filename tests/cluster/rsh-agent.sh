#!/bin/sh
# rsh-agent.sh - Open MPI "plm_rsh_agent" for the emulated cluster.
#
# Called by mpirun (or orted) the way it would call ssh:
#     rsh-agent.sh [ssh-options] HOST word...
# HOST is a node name (cfn0, cfn1, ...) or a node address (10.77.0.1, ...).
# The words form one shell command line (Open MPI quotes them for a remote
# shell, e.g. `orted -mca ess "env" ...`), so, as sshd does, they are joined
# with spaces and run by `sh -c`.  The command runs inside the node's network
# namespace and in a fresh UTS namespace whose hostname is the node name:
#     ip netns exec NS unshare --uts sh -c 'hostname NS; exec sh -c "$cmd"'
#
# Environment: like a fresh ssh login, the remote command does NOT inherit
# the caller's environment; only a login-like set is passed (PATH,
# LD_LIBRARY_PATH, HOME, USER, LOGNAME, LANG, LC_ALL, TMPDIR, SHELL=/bin/sh).
# Anything else (LD_PRELOAD, COMMFIT_*, ...) reaches the ranks on other nodes
# only through `mpirun -x VAR`, as on a real cluster.
# CFN_AGENT_KEEP_ENV=1 passes the caller's full environment instead.
#
# Settings (read from the environment; `cluster.sh run` exports them):
#   CFN_PREFIX  namespace/node name prefix (default cfn)
#   CFN_SUBNET  first three octets of the node subnet (default 10.77.0)
#   CFN_AGENT_LOG  if set, append each invocation to this file

for d in /usr/sbin /sbin; do
    case ":${PATH:-}:" in *":$d:"*) ;; *) PATH=${PATH:+$PATH:}$d ;; esac
done
PREFIX=${CFN_PREFIX:-cfn}
SUBNET=${CFN_SUBNET:-10.77.0}

# Skip ssh-style options (e.g. -x, -o Opt=val, -l user).
while [ $# -gt 0 ]; do
    case $1 in
        -[bcDEeFIiJLlmOoPpQRSWw]) shift 2 ;;
        --) shift; break ;;
        -*) shift ;;
        *) break ;;
    esac
done

if [ $# -lt 2 ]; then
    echo "rsh-agent.sh: usage: rsh-agent.sh HOST command..." >&2
    exit 255
fi

host=${1#*@}          # drop user@
shift

# Map HOST to its namespace: a node name, or an address SUBNET.(K+1) -> K.
ns=
case $host in
    "$SUBNET".*)
        last=${host#"$SUBNET".}
        case $last in
            ''|*[!0-9]*) ;;
            *) [ "$last" -ge 1 ] && ns=$PREFIX$((last - 1)) ;;
        esac ;;
    *)
        name=${host%%.*}  # drop a domain part
        case $name in
            "$PREFIX"*)
                k=${name#"$PREFIX"}
                case $k in
                    ''|*[!0-9]*) ;;
                    *) ns=$name ;;
                esac ;;
        esac ;;
esac
if [ -z "$ns" ] || [ ! -e "/run/netns/$ns" ]; then
    echo "rsh-agent.sh: '$host' is not a node of the emulated cluster" \
         "(prefix $PREFIX, subnet $SUBNET.0/24)" >&2
    exit 255
fi

cmd="$*"
if [ -n "$CFN_AGENT_LOG" ]; then
    printf '%s -> %s: %s\n' "$host" "$ns" "$cmd" >>"$CFN_AGENT_LOG" 2>/dev/null
fi

if [ "${CFN_AGENT_KEEP_ENV:-0}" = 1 ]; then
    set --
else
    set -- env -i \
        PATH="${PATH:-/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin}" \
        HOME="${HOME:-/root}" SHELL=/bin/sh
    for v in LD_LIBRARY_PATH USER LOGNAME LANG LC_ALL TMPDIR; do
        val=; isset=
        eval "val=\${$v-}; isset=\${$v+x}"
        [ -n "$isset" ] && set -- "$@" "$v=$val"
    done
fi

# The quoted script runs in the new UTS namespace: set the node's hostname,
# then run the command line with a POSIX shell, as sshd would with $SHELL -c.
exec ip netns exec "$ns" unshare --uts "$@" \
    /bin/sh -c 'hostname "$1" || exit 255; exec /bin/sh -c "$2"' sh "$ns" "$cmd"
