#!/bin/bash
# record.sh - re-record cases of the profile corpus (tests/corpus/<case>/).
#
# Usage: tests/corpus/record.sh [--build DIR] CASE... | all | list
#   DIR defaults to ./build under the source tree (configured and built:
#   .libs/libcommfit.so, tools/commfit, examples/pingpong, examples/coll_sweep).
#
# Every case runs one program under the profiler and keeps, in its directory:
#   profile.json  the commfit profile as recorded (its `samples` section is
#                 dropped when the file would be larger than ~300 kB)
#   truth.csv     size_bytes,time_s as the program itself measured them in the
#                 SAME run (pingpong: half the median round trip = one-way
#                 time; coll_sweep: median over iterations and ranks of
#                 the time per call on each rank, what a profiler on each
#                 rank sees; NetPIPE: its own one-way time per size)
#   meta.json     what ran, on which transport and path, what physics expects
#                 (`expect`, read by tests/tools/check_corpus.py), date, host
#   raw program output (pingpong.csv, coll_sweep.csv, np.out, log.lammps)
#
# Cases (transport; ranks):
#   shm-pingpong-2 shm-pingpong-4 shm-allreduce-2 shm-allreduce-4
#                              ob1 + vader shared memory
#   shm-pingpong10-2           the same ping-pong on 10 log-spaced sizes
#                              (pingpong --sizes 10), as a real job's sweep
#   ucx-pingpong-2 ucx-allreduce-2   UCX PML (any transport: shm here)
#   tcp-pingpong-2 tcp-allreduce-2   ob1 + tcp BTL on lo only (the connections
#                              are checked to be 127.0.0.1 while it runs)
#   shaped-200mbit-pingpong-2 shaped-200mbit-allreduce-2
#   shaped-1gbit-pingpong-2 shaped-1gbit-allreduce-2
#   shaped-200mbit-pingpong-4 shaped-200mbit-allreduce-4 (~3 min: 8 ms per call)
#                              two emulated nodes (tests/cluster/cluster.sh:
#                              network namespaces, veth, egress `tc tbf`
#                              rate R burst 256kb), ob1 + tcp between nodes;
#                              -4 is 2 ranks per node mapped by node, so the
#                              ping-pong pair 0-1 crosses the link
#   netpipe-shm-2              NPopenmpi (NetPIPE) on ob1 + vader
#   lammps-melt-2 lammps-melt-4
#                              LAMMPS in.melt, 2 and 4 ranks, ob1 + vader, with a
#                              NetPIPE run on the same path right before it
#   hpcc-shm-2                 HPCC (the whole suite, small N), 2 ranks, ob1 + vader;
#                              its own ping-pong is the truth of the path's link
#   cp2k-h2o-2                 cp2k's H2O example (Quickstep, 3 MD steps), 2 ranks, ob1 +
#                              vader; Open MPI's monitoring of a run without the profiler
#                              (mon.*.prof) is the truth of its point-to-point messages,
#                              mpiP's report of another (mpip.txt) of its calls per operation
#   veth-torch-mlp-2 veth-torch-resnet20-2
#   veth-torch-resnet20-overlap-2 veth-torch-resnet20-horovod-2
#                              examples/torch_train.py on two emulated nodes (one
#                              rank each, TCP, unshaped): per tensor, and overlapped
#                              from the gradient hooks (-overlap: the hooks also call
#                              MPI_Testall; -horovod: posts only, MPI_Waitall before
#                              the optimizer step), 30 steps after 2 unrecorded ones
#   veth-torch-resnet20-horovod-cal-2
#                              -horovod with COMMFIT_CALIBRATE=2s: the calibration times
#                              MPI_Iallreduce itself from 8 B up, so the stream's own
#                              sizes and its buckets are priced on measurements
#   veth-torch-resnet20-overlap-gap-2
#                              -overlap with COMMFIT_CALIBRATE=2s, recorded with the
#                              framework's time from each post to the hook's
#                              MPI_Testall after it (job.post_gap_s), held to the
#                              trainer's own post timer
#   veth-torch-resnet-stream-overlap-cal-2
#                              resnet-stream (ResNet-20 with many more, smaller tensors)
#                              overlapped, COMMFIT_CALIBRATE=2s: its fused buckets are
#                              also timed in flight together (calibration in_flight)
#   veth-torch-resnet-stream-overlap-refault-2
#                              the same, recorded with the minor page faults per step
#                              (ranks[].step_minor_faults) and of the sets in flight:
#                              glibc's malloc as it comes faults the memory it hands
#                              back in afresh every step
#   veth-torch-resnet-stream-overlap-malloc-2
#                              the same with MALLOC_MMAP_THRESHOLD_=67108864
#                              MALLOC_TRIM_THRESHOLD_=1073741824: malloc keeps it
#   veth-torch-resnet-stream-2 resnet-stream per tensor (blocking), COMMFIT_CALIBRATE=2s:
#                              the heap faulted in afresh every step, which the
#                              blocking buckets' price leaves out (the report says so)
#   veth-torch-resnet-stream-overlap-pt-2 veth-torch-resnet-stream-overlap-512k-2
#                              a pair, recorded one after the other as a user settles
#                              an "uncertain" overlap verdict: resnet-stream overlapped
#                              per tensor, then in the 512 KiB buckets its advice names
#                              (--mode overlap-bucket), COMMFIT_CALIBRATE=2s each;
#                              `commfit diff` of the two held to the trainers' timers
#   veth-torch-resnet20-overlap-lead-2 veth-torch-resnet20-overlap-64k-2
#                              the same for ResNet-20 overlapped, then in 64 KiB
#                              buckets, recorded with the framework's time from a
#                              poll to the next post (job.post_lead_s): the bound
#                              diff states beside its saving, held to the trainers'
#   veth-torch-mlp-200mbit-pt-2 veth-torch-mlp-200mbit-25m-2
#                              the same for a blocking stream: the MLP per tensor
#                              through tbf 200mbit ("uncertain"), then in one
#                              bucket of 25 MiB a step (DDP's default), one call a
#                              step: too few to measure the framework's gap between
#                              calls, which `commfit diff` takes from A
#   veth-torch-mlp-again-2     veth-torch-mlp-2 run again: its fusion advice over both
#                              runs (commfit report A B) against each run's alone
#   veth-torch-mlp-200mbit-2   the same trainer through tbf 200mbit: a run whose advice
#                              disagrees with veth-torch-mlp-2's (over both: uncertain)
#
# Needs root for the shaped and veth cases, netpipe-openmpi (NPopenmpi), lammps +
# lammps-examples (lmp, in.melt), hpcc, python3-torch and python3-mpi4py:
#   apt-get install netpipe-openmpi lammps lammps-examples hpcc python3-torch python3-mpi4py
#   (cp2k-h2o-2: apt-get install cp2k cp2k-data, and mpiP: MPIP_LIB=PREFIX/lib/libmpiP.so,
#   built by tests/bench/build_mpip.sh)
# The machine should be as quiet as it can be: truths and profiles share the
# noise of one run, but a loaded machine makes noisy sweeps.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$src/build
if [ "${1:-}" = --build ]; then build=$(cd "$2" && pwd); shift 2; fi
lib=$build/.libs/libcommfit.so
commfit=$build/tools/commfit
cluster=$src/tests/cluster/cluster.sh
PY=${PYTHON:-python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_rmaps_base_oversubscribe=1

. "$src/tests/transports.sh"
# shellcheck disable=SC2206
SHM=($TRANSPORT_SHM)
# shellcheck disable=SC2206
TCP=($TRANSPORT_TCP_LO)
# shellcheck disable=SC2206
UCX=($TRANSPORT_UCX)
BURST=256kb
MELT=$(ls /usr/share/lammps/examples/melt/in.melt /usr/share/doc/lammps*/examples/melt/in.melt* 2>/dev/null | head -n 1)

all_cases="shm-pingpong-2 shm-pingpong10-2 shm-pingpong-4 shm-allreduce-2 shm-allreduce-4 ucx-pingpong-2 ucx-allreduce-2
tcp-pingpong-2 tcp-allreduce-2 shaped-200mbit-pingpong-2 shaped-200mbit-allreduce-2 shaped-1gbit-pingpong-2
shaped-1gbit-allreduce-2 shaped-200mbit-pingpong-4 shaped-200mbit-allreduce-4 netpipe-shm-2 lammps-melt-4
lammps-melt-2 hpcc-shm-2 veth-torch-mlp-2 veth-torch-resnet20-2 veth-torch-resnet20-overlap-2
veth-torch-resnet20-horovod-2 veth-torch-resnet20-horovod-cal-2 veth-torch-resnet-stream-overlap-cal-2
veth-torch-resnet-stream-overlap-refault-2 veth-torch-resnet-stream-overlap-malloc-2 veth-torch-resnet-stream-2 veth-torch-mlp-again-2
veth-torch-mlp-200mbit-2 veth-torch-resnet20-overlap-gap-2 veth-torch-resnet-stream-overlap-pt-2
veth-torch-resnet-stream-overlap-512k-2 veth-torch-mlp-200mbit-pt-2 veth-torch-mlp-200mbit-25m-2
veth-torch-resnet20-overlap-lead-2 veth-torch-resnet20-overlap-64k-2 cp2k-h2o-2"

die() { echo "record.sh: $*" >&2; exit 1; }

# meta KEY=JSON...: write $dir/meta.json from the case's settings
meta() {
    "$PY" - "$dir/meta.json" "$@" <<'PY'
import json, os, socket, sys, time, platform
m = {}
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    try:
        m[k] = json.loads(v)
    except ValueError:
        m[k] = v
m["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
m["host"] = {"name": socket.gethostname(), "kernel": platform.release(), "cores": os.cpu_count(),
             "loadavg_after": open("/proc/loadavg").read().split()[:3]}
json.dump(m, open(sys.argv[1], "w"), indent=1, sort_keys=True)
open(sys.argv[1], "a").write("\n")
PY
}

# jsonarr ARGS...: the arguments as a JSON array (the command line in meta)
jsonarr() { "$PY" -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$@"; }

# shrink: drop samples from a profile larger than ~300 kB
shrink() {
    "$PY" - "$dir/profile.json" <<'PY'
import json, os, sys
p = sys.argv[1]
if os.path.getsize(p) > 300000:
    d = json.load(open(p))
    d.pop("samples", None)
    json.dump(d, open(p, "w"), indent=1)
    print("record.sh: %s: samples dropped, %d bytes" % (p, os.path.getsize(p)))
PY
}

# truth_pingpong / truth_coll: program CSV -> truth.csv (size_bytes,time_s)
truth_pingpong() {
    "$PY" -c '
import csv, sys
w = open(sys.argv[2], "w"); w.write("size_bytes,time_s\n")
for r in csv.DictReader(open(sys.argv[1])):
    w.write("%s,%.6e\n" % (r["bytes"], float(r["half_rtt_us"]) * 1e-6))' "$dir/pingpong.csv" "$dir/truth.csv"
}
truth_coll() {
    "$PY" -c '
import csv, sys
w = open(sys.argv[2], "w"); w.write("size_bytes,time_s\n")
for r in csv.DictReader(open(sys.argv[1])):
    w.write("%s,%.6e\n" % (r["bytes"], float(r["rank_time_us"]) * 1e-6))' "$dir/coll_sweep.csv" "$dir/truth.csv"
}
# NetPIPE's output file: bytes, Mbps, one-way seconds per line
truth_netpipe() { # NPOUT TRUTH
    "$PY" -c '
import sys
w = open(sys.argv[2], "w"); w.write("size_bytes,time_s\n")
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) >= 3:
        w.write("%d,%.6e\n" % (int(f[0]), float(f[2])))' "$1" "$2"
}
# netpipe_summary NPOUT: {"latency_s": time of the smallest message, "peak_Bps": max throughput}
netpipe_summary() {
    "$PY" -c '
import json, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) >= 3]
rows = [(int(r[0]), float(r[1]) * 1e6 / 8, float(r[2])) for r in rows]
small = min(rows)
peak = max(rows, key=lambda r: r[1])
print(json.dumps({"latency_s": small[2], "latency_size_bytes": small[0],
                  "peak_Bps": peak[1], "peak_size_bytes": peak[0]}))' "$1"
}

SWEEP_EXPECT='{"verdict_small": "startup-bound", "verdict_large": "bandwidth-bound"}'

# local CASE: pingpong/allreduce on this host (shm, ucx, tcp)
run_local() {
    local case=$1 transport=${1%%-*} np=${1##*-} kind prog opts out cmd
    kind=${case#*-}; kind=${kind%-*}
    case $transport in
        shm) opts=("${SHM[@]}"); tdesc="ob1 + vader (shared memory)" ;;
        ucx) opts=("${UCX[@]}"); tdesc="UCX PML, pml_ucx_tls any, pml_ucx_devices any" ;;
        tcp) opts=("${TCP[@]}"); tdesc="ob1 + tcp BTL on lo (127.0.0.1)" ;;
    esac
    if [ "$kind" = pingpong ] || [ "$kind" = pingpong10 ]; then
        prog=("$build/examples/pingpong" --min 8 --max 4MiB --csv); out=pingpong.csv
        # pingpong10: the 10 log-spaced sizes a real job's sweep may have
        [ "$kind" = pingpong10 ] && prog+=(--sizes 10)
        fits='[{"op": "p2p", "joint": true, "path": "intra-node"}, {"op": "MPI_Send", "path": "intra-node"}]'
    else
        prog=("$build/examples/coll_sweep" --op allreduce --min 8 --max 4MiB --csv); out=coll_sweep.csv
        fits='[{"op": "MPI_Allreduce", "comm": "world"}]'
    fi
    cmd=(mpirun -np "$np" --oversubscribe --bind-to none "${opts[@]}" "${prog[@]}")
    local conns=null
    if [ "$transport" = tcp ]; then
        COMMFIT_LIB=$lib "$commfit" run -q -o "$dir/profile.json" -- "${cmd[@]}" > "$dir/$out" &
        local job=$! c="" pairs
        for _ in $(seq 1 40); do
            sleep 0.25
            c=$(ss -tnpH 2>/dev/null | grep -E '"(pingpong|coll_sweep)"' | awk '{print $4 " " $5}' | sort -u)
            [ -n "$c" ] && break
        done
        wait $job || die "$case: job failed"
        echo "$c" | sed 's/^/record.sh: tcp connection /'
        [ -n "$c" ] || die "$case: no TCP connection of the program seen"
        echo "$c" | grep -qv '^127\.0\.0\.1:[0-9]* 127\.0\.0\.1:' && die "$case: a connection not on lo: $c"
        mapfile -t pairs < <(echo "$c" | tr ' ' '>')
        conns=$(jsonarr "${pairs[@]}")
    else
        COMMFIT_LIB=$lib "$commfit" run -q -o "$dir/profile.json" -- "${cmd[@]}" > "$dir/$out" || die "$case: job failed"
    fi
    if [ "$kind" = allreduce ]; then truth_coll; else truth_pingpong; fi
    shrink
    local exp
    exp=$("$PY" -c 'import json,sys; e=json.loads(sys.argv[1]); e["fits"]=json.loads(sys.argv[2]); print(json.dumps(e))' \
        "$SWEEP_EXPECT" "$fits")
    meta case="$case" program="$(jsonarr "${prog[@]}")" \
        command="$(jsonarr "$commfit" run -q -o profile.json -- "${cmd[@]}")" \
        transport="$tdesc" path="intra-node" ranks="$np" ranks_per_node="$np" nodes=1 \
        truth="$( [ "$kind" != allreduce ] && echo '"pingpong: half the median round trip per size (one-way), 0<->1"' ||
                  echo '"coll_sweep: median over iterations and ranks of the time per call on each rank (rank_time_us; time_us in coll_sweep.csv is that of the slowest rank)"')" \
        tcp_connections="$conns" expect="$exp"
}

# shaped-RATE-KIND-NP: two namespace nodes, each egress shaped by tbf
run_shaped() {
    local case=$1 rest rate kind np prog out fits map=() rpn=1 bits
    rest=${case#shaped-}; rate=${rest%%-*}; rest=${rest#*-}; kind=${rest%-*}; np=${rest##*-}
    "$cluster" available --shaping > /dev/null || die "$case: no emulated cluster here (needs root, ip netns, tc tbf)"
    export CFN_PREFIX=cfr$$
    trap '"$cluster" down > /dev/null 2>&1' EXIT
    "$cluster" up 2 --rate "$rate" --burst "$BURST" > /dev/null || die "$case: cluster up failed"
    [ "$np" -gt 2 ] && { map=(--map-by node); rpn=$((np / 2)); }
    if [ "$kind" = pingpong ]; then
        # at 200mbit a 4 MiB round trip takes 0.35 s: keep the sweep to ~15 s;
        # 2 MiB is still 8x the burst, so the slope above it is the rate
        case $rate in 200mbit) max=2MiB ;; *) max=4MiB ;; esac
        prog=("$build/examples/pingpong" --min 8 --max "$max" --csv); out=pingpong.csv
        fits='[{"op": "p2p", "joint": true, "path": "inter-node"}, {"op": "MPI_Send", "path": "inter-node"}]'
    else
        case $rate in 200mbit) max=1MiB ;; *) max=4MiB ;; esac
        prog=("$build/examples/coll_sweep" --op allreduce --min 8 --max "$max" --csv); out=coll_sweep.csv
        fits='[{"op": "MPI_Allreduce", "comm": "world"}]'
    fi
    local before after stream
    stream=$(tbf_stream) || die "$case: the TCP stream through the shaper failed"
    before=$("$cluster" exec "${CFN_PREFIX}0" -- tc -s qdisc show dev eth0)
    COMMFIT_OUTPUT=$dir/profile.json COMMFIT_SUMMARY=0 "$cluster" run --slots "$rpn" -- -np "$np" "${map[@]}" \
        -x LD_PRELOAD="$lib" -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY "${prog[@]}" > "$dir/$out" || die "$case: job failed"
    after=$("$cluster" exec "${CFN_PREFIX}0" -- tc -s qdisc show dev eth0)
    "$cluster" down > /dev/null 2>&1; trap - EXIT
    if [ "$kind" = pingpong ]; then truth_pingpong; else truth_coll; fi
    shrink
    # tc rate units: mbit = 1e6 bit/s, gbit = 1e9 bit/s; burst kb = 1024 bytes
    case $rate in *mbit) bits=$((${rate%mbit} * 1000000)) ;; *gbit) bits=$((${rate%gbit} * 1000000000)) ;; esac
    local stats
    stats=$("$PY" - "$before" "$after" <<'PY'
import json, re, sys
def sent(t):
    m = re.search(r"Sent (\d+) bytes (\d+) pkt", t)
    return int(m.group(1)), int(m.group(2))
b0, p0 = sent(sys.argv[1]); b1, p1 = sent(sys.argv[2])
print(json.dumps({"node0_egress_bytes": b1 - b0, "node0_egress_packets": p1 - p0,
                  "bytes_per_packet": round((b1 - b0) / max(1, p1 - p0), 1), "qdisc": sys.argv[2].splitlines()[0]}))
PY
)
    local payload exp
    payload=$("$PY" -c "print($bits / 8 * 1448 / 1514)")
    exp=$("$PY" -c '
import json, sys
e = json.loads(sys.argv[1]); e["fits"] = json.loads(sys.argv[2])
np, kind, payload = int(sys.argv[4]), sys.argv[3], float(sys.argv[5])
# Ping-pong: the payload rate is the slope of T(M) above the burst (see
# payload_rate_derivation).  Allreduce: no rate is claimed.  With 2 ranks every
# algorithm sends the whole vector out of each node once, so the link alone would
# give T = M / rate, but both directions run at once and the two cores also run
# both TCP stacks and the reduction: the times the program measures fall short of the
# link (the truth check holds the fit to those times instead).  With 4 ranks how
# many bytes leave a node depends on the algorithm Open MPI picks.
if kind == "pingpong":
    e["bandwidth_Bps"] = payload; e["bandwidth_tol"] = 0.10
print(json.dumps(e))' "$SWEEP_EXPECT" "$fits" "$kind" "$np" "$payload")
    meta case="$case" program="$(jsonarr "${prog[@]}")" \
        command="$(jsonarr env COMMFIT_OUTPUT=profile.json COMMFIT_SUMMARY=0 tests/cluster/cluster.sh run --slots "$rpn" -- -np "$np" "${map[@]}" -x LD_PRELOAD=libcommfit.so -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY "${prog[@]}")" \
        cluster="$(jsonarr tests/cluster/cluster.sh up 2 --rate "$rate" --burst "$BURST")" \
        transport='"ob1 + tcp BTL between 2 network-namespace nodes over veth + bridge (vader within a node)"' \
        path="inter-node" ranks="$np" ranks_per_node="$rpn" nodes=2 \
        tbf="{\"rate\": \"$rate\", \"rate_bits_per_s\": $bits, \"burst\": \"$BURST\", \"burst_bytes\": 262144, \"latency\": \"50ms\"}" \
        tbf_observed="$stats" \
        payload_rate_Bps="$payload" \
        payload_rate_derivation="\"tbf charges qdisc_pkt_len: for a GSO skb on veth that is skb->len plus (gso_segs - 1) x the headers (Ethernet 14 + IP 20 + TCP 32 with timestamps), i.e. the frames without preamble/FCS: a full frame is 1514 bytes for an MSS of 1448 payload bytes (MTU 1500). Payload rate R = $bits / 8 x 1448 / 1514 B/s. Checked in this run (tbf_stream): a bulk TCP stream node 0 -> node 1 through the same shaper, tc's byte count against the payload sent. tbf_observed is what the qdisc counted during the job itself (acks and small messages pull bytes/packet below 1514). Burst: each node's egress has its own bucket of 256 KiB, which refills while the other node sends, so a ping-pong message M up to about the burst crosses in M / (2 R) (twice the rate), and above it in about (M - burst) / R: the asymptotic B, the slope of T(M) over the largest sizes, is R.\"" \
        tbf_stream="$stream" \
        truth="$( [ "$kind" = pingpong ] && echo '"pingpong: half the median round trip per size (one-way), 0<->1 (on different nodes)"' ||
                  echo '"coll_sweep: median over iterations and ranks of the time per call on each rank (rank_time_us; time_us in coll_sweep.csv is that of the slowest rank)"')" \
        expect="$exp"
}

# tbf_stream: 16 MiB over one TCP connection from node 0 to node 1 through the
# shaper; what tc counted on node 0's egress against the payload (JSON)
tbf_stream() {
    local n0=${CFN_PREFIX}0 n1=${CFN_PREFIX}1 port=5999 b0 b1 out
    "$cluster" exec "$n1" -- "$PY" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1); s.settimeout(20); c, _ = s.accept()
while c.recv(1 << 20): pass
c.close()' "${CFN_SUBNET:-10.77.0}.2" $port &
    local srv=$!
    sleep 0.5
    b0=$("$cluster" exec "$n0" -- tc -s qdisc show dev eth0 | sed -n 's/.*Sent \([0-9]*\) bytes \([0-9]*\) pkt.*/\1 \2/p')
    out=$("$cluster" exec "$n0" -- "$PY" -c '
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20)
mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
b = b"x" * (1 << 20); t = time.time()
for i in range(16): s.sendall(b)
s.shutdown(socket.SHUT_WR); s.recv(1)
print(mss, 16 << 20, time.time() - t)' "${CFN_SUBNET:-10.77.0}.2" $port) || { kill $srv 2>/dev/null; return 1; }
    wait $srv
    b1=$("$cluster" exec "$n0" -- tc -s qdisc show dev eth0 | sed -n 's/.*Sent \([0-9]*\) bytes \([0-9]*\) pkt.*/\1 \2/p')
    "$PY" -c '
import json, sys
b0, p0, b1, p1 = map(int, sys.argv[1].split() + sys.argv[2].split())
mss, payload, secs = int(sys.argv[3].split()[0]), int(sys.argv[3].split()[1]), float(sys.argv[3].split()[2])
print(json.dumps({"mss": mss, "payload_bytes": payload, "tc_bytes": b1 - b0, "tc_packets": p1 - p0,
                  "tc_bytes_per_packet": round((b1 - b0) / (p1 - p0), 1),
                  "payload_per_tc_byte": round(payload / (b1 - b0), 5), "expected_1448_per_1514": round(1448 / 1514, 5),
                  "app_rate_Bps": round(payload / secs)}))' "$b0" "$b1" "$out"
}

run_netpipe() {
    local case=netpipe-shm-2 cmd
    command -v NPopenmpi > /dev/null || die "$case: NPopenmpi not found (apt-get install netpipe-openmpi)"
    cmd=(mpirun -np 2 --oversubscribe --bind-to none "${SHM[@]}" NPopenmpi -l 8 -u 4194304 -p 0 -o "$dir/np.out")
    COMMFIT_LIB=$lib "$commfit" run -q -o "$dir/profile.json" -- "${cmd[@]}" > "$dir/np.log" 2>&1 || die "$case: job failed"
    truth_netpipe "$dir/np.out" "$dir/truth.csv"
    shrink
    local np
    np=$(netpipe_summary "$dir/np.out")
    meta case="$case" program='["NPopenmpi", "-l", "8", "-u", "4194304", "-p", "0", "-o", "np.out"]' \
        command="$(jsonarr "$commfit" run -q -o profile.json -- mpirun -np 2 --oversubscribe --bind-to none "${SHM[@]}" NPopenmpi -l 8 -u 4194304 -p 0 -o np.out)" \
        transport='"ob1 + vader (shared memory)"' path="intra-node" ranks=2 ranks_per_node=2 nodes=1 \
        truth='"np.out: NetPIPE bytes, Mbps, one-way seconds (half its round trip); latency = time of the smallest message, bandwidth = max throughput"' \
        netpipe="$np" \
        expect='{"verdict_small": "startup-bound", "verdict_large": "bandwidth-bound", "fits": [{"op": "p2p", "joint": true, "path": "intra-node"}], "reference": {"path": "intra-node", "alpha_tol": 0.25, "bandwidth_tol": 0.25}}'
}

run_lammps() { # CASE RANKS
    local case=$1 ranks=$2 cmd np
    command -v lmp > /dev/null || die "$case: lmp not found (apt-get install lammps)"
    [ -n "$MELT" ] || die "$case: in.melt not found (apt-get install lammps-examples)"
    # NetPIPE on the same path, without the profiler, right before
    if command -v NPopenmpi > /dev/null; then
        mpirun -np 2 --oversubscribe --bind-to none "${SHM[@]}" NPopenmpi -l 8 -u 4194304 -p 0 -o "$dir/np.out" > /dev/null 2>&1 ||
            die "$case: NetPIPE failed"
        np=$(netpipe_summary "$dir/np.out")
    else
        die "$case: NPopenmpi not found (apt-get install netpipe-openmpi)"
    fi
    cp "$MELT" "$dir/in.melt"
    cmd=(mpirun -np "$ranks" --oversubscribe --bind-to none "${SHM[@]}" lmp -in in.melt -log log.lammps -screen none)
    (cd "$dir" && COMMFIT_LIB=$lib "$commfit" run -q -o profile.json -- "${cmd[@]}") || die "$case: job failed"
    shrink
    local truth
    truth=$("$PY" - "$dir/log.lammps" <<'PY'
import json, re, sys
t = {}
for l in open(sys.argv[1]):
    m = re.match(r"Loop time of ([0-9.eE+-]+) on (\d+) procs for (\d+) steps", l)
    if m:
        t["loop_time_s"], t["procs"], t["steps"] = float(m.group(1)), int(m.group(2)), int(m.group(3))
    f = [x.strip() for x in l.split("|")]
    if len(f) == 6 and f[0] in ("Pair", "Neigh", "Comm", "Output", "Modify", "Other"):
        v = [float(x) if x else None for x in f[1:]]  # "Other" has only avg and %total
        t[f[0].lower()] = {"min_s": v[0], "avg_s": v[1], "max_s": v[2], "varavg_pct": v[3], "total_pct": v[4]}
print(json.dumps(t))
PY
)
    printf 'section,min_s,avg_s,max_s,total_pct\n' > "$dir/truth.csv"
    "$PY" -c 'import json,sys; t=json.loads(sys.argv[1])
for k in ("pair","neigh","comm","output","modify","other"):
    if k in t: print(",".join([k] + ["" if t[k][c] is None else "%g" % t[k][c] for c in ("min_s", "avg_s", "max_s", "total_pct")]))
lt = t["loop_time_s"]
print("loop,%g,%g,%g,100" % (lt, lt, lt))' "$truth" >> "$dir/truth.csv"
    meta case="$case" program='["lmp", "-in", "in.melt", "-log", "log.lammps", "-screen", "none"]' \
        command="$(jsonarr "$commfit" run -q -o profile.json -- "${cmd[@]}")" \
        input="\"$MELT (3d Lennard-Jones melt, 4000 atoms, 250 steps)\"" \
        transport='"ob1 + vader (shared memory)"' path="intra-node" ranks="$ranks" ranks_per_node="$ranks" nodes=1 \
        truth='"log.lammps: MPI task timing breakdown (truth.csv: section,min_s,avg_s,max_s,total_pct; loop = Loop time)"' \
        lammps="$truth" netpipe="$np" \
        netpipe_command="$(jsonarr mpirun -np 2 --oversubscribe --bind-to none "${SHM[@]}" NPopenmpi -l 8 -u 4194304 -p 0 -o np.out)" \
        expect='{"no_fuse": true, "nonblocking_not_cost": true, "reference": {"path": "intra-node", "alpha_tol": 0.25, "bandwidth_tol": 0.25}}'
}

run_hpcc() {
    local case=hpcc-shm-2 cmd
    command -v hpcc > /dev/null || die "$case: hpcc not found (apt-get install hpcc)"
    # the example input with a 1 x 2 grid and N = 1000: the whole suite in ~20 s
    sed '11s/^2 /1 /' /usr/share/doc/hpcc/examples/_hpccinf.txt > "$dir/hpccinf.txt"
    cmd=(mpirun -np 2 --oversubscribe --bind-to none "${SHM[@]}" -x OMP_NUM_THREADS=1 hpcc)
    (cd "$dir" && COMMFIT_CALIBRATE=0 COMMFIT_LIB=$lib "$commfit" run -q -o profile.json -- "${cmd[@]}" > hpcc.log 2>&1) ||
        die "$case: job failed"
    rm -f "$dir/hpcc.log"
    shrink
    local np
    np=$("$PY" - "$dir/hpccoutf.txt" "$dir/truth.csv" <<'PY'
import json, sys
v = dict(l.strip().split("=", 1) for l in open(sys.argv[1]) if "PingPong" in l and "=" in l)
lat, bw = float(v["MinPingPongLatency_usec"]) * 1e-6, float(v["MaxPingPongBandwidth_GBytes"]) * 1e9
open(sys.argv[2], "w").write("size_bytes,time_s\n8,%.6e\n2000000,%.6e\n" % (lat, 2e6 / bw))
print(json.dumps({"latency_s": lat, "latency_size_bytes": 8, "peak_Bps": bw, "peak_size_bytes": 2000000,
                  "source": "HPCC's own ping-pong (hpccoutf.txt: MinPingPongLatency_usec, MaxPingPongBandwidth_GBytes), not NetPIPE"}))
PY
) || die "$case: no ping-pong in hpccoutf.txt"
    meta case="$case" program='["hpcc"]' command="$(jsonarr env COMMFIT_CALIBRATE=0 "$commfit" run -q -o profile.json -- "${cmd[@]}")" \
        transport='"ob1 + vader (shared memory)"' path="intra-node" ranks=2 ranks_per_node=2 nodes=1 \
        truth='"hpccoutf.txt: HPCC'"'"'s ping-pong between the 2 ranks (MPI_Send/MPI_Recv on its own duplicate of world), min latency at 8 B, max bandwidth at 2 MB (GB = 1e9 B); the rest of the suite (HPL, PTRANS, FFT, ring exchanges with Isend/Irecv and Testany polling) runs in the same job"' \
        commfit='"recorded without calibration (COMMFIT_CALIBRATE=0): the program'"'"'s own point-to-point traffic must give the reference link"' \
        netpipe="$np" \
        expect='{"reference": {"path": "intra-node", "alpha_tol": 0.25, "bandwidth_tol": 0.25, "strict": true}}'
}

run_cp2k() {
    local case=cp2k-h2o-2 cmd
    command -v cp2k.psmp > /dev/null || die "$case: cp2k not found (apt-get install cp2k cp2k-data)"
    # the example, 3 MD steps instead of 5: about half a second on 2 ranks
    sed 's/STEPS 5/STEPS 3/' /usr/share/doc/cp2k/examples/H2O.inp > "$dir/H2O.inp"
    cmd=(mpirun -np 2 --oversubscribe --bind-to none "${SHM[@]}" -x OMP_NUM_THREADS=1 cp2k.psmp -i H2O.inp)
    # the truth: the same job without the profiler, under Open MPI's monitoring PML
    (cd "$dir" && mpirun -np 2 --oversubscribe --bind-to none --mca btl self,vader,tcp --mca pml ob1,monitoring \
        --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3 --mca pml_monitoring_filename "$dir/mon" \
        -x OMP_NUM_THREADS=1 cp2k.psmp -i H2O.inp > cp2k-plain.log 2>&1) || die "$case: job without the profiler failed"
    # and the calls per operation: the same job under mpiP (its cheapest mode)
    [ -n "${MPIP_LIB:-}" ] && [ -f "$MPIP_LIB" ] ||
        die "$case: give MPIP_LIB=PREFIX/lib/libmpiP.so (tests/bench/build_mpip.sh builds it)"
    rm -f "$dir"/H2O_OT* "$dir"/*.mpiP
    (cd "$dir" && mpirun -np 2 --oversubscribe --bind-to none "${SHM[@]}" -x OMP_NUM_THREADS=1 -x LD_PRELOAD="$MPIP_LIB" \
        -x MPIP="-k 0" cp2k.psmp -i H2O.inp > cp2k-mpip.log 2>&1) ||
        die "$case: job under mpiP failed"
    mv "$dir"/*.mpiP "$dir/mpip.txt" || die "$case: mpiP wrote no report"
    rm -f "$dir"/H2O_OT* "$dir"/*.wfn*
    (cd "$dir" && COMMFIT_CALIBRATE=0 COMMFIT_LIB=$lib "$commfit" run -q -o profile.json -- "${cmd[@]}" > cp2k.log 2>&1) ||
        die "$case: job failed"
    rm -f "$dir"/cp2k*.log "$dir"/H2O_OT* "$dir"/*.wfn*
    shrink
    meta case="$case" program='["cp2k.psmp", "-i", "H2O.inp"]' \
        command="$(jsonarr env COMMFIT_CALIBRATE=0 "$commfit" run -q -o profile.json -- "${cmd[@]}")" \
        input='"cp2k'"'"'s example H2O.inp (one water molecule, Quickstep DFT, DZVP-GTH-PADE), MD for 3 steps"' \
        transport='"ob1 + vader (shared memory)"' path="intra-node" ranks=2 ranks_per_node=2 nodes=1 \
        truth='"mon.0.prof, mon.1.prof: Open MPI'"'"'s pml monitoring (pml_monitoring_enable 2) of the same job run without the profiler: point-to-point messages and bytes each rank sent to each (E lines); mpip.txt: mpiP (-k 0) of the same job: calls per operation and bytes sent"' \
        expect='{"monitoring": true, "mpip": true, "program": "cp2k.psmp", "frameworks": [], "no_framework_settings": true, "waiting": true}'
}

run_torch() { # CASE
    local case=$1 targs cal=auto envx=() refaults= rate=() runs= gap= against=
    case $case in
        veth-torch-mlp-2) targs=(--model mlp --mode per-tensor) ;;
        veth-torch-mlp-again-2) targs=(--model mlp --mode per-tensor)
            runs='"runs": {"combine": [["veth-torch-mlp-2"], ["veth-torch-mlp-2", "veth-torch-mlp-200mbit-2"]], "op": "MPI_Allreduce", "comm": "world", "unmatched": "veth-torch-resnet20-2"}' ;;
        # its per-size truth, through the tbf queue, holds the queue's wait: no fit claimed
        veth-torch-mlp-200mbit-2) targs=(--model mlp --mode per-tensor) rate=(--rate 200mbit --burst 64kb) refaults=none
            runs='"runs": {"combine": [["veth-torch-mlp-2"]], "op": "MPI_Allreduce", "comm": "world"}' ;;
        veth-torch-mlp-200mbit-pt-2) targs=(--model mlp --mode per-tensor) rate=(--rate 200mbit --burst 64kb) cal=2s \
            refaults=none ;;
        veth-torch-mlp-200mbit-25m-2) targs=(--model mlp --mode bucket --bucket 26214400) rate=(--rate 200mbit --burst 64kb) \
            cal=2s refaults=none
            against='"diff": {"against": "veth-torch-mlp-200mbit-pt-2", "op": "MPI_Allreduce", "comm": "world"}' ;;
        veth-torch-resnet20-2) targs=(--model resnet20 --mode per-tensor) ;;
        veth-torch-resnet-stream-2) targs=(--model resnet-stream --mode per-tensor) cal=2s refaults=true ;;
        veth-torch-resnet20-overlap-2) targs=(--model resnet20 --mode overlap) ;;
        veth-torch-resnet20-overlap-gap-2) targs=(--model resnet20 --mode overlap --poll-cpu) cal=2s
            gap='"call_gap": {"op": "MPI_Iallreduce", "comm": "world", "min_s": 5e-7}' ;;
        veth-torch-resnet20-horovod-2) targs=(--model resnet20 --mode overlap --no-progress) ;;
        veth-torch-resnet20-horovod-cal-2) targs=(--model resnet20 --mode overlap --no-progress) cal=2s ;;
        veth-torch-resnet-stream-overlap-cal-2) targs=(--model resnet-stream --mode overlap) cal=2s ;;
        veth-torch-resnet-stream-overlap-refault-2) targs=(--model resnet-stream --mode overlap) cal=2s refaults=true ;;
        veth-torch-resnet-stream-overlap-pt-2) targs=(--model resnet-stream --mode overlap) cal=2s ;;
        veth-torch-resnet-stream-overlap-512k-2) targs=(--model resnet-stream --mode overlap-bucket --bucket 524288) cal=2s
            against='"diff": {"against": "veth-torch-resnet-stream-overlap-pt-2", "op": "MPI_Iallreduce", "comm": "world"}' ;;
        veth-torch-resnet20-overlap-lead-2) targs=(--model resnet20 --mode overlap) cal=2s ;;
        veth-torch-resnet20-overlap-64k-2) targs=(--model resnet20 --mode overlap-bucket --bucket 65536) cal=2s
            against='"diff": {"against": "veth-torch-resnet20-overlap-lead-2", "op": "MPI_Iallreduce", "comm": "world"}' ;;
        veth-torch-resnet-stream-overlap-malloc-2) targs=(--model resnet-stream --mode overlap) cal=2s refaults=false
            envx=(-x MALLOC_MMAP_THRESHOLD_=67108864 -x MALLOC_TRIM_THRESHOLD_=1073741824)
            runs='"runs": {"combine": [["veth-torch-resnet-stream-overlap-refault-2"]], "op": "MPI_Iallreduce", "comm": "world"}' ;;
    esac
    /usr/bin/python3 -c "import torch, mpi4py" 2> /dev/null || die "$case: no torch or mpi4py (apt-get install python3-torch python3-mpi4py)"
    local prog=(/usr/bin/python3 "$src/examples/torch_train.py" "${targs[@]}" --steps 30 --warmup 2 --region --timings "$dir")
    CFN_PREFIX=cfr "$cluster" up 2 ${rate[@]+"${rate[@]}"} > /dev/null || die "$case: cluster up failed"
    COMMFIT_CALIBRATE=$cal COMMFIT_OUTPUT=$dir/profile.json COMMFIT_SUMMARY=0 CFN_PREFIX=cfr "$cluster" run -- -np 2 \
        -x LD_PRELOAD="$lib" -x COMMFIT_CALIBRATE -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY ${envx[@]+"${envx[@]}"} \
        -x OMP_NUM_THREADS=1 "${prog[@]}" > "$dir/train.out" 2>&1 ||
        { CFN_PREFIX=cfr "$cluster" down > /dev/null; die "$case: job failed: $(tail -n 3 "$dir/train.out")"; }
    CFN_PREFIX=cfr "$cluster" down > /dev/null
    grep -q 'ranks_agree=yes' "$dir/train.out" || die "$case: the trainer's own check failed"
    shrink
    local rel=("${prog[@]}") exp truth res
    rel[1]=examples/torch_train.py
    rel[${#rel[@]}-1]=.
    res=$("$PY" - "$dir/train.out" <<'PY'
import json, sys
res = {}
for l in open(sys.argv[1]):
    if l.startswith("torch_train: "):
        for kv in l.split()[1:]:
            k, v = kv.split("=", 1)
            for conv in (int, float):
                try:
                    v = conv(v)
                    break
                except ValueError:
                    pass
            res[k] = v
print(json.dumps(res))
PY
)
    if [ -f "$dir/calls.csv" ]; then
        "$PY" -c '
import csv, sys
w = open(sys.argv[2], "w"); w.write("size_bytes,time_s\n")
for r in csv.DictReader(open(sys.argv[1])):
    w.write("%s,%s\n" % (r["size_bytes"], r["median_s"]))' "$dir/calls.csv" "$dir/truth.csv"
        exp='{"fits": [{"op": "MPI_Allreduce", "comm": "world"}], "verdict_small": "startup-bound"}'
        # the refault case holds the memory line only: its first tensor's
        # all-reduce, first of each step, holds the ranks' imbalance in the
        # trainer's timer (40 B: -23 % in one recording, -41 % in the next)
        case $refaults in
            '') ;;
            none) exp='{}' ;;
            *) exp='{"refaults": {"op": "MPI_Allreduce", "comm": "world", "memory_line": '"$refaults"'}}' ;;
        esac
        [ -z "$runs" ] || { [ "$exp" = '{}' ] && exp="{$runs}" || exp=${exp%\}}", $runs}"; }
        [ -z "$against" ] || { [ "$exp" = '{}' ] && exp="{$against}" || exp=${exp%\}}", $against}"; }
        truth='"calls.csv: per size the median over steps and ranks of one MPI_Allreduce as the trainer times it (perf_counter around mpi4py'"'"'s Allreduce, its binding included); truth.csv: size_bytes and that median; steps.csv: per step the slowest rank'"'"'s step time and the exchange time (mean and max over ranks)"'
    else
        # the time blocked in MPI_Waitall per rank over the recorded steps, as the trainer timed it
        # (the call alone where it says, wait_ms_mean; its whole exchange in older trainers)
        local blocked
        blocked=$("$PY" -c 'import json, sys; r = json.loads(sys.argv[1]); print(r.get("wait_ms_mean", r["exchange_ms_mean"]) * r["steps"] / 1e3)' "$res")
        exp='{"no_fuse": false, "nonblocking_not_cost": true, "overlap": {"op": "MPI_Iallreduce", "comm": "world", "blocked_per_rank_s": '"$blocked"'}}'
        local rf=
        [ -z "$refaults" ] || rf=', "refaults": {"op": "MPI_Iallreduce", "comm": "world", "memory_line": '"$refaults"'}'
        [ "$cal" = auto ] ||
            exp='{"no_fuse": false, "nonblocking_not_cost": true, "overlap": {"op": "MPI_Iallreduce", "comm": "world", "blocked_per_rank_s": '"$blocked"'}, "calibrated": {"op": "MPI_Iallreduce", "comm": "world"}, "in_flight": {"op": "MPI_Iallreduce", "comm": "world"}'"$rf"'}'
        [ -z "$runs" ] || exp=${exp%\}}", $runs}"
        [ -z "$gap" ] || exp=${exp%\}}", $gap}"
        [ -z "$against" ] || exp=${exp%\}}", $against}"
        truth='"steps.csv: per step the slowest rank'"'"'s step time and the time blocked in MPI_Waitall (mean and max over ranks); train.out: the trainer'"'"'s summary line: exchange_ms_mean is that time (mean over ranks and steps) with the Python around the call, wait_ms_mean the call alone (the truth of blocked_per_rank_s where it is there), post_ms_mean the hooks'"'"' posts (and MPI_Testall calls where the hooks make them) per step; a nonblocking call has no per-call truth"'
    fi
    meta case="$case" program="$(jsonarr "${rel[@]}")" \
        command="$(jsonarr env COMMFIT_CALIBRATE=$cal COMMFIT_OUTPUT=profile.json COMMFIT_SUMMARY=0 tests/cluster/cluster.sh run -- -np 2 -x LD_PRELOAD=libcommfit.so -x COMMFIT_CALIBRATE -x COMMFIT_OUTPUT -x COMMFIT_SUMMARY ${envx[@]+"${envx[@]}"} -x OMP_NUM_THREADS=1 "${rel[@]}")" \
        cluster="$(jsonarr tests/cluster/cluster.sh up 2 ${rate[@]+"${rate[@]}"})" \
        transport="\"ob1 + tcp BTL between 2 network-namespace nodes over veth + bridge$([ ${#rate[@]} -gt 0 ] || echo ', unshaped')\"" \
        path="inter-node" ranks=2 ranks_per_node=1 nodes=2 trainer="$res" truth="$truth" expect="$exp"
}

record() {
    local case=$1
    dir=$here/$case
    rm -rf "$dir"; mkdir -p "$dir"
    echo "record.sh: $case"
    case $case in
        shm-*|ucx-*|tcp-*) run_local "$case" ;;
        shaped-*) run_shaped "$case" ;;
        netpipe-shm-2) run_netpipe ;;
        lammps-melt-4) run_lammps "$case" 4 ;;
        lammps-melt-2) run_lammps "$case" 2 ;;
        hpcc-shm-2) run_hpcc ;;
        cp2k-h2o-2) run_cp2k ;;
        veth-torch-*) run_torch "$case" ;;
        *) die "unknown case '$case' (try: record.sh list)" ;;
    esac
    ls -s "$dir" | tail -n +2 | tr '\n' ' '; echo
}

[ $# -gt 0 ] || { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"; exit 2; }
{ [ -x "$commfit" ] && [ -f "$lib" ]; } || die "no built commfit in $build (give --build DIR)"
# shellcheck disable=SC2086
case $1 in
    list) echo "$all_cases" | tr ' ' '\n'; exit 0 ;;
    all) set -- $all_cases ;;
esac
for c in "$@"; do record "$c"; done
