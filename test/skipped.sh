#!/bin/sh
# test/skipped.sh LOG...: what the tests of these logs (automake's, each
# beside its .trs) skipped, by name and reason: a whole test (result SKIP,
# its "SKIP: reason" lines), and the variants, rank counts and parts that
# a passing test could not run here (its log's lines "SKIP: ...",
# test/run-test.sh).  `make check` runs it after the tests, .ci/run after
# its run; a skip is never counted as a pass.  Prints nothing when
# nothing was skipped.
list=$(
    for log in "$@"; do
        [ -f "$log" ] || continue
        trs=${log%.log}.trs
        result=$(sed -n 's/^:test-result: //p' "$trs" 2>/dev/null | head -n 1)
        # the test's name: automake's last line of the log says it
        t=$(sed -n 's/^[A-Z]* \(.*\) (exit status: [0-9]*)$/\1/p' "$log" | tail -n 1)
        [ -n "$t" ] || t=${log%.log}
        t=${t#./}
        b=$(basename "$t" .sh)
        sed -n 's/^SKIP: //p' "$log" | while IFS= read -r why; do
            case "$why" in
            "$t "* | "$t:"*) echo "SKIP: $why" ;;
            "$b: "*) echo "SKIP: $t: ${why#"$b: "}" ;;
            *) echo "SKIP: $t: $why" ;;
            esac
        done | grep . || { [ "$result" = SKIP ] && echo "SKIP: $t: (no reason given)"; }
    done
)
[ -n "$list" ] || exit 0
echo "Skipped, not passed ($(echo "$list" | wc -l) tests, variants or parts):"
echo "$list"
