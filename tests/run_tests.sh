#!/bin/sh
# make test's last step: every unit suite (cmocka) runs, even after one
# failed, then the quick complexity check. A suite that passes prints one
# line (its tests and its time); a suite that fails prints that line and
# then its full output. The last line is the total, "N passed, N failed"
# (the unit tests, and the complexity check as one test), the form CI and
# other tools read as a test count; any failure makes the exit status 1.
# Usage: tests/run_tests.sh BUILD HEADER SUITE...
build="$1"; hdr="$2"; shift 2
passed=0; failed=0; failed_names=""

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# cmocka's TAP output (CMOCKA_MESSAGE_OUTPUT=TAP) has one line per test,
# "ok N - name" or "not ok N - name", after a plan "1..N": what a suite
# planned and passed is counted from it, so a suite that crashes half-way
# counts every test it did not pass as failed. Its failure messages are
# in the same log ("# ..." lines, and whatever the test printed).
for t in "$@"; do
    log="$t.log"
    start=$(now)
    case "$t" in /*) run=$t ;; *) run=./$t ;; esac
    CMOCKA_MESSAGE_OUTPUT=TAP "$run" > "$log" 2>&1; rc=$?
    took=$(secs "$start" "$(now)")
    planned=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | head -n 1)
    ok=$(grep -c '^ok [0-9]' "$log")
    if [ $rc = 0 ] && [ -n "$planned" ] && [ "$ok" = "$planned" ]; then
        passed=$((passed + ok))
        printf '%-18s %4d passed (%s s)\n' "${t##*/}" "$ok" "$took"
    else
        bad=$(( ${planned:-0} - ok )); [ $bad -gt 0 ] || bad=1
        passed=$((passed + ok)); failed=$((failed + bad))
        failed_names="$failed_names ${t##*/}"
        printf '%-18s %4d passed, %d FAILED (%s s, exit status %d); its output:\n' \
            "${t##*/}" "$ok" "$bad" "$took" "$rc"
        sed 's/^/    /' "$log"
    fi
done

# Every public function with a Cost: line has a row; each row's allocator
# calls grow from n to 8n as promised (--quick; make complexity times them).
case "$build" in /*) cx=$build/complexity ;; *) cx=./$build/complexity ;; esac
start=$(now)
if python3 tests/check_complexity.py "$hdr" "$cx" > "$build/complexity-rows.log" 2>&1 &&
   "$cx" --quick > "$build/complexity.log" 2>&1; then
    passed=$((passed + 1))
    printf '%-18s %4d passed (%s s): %s\n' "complexity" 1 \
        "$(secs "$start" "$(now)")" "$(tail -n 1 "$build/complexity.log")"
else
    failed=$((failed + 1)); failed_names="$failed_names complexity"
    echo "complexity            0 passed, 1 FAILED; its output:"
    cat "$build/complexity-rows.log" "$build/complexity.log" 2>/dev/null | sed 's/^/    /'
fi

[ -n "$failed_names" ] && echo "make test: FAILED:$failed_names"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
