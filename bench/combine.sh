#!/bin/bash
# bench/combine.sh — combine 100 trees of 1,000 files each (overlapping
# directories, like packages sharing /usr/share/man), against ostree's own
# union (`ostree commit --tree=ref=A --tree=ref=B …`), in the same run on the
# same machine.  Twice: with small files, and with 1 MiB files, to show that
# combine's time does not depend on file sizes.
#
#   bench/combine.sh [APT2OSTREE]      (default: ./apt2ostree, else on PATH)
#
# Prints the mean times and the ratio apt2ostree/ostree for each run.  Needs
# ostree and hyperfine (Debian packages of those names).  Uses $TMPDIR.
set -eu
A2O=${1:-$(command -v ./apt2ostree || command -v apt2ostree)}
A2O=$(readlink -f "$A2O")
TREES=${TREES:-100}
FILES_PER_DIR=90   # 10 dirs x 90 + 50 docs + 50 man pages = 1,000 files a tree
work=$(mktemp -d "${TMPDIR:-/tmp}/a2o-bench-combine.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# make_trees REPO SIZE: $TREES trees in REPO whose files are SIZE bytes.
# Files are hardlinks into a checkout of a "blobs" tree and committed with
# --link-checkout-speedup, so building the inputs does not read 100 GiB.
make_trees () {
    local repo=$1 size=$2 t j k
    "$A2O" --repo "$repo" init --mode bare > /dev/null
    mkdir -p blobs-src
    for k in $(seq 0 99); do
        { printf 'blob %s\n' "$k"; head -c $((size > 16 ? size - 16 : 0)) /dev/zero; } > blobs-src/b$k
    done
    ostree --repo="$repo" commit --no-bindings -b blobs --tree=dir=blobs-src > /dev/null
    ostree --repo="$repo" checkout -H blobs blobs
    for t in $(seq -w 0 $((TREES - 1))); do
        local d=tree$t
        mkdir -p $d/usr/share/doc/pkg$t $d/usr/share/man/man1
        for j in $(seq 0 9); do
            mkdir -p $d/usr/lib/pkg$t/d$j
            for k in $(seq 0 $((FILES_PER_DIR - 1))); do
                ln blobs/b$(( (10#$t + j + k) % 100 )) $d/usr/lib/pkg$t/d$j/f$k
            done
        done
        for k in $(seq 0 49); do
            ln blobs/b$(( (10#$t + k) % 100 )) $d/usr/share/doc/pkg$t/doc$k
            ln blobs/b$(( (10#$t + 2 * k) % 100 )) $d/usr/share/man/man1/pkg$t-$k.1
        done
        ostree --repo="$repo" commit --no-bindings --link-checkout-speedup -b t$t \
            --tree=dir=$d --owner-uid=0 --owner-gid=0 > /dev/null
        rm -rf $d
    done
    rm -rf blobs blobs-src
}

# bench REPO LABEL: time both unions; print the ratio.
bench () {
    local repo=$1 label=$2
    local refs tree_args
    refs=$(cd "$repo/refs/heads" && ls -d t* | sort | tr "\n" " ")
    tree_args=$(for r in $refs; do printf -- '--tree=ref=%s ' "$r"; done)
    hyperfine --style basic --warmup 1 --runs 5 --export-json "$label.json" \
        -n apt2ostree "$A2O --repo $repo combine --ref union-a2o $refs" \
        -n ostree "ostree --repo=$repo commit --no-bindings -b union-ostree $tree_args" > "$label.log"
    python3 - "$label" "$label.json" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
r = {x["command"]: x["mean"] for x in json.load(open(path))["results"]}
print(f"{label}: apt2ostree {r['apt2ostree']:.3f}s  ostree {r['ostree']:.3f}s  "
      f"ratio apt2ostree/ostree = {r['apt2ostree'] / r['ostree']:.2f}")
PY
    # Both unions must agree on the file list.
    diff <(ostree --repo="$repo" ls -R union-a2o | awk '{print $1,$2,$3,$4,$5}') \
         <(ostree --repo="$repo" ls -R union-ostree | awk '{print $1,$2,$3,$4,$5}') > /dev/null \
        || echo "$label: WARNING: the two unions differ"
}

echo "combine: $TREES trees x 1,000 files; apt2ostree=$A2O"
make_trees small 64
bench small "small-files"
make_trees large 1048576
bench large "1MiB-files"
