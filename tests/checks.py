"""What the tests' inline Python scripts share: one line per check, "ok" or
"FAIL" with what was seen, then a count and the exit status.

    from checks import check, done
    check("calls", got == want, "%d vs %d" % (got, want))
    done()

run_mpi.sh puts this folder on PYTHONPATH.  A script whose standard output
is a value the shell captures sets checks.out = sys.stderr first."""
import sys

passed = 0
failed = 0
out = sys.stdout


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print("%s %s %s" % ("ok  " if ok else "FAIL", what, detail), file=out)
    return ok


def done():
    print("%d passed, %d failed" % (passed, failed), file=out)
    sys.exit(1 if failed else 0)
