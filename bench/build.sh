#!/bin/bash
# bench/build.sh — apt2ostree lock + build against mmdebstrap, in the same run
# on the same machine, from the mirror(s) the host's apt configuration names,
# for each release of $SUITES (default "trixie bookworm": the current stable
# and oldstable; "lock --suite" and mmdebstrap both move the host's sources
# to the release), each in a directory of its own:
#
#   1. cold: Debian minbase from an empty build directory (no
#      repository, no index or .deb cache: lock + build) against
#      `mmdebstrap --variant=minbase` (which fetches the indices and every
#      .deb from the mirror itself, through apt, on each run);
#   2. no-op: the same build again (`apt2ostree build`, and ninja alone);
#   3. a second image, minbase plus one package (less), in the same build
#      directory, against mmdebstrap --include=less;
#   4. a one-package version change: the minbase lockfile with one package
#      at another version the sources offer (an older liblzma5, libzstd1...),
#      built as the same image, against a cold mmdebstrap minbase (it has no
#      way to rebuild less);
#      then back to the first lockfile with build --incremental (stage 2
#      from the image the change made: one package unpacked by dpkg), and
#      twice more, to the change and back, as the edit-rebuild loop goes
#      (each from the checkout of the image the one before kept);
#   5. disk: the repository holding both images (and every package tree and
#      stage-1 tree) against the two mmdebstrap tarballs; and the repository
#      with one image against it with two;
#   6. stage 2 (dpkg --configure -a) on its own, from ninja's log, and the
#      sandbox's own cost (checkout + commit around a command that does
#      nothing) beside it.
#
# CASES (default "minbase") chooses what runs, any of:
#   minbase  1 to 6 above, for each release of $SUITES;
#   desktop  a desktop-sized image, cold: the packages of $DESKTOP (default
#            task-kde-desktop, without Recommends: 958 packages in trixie)
#            over minbase, of $DESKTOP_SUITE (default trixie), lock + build
#            against mmdebstrap --include of the same packages, stage 1 and
#            stage 2 from ninja's log (several minutes, a GB of .debs);
#   latency  minbase of $DESKTOP_SUITE built cold from a mirror $RTT
#            milliseconds away (default "50 150"): the .debs of a first
#            build served on 127.0.0.1 (tests/httpd.py) behind
#            bench/delay-proxy.py, each build into an empty build directory.
# COLD_PAIRS (default 1): how many times the minbase cold pair (lock + build
# against mmdebstrap) runs; with more than one, the extra pairs run each in
# an empty directory, the two tools taking turns at going first, and the
# report adds the median of the pairs' ratios and their range (one pair on
# a shared machine can be off by half).
# Each case ends with the share of CPU time the machine's host (when it is
# a virtual machine) gave to other guests while it ran: "steal", from
# /proc/stat; ratios from a run with much of it are noisier.
# Every cold build reports how many of its .deb edges (fetch + unpack)
# took 5 s or more in ninja's log (a .deb that waited on the network or on
# the machine), and "the work itself": the CPU seconds only decompressing
# the indices and the .debs takes, spread over the cores, plus stage 2's
# time (the packages' own scripts, which mmdebstrap runs too): what no
# builder skips on this machine, as a floor beside the ratio; and that floor
# with the .debs' files written as well (tar writing every .deb's files into
# an empty directory, one .deb per core at a time), since every builder
# writes them.
#
# Run it as root from a build directory (it uses ./apt2ostree unless
# $APT2OSTREE is set).  It needs the network; it writes under $TMPDIR
# (default /var/tmp) and removes what it wrote.
set -eu
A2O=${APT2OSTREE:-$PWD/apt2ostree}
TOP_SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench/build.sh: run as root (stage 2 and mmdebstrap --mode=root)" >&2; exit 1; }
command -v mmdebstrap > /dev/null || { echo "bench/build.sh: mmdebstrap is not installed" >&2; exit 1; }

SUITES=${SUITES:-trixie bookworm}
CASES=${CASES:-minbase}
DESKTOP=${DESKTOP:-task-kde-desktop}
DESKTOP_SUITE=${DESKTOP_SUITE:-trixie}
RTT=${RTT:-50 150}
COLD_PAIRS=${COLD_PAIRS:-1}
case $COLD_PAIRS in
    ''|*[!0-9]*|0) echo "bench/build.sh: COLD_PAIRS: \"$COLD_PAIRS\": expected a number of 1 or more" >&2; exit 1 ;;
esac
for c in $CASES; do
    case $c in
        minbase|desktop|latency) ;;
        *) echo "bench/build.sh: CASES: \"$c\": expected minbase, desktop or latency" >&2; exit 1 ;;
    esac
done
. "$TOP_SRCDIR/tests/libsources.sh"

dir=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench-build.XXXXXX")
pids=   # servers a case started, stopped on the way out
finish () {
    local p
    for p in $pids; do kill "$p" 2> /dev/null || true; done
    rm -rf "$dir"
}
trap finish EXIT
unset SOURCE_DATE_EPOCH

. "$TOP_SRCDIR/bench/libbench.sh"
ratio () { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
# steps LOG: the steps ninja ran.
steps () { grep -c -E '^\[[0-9]+/[0-9]+\] ' "$1" || true; }

# bench_suite SUITE: every figure for one release, in $dir/SUITE.
bench_suite () {
local suite=$1
mkdir -p "$dir/$suite" && cd "$dir/$suite"
host_sources_for "$suite" > mm.sources


# --- 1. cold ---------------------------------------------------------------
: > min.txt
timed cold.lock "$A2O" lock min.txt --suite "$suite" --variant minbase -o min.lock.json
timed cold.build "$A2O" build min.lock.json --ref min
cp build/.ninja_log cold.ninja_log
# The work itself, which no builder skips: decompressing the indices and
# the .debs' data (spread over the cores) and stage 2's scripts (below);
# and the same with the .debs' files written, by tar on every core.
idx_cpu=$(decompress_cpu build/cache/lists)
deb_cpu=$(decompress_cpu build/cache/debs)
deb_files=$(extract_wall build/cache/debs)
n_min=$(grep -c '"sha256": ' min.lock.json)
repo_one=$(kib build/ostree)
timed mm.cold mmdebstrap --quiet --variant=minbase --mode=root "$suite" mm-min.tar mm.sources

# --- 2. no-op --------------------------------------------------------------
timed noop.build "$A2O" build min.lock.json --ref min
grep -q "no work to do" noop.build.log
timed noop.ninja ninja -f build/min.ninja min

# --- 3. a second image: minbase + less ---------------------------------------
echo less > plus.txt
timed plus.lock "$A2O" lock plus.txt --suite "$suite" --variant minbase -o plus.lock.json
timed plus.build "$A2O" build plus.lock.json --ref plus
plus_steps=$(steps plus.build.log)
repo_two=$(kib build/ostree)
timed mm.plus mmdebstrap --quiet --variant=minbase --mode=root --include=less "$suite" mm-plus.tar mm.sources

# --- 4. one package at another version ---------------------------------------
# A package of the lockfile locked from the release's -updates or -security
# suite, at the version the release itself has; lock it pinned
# (name=version), build it as the same image.
changed=$(other_version "$suite" min.lock.json)
set -- $changed
echo "$1=$4" > change.txt
timed change.lock "$A2O" lock change.txt --suite "$suite" --variant minbase -o change.lock.json
timed change.build "$A2O" build change.lock.json --ref min
change_steps=$(grep -E '^\[[0-9]+/[0-9]+\] ' change.build.log | sed 's/^\[[0-9]*\/[0-9]*\] //' | paste -sd, -)
cp build/.ninja_log change.ninja_log
# ... and back, with --incremental: stage 2 starts from the image the change
# made (purge nothing, dpkg --unpack one package, dpkg --configure -a).
timed incr.build "$A2O" build min.lock.json --ref min --incremental
cp build/.ninja_log incr.ninja_log
# ... the loop: the change again and back, each over the checkout the
# run before kept.
timed loop1.build "$A2O" build change.lock.json --ref min --incremental
timed loop2.build "$A2O" build min.lock.json --ref min --incremental
cp build/.ninja_log loop.ninja_log

# --- 1b. more cold pairs (COLD_PAIRS) -----------------------------------------
# Each in an empty directory; the tools take turns at going first, so
# neither always runs on a machine the other just warmed (or littered).
pair_ratios=$(ratio "$(calc "$(cat cold.lock) + $(cat cold.build)")" "$(cat mm.cold)")
for k in $(seq 2 "$COLD_PAIRS"); do
    mkdir -p "$dir/$suite/pair-$k" && cd "$dir/$suite/pair-$k"
    : > min.txt
    if [ $((k % 2)) = 0 ]; then
        timed pair.mm mmdebstrap --quiet --variant=minbase --mode=root "$suite" mm.tar ../mm.sources
    fi
    timed pair.lock "$A2O" lock min.txt --suite "$suite" --variant minbase -o min.lock.json
    timed pair.build "$A2O" build min.lock.json --ref min
    if [ $((k % 2)) = 1 ]; then
        timed pair.mm mmdebstrap --quiet --variant=minbase --mode=root "$suite" mm.tar ../mm.sources
    fi
    pair_ratios="$pair_ratios $(ratio "$(calc "$(cat pair.lock) + $(cat pair.build)")" "$(cat pair.mm)")"
    cd "$dir/$suite" && rm -rf "pair-$k"
done

# --- 6. stage 2 on its own -----------------------------------------------------
stage2_cold=$(edge_seconds cold.ninja_log 'refs/heads/min$')
stage1_cold=$(edge_seconds cold.ninja_log 'refs/heads/stage1/min$')
unpack_cold=$(edge_seconds cold.ninja_log 'refs/heads/deb/')
stage2_change=$(edge_seconds change.ninja_log 'refs/heads/min$')
stage1_change=$(edge_seconds change.ninja_log 'refs/heads/stage1/min$')
stage2_incr=$(edge_seconds incr.ninja_log 'refs/heads/min$')
stage2_loop=$(edge_seconds loop.ninja_log 'refs/heads/min$')
timed sandbox "$A2O" --repo build/ostree mod -v --chroot --ref bench-noop stage1/min -- true
sandbox_split=$(sed -n 's/^apt2ostree mod: \(checkout .*\)/\1/p' sandbox.log)

# --- report --------------------------------------------------------------------
cold_total=$(calc "$(cat cold.lock) + $(cat cold.build)")
floor=$(calc "$idx_cpu + $deb_cpu / $(nproc) + $stage2_cold")
files_floor=$(calc "$idx_cpu + $deb_files + $stage2_cold")
plus_total=$(calc "$(cat plus.lock) + $(cat plus.build)")
change_total=$(calc "$(cat change.lock) + $(cat change.build)")
mm_one=$(kib mm-min.tar)
mm_two=$(kib mm-min.tar mm-plus.tar)
ratio3 () { awk "BEGIN { printf \"%.3f\", $1 / $2 }"; }
pairs_line=
if [ "$COLD_PAIRS" -gt 1 ]; then
    # shellcheck disable=SC2086 # one ratio a word
    pairs_line="
                  $COLD_PAIRS cold pairs: ratio $(median_range $pair_ratios)  (<= 0.3)"
fi

cat <<EOF

$suite minbase: $n_min packages                        seconds      ratio (goal)
 1 cold         apt2ostree lock + build          $cold_total (lock $(cat cold.lock), build $(cat cold.build))
                mmdebstrap                       $(cat mm.cold)       $(ratio "$cold_total" "$(cat mm.cold)")x  (<= 0.3)
                  apt2ostree build: unpack edges $unpack_cold s summed over parallel jobs, stage 1 $stage1_cold s, stage 2 $stage2_cold s
                  the work itself                $floor       $(ratio "$floor" "$(cat mm.cold)")x  (decompressing the indices $idx_cpu s, the .debs $deb_cpu s CPU over $(nproc) cores; stage 2 $stage2_cold s)
                  ... with the files written     $files_floor       $(ratio "$files_floor" "$(cat mm.cold)")x  (the .debs' files written by tar, $(nproc) at a time: $deb_files s)
                  .deb edges of 5 s or more: $(slow_edges cold.ninja_log) of $n_min$pairs_line
 2 no-op        apt2ostree build                 $(cat noop.build)       (<= 0.3)
                ninja alone                      $(cat noop.ninja)
 3 + less       apt2ostree lock + build          $plus_total (lock $(cat plus.lock), build $(cat plus.build), $plus_steps steps)
                mmdebstrap --include=less        $(cat mm.plus)       $(ratio "$plus_total" "$(cat mm.plus)")x
 4 one version  $changed
                apt2ostree lock + build          $change_total (lock $(cat change.lock), build $(cat change.build))
                  steps: $change_steps
                  stage 1 $stage1_change s, stage 2 $stage2_change s
                mmdebstrap (cold, as it must)    $(cat mm.cold)       $(ratio "$change_total" "$(cat mm.cold)")x  (<= 0.25)
                apt2ostree build alone           $(cat change.build)       $(ratio "$(cat change.build)" "$(cat mm.cold)")x
                ... back, build --incremental    $(cat incr.build)       $(ratio3 "$(cat incr.build)" "$(cat mm.cold)")x
                  stage 2 $stage2_incr s (from scratch: $stage2_change s)
                ... the loop: change again, back  $(cat loop1.build), $(cat loop2.build)  $(ratio3 "$(cat loop1.build)" "$(cat mm.cold)")x, $(ratio3 "$(cat loop2.build)" "$(cat mm.cold)")x  (<= 0.03)
                  stage 2 of the last $stage2_loop s (over the kept checkout)
 5 disk (KiB)   repository, one image            $repo_one
                repository, both images          $repo_two       $(ratio "$repo_two" "$repo_one")x of one  (<= 1.1)
                mmdebstrap tarballs, one / both  $mm_one / $mm_two
                repository / tarballs, both      $(ratio "$repo_two" "$mm_two")x
 6 stage 2      cold $stage2_cold s of build $(cat cold.build) s; after the change $stage2_change s
                sandbox alone (mod --chroot true over stage 1): $sandbox_split
(the repository figures leave out build/cache, the downloaded .debs: $(kib build/cache/debs) KiB)
EOF
}

# bench_desktop: the desktop-sized image, cold, in $dir/desktop.
bench_desktop () {
mkdir -p "$dir/desktop" && cd "$dir/desktop"
host_sources_for "$DESKTOP_SUITE" > mm.sources
# shellcheck disable=SC2086 # one package a word
printf '%s\n' $DESKTOP > desktop.txt
timed desktop.lock "$A2O" lock desktop.txt --suite "$DESKTOP_SUITE" --variant minbase -o desktop.lock.json
timed desktop.build "$A2O" build desktop.lock.json --ref desktop
local n mm_n total stage2 idx_cpu floor deb_files files_floor
n=$(grep -c '"sha256": ' desktop.lock.json)
stage2=$(edge_seconds build/.ninja_log 'refs/heads/desktop$')
idx_cpu=$(decompress_cpu build/cache/lists)
floor=$(calc "$idx_cpu + $(decompress_cpu build/cache/debs) / $(nproc) + $stage2")
deb_files=$(extract_wall build/cache/debs)
files_floor=$(calc "$idx_cpu + $deb_files + $stage2")
timed mm.desktop mmdebstrap --quiet --variant=minbase --mode=root --include="$(paste -sd, desktop.txt)" \
    "$DESKTOP_SUITE" mm-desktop.tar mm.sources
mm_n=$(tar -xOf mm-desktop.tar ./var/lib/dpkg/status | grep -c '^Status: install ok installed')
total=$(calc "$(cat desktop.lock) + $(cat desktop.build)")
cat <<EOF

$DESKTOP_SUITE desktop ($DESKTOP over minbase): $n packages (mmdebstrap: $mm_n)    seconds
 cold           apt2ostree lock + build          $total (lock $(cat desktop.lock), build $(cat desktop.build))
                mmdebstrap --include             $(cat mm.desktop)       $(calc "$total / $(cat mm.desktop)")x  (<= 0.4)
                  unpack edges $(edge_seconds build/.ninja_log 'refs/heads/deb/') s summed over parallel jobs, stage 1 $(edge_seconds build/.ninja_log 'refs/heads/stage1/desktop$') s, stage 2 $stage2 s
                  the work itself                $floor       $(calc "$floor / $(cat mm.desktop)")x  (decompressing the indices and .debs over $(nproc) cores, stage 2)
                  ... with the files written     $files_floor       $(calc "$files_floor / $(cat mm.desktop)")x  (the .debs' files written by tar, $(nproc) at a time: $deb_files s)
                  .deb edges of 5 s or more: $(slow_edges build/.ninja_log) of $n
EOF
cd "$dir"
}

# bench_latency: minbase cold from a mirror $RTT ms away, in $dir/latency.
# The .debs of a first build (from the host's mirror) are laid out as each
# source's pool on 127.0.0.1; each build then fetches every source through
# the delaying proxy (build --mirror NAME=URI) into an empty build directory.
bench_latency () {
mkdir -p "$dir/latency" && cd "$dir/latency"
: > min.txt
timed min.lock "$A2O" lock min.txt --suite "$DESKTOP_SUITE" --variant minbase -o min.lock.json
timed near "$A2O" build min.lock.json --ref min --builddir b-near
local n src sha file r port mirrors
n=$(grep -c '"sha256": ' min.lock.json)
sed -n 's/.*"source": "\([^"]*\)".*"sha256": "\([0-9a-f]*\)", "filename": "\([^"]*\)".*/\1 \2 \3/p' min.lock.json \
    | while read -r src sha file; do
        mkdir -p "srv/$src/$(dirname "$file")"
        ln "b-near/cache/debs/$sha" "srv/$src/$file"
    done
python3 "$TOP_SRCDIR/tests/httpd.py" srv server.port > /dev/null 2>&1 &
pids="$pids $!"
while [ ! -s server.port ]; do sleep 0.1; done
echo
echo "$DESKTOP_SUITE minbase from a distant mirror: $n packages, cold       seconds   .deb edges of 5 s or more"
printf ' %-40s %8s   %s\n' "the host's mirror" "$(cat near)" "$(slow_edges b-near/.ninja_log)"
for r in 0 $RTT; do
    port=$(cat server.port)
    if [ "$r" != 0 ]; then
        python3 "$TOP_SRCDIR/bench/delay-proxy.py" "proxy$r.port" "$port" "$r" &
        pids="$pids $!"
        while [ ! -s "proxy$r.port" ]; do sleep 0.1; done
        port=$(cat "proxy$r.port")
    fi
    mirrors=$(sed -n 's/.*"source": "\([^"]*\)".*"sha256".*/\1/p' min.lock.json | sort -u \
              | sed "s|.*|--mirror &=http://127.0.0.1:$port/&|")
    # shellcheck disable=SC2086 # one word per option
    timed "rtt$r" "$A2O" build min.lock.json --ref min --builddir "b-rtt$r" $mirrors
    printf ' %-40s %8s   %s\n' "127.0.0.1, round trip $r ms" "$(cat "rtt$r")" "$(slow_edges "b-rtt$r/.ninja_log")"
done
cd "$dir"
}

# with_steal CMD...: run the case CMD, then say how much CPU time the host
# gave other guests meanwhile.
with_steal () {
    local mark
    mark=$(cpu_mark)
    "$@"
    echo "(CPU time the host gave other guests during it, steal: $(steal_since "$mark")%)"
}

echo "# $(nproc) cores; cases: $CASES"
for c in $CASES; do
    case $c in
        minbase) for suite in $SUITES; do with_steal bench_suite "$suite"; done ;;
        desktop) with_steal bench_desktop ;;
        latency) with_steal bench_latency ;;
    esac
done
