#!/bin/sh
# A real application, LAMMPS (Debian's lammps; skipped without it): its
# point-to-point sends equal Open MPI's own counts (the pml monitoring
# component's external messages and bytes, of a run without the plugin),
# and with MPI-IO output switched on (dump atom/mpiio, write_restart
# *.mpiio) its file accesses appear as kind io with their bytes; the
# collective writes' data, which Open MPI's ompio moves to its aggregators
# through the pml, is the only traffic the monitoring sees beyond them.
# Call sites: its four exchange routines are sites of their own, their
# MPI_Send calls adding up to the records'.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
command -v lmp >/dev/null || { echo "no lmp: skipped"; exit 77; }
[ "$CF_MPI_FAMILY" = openmpi ] || { echo "Open MPI's pml monitoring only: skipped"; exit 77; }
melt=$(ls /usr/share/lammps/examples/melt/in.melt 2>/dev/null) || { echo "no melt example: skipped"; exit 77; }
cd "$cf_tmp"
sed -e 's|^#dump[[:space:]]*id all atom 50 dump.melt|dump id all atom/mpiio 50 dump.melt.mpiio|' \
    -e 's|^run[[:space:]]*250|run 250\nwrite_restart restart.melt.mpiio|' "$melt" > in.io
grep -v mpiio in.io > in.noio
root=; [ "$(id -u)" = 0 ] && root=--allow-run-as-root
for input in noio io; do
    rm -f dump.melt.mpiio restart.melt.mpiio mon.*
    "$CF_MPIRUN" $root --oversubscribe --bind-to none -np 4 --mca btl self,vader,tcp --mca pml ob1,monitoring \
        --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3 --mca pml_monitoring_filename "$cf_tmp/mon" \
        lmp -in in.$input > plain.$input.txt 2>&1 || { tail plain.$input.txt; cf_fail "lmp $input without the plugin"; }
    cat mon.*.prof > monitoring.$input.txt
    rm -f dump.melt.mpiio restart.melt.mpiio
    COMMFIT_OUTPUT="$cf_tmp/$input.json" COMMFIT_SUMMARY=0 cf_mpirun 4 -- lmp -in in.$input > prof.$input.txt 2>&1 ||
        cf_fail "lmp $input with the plugin"
done
"$CF_PYTHON" - noio.json monitoring.noio.txt io.json monitoring.io.txt <<'PY'
import json, re, sys
SENDS = {"MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend", "MPI_Issend", "MPI_Sendrecv",
         "MPI_Send_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Bsend_init", "MPI_Sendrecv_replace"}
fails = 0
def expect(what, got, want):
    global fails
    print("%s %s = %r%s" % ("ok  " if got == want else "FAIL", what, got, "" if got == want else ", want %r" % want))
    fails += got != want
def load(prof_path, mon_path):
    prof = json.load(open(prof_path))
    rec = [r for r in prof["records"] if r["layer"] == "mpi"]
    sent = [sum(r[k] for r in rec if r["op"] in SENDS) for k in ("calls", "bytes")]
    mon = [0, 0]
    for line in open(mon_path):
        m = re.match(r"^E\t\d+\t\d+\t(\d+) bytes\t(\d+) msgs sent", line)
        if m:
            mon[0] += int(m.group(2)); mon[1] += int(m.group(1))
    return rec, sent, mon
rec, sent, mon = load(sys.argv[1], sys.argv[2])
expect("without MPI-IO: commfit's sends [messages, bytes] against Open MPI's monitoring", sent, mon)
rec, sent, mon = load(sys.argv[3], sys.argv[4])
io = {}
for r in rec:
    if r["kind"] == "io":
        io.setdefault(r["op"], [0, 0])
        io[r["op"]][0] += r["calls"]; io[r["op"]][1] += r["bytes"]
print("file operations: %s" % ", ".join("%s %d calls %d B" % (k, v[0], v[1]) for k, v in sorted(io.items())))
expect("MPI-IO seen: collective writes recorded with bytes", io.get("MPI_File_write_at_all", [0, 0])[1] > 0, True)
wa = io.get("MPI_File_write_at_all", [0, 0])
expect("with MPI-IO: monitoring beyond commfit's sends [messages, bytes] = the collective writes [calls, bytes]",
       [mon[0] - sent[0], mon[1] - sent[1]], wa)
sys.exit(1 if fails else 0)
PY
[ $? = 0 ] || exit 1
"$CF_BUILDDIR/tools/commfit" report --by-callsite --format json noio.json > sites.json || cf_fail "report --by-callsite"
"$CF_PYTHON" - noio.json sites.json <<'PY'
import json, sys
prof, rep = (json.load(open(f)) for f in sys.argv[1:])
sends = sum(r["calls"] for r in prof["records"] if r["op"] == "MPI_Send")
by_fn = {}
for s in rep["callsites"]["sites"]:
    if s["op"] == "MPI_Send":
        fn = s["stack"][0]["function"] or ""
        by_fn[fn] = by_fn.get(fn, 0) + s["calls"]
routines = ["forward_comm", "reverse_comm", "borders", "exchange"]
seen = [r for r in routines if any("CommBrick::" + r + "(" in fn for fn in by_fn)]
ok = seen == routines and sum(by_fn.values()) == sends
print("%s call sites: MPI_Send from %s (%d calls, the records' %d)" % ("ok  " if ok else "FAIL",
      ", ".join("%s %d" % (f, n) for f, n in sorted(by_fn.items(), key=lambda x: -x[1])), sum(by_fn.values()), sends))
sys.exit(0 if ok else 1)
PY
