#!/bin/sh
# Run every libFuzzer harness of test/fuzz (see Makefile.inc there) from its
# committed seed corpus for RAILTEST_FUZZ_SECONDS each (default 20; longer by
# option), in a temporary copy of the corpus and a temporary artifact
# directory (removed at the end).  A crash, a timeout (an input taking over
# 10 s), a leak, a sanitizer report or more than 2 GiB of memory fails the
# test, which prints the input's first bytes and the fuzzer's report.  Each
# harness's final coverage line (cov: edges, ft: features, corp: inputs)
# is printed.  Skipped (77) where configure found no libFuzzer-capable
# compiler (FUZZ_CC, clang with libclang-rt).
bld=${top_builddir:-.}
src=${top_srcdir:-.}
secs=${RAILTEST_FUZZ_SECONDS:-20}
harnesses="fuzz_rules fuzz_params fuzz_launch"
found=0
for h in $harnesses; do [ -x "$bld/test/fuzz/$h" ] && found=$((found + 1)); done
if [ "$found" -eq 0 ]; then
    echo "SKIP: no libFuzzer harness was built (configure found no clang with -fsanitize=fuzzer;" \
        "on Debian install clang and libclang-rt-14-dev)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/rail-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
fails=0
for h in $harnesses; do
    bin=$bld/test/fuzz/$h
    name=${h#fuzz_}
    if [ ! -x "$bin" ]; then
        echo "FAIL: $h was not built"
        fails=$((fails + 1))
        continue
    fi
    mkdir -p "$work/$name/corpus" "$work/$name/art"
    cp "$src/test/fuzz/corpus/$name/"* "$work/$name/corpus/"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/$name/art/" "$work/$name/corpus" >"$work/$name/log" 2>&1
    rc=$?
    cov=$(grep -E "^#[0-9]+.*cov: " "$work/$name/log" | tail -1)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name/log")
    if [ "$rc" -ne 0 ] || ls "$work/$name/art/"* >/dev/null 2>&1; then
        echo "FAIL: $h (exit $rc): $cov"
        for a in "$work/$name/art/"*; do
            [ -f "$a" ] || continue
            echo "  input $(basename "$a"), first bytes:"
            od -A d -c "$a" | head -8 | sed 's/^/    /'
        done
        grep -E "ERROR|SUMMARY|runtime error|==[0-9]+==" "$work/$name/log" | head -20 | sed 's/^/  /'
        fails=$((fails + 1))
    else
        echo "ok: $h, ${runs:-?} inputs in ${secs} s; $cov"
    fi
done
[ "$fails" -eq 0 ] || exit 1
