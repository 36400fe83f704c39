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

# fetch_index URI SUITE: download SUITE's main/binary-$ARCH/Packages.xz from
# URI into the cache (by its InRelease hash) and print its path; nothing
# when the mirror does not have it.
fetch_index () {
    local uri=$1 suite=$2 inrelease="$SCRATCH/InRelease.$2" sha path
    curl -fsS --max-time 60 -o "$inrelease" "$uri/dists/$suite/InRelease" || return 0
    sha=$(awk -v f="main/binary-$ARCH/Packages.xz" '
            /^SHA256:/ { in_sha = 1; next }
            /^[^ ]/ { in_sha = 0 }
            in_sha && $3 == f { print $1; exit }' "$inrelease")
    [ -n "$sha" ] || return 0
    path="$CACHE/$sha.xz"
    if ! echo "$sha  $path" | sha256sum -c --status 2>/dev/null; then
        curl -fsS --max-time 600 -o "$path.part" \
            "$uri/dists/$suite/main/binary-$ARCH/by-hash/SHA256/$sha" \
            || curl -fsS --max-time 600 -o "$path.part" \
                "$uri/dists/$suite/main/binary-$ARCH/Packages.xz" \
            || return 0
        echo "$sha  $path.part" | sha256sum -c --status || return 0
        mv "$path.part" "$path"
    fi
    echo "$path"
}

# host_suite_uri SUITE: the URI the host's deb822 apt sources give SUITE.
host_suite_uri () {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v suite="$1" '
        BEGIN { RS = ""; FS = "\n" }
        { uri = ""; found = 0
          for (i = 1; i <= NF; i++) {
            if ($i ~ /^URIs:/) { uri = $i; sub(/^URIs:[ \t]*/, "", uri); sub(/[ \t].*/, "", uri) }
            if ($i ~ /^Suites:/) { n = split($i, w, /[ \t]+/); for (j = 2; j <= n; j++) if (w[j] == suite) found = 1 }
          }
          if (found && uri != "") { print uri; exit } }'
}

PACKAGES=$(fetch_index "$MIRROR" "$SUITE")
[ -n "$PACKAGES" ] || skip_all "cannot download $SUITE main/binary-$ARCH/Packages.xz from $MIRROR"
say "index: $PACKAGES"

# mmdebstrap_set VARIANT KEY "deb ..."...: the sorted name=version list of
# what mmdebstrap installs for VARIANT from these sources (plus the one option $MM_OPT);
# cached under KEY (the indices' hashes and anything MM_OPT changes).
mmdebstrap_set () {
    local variant=$1 key=$2; shift 2
    local out="$CACHE/mmdebstrap-$SUITE-$ARCH-$variant-$key.txt"
    if [ ! -s "$out" ]; then
        command -v mmdebstrap >/dev/null || return 1
        mmdebstrap --quiet --variant="$variant" --architectures="$ARCH" --format=null ${MM_OPT:+"$MM_OPT"} \
            --customize-hook='chroot "$1" dpkg-query -W -f="\${Package}=\${Version}\n" > "'"$out.part"'"' \
            "$SUITE" /dev/null "$@" >&2 || return 1
        sort "$out.part" > "$out" && rm -f "$out.part"
    fi
    cat "$out"
}

# compare_variant VARIANT: the resolver's set equals mmdebstrap's.
compare_variant () {
    "$RESOLVE_TOOL" --arch "$ARCH" --variant "$1" --source "$SUITE=$PACKAGES" > resolved.txt
    sort resolved.txt > mine.txt
    mmdebstrap_set "$1" "$(basename "$PACKAGES" .xz)" "deb $MIRROR $SUITE main" > theirs.txt \
        || { echo "mmdebstrap failed" >&2; return 1; }
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
    test_expect_success 'bookworm apt (essential plus apt in the first run) resolves to exactly the packages and versions mmdebstrap installs' '
        compare_variant apt
    '
    test_expect_success 'bookworm buildd (required plus build-essential) resolves to exactly the packages and versions mmdebstrap installs' '
        compare_variant buildd
    '
    test_expect_success 'bookworm minbase with Recommends resolves to exactly the packages and versions mmdebstrap installs with Recommends' '
        "$RESOLVE_TOOL" --recommends --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" | sort > mine.txt
        MM_OPT="--aptopt=APT::Install-Recommends \"true\"" \
            mmdebstrap_set minbase "$(basename "$PACKAGES" .xz)-recommends" "deb $MIRROR $SUITE main" > theirs.txt
        diff -u theirs.txt mine.txt
        # Recommends add packages here, or the test proves nothing.
        "$RESOLVE_TOOL" --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" | sort > without.txt
        [ "$(wc -l < mine.txt)" -gt "$(wc -l < without.txt)" ]
    '

    updates_uri=$(host_suite_uri "$SUITE-updates")
    security_uri=$(host_suite_uri "$SUITE-security")
    UPDATES=${updates_uri:+$(fetch_index "$updates_uri" "$SUITE-updates")}
    SECURITY=${security_uri:+$(fetch_index "$security_uri" "$SUITE-security")}
    if [ -n "$UPDATES" ] && [ -n "$SECURITY" ]; then
        test_expect_success 'bookworm minbase with bookworm-updates and bookworm-security takes the updated versions mmdebstrap installs' '
            "$RESOLVE_TOOL" --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" \
                --source "$SUITE-updates=$UPDATES" --source "$SUITE-security=$SECURITY" \
                | sort > mine.txt
            key="$(basename "$PACKAGES" .xz | cut -c1-16)-$(basename "$UPDATES" .xz | cut -c1-16)-$(basename "$SECURITY" .xz | cut -c1-16)"
            mmdebstrap_set minbase "$key" "deb $MIRROR $SUITE main" \
                "deb $updates_uri $SUITE-updates main" "deb $security_uri $SUITE-security main" > theirs.txt
            diff -u theirs.txt mine.txt
            # The comparison means something only if an update is in the set.
            "$RESOLVE_TOOL" --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" | sort > base.txt
            ! cmp -s base.txt mine.txt
        '
    else
        test_skip 'bookworm minbase with bookworm-updates and bookworm-security takes the updated versions mmdebstrap installs' \
            "the host's apt configuration names no $SUITE-updates and $SUITE-security sources that answer"
    fi
else
    test_skip 'bookworm minbase from the mirror resolves to exactly the packages and versions mmdebstrap installs' \
        'mmdebstrap needs root and must be installed'
    test_skip 'bookworm essential from the mirror resolves to exactly the packages and versions mmdebstrap installs' \
        'mmdebstrap needs root and must be installed'
    test_skip 'bookworm apt (essential plus apt in the first run) resolves to exactly the packages and versions mmdebstrap installs' \
        'mmdebstrap needs root and must be installed'
    test_skip 'bookworm buildd (required plus build-essential) resolves to exactly the packages and versions mmdebstrap installs' \
        'mmdebstrap needs root and must be installed'
    test_skip 'bookworm minbase with bookworm-updates and bookworm-security takes the updated versions mmdebstrap installs' \
        'mmdebstrap needs root and must be installed'
    test_skip 'bookworm minbase with Recommends resolves to exactly the packages and versions mmdebstrap installs with Recommends' \
        'mmdebstrap needs root and must be installed'
fi

# apt_simulate PACKAGE...: what "apt-get install PACKAGE..." would install
# on an empty system from this index, as name=version lines, sorted.  A
# private apt directory holds the index we resolve from, so both answers
# come from the same data.
apt_simulate () {
    local root="$SCRATCH/apt" list
    if [ ! -d "$root" ]; then
        mkdir -p "$root/etc/apt/apt.conf.d" "$root/etc/apt/preferences.d" \
            "$root/etc/apt/sources.list.d" "$root/var/lib/apt/lists/partial" \
            "$root/var/lib/dpkg" "$root/var/cache/apt/archives/partial"
        : > "$root/var/lib/dpkg/status"
        echo "deb [trusted=yes] $MIRROR $SUITE main" > "$root/etc/apt/sources.list"
        list="$root/var/lib/apt/lists/$(echo "$MIRROR" | sed 's|^[a-z]*://||; s|/*$||; s|/|_|g')_dists_${SUITE}"
        xz -dc "$PACKAGES" > "${list}_main_binary-${ARCH}_Packages"
        cp "$SCRATCH/InRelease.$SUITE" "${list}_InRelease"
    fi
    apt-get -s -o Dir="$root" -o Dir::State::status="$root/var/lib/dpkg/status" \
        -o Debug::NoLocking=1 -o APT::Architecture="$ARCH" -o APT::Architectures::="$ARCH" \
        -o APT::Install-Recommends=false -o Dir::Etc::Trusted=/dev/null \
        -o Dir::Etc::TrustedParts=/nonexistent install "$@" \
        | awk '/^Inst / { v = $3; sub(/^\(/, "", v); print $2 "=" v }' | sort -u
}

if command -v apt-get >/dev/null; then
    test_expect_success 'big custom requests from the real archive resolve to exactly what apt-get installs' '
        for request in nginx postgresql gnome libreoffice kde-standard "texlive-full openssh-server"; do
            apt_simulate $request > apt.txt
            [ -s apt.txt ] || fail "apt-get -s install $request installs nothing"
            "$RESOLVE_TOOL" --arch "$ARCH" --variant custom --source "$SUITE=$PACKAGES" $request | sort > mine.txt
            say "$request: apt-get installs $(wc -l < apt.txt), resolved $(wc -l < mine.txt)"
            diff -u apt.txt mine.txt || fail "$request differs from apt-get"
        done
    '
else
    test_skip 'big custom requests from the real archive resolve to exactly what apt-get installs' 'apt-get is not installed'
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

test_expect_success 'the parsed-index cache gives the real minbase set exactly as parsing the index does' '
    "$RESOLVE_TOOL" --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" > parsed.txt
    "$RESOLVE_TOOL" --cache cache --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" > first.txt
    ls cache/packages-*.solv cache/packages-*.fields
    "$RESOLVE_TOOL" --fields --cache cache --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" > cached-fields.txt
    "$RESOLVE_TOOL" --fields --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" > parsed-fields.txt
    cmp parsed.txt first.txt
    cmp parsed-fields.txt cached-fields.txt
'

test_expect_success 'in the real minbase set libc6 is unpacked before the packages that pre-depend on it' '
    "$RESOLVE_TOOL" --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" > order.txt
    libc=$(grep -n "^libc6=" order.txt | cut -d: -f1)
    for p in dpkg coreutils bash tar; do
        n=$(grep -n "^$p=" order.txt | cut -d: -f1)
        [ "$libc" -lt "$n" ] || fail "libc6 (line $libc) comes after $p (line $n)"
    done
'

test_expect_success 'in the real minbase set every Pre-Depends is unpacked before the package that needs it' '
    "$RESOLVE_TOOL" --arch "$ARCH" --variant minbase --source "$SUITE=$PACKAGES" | cut -d= -f1 > order.txt
    xz -dc "$PACKAGES" | awk "
        FNR == NR { pos[\$0] = FNR; next }
        /^Package:/ { pkg = \$2 }
        /^Pre-Depends:/ && (pkg in pos) {
            sub(/^Pre-Depends: */, \"\")
            n = split(\$0, deps, /, */)
            for (i = 1; i <= n; i++) {
                split(deps[i], alt, / *\\| */); split(alt[1], w, /[ :(]/); d = w[1]
                if ((d in pos) && pos[d] > pos[pkg]) { print pkg \" comes before its Pre-Depends \" d; bad = 1 }
            }
        }
        END { exit bad }" order.txt -
'

test_expect_success 'a virtual package that several packages of the real archive provide is refused with the candidates listed' '
    expect_failure err "$RESOLVE_TOOL" --arch "$ARCH" --variant custom --source "$SUITE=$PACKAGES" mail-transport-agent
    assert_file_has_content err "several packages provide it: .*exim4-daemon-light.*postfix"
'

test_done
