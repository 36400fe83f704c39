# libbench.sh — what the benchmark scripts share.  Source it from one.
#
#   timed NAME CMD...   run CMD, its output in NAME.log, its wall time (s) in NAME
#   calc EXPR           EXPR with two decimals
#   kib PATH...         disk used, in KiB
#   edge_seconds LOG OUTPUT-REGEX
#                       seconds ninja's log LOG gives the edges whose
#                       output matches (the last run of each), summed
#   slow_edges LOG      how many .deb edges (fetch + unpack) of ninja's log
#                       LOG took 5 s or more (the last run of each)
#   other_version SUITE LOCKFILE
#                       "NAME LOCKED -> OTHER": a package LOCKFILE took from
#                       SUITE's -updates or -security, and the version SUITE
#                       itself has (needs tests/libsources.sh)
#   median_range RATIO...
#                       "MEDIANx (LOWEST to HIGHEST)", two decimals
#   decompress_cpu DIR  CPU seconds (user + system) to decompress every
#                       index (xz, gzip, zstd, bzip2) or .deb (its data
#                       tarball, dpkg-deb) in DIR: work any builder does
#   cpu_mark            the machine's CPU time so far, "TOTAL STEAL" (ticks)
#   steal_since MARK    the share of CPU time since MARK that a virtual
#                       machine's host gave to other guests (steal), in %
#   extract_wall DIR    wall seconds for tar to write the files of every
#                       .deb in DIR into an empty directory beside it, as
#                       many at once as there are cores (the best of two
#                       runs): decompressing and writing, work any builder
#                       does

now () { date +%s.%N; }
calc () { awk "BEGIN { printf \"%.2f\\n\", $1 }"; }
timed () {
    local name=$1; shift
    local t0 t1
    t0=$(now)
    "$@" > "$name.log" 2>&1 || { tail -n 20 "$name.log" >&2; echo "${0##*/}: $* failed" >&2; exit 1; }
    t1=$(now)
    calc "$t1 - $t0" > "$name"
}
kib () { du -sk "$@" | awk '{ s += $1 } END { print s }'; }
edge_seconds () {
    awk -v re="$2" 'NR > 1 && $4 ~ re { t[$4] = ($2 - $1) / 1000 } END { s = 0; for (o in t) s += t[o]; printf "%.2f\n", s }' "$1"
}
slow_edges () {
    awk 'NR > 1 && $4 ~ /refs\/heads\/deb\// { t[$4] = $2 - $1 }
         END { n = 0; for (o in t) if (t[o] >= 5000) n++; print n }' "$1"
}

median_range () {
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.2fx (%.2f to %.2f)\n", m, v[1], v[NR] }'
}

# decompress_cpu DIR: what it costs only to decompress what DIR holds
# (the lock's cached indices, or the build's downloaded .debs), one file
# after another, in CPU seconds.
decompress_cpu () {
    local f magic total=0 tf
    tf=$(mktemp)
    for f in "$1"/*; do
        [ -f "$f" ] || continue
        magic=$(od -An -tx1 -N4 "$f" | tr -d ' ')
        case $magic in
            fd377a58) set -- xz -dc ;;
            1f8b*) set -- gzip -dc ;;
            28b52ffd) set -- zstd -qdc ;;
            425a68*) set -- bzip2 -dc ;;
            213c6172) set -- dpkg-deb --fsys-tarfile ;;   # "!<ar": a .deb
            *) continue ;;
        esac
        /usr/bin/time -o "$tf" -f '%U %S' "$@" "$f" > /dev/null 2>&1 || continue
        total=$(awk -v a="$total" '{ printf "%.2f", a + $1 + $2 }' "$tf")
    done
    rm -f "$tf"
    echo "$total"
}

# cpu_mark / steal_since: on a virtual machine, time its host runs other
# guests is "steal" in /proc/stat ($PROC_STAT, for a test); a run with
# much of it compares two tools that each met a different machine.
cpu_mark () {
    awk '$1 == "cpu" { t = 0; for (i = 2; i <= NF; i++) t += $i; print t, $9; exit }' "${PROC_STAT:-/proc/stat}"
}
steal_since () {
    # shellcheck disable=SC2046,SC2086 # two numbers each
    set -- $1 $(cpu_mark)
    awk -v t0="$1" -v s0="$2" -v t1="$3" -v s1="$4" \
        'BEGIN { printf "%.0f\n", (t1 > t0) ? 100 * (s1 - s0) / (t1 - t0) : 0 }'
}

# extract_wall DIR: what it costs to decompress every .deb of DIR (the
# build's download cache) and write its files, with Debian's own tar, one
# .deb per core at a time, in wall seconds: the floor of an unpack phase,
# which writes the same files.  Each .deb's data tarball is taken out of its
# ar archive first, untimed; the files go into a scratch directory on the
# same file system, made empty and synced before each run.
extract_wall () {
    local dir=$1 work best='' t0 t1 t deb member _
    work=$(mktemp -d "$dir/../extract.XXXXXX")
    mkdir "$work/data"
    for deb in "$dir"/*; do
        [ "$(od -An -tx1 -N4 "$deb" | tr -d ' ')" = 213c6172 ] || continue
        member=$(ar t "$deb" | grep '^data\.tar') || continue
        ar p "$deb" "$member" > "$work/data/${deb##*/}"
    done
    for _ in 1 2; do
        rm -rf "$work/root" && mkdir "$work/root" && sync
        t0=$(now)
        find "$work/data" -type f -print0 | xargs -0 -P "$(nproc)" -I '{}' tar -C "$work/root" -xf '{}'
        t1=$(now)
        t=$(calc "$t1 - $t0")
        if [ -z "$best" ] || awk "BEGIN { exit !($t < $best) }"; then best=$t; fi
    done
    rm -rf "$work"
    echo "$best"
}

# other_version SUITE LOCKFILE: the first package of LOCKFILE locked from
# SUITE-updates or SUITE-security whose version in SUITE itself differs, as
# "NAME LOCKED -> OTHER" (a one-package change a lock can pin); fails when
# there is none.
other_version () {
    local out index
    index=$(mktemp)
    curl -fsS -o "$index" "$(host_debian_mirror)/dists/$1/main/binary-$(dpkg --print-architecture)/Packages.xz" \
        || { rm -f "$index"; return 1; }
    out=$(xz -dc "$index" | awk -v lock="$2" '
        BEGIN { while ((getline l < lock) > 0)
                  if (match(l, /"name": "[^"]*", "version": "[^"]*"/)) {
                    split(substr(l, RSTART, RLENGTH), f, "\"")
                    if (l ~ /"source": "[^"]*-(updates|security)"/) v[f[4]] = f[8] }
                RS = ""; FS = "\n" }
        { n = ""; ver = ""
          for (i = 1; i <= NF; i++) { if ($i ~ /^Package: /) n = substr($i, 10); if ($i ~ /^Version: /) ver = substr($i, 10) }
          if ((n in v) && ver != v[n]) { print n, v[n], "->", ver; exit } }')
    rm -f "$index"
    [ -n "$out" ] || { echo "${0##*/}: no package of $2 has another version in $1" >&2; return 1; }
    echo "$out"
}
