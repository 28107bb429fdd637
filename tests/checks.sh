# What the shell tests share (sourced; tests/checks.py is the same for their
# inline Python): one line per check, "ok" or "FAIL" with what was seen,
# then a count and the exit status.
#
#     . "$CF_SRCDIR/tests/checks.sh"
#     [ "$got" = "$want" ] && ok "calls: $got" || bad "calls: $got, want $want"
#     cf_done
#
# tests/mpi/run_mpi.sh sources it.
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
# cf_done: the count; its status is the test's (0 when nothing failed)
cf_done() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
