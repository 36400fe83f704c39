#!/bin/bash
# bench/composition.sh DIR — the article's two numbers for the composed root
# filesystem of examples/composition: the no-op (ninja with nothing to do)
# and the rebuild after a one-file edit (hello.c, or hello.in of the tests'
# stand-in packages, in the package directory given to configure.py), split
# into the compile (the "mod package/hello" edge, from .ninja_log) and
# everything else ninja ran (import, graft, combine, subtrees, grafts).
#
# DIR is a copy of examples/composition that ./configure.py has been run in
# (its lockfiles locked, so that "ninja" builds it); it is built first if it
# was not.  The edit is undone at the end (and built back).  RUNS (default
# 5): how many no-ops and edits to take the median of.
set -eu
dir=${1:?usage: bench/composition.sh DIR (a configured copy of examples/composition)}
RUNS=${RUNS:-5}
cd "$dir"
[ -f build.ninja ] || { echo "bench/composition.sh: $dir/build.ninja: run ./configure.py there first" >&2; exit 1; }

now () { date +%s.%N; }
calc () { awk "BEGIN { printf \"%.3f\\n\", $1 }"; }
median () { sort -n | awk '{ a[NR] = $1 } END { printf "%.3f\n", a[int((NR + 1) / 2)] }'; }
# edge_seconds OUTPUT: how long the last run of the edge writing OUTPUT took.
edge_seconds () {
    local log=.ninja_log
    [ -f out/.ninja_log ] && log=out/.ninja_log   # (builddir = out)
    awk -v out="$1" '$4 == out { t = ($2 - $1) / 1000 } END { printf "%.3f\n", t }' "$log"
}

# The package directory configure.py was given (--package-dir), from the
# import edge of hello's sources.
pkgdir=$(sed -n 's/^  dir = \(.*\)\/hello$/\1/p' build.ninja | head -n 1)
src=${pkgdir:-packages}/hello/hello.c
[ -f "$src" ] || src=${pkgdir:-packages}/hello/hello.in
cp "$src" "$src.bench-orig"
trap 'mv "$src.bench-orig" "$src"; ninja > /dev/null' EXIT

ninja > /dev/null
for _ in $(seq "$RUNS"); do
    t0=$(now)
    ninja > noop.log
    t1=$(now)
    grep -q "no work to do" noop.log || { cat noop.log >&2; echo "bench/composition.sh: the no-op did work" >&2; exit 1; }
    calc "$t1 - $t0" >> noop.times
done

for r in $(seq "$RUNS"); do
    # Each edit gives a new program (another line each time: a string the
    # C program keeps, a command of the stand-in's script), so each rebuild
    # runs the whole chain after the compile.
    case $src in
        *.c) line="const char *bench_edit = \"edit $r\";" ;;
        *) line="echo edit $r" ;;
    esac
    { cat "$src.bench-orig"; echo "$line"; } > "$src"
    t0=$(now)
    ninja > edit.log
    t1=$(now)
    total=$(calc "$t1 - $t0")
    compile=$(edge_seconds out/ostree/refs/heads/package/hello)
    echo "$total" >> edit.times
    echo "$compile" >> compile.times
    calc "$total - $compile" >> rest.times
done

echo "no-op:                      $(median < noop.times) s (median of $RUNS)"
echo "one-file edit, rebuild:     $(median < edit.times) s"
echo "  of which the compile:     $(median < compile.times) s"
echo "  the rest (median):        $(median < rest.times) s"
echo "edges run after the edit:   $(grep -c '^\[' edit.log)"
rm -f noop.times edit.times compile.times rest.times noop.log edit.log
