#!/bin/bash
# bench/multi.sh — many images in one Ninja graph and one repository, against
# each image built alone, in the same run on the same machine, from the
# mirror the host's apt configuration names ($SUITE, default bookworm):
#
#   images: minbase, then minbase plus one package of $EXTRAS each
#   (default: less, nano, vim-tiny), so 1, 2 and 4 images;
#   graph N: the first N images with one "apt2ostree build" (one Ninja file,
#   one repository) from an empty build directory;
#   alone: each image with its own "apt2ostree build" and build directory;
#   with MMDEBSTRAP=1, also mmdebstrap --variant=minbase --include=PACKAGE
#   for each image.
#
# Every build reads one warm download cache (fetched once, first), so the
# figures compare unpacking, stage 1 and stage 2, not the network.  Prints
# time and disk for each; the goal is graph 4 within 1.6 times graph 1.
# Run it as root from a build directory (it uses ./apt2ostree unless
# $APT2OSTREE is set); it writes under $TMPDIR (default /var/tmp) and removes
# what it wrote.
set -eu
A2O=${APT2OSTREE:-$PWD/apt2ostree}
TOP_SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench/multi.sh: run as root (stage 2)" >&2; exit 1; }
SUITE=${SUITE:-bookworm}
EXTRAS=${EXTRAS:-less nano vim-tiny}
. "$TOP_SRCDIR/tests/libsources.sh"

dir=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench-multi.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
unset SOURCE_DATE_EPOCH

. "$TOP_SRCDIR/bench/libbench.sh"
# mtimed CMD...: timed, printing the wall time (output in last.log).
mtimed () { timed last "$@" && cat last; }
# warm BUILDDIR: its download cache is the shared one.
warm () { mkdir -p "$1/cache" && ln -s "$dir/debs" "$1/cache/debs"; }

# The lockfiles: img1 = minbase, imgN = minbase + the (N-1)th extra.
mkdir -p debs
: > img1.txt
images=(img1)
i=1
for p in $EXTRAS; do
    i=$((i + 1))
    echo "$p" > "img$i.txt"
    images+=("img$i")
done
for image in "${images[@]}"; do
    "$A2O" lock "$image.txt" --suite "$SUITE" --variant minbase -o "$image.lock.json" > /dev/null
done
# Fetch every .deb once (the build of all images, thrown away).
warm prefetch
"$A2O" build "${images[@]/%/.lock.json}" --builddir prefetch > /dev/null
rm -rf prefetch

printf '%-8s %10s %10s %12s %12s\n' images "graph s" "alone s" "graph KiB" "alone KiB"
for n in 1 2 4; do
    [ "$n" -le "${#images[@]}" ] || break
    set -- "${images[@]:0:$n}"
    warm "graph$n"
    t_graph=$(mtimed "$A2O" build "${@/%/.lock.json}" --builddir "graph$n")
    k_graph=$(kib "graph$n/ostree")
    t_alone=0
    k_alone=0
    for image in "$@"; do
        warm "alone$n-$image"
        t=$(mtimed "$A2O" build "$image.lock.json" --builddir "alone$n-$image")
        t_alone=$(calc "$t_alone + $t")
        k_alone=$((k_alone + $(kib "alone$n-$image/ostree")))
    done
    printf '%-8s %10s %10s %12s %12s\n' "$n" "$t_graph" "$t_alone" "$k_graph" "$k_alone"
    eval "t_graph_$n=$t_graph"
    rm -rf "graph$n" alone"$n"-*
done
[ -z "${t_graph_4:-}" ] || echo "graph 4 / graph 1: $(calc "$t_graph_4 / $t_graph_1") (goal: at most 1.6)"

if [ "${MMDEBSTRAP:-0}" = 1 ]; then
    command -v mmdebstrap > /dev/null || { echo "bench/multi.sh: mmdebstrap is not installed" >&2; exit 1; }
    host_sources_for "$SUITE" > mm.sources
    t_mm=0
    for image in "${images[@]}"; do
        include=$(cat "$image.txt")
        t=$(mtimed mmdebstrap --quiet --variant=minbase --mode=root ${include:+--include="$include"} \
            "$SUITE" "mm-$image.tar" mm.sources)
        t_mm=$(calc "$t_mm + $t")
    done
    echo "mmdebstrap, each of the ${#images[@]} images: $t_mm s in all"
fi
