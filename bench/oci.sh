#!/bin/bash
# bench/oci.sh — what a container host downloads when an image built by
# apt2ostree changes by one package, with export --oci --layers N (files
# in layers by package) against one layer, and what the layers cost to
# export.  For each image — minbase, and a server-sized one (minbase with
# $SERVER, default openssh-server systemd-sysv python3 curl nginx) — of
# $SUITE (default bookworm) from the mirror the host's apt configuration
# names:
#
#   lock and build it; export it as one layer and with --layers N for
#   each N of $LAYERS (default "16 64 127"), each export timed; then one
#   package changed (a package locked from -updates or -security, pinned
#   to the version the release itself has), built and exported the same
#   way; the bytes a client pulls for the new image when it has the old
#   one (the blobs of the new manifest the old one does not name: the
#   changed layers, the config, the manifest), against one layer and
#   against the changed packages' own files (the changed package and the
#   others of its source: their trees, gzip-compressed) plus the top
#   layer.
#
# Run it as root (stage 2) from a build directory (it uses ./apt2ostree
# unless $APT2OSTREE is set); it needs the network and jq; it writes
# under $TMPDIR (default /var/tmp) and removes what it wrote.
set -eu
A2O=${APT2OSTREE:-$PWD/apt2ostree}
TOP_SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench/oci.sh: run as root (stage 2)" >&2; exit 1; }
command -v jq > /dev/null || { echo "bench/oci.sh: jq is not installed" >&2; exit 1; }
SUITE=${SUITE:-bookworm}
SERVER=${SERVER:-openssh-server systemd-sysv python3 curl nginx}
LAYERS=${LAYERS:-16 64 127}

. "$TOP_SRCDIR/tests/libsources.sh"
. "$TOP_SRCDIR/bench/libbench.sh"
dir=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench-oci.XXXXXX")
trap 'rm -rf "$dir"' EXIT
unset SOURCE_DATE_EPOCH
cd "$dir"

# blobs LAYOUT: the digests of the layout's one image (manifest, config,
# layers), one a line, and "DIGEST SIZE" in LAYOUT.sizes.
blobs () {
    local m
    m=$(jq -r ".manifests[0].digest" "$1/index.json")
    echo "$m $(stat -c %s "$1/blobs/${m/://}")" > "$1.sizes"
    jq -r "(.config, .layers[]) | \"\(.digest) \(.size)\"" "$1/blobs/${m/://}" >> "$1.sizes"
    cut -d' ' -f1 "$1.sizes"
}

# pulled OLD NEW: the KiB of NEW's blobs OLD does not have.
pulled () {
    blobs "$1" > "$1.digests"
    blobs "$2" > /dev/null
    awk 'NR == FNR { have[$1] = 1; next } !($1 in have) { s += $2 } END { printf "%d\n", s / 1024 }' \
        "$1.digests" "$2.sizes"
}

# top_kib LAYOUT: the KiB of its last layer.
top_kib () { blobs "$1" > /dev/null; tail -n 1 "$1.sizes" | awk '{ printf "%d\n", $2 / 1024 }'; }

# export_all NAME REF: REF exported as one layer (NAME-1) and with each N
# of LAYERS (NAME-N), timed.
export_all () {
    local n
    for n in 1 $LAYERS; do
        timed "$1-$n.export" "$A2O" --repo build/ostree export "$2" --oci "$1-$n" --layers "$n"
    done
}

# changed_kib OLD NEW: the KiB of the package trees NEW locks and OLD does
# not (the changed package, and the others built from its source), each a
# gzip-compressed tar; their names in changed.names.
changed_kib () {
    local line name sha ref sum=0
    : > changed.names
    while read -r line; do
        sha=$(echo "$line" | grep -o '"sha256": "[0-9a-f]*"' | cut -d'"' -f4)
        grep -q "\"sha256\": \"$sha\"" "$1" && continue
        name=$(echo "$line" | cut -d'"' -f4)
        echo "$name" >> changed.names
        ref=$(ostree --repo=build/ostree refs | grep "^deb/$name/.*/$sha\$" | head -n 1)
        [ -n "$ref" ] || { echo "bench/oci.sh: no package tree of $name ($sha)" >&2; exit 1; }
        "$A2O" --repo build/ostree export "$ref" --tar pkg.tar.gz
        sum=$((sum + $(stat -c %s pkg.tar.gz)))
    done < <(grep -o '{"name": "[^"]*", "version": [^}]*' "$2")
    echo $((sum / 1024))
}

# image NAME PACKAGES...: the benchmark for one image, its lines printed.
image () {
    local name=$1; shift
    printf '%s\n' "$@" > "$name.txt"
    timed "$name.lock" "$A2O" lock "$name.txt" --suite "$SUITE" --variant minbase -o "$name.lock.json"
    timed "$name.build" "$A2O" build "$name.lock.json" --ref "$name"
    export_all "$name-old" "$name"
    local changed
    changed=$(other_version "$SUITE" "$name.lock.json")
    # shellcheck disable=SC2086 # "NAME LOCKED -> OTHER", one field a word
    set -- $changed
    { cat "$name.txt"; echo "$1=$4"; } > "$name-new.txt"
    timed "$name-new.lock" "$A2O" lock "$name-new.txt" --suite "$SUITE" --variant minbase -o "$name-new.lock.json"
    timed "$name-new.build" "$A2O" build "$name-new.lock.json" --ref "$name-new"
    export_all "$name-new" "$name-new"
    local pkg top n one
    pkg=$(changed_kib "$name.lock.json" "$name-new.lock.json")
    one=$(pulled "$name-old-1" "$name-new-1")
    echo
    echo "$name: $(grep -c '"sha256": ' "$name.lock.json") packages; change: $changed; changed packages: $(paste -sd " " changed.names), their files $pkg KiB gzip"
    echo "  layers  export s  x 1 layer  pulled KiB  x 1 layer  top layer KiB  pulled / (package + top)"
    for n in 1 $LAYERS; do
        top=$(top_kib "$name-new-$n")
        local p t
        p=$(pulled "$name-old-$n" "$name-new-$n")
        t=$(cat "$name-new-$n.export")
        printf '  %6s  %8s  %9s  %10s  %9s  %13s  %s\n' "$n" "$t" \
            "$(calc "$t / $(cat "$name-new-1.export")")" "$p" "$(calc "$p / $one")" "$top" \
            "$(calc "$p / ($pkg + $top)")"
    done
}

image minbase
# shellcheck disable=SC2086 # one package a word
image server $SERVER
