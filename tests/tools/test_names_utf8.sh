#!/bin/bash
# Names a program gives in UTF-8 (MPI_Comm_set_name, MPI_Pcontrol regions)
# reach the profile and the reports as they are; bytes that are not UTF-8,
# control characters and C1 controls (U+0080-U+009F) become '?'.
. "$CF_SRCDIR/tests/mpi/run_mpi.sh"
commfit="$CF_BUILDDIR/tools/commfit"
cat > "$cf_tmp/names.c" <<'C'
#include <mpi.h>
int main(int argc, char **argv)
{
    MPI_Comm ok, bad;
    double x = 1, y;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ok);
    MPI_Comm_set_name(ok, "Gitter \xce\xa9-h\xc3\xb6he");
    MPI_Comm_dup(MPI_COMM_WORLD, &bad);
    /* a byte that is not UTF-8, an escape sequence, a C1 control (CSI) */
    MPI_Comm_set_name(bad, "bad\xff\x1b[2Jname\xc2\x9b!");
    MPI_Pcontrol(1, "schritt-\xc3\xbc");
    for (int i = 0; i < 3; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, ok);
    MPI_Pcontrol(-1, "schritt-\xc3\xbc");
    for (int i = 0; i < 5; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, bad);
    MPI_Comm_free(&ok);
    MPI_Comm_free(&bad);
    MPI_Finalize();
    return 0;
}
C
"$CF_MPICC" -o "$cf_tmp/names" "$cf_tmp/names.c" || cf_fail "cannot build the test program"
COMMFIT_OUTPUT="$cf_tmp/names.json" COMMFIT_SUMMARY=0 cf_mpirun 2 -- "$cf_tmp/names" || cf_fail "job failed"
"$commfit" report --by-region "$cf_tmp/names.json" > "$cf_tmp/report.txt" || cf_fail "report"
"$commfit" report --format csv "$cf_tmp/names.json" > "$cf_tmp/report.csv" || cf_fail "report --format csv"
"$CF_PYTHON" - "$cf_tmp/names.json" "$cf_tmp/report.txt" "$cf_tmp/report.csv" <<'PY'
import json, sys
from checks import check, done
prof = json.load(open(sys.argv[1], encoding="utf-8"))
text = open(sys.argv[2], "rb").read()
csv = open(sys.argv[3], "rb").read()
names = sorted(c["user_name"] for c in prof["communicators"] if c.get("user_name"))
check("the profile keeps the UTF-8 name and cleans the other", names == ["Gitter \u03a9-h\u00f6he", "bad??[2Jname??!"],
      names)
check("the profile keeps the UTF-8 region", prof["regions"] == ["schritt-\u00fc"], prof["regions"])
calls = {r["region"]: r["calls"] for r in prof["records"] if r["op"] == "MPI_Allreduce" and "region" in r}
check("the region has its 3 allreduces on each of 2 ranks", calls.get("schritt-\u00fc") == 6, calls)
for what, out in (("text", text), ("csv", csv)):
    check(what + ": no escape, bell or C1 control", not any(b in out for b in (b"\x1b", b"\x07", b"\xc2\x9b", b"\xff")))
check("text names the communicator in UTF-8", "Gitter \u03a9-h\u00f6he".encode() in text)
check("text names the region in UTF-8", "schritt-\u00fc".encode() in text)
check("csv names the communicator in UTF-8", "Gitter \u03a9-h\u00f6he".encode() in csv)
check("the cleaned name is shown cleaned", b"bad??[2Jname??!" in text)
done()
PY
