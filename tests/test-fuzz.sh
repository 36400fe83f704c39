#!/bin/bash
# test-fuzz.sh — each libFuzzer harness of tests/fuzz/ (the .deb reader, the
# Packages, Release and sources parsers, the lockfile reader) runs over its
# seed corpus and then mutates it for a bounded time under ASan and UBSan:
# any crash, leak, sanitizer report, GLib critical or broken property fails.
#
# The harnesses are built by "make fuzzers" (tests/fuzz/Makefile.inc), which this
# test's log depends on.  APT2OSTREE_FUZZ_SECONDS sets the time per harness
# (default 30: about 2.5 minutes for all five, plus a minute to build).
# A crash's input is kept in tests/fuzz/artifacts/ of the build directory;
# once it is fixed, add it to tests/fuzz/corpus/NAME/.

. "$TOP_SRCDIR/tests/libtest.sh"

: "${TOP_BUILDDIR:=$(pwd)}"
build=$TOP_BUILDDIR/tests/fuzz/build
seconds=${APT2OSTREE_FUZZ_SECONDS:-30}

if [ -f "$build/unavailable" ]; then
    skip_all "libFuzzer harnesses not built: $(cat "$build/unavailable")"
fi
if [ ! -x "$build/fuzz-deb" ]; then
    skip_all "libFuzzer harnesses not built (run \"make fuzzers\" in $TOP_BUILDDIR)"
fi

# fuzz NAME: the seeds, then new inputs for $seconds seconds, mutated with
# the words of tests/fuzz/NAME.dict too.  New inputs go to a scratch corpus
# (the first directory), never to the committed one.
fuzz () {
    local name=$1 artifacts=$TOP_BUILDDIR/tests/fuzz/artifacts
    mkdir -p corpus "$artifacts"
    # GLib before 2.76 (bookworm's) keeps GSlice blocks (hash tables,
    # GStrings, lists) in caches LeakSanitizer sees as reachable, so their
    # leaks show only on a newer GLib: CI runs this test on trixie too.
    # (G_SLICE=always-malloc would show them here, and also leaks inside
    # bookworm's json-glib 1.6 parser on trailing input, which 1.10 does not leak.)
    if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
            "$build/fuzz-$name" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
            -dict="$TOP_SRCDIR/tests/fuzz/$name.dict" \
            corpus "$TOP_SRCDIR/tests/fuzz/corpus/$name" > fuzz.log 2>&1; then
        grep -E "ERROR|runtime error|SUMMARY|fuzz property|CRITICAL|WARNING|Test unit written|^ +#[0-9]+ .* in .*\.c:[0-9]" \
            fuzz.log | head -n 30 >&2
        fail "fuzz-$name found a crash; its input is in $artifacts"
    fi
    grep -E "^stat::number_of_executed_units" fuzz.log > "$SCRATCH/$name.stats"
}

# One harness per seed corpus (tests/fuzz/Makefile.inc's FUZZ_HARNESSES).
for dir in "$TOP_SRCDIR"/tests/fuzz/corpus/*/; do
    name=$(basename "$dir")
    test_expect_success "fuzz-$name: ${seconds}s of mutated inputs give no crash, leak or sanitizer report" \
        "fuzz $name"
    [ ! -s "$SCRATCH/$name.stats" ] || say "fuzz-$name: $(cat "$SCRATCH/$name.stats")"
done

test_done
