#!/bin/bash
# The resolver against the real Debian bookworm archive from the host's
# configured mirror: the package set must be the one mmdebstrap installs.
#
# Downloads are cached under /var/cache/apt2ostree-tests (or
# $TMPDIR/apt2ostree-tests when that is not writable), keyed by the index's
# SHA256, and so is mmdebstrap's answer for that index.  The InRelease is
# only read for the index's hash here; checking signatures is the lock
# command's business and has its own tests.

. "$TOP_SRCDIR/tests/libtest.sh"

RESOLVE_TOOL="$TOP_BUILDDIR/tests/resolve-tool"
ARCH=amd64
SUITE=bookworm

require_mirror

CACHE=/var/cache/apt2ostree-tests
mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] || CACHE="${TMPDIR:-/tmp}/apt2ostree-tests"
mkdir -p "$CACHE"

inrelease="$SCRATCH/InRelease"
curl -fsS --max-time 60 -o "$inrelease" "$MIRROR/dists/$SUITE/InRelease" \
    || skip_all "the mirror $MIRROR does not serve dists/$SUITE/InRelease"
sha=$(awk -v f="main/binary-$ARCH/Packages.xz" '
        /^SHA256:/ { in_sha = 1; next }
        /^[^ ]/ { in_sha = 0 }
        in_sha && $3 == f { print $1; exit }' "$inrelease")
[ -n "$sha" ] || skip_all "$MIRROR's $SUITE InRelease lists no main/binary-$ARCH/Packages.xz"

PACKAGES="$CACHE/$sha.xz"
if ! echo "$sha  $PACKAGES" | sha256sum -c --status 2>/dev/null; then
    curl -fsS --max-time 600 -o "$PACKAGES.part" \
        "$MIRROR/dists/$SUITE/main/binary-$ARCH/by-hash/SHA256/$sha" \
        || curl -fsS --max-time 600 -o "$PACKAGES.part" \
            "$MIRROR/dists/$SUITE/main/binary-$ARCH/Packages.xz" \
        || skip_all "cannot download $SUITE main/binary-$ARCH/Packages.xz from $MIRROR"
    echo "$sha  $PACKAGES.part" | sha256sum -c --status \
        || skip_all "the mirror changed while downloading (Packages.xz does not match InRelease)"
    mv "$PACKAGES.part" "$PACKAGES"
fi
say "index: $PACKAGES"

# mmdebstrap_set VARIANT: the name=version list of what mmdebstrap installs
# for VARIANT from this mirror, sorted; cached for this index.
mmdebstrap_set () {
    local variant=$1 out="$CACHE/mmdebstrap-$SUITE-$ARCH-$1-$sha.txt"
    if [ ! -s "$out" ]; then
        command -v mmdebstrap >/dev/null || return 1
        mmdebstrap --quiet --variant="$variant" --architectures="$ARCH" --format=null \
            --customize-hook='chroot "$1" dpkg-query -W -f="\${Package}=\${Version}\n" > "'"$out.part"'"' \
            "$SUITE" /dev/null "deb $MIRROR $SUITE main" >&2 || return 1
        sort "$out.part" > "$out" && rm -f "$out.part"
    fi
    cat "$out"
}

# compare_variant VARIANT: the resolver's set equals mmdebstrap's.
compare_variant () {
    "$RESOLVE_TOOL" --arch "$ARCH" --variant "$1" --source "$SUITE=$PACKAGES" > resolved.txt
    sort resolved.txt > mine.txt
    mmdebstrap_set "$1" > theirs.txt || { echo "mmdebstrap failed" >&2; return 1; }
    say "$1: $(wc -l < mine.txt) packages resolved, mmdebstrap installs $(wc -l < theirs.txt)"
    diff -u theirs.txt mine.txt >&2
}

if [ "$(id -u)" = 0 ] && command -v mmdebstrap >/dev/null; then
    test_expect_success 'bookworm minbase from the mirror resolves to exactly the packages and versions mmdebstrap installs' '
        compare_variant minbase
    '
    test_expect_success 'bookworm essential from the mirror resolves to exactly the packages and versions mmdebstrap installs' '
        compare_variant essential
    '
else
    test_skip 'bookworm minbase from the mirror resolves to exactly the packages and versions mmdebstrap installs' \
        'mmdebstrap needs root and must be installed'
    test_skip 'bookworm essential from the mirror resolves to exactly the packages and versions mmdebstrap installs' \
        'mmdebstrap needs root and must be installed'
fi

test_expect_success 'every package of the real minbase set has a pool filename, size and sha256' '
    "$RESOLVE_TOOL" --fields --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" > fields.txt
    [ "$(wc -l < fields.txt)" -gt 50 ]
    # name=version arch multi-arch size sha256 filename source source-package
    while read -r nv arch ma size sha file source srcpkg; do
        case "$arch" in amd64|all) ;; *) fail "$nv: architecture $arch" ;; esac
        [ "$size" -gt 0 ] || fail "$nv: size $size"
        [ "${#sha}" = 64 ] && [ -z "${sha//[0-9a-f]/}" ] || fail "$nv: sha256 $sha"
        case "$file" in pool/main/*.deb) ;; *) fail "$nv: filename $file" ;; esac
        [ "$source" = "$SUITE" ] || fail "$nv: source $source"
        [ -n "$srcpkg" ] || fail "$nv: no source package"
    done < fields.txt
'

test_expect_success 'in the real minbase set libc6 is unpacked before the packages that pre-depend on it' '
    "$RESOLVE_TOOL" --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" > order.txt
    libc=$(grep -n "^libc6=" order.txt | cut -d: -f1)
    for p in dpkg coreutils bash tar; do
        n=$(grep -n "^$p=" order.txt | cut -d: -f1)
        [ "$libc" -lt "$n" ] || fail "libc6 (line $libc) comes after $p (line $n)"
    done
'

test_expect_success 'a virtual package that several packages of the real archive provide is refused with the candidates listed' '
    expect_failure err "$RESOLVE_TOOL" --arch "$ARCH" --variant custom --source "$SUITE=$PACKAGES" mail-transport-agent
    assert_file_has_content err "several packages provide it: .*exim4-daemon-light.*postfix"
'

test_done
