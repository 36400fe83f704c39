#!/bin/bash
# bench/lock.sh — "apt2ostree lock --variant minbase" for Debian bookworm,
# cold (empty index cache) and warm (indices cached), against
# "mmdebstrap --variant=minbase --simulate" from the same sources, in the
# same run.  Sources: the host's apt configuration (as lock uses it without
# --sources).  Goal (issue 4): cold no slower than mmdebstrap's simulate,
# warm under one second.
#
#   bench/lock.sh [APT2OSTREE] [ARCH]       (run from the build directory)
set -eu

A2O=${1:-./apt2ostree}
ARCH=${2:-$(dpkg --print-architecture)}
RUNS=${RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/a2o-bench-lock.XXXXXX")
trap 'rm -rf "$work"' EXIT
: > "$work/packages.txt"

now () { date +%s.%N; }
# timed LABEL CMD…: run CMD, print the wall time in seconds.
timed () {
    local label=$1; shift
    local t0 t1
    t0=$(now)
    "$@" > "$work/out" 2>&1 || { cat "$work/out" >&2; echo "$label: failed" >&2; exit 1; }
    t1=$(now)
    awk -v l="$label" -v a="$t0" -v b="$t1" 'BEGIN { printf "%-34s %6.2f s\n", l, b - a }'
}

sources=()
[ -f /etc/apt/sources.list ] && sources+=(/etc/apt/sources.list)
for f in $(ls /etc/apt/sources.list.d/ 2>/dev/null | LC_ALL=C sort); do
    case "$f" in *.list|*.sources) sources+=("/etc/apt/sources.list.d/$f") ;; esac
done

echo "# lock bookworm minbase $ARCH; $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
for i in $(seq "$RUNS"); do
    rm -rf "$work/cache"
    timed "apt2ostree lock (cold cache) #$i" \
        "$A2O" lock "$work/packages.txt" --variant minbase --arch "$ARCH" \
        --cache "$work/cache" -o "$work/out.lock.json"
done
for i in $(seq "$RUNS"); do
    timed "apt2ostree lock (warm cache) #$i" \
        "$A2O" lock "$work/packages.txt" --variant minbase --arch "$ARCH" \
        --cache "$work/cache" -o "$work/out.lock.json"
done
echo "# $(grep -c '"sha256"' "$work/out.lock.json") packages locked"
if command -v mmdebstrap >/dev/null && [ "$(id -u)" = 0 ]; then
    for i in $(seq "$RUNS"); do
        timed "mmdebstrap --simulate #$i" \
            mmdebstrap --quiet --simulate --variant=minbase --architectures="$ARCH" \
            bookworm /dev/null "${sources[@]}"
    done
else
    echo "# mmdebstrap --simulate skipped: needs root and mmdebstrap"
fi
