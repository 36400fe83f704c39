#!/bin/bash
# bench/arm64.sh — Debian bookworm minbase for arm64, built on this (amd64)
# machine with stage 2 under qemu-user: a cold build (empty repository and
# download cache) and a one-package change (the same lockfile plus one
# package, in the same build directory), against `mmdebstrap --arch=arm64
# --variant=minbase` of the same package set, in the same run.  Both fetch
# from the mirror the host's apt configuration names.  Beside the cold
# ratio, the work itself: stage 2 of the cold build (the packages' scripts
# under qemu, which mmdebstrap runs too) plus tar writing the .debs' files,
# one .deb per core at a time.
#
# Run it from a build directory (it uses ./apt2ostree unless $APT2OSTREE is
# set), as root, with qemu-user-static registered (update-binfmts --enable
# qemu-aarch64).  EXTRA (default: less) is the package of the change.
set -eu
A2O=${APT2OSTREE:-$PWD/apt2ostree}
TOP_SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP_SRCDIR/bench/libbench.sh"
EXTRA=${EXTRA:-less}
[ "$(id -u)" = 0 ] || { echo "bench/arm64.sh: run as root" >&2; exit 1; }
grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null \
    || { echo "bench/arm64.sh: qemu-aarch64 is not registered with binfmt_misc" >&2; exit 1; }
command -v arch-test > /dev/null \
    || { echo "bench/arm64.sh: mmdebstrap needs arch-test for a foreign architecture (apt-get install arch-test)" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench-arm64.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"

secs () { awk "BEGIN { printf \"%.1f\", $2 - $1 }"; }

: > minbase.txt
echo "$EXTRA" > changed.txt
"$A2O" lock minbase.txt --variant minbase --arch arm64 -o minbase.lock.json > /dev/null
"$A2O" lock changed.txt --variant minbase --arch arm64 -o changed.lock.json > /dev/null
n=$(grep -c '"sha256": ' minbase.lock.json)
m=$(grep -c '"sha256": ' changed.lock.json)
echo "# bookworm minbase arm64: $n packages; with $EXTRA: $m"

t0=$(now)
"$A2O" build minbase.lock.json --ref img --builddir build > /dev/null
t1=$(now)
cold=$(secs "$t0" "$t1")
# The work itself, which mmdebstrap does too: stage 2 (the packages'
# scripts under qemu, from ninja's log) and the .debs' files written by
# tar, one .deb per core at a time.
stage2=$(edge_seconds build/.ninja_log 'refs/heads/img$')
files=$(extract_wall build/cache/debs)

t0=$(now)
"$A2O" build minbase.lock.json --ref img --builddir build > /dev/null
t1=$(now)
noop=$(secs "$t0" "$t1")

t0=$(now)
"$A2O" build changed.lock.json --ref img --builddir build > change.out
t1=$(now)
change=$(secs "$t0" "$t1")

# The same change with --incremental: back to minbase (less purged), then
# + less again (one package unpacked by dpkg), each stage 2 starting from the
# image the step before made.
t0=$(now)
"$A2O" build minbase.lock.json --ref img --builddir build --incremental > /dev/null
t1=$(now)
back_incr=$(secs "$t0" "$t1")

t0=$(now)
"$A2O" build changed.lock.json --ref img --builddir build --incremental > /dev/null
t1=$(now)
change_incr=$(secs "$t0" "$t1")

t0=$(now)
mmdebstrap --quiet --variant=minbase --mode=root --arch=arm64 bookworm mm.tar
t1=$(now)
mm=$(secs "$t0" "$t1")

t0=$(now)
mmdebstrap --quiet --variant=minbase --mode=root --arch=arm64 --include="$EXTRA" bookworm mm2.tar
t1=$(now)
mm2=$(secs "$t0" "$t1")

printf '%-44s %10s\n' "step" "seconds"
printf '%-44s %10s\n' "apt2ostree build, cold (downloads included)" "$cold"
printf '%-44s %10s\n' "apt2ostree build, nothing changed" "$noop"
printf '%-44s %10s\n' "apt2ostree build, + $EXTRA" "$change"
printf '%-44s %10s\n' "apt2ostree build --incremental, - $EXTRA" "$back_incr"
printf '%-44s %10s\n' "apt2ostree build --incremental, + $EXTRA" "$change_incr"
printf '%-44s %10s\n' "mmdebstrap --arch=arm64 --variant=minbase" "$mm"
printf '%-44s %10s\n' "mmdebstrap ... --include=$EXTRA" "$mm2"
ratio () { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
floor=$(calc "$stage2 + $files")
printf '%-44s %10s\n' "  the work itself: stage 2 + the files" "$floor"
echo "  (stage 2 under qemu $stage2 s; the .debs' files written by tar, $(nproc) at a time: $files s)"
echo "ratios to mmdebstrap: cold $(ratio "$cold" "$mm")x (goal <= 0.5), the work itself $(ratio "$floor" "$mm")x;" \
     "+ $EXTRA $(ratio "$change" "$mm2")x (<= 0.4), with --incremental $(ratio "$change_incr" "$mm2")x (<= 0.1)"
