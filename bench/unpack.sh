#!/bin/bash
# bench/unpack.sh [DEBS_DIR] — unpack-deb versus dpkg-deb -x on the same
# .debs, two processes each, in the same run.  unpack-deb runs two ways: one
# process per package (what the Ninja rules of `apt2ostree build` run), and
# --batch, JOBS processes each unpacking its share of the packages in one
# transaction.
#
# DEBS_DIR defaults to the cache tests/test-unpack-deb-mirror.sh fills
# (/var/cache/apt2ostree-tests/debs, about a hundred minbase .debs); run
# that test first.  Environment:
#   APT2OSTREE        the binary (default: ./apt2ostree)
#   JOBS              processes on each side (default 2)
#   ROUNDS            repeat both sides and keep each side's best (default 1)
#   ARCH              the .debs' architecture (default: the host's; "all"
#                     packages always; ARCH=any for every .deb)
#   FSYNC=0           turn the repository's fsync off (core.fsync=false), for a
#                     comparison on equal terms: dpkg-deb -x does not wait for
#                     the disk; with fsync on, every unpack-deb ends in syncfs
#   PER_OBJECT_FSYNC=1  fsync each object instead (core.per-object-fsync)
#   BENCH_TIME        GNU time or a command that takes its -f FORMAT -o FILE
#                     (default /usr/bin/time; tests/test-bench-unpack.sh gives its own)
# Prints wall-clock and CPU (user + system) seconds of each side and their
# ratios to dpkg-deb -x; the goal is a wall-clock ratio of at most 1 (dpkg-deb -x writes
# plain files and hashes nothing; unpack-deb checksums every file into a
# bare repository).  Both sides include a final sync.
#
# On ext4 without a journal, inodes deleted in the last minutes (up to six)
# slow down every new file on the same file system, for both sides but not
# evenly: run on a freshly made file system (TMPDIR), or wait some minutes
# after deleting much, this script's own clean-up included.
set -eu

DEBS=${1:-/var/cache/apt2ostree-tests/debs}
APT2OSTREE=${APT2OSTREE:-./apt2ostree}
BENCH_TIME=${BENCH_TIME:-/usr/bin/time}
JOBS=${JOBS:-2}
ROUNDS=${ROUNDS:-1}
[ -d "$DEBS" ] || { echo "bench/unpack.sh: $DEBS does not exist; run tests/test-unpack-deb-mirror.sh first" >&2; exit 1; }
APT2OSTREE=$(realpath "$APT2OSTREE")

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench.XXXXXX")
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
# The host architecture's .debs and the Architecture: all ones (the cache
# also holds the arm64 minbase); ARCH=any takes them all.
ARCH=${ARCH:-$(dpkg --print-architecture)}
find "$DEBS" -maxdepth 1 -type f ! -name '.*' | sort | while read -r deb; do
    a=$(dpkg-deb -f "$deb" Architecture)
    if [ "$ARCH" = any ] || [ "$a" = all ] || [ "$a" = "$ARCH" ]; then echo "$deb"; fi
done > "$WORK/debs"
n=$(wc -l < "$WORK/debs")
bytes=$(xargs cat < "$WORK/debs" | wc -c)
xargs cat < "$WORK/debs" > /dev/null   # both sides read from the page cache

# timed OUT CMD...: run CMD then sync; OUT gets "wall user+system", the
# wall-clock time including the sync.  (GNU time's own output goes to a file
# outside the OUT.* names that best() reads.)
timed () {
    local out=$1
    shift
    sync
    $BENCH_TIME -f "%e %U %S" -o "$WORK/time.raw" "$@"
    local t0 t1
    t0=$(date +%s.%N); sync; t1=$(date +%s.%N)
    awk -v t0="$t0" -v t1="$t1" '{ print $1 + (t1 - t0), $2 + $3 }' "$WORK/time.raw" > "$out"
}

# Each round writes into fresh directories and nothing is deleted until the
# end: on ext4 without a journal, inodes freed in the last minutes are
# skipped one by one when new ones are allocated, so deleting the previous
# round's output would slow down whichever side runs next.
dpkg_side () {
    mkdir "$WORK/x$1"
    timed "$WORK/dpkg.$1" xargs -P "$JOBS" -I{} sh -c 'd=$(mktemp -d "$0/x.XXXXXX") && dpkg-deb -x "$1" "$d"' "$WORK/x$1" {} < "$WORK/debs"
}

a2o_side () {
    local repo=$WORK/repo$1
    "$APT2OSTREE" --repo "$repo" init > /dev/null
    [ "${FSYNC:-1}" = 1 ] || ostree --repo="$repo" config set core.fsync false
    [ "${PER_OBJECT_FSYNC:-0}" = 0 ] || ostree --repo="$repo" config set core.per-object-fsync true
    timed "$WORK/a2o.$1" xargs -P "$JOBS" -I{} sh -c \
        '"$0" --repo "$1" unpack-deb --ref "bench/$(basename "$2")" "$2" > /dev/null 2>&1' \
        "$APT2OSTREE" "$repo" {} < "$WORK/debs"
    check_refs "$repo"
}

check_refs () {
    local refs
    refs=$(find "$1/refs/heads/bench" -type f | wc -l)
    [ "$refs" = "$n" ] || { echo "bench/unpack.sh: only $refs of $n packages unpacked" >&2; exit 1; }
}

# JOBS lists of about the same size: the .debs from the largest down, each
# to the list with the fewest bytes so far (dpkg-deb's side balances itself:
# xargs hands the next .deb to whichever process is free).
xargs stat -c "%s %n" < "$WORK/debs" | sort -rn | awk -v j="$JOBS" -v w="$WORK" '{
    best = 0
    for (i = 1; i < j; i++) if (total[i] < total[best]) best = i
    total[best] += $1
    n = split($2, p, "/"); print "bench/" p[n], $2 > (w "/list." best) }'

batch_side () {
    local repo=$WORK/brepo$1
    "$APT2OSTREE" --repo "$repo" init > /dev/null
    [ "${FSYNC:-1}" = 1 ] || ostree --repo="$repo" config set core.fsync false
    [ "${PER_OBJECT_FSYNC:-0}" = 0 ] || ostree --repo="$repo" config set core.per-object-fsync true
    timed "$WORK/batch.$1" sh -c 'for l in "$2"/list.*; do
            "$0" --repo "$1" unpack-deb --batch "$l" > /dev/null 2>&1 &
        done; wait' "$APT2OSTREE" "$repo" "$WORK"
    check_refs "$repo"
}

for r in $(seq "$ROUNDS"); do
    dpkg_side "$r"
    a2o_side "$r"
    batch_side "$r"
done

best () { sort -n "$WORK"/$1.* | head -n 1; }
fsync=on
[ "${FSYNC:-1}" = 1 ] || fsync=off
[ "${PER_OBJECT_FSYNC:-0}" = 0 ] || fsync="on, per object"
read -r dw dc <<< "$(best dpkg)"
read -r aw ac <<< "$(best a2o)"
read -r bw bc <<< "$(best batch)"
awk -v n="$n" -v bytes="$bytes" -v j="$JOBS" -v rounds="$ROUNDS" -v fsync="$fsync" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
    -v dw="$dw" -v dc="$dc" -v aw="$aw" -v ac="$ac" -v bw="$bw" -v bc="$bc" 'BEGIN {
    printf "%d .debs, %.1f MiB, %d processes each, best of %d, repository fsync %s, load %s\n",
        n, bytes / 1048576, j, rounds, fsync, load
    printf "                                  wall s   cpu s   ratio to dpkg-deb -x (wall, cpu)\n"
    printf "dpkg-deb -x, a process a package %7.2f %7.2f\n", dw, dc
    printf "unpack-deb, a process a package  %7.2f %7.2f   %.2f %.2f\n", aw, ac, aw / dw, ac / dc
    printf "unpack-deb --batch, %d processes  %7.2f %7.2f   %.2f %.2f\n", j, bw, bc, bw / dw, bc / dc
}'
