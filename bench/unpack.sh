#!/bin/bash
# bench/unpack.sh [DEBS_DIR] — unpack-deb versus dpkg-deb -x on the same
# .debs, two processes each, in the same run.
#
# FSYNC=0 turns the repository's fsync off (core.fsync=false) for a
# comparison on equal terms: dpkg-deb -x does not wait for the disk either.
#
# DEBS_DIR defaults to the cache tests/test-unpack-deb-mirror.sh fills
# (/var/cache/apt2ostree-tests/debs, about a hundred minbase .debs); run
# that test first.  APT2OSTREE names the binary (default: ./apt2ostree).
# Prints the wall-clock time of each side and the ratio; the goal is a
# ratio of at most 1 (dpkg-deb -x writes plain files and hashes nothing,
# unpack-deb checksums every file into a bare repository).
set -eu

DEBS=${1:-/var/cache/apt2ostree-tests/debs}
APT2OSTREE=${APT2OSTREE:-./apt2ostree}
JOBS=${JOBS:-2}
[ -d "$DEBS" ] || { echo "bench/unpack.sh: $DEBS does not exist; run tests/test-unpack-deb-mirror.sh first" >&2; exit 1; }
APT2OSTREE=$(realpath "$APT2OSTREE")

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench.XXXXXX")
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
find "$DEBS" -maxdepth 1 -type f ! -name '.*' | sort > "$WORK/debs"
n=$(wc -l < "$WORK/debs")
bytes=$(xargs cat < "$WORK/debs" | wc -c)
xargs cat < "$WORK/debs" > /dev/null   # both sides read from the page cache

now () { date +%s.%N; }

mkdir "$WORK/x"
sync
t0=$(now)
xargs -P "$JOBS" -I{} sh -c 'd=$(mktemp -d "$0/x.XXXXXX") && dpkg-deb -x "$1" "$d"' "$WORK/x" {} < "$WORK/debs"
sync
t1=$(now)

"$APT2OSTREE" --repo "$WORK/repo" init > /dev/null
# FSYNC=0: like dpkg-deb -x, do not wait for the disk (ostree's core.fsync).
[ "${FSYNC:-1}" = 1 ] || ostree --repo="$WORK/repo" config set core.fsync false
# PER_OBJECT_FSYNC=1: fsync each object instead of one syncfs per commit.
[ "${PER_OBJECT_FSYNC:-0}" = 0 ] || ostree --repo="$WORK/repo" config set core.per-object-fsync true
sync
t2=$(now)
xargs -P "$JOBS" -I{} sh -c '"$0" --repo "$1" unpack-deb --ref "bench/$(basename "$2")" "$2" > /dev/null 2>&1' \
    "$APT2OSTREE" "$WORK/repo" {} < "$WORK/debs"
sync
t3=$(now)

refs=$(find "$WORK/repo/refs/heads/bench" -type f | wc -l)
[ "$refs" = "$n" ] || { echo "bench/unpack.sh: only $refs of $n packages unpacked" >&2; exit 1; }

awk -v fsync="$([ "${FSYNC:-1}" = 1 ] && echo on || echo off)" -v n="$n" -v bytes="$bytes" -v j="$JOBS" \
    -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" 'BEGIN {
    mb = bytes / 1048576; dpkg = t1 - t0; a2o = t3 - t2
    printf "%d .debs, %.1f MiB, %d processes each, repository fsync %s\n", n, mb, j, fsync
    printf "dpkg-deb -x            %7.2f s\n", dpkg
    printf "apt2ostree unpack-deb  %7.2f s\n", a2o
    printf "ratio unpack-deb / dpkg-deb -x: %.2f\n", a2o / dpkg
}'
