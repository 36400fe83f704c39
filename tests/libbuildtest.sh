# libbuildtest.sh — a small real Debian base for hermetic image builds.
# Source it after libtest.sh and librepo.sh.
#
#   base_repo "$SRV/debian"      # real bookworm .debs + Packages, Release, InRelease
#   base_archive                 # SRV=$SCRATCH/srv, D=$SRV/debian: base_repo "$D", repo_key archive
#
# BASE_ARCH (set before sourcing; amd64 unless set) picks the architecture
# of the base .debs: arm64's run under qemu-user (see libarm64.sh).
#
# The .debs are Debian bookworm's own (dpkg, dash, coreutils, libc6... the
# least that "dpkg --configure -a" and stage 2 need), copied into a
# repository made and signed at test time, so builds run the real maintainer
# scripts offline.  They are fetched once from the mirror the host's apt
# configuration names into a cache keyed by sha256 that survives the tests
# (/var/cache/apt2ostree-tests/debs, else $TMPDIR), with a manifest of which
# file is which package; later runs need no network.

BASE_PACKAGES="base-files base-passwd coreutils dash debianutils diffutils dpkg gcc-12-base grep
libacl1 libattr1 libbz2-1.0 libc-bin libc6 libdebconfclient0 libgcc-s1 libgmp10 liblzma5 libmd0
libpcre2-8-0 libselinux1 libzstd1 mawk sed tar zlib1g"
# What a user would ask for; the rest are their dependencies.
BASE_REQUEST="base-files base-passwd coreutils dash diffutils dpkg grep libc-bin mawk sed"

BASE_CACHE=/var/cache/apt2ostree-tests
mkdir -p "$BASE_CACHE/debs" 2>/dev/null && [ -w "$BASE_CACHE/debs" ] \
    || BASE_CACHE="${TMPDIR:-/tmp}/apt2ostree-tests"
mkdir -p "$BASE_CACHE/debs"
BASE_ARCH=${BASE_ARCH:-amd64}
BASE_MANIFEST="$BASE_CACHE/build-test-base-$BASE_ARCH.list"

# _base_manifest_ok: every package of BASE_PACKAGES is in the manifest
# ("NAME SHA256 FILENAME" lines) and its file is in the cache.
_base_manifest_ok () {
    [ -f "$BASE_MANIFEST" ] || return 1
    local p sha
    for p in $BASE_PACKAGES; do
        sha=$(awk -v p="$p" '$1 == p { print $2 }' "$BASE_MANIFEST")
        [ -n "$sha" ] && [ -f "$BASE_CACHE/debs/$sha" ] || return 1
    done
}

# _base_fetch: the manifest and the .debs, from the host's mirror; skips the
# whole test file, saying why, when that cannot be done.
_base_fetch () {
    local mirror
    mirror=$(host_debian_mirror)
    [ -n "$mirror" ] || skip_all "no cached base .debs ($BASE_MANIFEST) and the host's apt configuration names no Debian bookworm mirror"
    curl -fsS --max-time 120 -o "$SCRATCH/Packages.xz" \
        "$mirror/dists/bookworm/main/binary-$BASE_ARCH/Packages.xz" \
        || skip_all "no cached base .debs ($BASE_MANIFEST) and the mirror $mirror (from the host's apt configuration) does not answer"
    xz -dc "$SCRATCH/Packages.xz" | awk -v want=" $(echo $BASE_PACKAGES) " '
        BEGIN { RS = ""; FS = "\n" }
        { name = ""; sha = ""; file = ""
          for (i = 1; i <= NF; i++) {
            if ($i ~ /^Package: /) name = substr($i, 10)
            if ($i ~ /^SHA256: /) sha = substr($i, 9)
            if ($i ~ /^Filename: /) file = substr($i, 11)
          }
          if (index(want, " " name " ") && !(name in seen)) { seen[name] = 1; print name, sha, file } }' \
        > "$SCRATCH/base.list"
    local p sha file
    for p in $BASE_PACKAGES; do
        grep -q "^$p " "$SCRATCH/base.list" || skip_all "$p is not in the mirror's bookworm main $BASE_ARCH Packages"
    done
    while read -r p sha file; do
        [ -f "$BASE_CACHE/debs/$sha" ] && continue
        curl -fsS --max-time 300 -o "$BASE_CACHE/debs/$sha.part.$$" "$mirror/$file" \
            || skip_all "cannot fetch $file from $mirror"
        [ "$(sha256sum < "$BASE_CACHE/debs/$sha.part.$$" | cut -d' ' -f1)" = "$sha" ] \
            || skip_all "$mirror/$file does not match its index's SHA256 (the mirror is syncing?)"
        mv "$BASE_CACHE/debs/$sha.part.$$" "$BASE_CACHE/debs/$sha"
    done < "$SCRATCH/base.list"
    cp "$SCRATCH/base.list" "$BASE_MANIFEST.$$" && mv "$BASE_MANIFEST.$$" "$BASE_MANIFEST"
}

# base_repo ROOT: ROOT/pool/main/ holds the base .debs under their pool
# names (add more with make_deb or repo_deb, then repo_dists and repo_sign).
base_repo () {
    local root=$1
    [ "$BASE_ARCH" != amd64 ] || [ "$(dpkg --print-architecture)" = amd64 ] \
        || skip_all "the real base .debs used here are amd64's"
    _base_manifest_ok || _base_fetch
    mkdir -p "$root/pool/main"
    local p sha file
    while read -r p sha file; do
        case " $(echo $BASE_PACKAGES) " in *" $p "*) ;; *) continue ;; esac
        cp "$BASE_CACHE/debs/$sha" "$root/pool/main/$(basename "$file")"
    done < "$BASE_MANIFEST"
}

# base_archive: the test's archive, D=$SRV/debian with SRV=$SCRATCH/srv
# (both set for the rest of the test file), holding the base .debs
# (base_repo "$D"), and the "archive" signing key (repo_key archive); add
# packages, then repo_publish "$D" bookworm ARCH archive.
base_archive () {
    SRV="$SCRATCH/srv"
    D="$SRV/debian"
    base_repo "$D"
    repo_key archive
}

# serve_work_dir ROOT: serve ROOT (repo_serve) and enter the test's work
# directory, W=$SCRATCH/work, with a sources.list naming ROOT/debian's
# bookworm signed by the "archive" key (repo_publish ROOT/debian bookworm
# ARCH archive made it).
serve_work_dir () {
    repo_serve "$1"
    W="$SCRATCH/work"
    mkdir -p "$W"
    cd "$W"
    repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
}

# base_lock NAME PACKAGE...: lock the base plus PACKAGEs from sources.list
# (in the current directory) for BASE_ARCH into NAME.lock.json (merged /usr
# unless MERGED=no).
base_lock () {
    local name=$1; shift
    printf '%s\n' $BASE_REQUEST "$@" > "$name.txt"
    a2o lock "$name.txt" --sources sources.list --arch "$BASE_ARCH" --variant custom --merged-usr "${MERGED:-yes}" \
        --cache cache -o "$name.lock.json" > /dev/null
}

# test_deb NAME VERSION [POSTINST] [FIELD: VALUE]...: an amd64 package in
# $D/pool/main (D: the test's archive) that ships /usr/share/NAME/version;
# POSTINST, when not empty, is the body of its postinst.
test_deb () {
    local name=$1 version=$2 postinst=${3:-}
    shift 2; [ $# -eq 0 ] || shift
    local stage="$SCRATCH/stage/$name-$version"
    rm -rf "$stage"
    mkdir -p "$stage/usr/share/$name" "$stage/DEBIAN"
    echo "$name $version" > "$stage/usr/share/$name/version"
    if [ -n "$postinst" ]; then
        printf '#!/bin/sh\nset -e\n%s\n' "$postinst" > "$stage/DEBIAN/postinst"
    fi
    ( cd "$D/pool/main" && make_deb "$stage" "$name" "$version" amd64 "Priority: optional" "$@" ) > /dev/null
}

# base_image NAME PACKAGE...: base_lock NAME PACKAGE..., then build it into
# build/ (ref NAME); a failed build prints its output and ends the test
# file.
base_image () {
    base_lock "$@"
    local name=$1
    a2o build "$name.lock.json" > "$name.build.out" 2>&1 || { cat "$name.build.out"; exit 1; }
}

# skip_unless_stage2: skip the whole file on a machine where builds with
# stage 2 cannot run (bubblewrap runs maintainer scripts as root; ninja
# runs the build).
skip_unless_stage2 () {
    [ "$(id -u)" = 0 ] || skip_all "stage 2 runs maintainer scripts as root in bubblewrap; run as root"
    command -v ninja > /dev/null || skip_all "ninja is not installed"
}

# many_debs_repo D N: base_repo D with N small packages besides (small01
# ... smallN, each shipping one file), published as bookworm signed by the
# "archive" key; MANY_DEBS_REQUEST is what to lock: the base's request and
# the small packages, about 26 + N .debs in all.  (For tests that count
# connections per .deb: N well over the connections allowed.)
many_debs_repo () {
    local d=$1 n=$2 i stage
    base_repo "$d"
    repo_key archive
    MANY_DEBS_REQUEST="$BASE_REQUEST"
    for i in $(seq -w "$n"); do
        stage="$SCRATCH/stage/small$i"
        mkdir -p "$stage/usr/share/small$i"
        echo "small $i" > "$stage/usr/share/small$i/hello"
        ( cd "$d/pool/main" && make_deb "$stage" "small$i" 1.0 amd64 "Priority: optional" ) > /dev/null \
            || { echo "Bail out! cannot build the test packages"; exit 1; }
        MANY_DEBS_REQUEST="$MANY_DEBS_REQUEST small$i"
    done
    repo_publish "$d" bookworm amd64 archive
}

# assert_one_lookup NAME LOOKUPS CONNECTIONS DEBS [WHAT]: run NAME looked
# $MIRROR_NAME up at most once and made at most $MAX_CONNECTIONS WHAT
# (default "connections") to the mirror for its DEBS .debs; else fail,
# saying which.
assert_one_lookup () {
    local ok=yes
    if [ "$2" -gt 1 ]; then
        echo "$1: $2 lookups of $MIRROR_NAME for $4 .debs (at most one expected)" >&2
        ok=no
    fi
    if [ "$3" -gt "$MAX_CONNECTIONS" ]; then
        echo "$1: $3 ${5:-connections} to the mirror for $4 .debs (at most $MAX_CONNECTIONS expected)" >&2
        ok=no
    fi
    [ $ok = yes ] || fail "$1 looked the mirror up or connected per .deb"
}

# fresh_dir NAME: a new directory W/NAME with W's image.lock.json and
# sources.list, entered: its own build directory, repository and download
# cache.
fresh_dir () {
    mkdir "$W/$1"
    cp "$W/image.lock.json" "$W/sources.list" "$W/$1/"
    cd "$W/$1"
}
