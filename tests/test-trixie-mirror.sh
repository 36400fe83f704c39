#!/bin/bash
# Debian trixie, the current stable release, from the mirror the host's apt
# configuration names (moved to trixie by "lock --suite", as mmdebstrap's
# SUITE does): minbase, then a realistic server set built in the same build
# directory, each compared with what mmdebstrap builds on the same machine
# from the same mirror, and its stage 1 with what the real dpkg --unpack
# makes of the same .debs (tests/libdifferential.sh).  Skips, saying why,
# only when no mirror answers.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdifferential.sh"

require_mirror
[ "$(id -u)" = 0 ] || skip_all "mmdebstrap --mode=root and chroot need root"
command -v mmdebstrap > /dev/null || skip_all "mmdebstrap is not installed"
[ "$(dpkg --print-architecture)" = amd64 ] || skip_all "the comparison is for an amd64 host"
curl -fsS --max-time 20 -o /dev/null "$MIRROR/dists/trixie/InRelease" \
    || skip_all "the mirror $MIRROR has no trixie"

W=$SCRATCH/work
mkdir -p "$W"
host_sources_for trixie > "$W/trixie.sources"
SERVER="systemd-sysv openssh-server python3 locales ca-certificates sudo"

# mmdebstrap_image NAME [MMDEBSTRAP-OPTION]...: trixie minbase by mmdebstrap,
# unpacked in $W/NAME.
mmdebstrap_image () {
    local name=$1
    shift
    mmdebstrap --quiet --variant=minbase --mode=root --arch=amd64 "$@" trixie "$W/$name.tar" \
        "$W/trixie.sources"
    mkdir "$W/$name" && tar -C "$W/$name" --numeric-owner -xpf "$W/$name.tar"
    rm "$W/$name.tar"
}

# same_packages REFERENCE OURS: the same packages, versions and states.
same_packages () {
    local q="\${Package}:\${Architecture} \${Version} \${db:Status-Abbrev}\n"
    dpkg-query --admindir="$W/$1/var/lib/dpkg" -W -f "$q" | sort > "$W/$1.packages"
    dpkg-query --admindir="$W/$2/var/lib/dpkg" -W -f "$q" | sort > "$W/$2.packages"
    diff -u "$W/$1.packages" "$W/$2.packages"
}

test_expect_success 'lock trixie minbase with --suite from the host'"'"'s sources: trixie, trixie-updates, trixie-security, no URI' '
    cd "$W"
    : > minbase.txt
    a2o lock minbase.txt --suite trixie --variant minbase --arch amd64 -o minbase.lock.json
    assert_file_has_content minbase.lock.json "^    \"suite\": \"trixie\"\$"
    for s in trixie trixie-updates trixie-security; do
        assert_file_has_content minbase.lock.json "{\"name\": \"$s\", \"suite\": \"$s\","
    done
    assert_not_file_has_content minbase.lock.json "://"
    assert_file_has_content minbase.lock.json "\"name\": \"base-files\", \"version\": \"13\."
'

test_expect_success 'build trixie minbase: base-files ships the merged-/usr links itself' '
    cd "$W"
    a2o build minbase.lock.json --ref minbase --builddir build > build.out
    assert_file_has_content build.out "^image minbase: commit [0-9a-f]\{64\}\$"
    a2o --repo build/ostree export minbase --dir img
    for d in bin sbin lib lib64; do assert_streq "$(readlink img/$d)" "usr/$d"; done
    assert_file_has_content img/var/lib/dpkg/info/base-files.list "^/bin\$"
'

# same_as_dpkg_unpack IMAGE: stage 1 of IMAGE against the real dpkg --unpack
# of its lockfile's .debs in its install order (tests/libdifferential.sh).
same_as_dpkg_unpack () {
    cd "$W"
    a2o --repo build/ostree export "stage1/$1" --dir "s1-$1"
    local start=$(date +%s)
    unpack_reference "dpkgref-$1" "$1.lock.json" build/cache/debs
    assert_same_unpacked "dpkgref-$1" "s1-$1"
    echo $(($(date +%s) - start)) > "dpkgref-$1.seconds"
}
# took IMAGE: how long same_as_dpkg_unpack IMAGE took.
took () {
    [ ! -f "$W/dpkgref-$1.seconds" ] \
        || say "$1: the dpkg --unpack reference and the comparison took $(cat "$W/dpkgref-$1.seconds") s"
}

test_expect_success 'trixie minbase: stage 1 is what the real dpkg --unpack makes of the same .debs in the same order, in a chroot, but for the documented differences' '
    same_as_dpkg_unpack minbase
'
took minbase

test_expect_success 'trixie minbase: every package ii, dpkg --audit and dpkg --verify clean' '
    assert_dpkg_clean "$W/img"
'

test_expect_success 'mmdebstrap --variant=minbase trixie builds on the same machine, from the same mirror' '
    mmdebstrap_image mm
'

test_expect_success 'trixie minbase: the same packages and versions as mmdebstrap installs' '
    [ -d "$W/mm" ]
    same_packages mm img
    [ "$(wc -l < "$W/img.packages")" -gt 70 ]
'

test_expect_success 'trixie minbase: the same files, owners, modes, symlinks and contents as mmdebstrap'"'"'s, but for the documented differences' '
    [ -d "$W/mm" ]
    python3 "$TOP_SRCDIR/tests/compare-trees.py" "$W/mm" "$W/img" \
        --expected "$TOP_SRCDIR/tests/mmdebstrap-differences.txt" > "$W/compare.out" \
        || { cat "$W/compare.out"; false; }
    cat "$W/compare.out"
'

test_expect_success 'trixie minbase: the dpkg database is mmdebstrap'"'"'s (status, info files, diversions, statoverrides, trigger interests)' '
    [ -d "$W/mm" ]
    assert_same_dpkg_database "$W/mm" "$W/img"
'

test_expect_success 'the trixie server set builds in the same build directory, unpacking only the packages minbase lacks' '
    cd "$W"
    printf "%s\n" $SERVER > server.txt
    a2o lock server.txt --suite trixie --variant minbase --arch amd64 -o server.lock.json
    a2o build server.lock.json --ref server --builddir build > server.out
    assert_file_has_content server.out "^image server: commit [0-9a-f]\{64\}\$"
    new=$(grep -c "fetch+unpack" server.out)
    total=$(grep -c "\"name\": .*\"sha256\"" server.lock.json)
    shared=$(grep -c "\"name\": .*\"sha256\"" minbase.lock.json)
    say "server: $total packages, $new unpacked, $shared shared with minbase"
    [ "$new" -le $((total - shared + 2)) ]
    a2o --repo build/ostree export server --dir server
'

test_expect_success 'trixie server set: stage 1 is what the real dpkg --unpack makes of the same .debs in the same order, in a chroot, but for the documented differences' '
    same_as_dpkg_unpack server
'
took server

test_expect_success 'trixie: stage 1 writes the status stanzas in dpkg'"'"'s order, by name then architecture' '
    assert_same_status_order "$W/dpkgref-minbase" "$W/s1-minbase"
    assert_same_status_order "$W/dpkgref-server" "$W/s1-server"
'

test_expect_success 'trixie server set: every package ii, dpkg --audit and dpkg --verify clean' '
    assert_dpkg_clean "$W/server"
'

test_expect_success 'trixie server set: the same packages, files, owners and modes as mmdebstrap --include, but for the documented differences' '
    mmdebstrap_image mmserver --include="$(echo $SERVER | tr " " ,)"
    same_packages mmserver server
    python3 "$TOP_SRCDIR/tests/compare-trees.py" "$W/mmserver" "$W/server" \
        --expected "$TOP_SRCDIR/tests/mmdebstrap-differences.txt" > "$W/compare-server.out" \
        || { cat "$W/compare-server.out"; false; }
    cat "$W/compare-server.out"
    assert_same_dpkg_database "$W/mmserver" "$W/server"
'

test_expect_success 'the trixie minbase lockfile built in a fresh build directory gives the same image commit' '
    cd "$W"
    a2o build minbase.lock.json --ref minbase --builddir build2 > build2.out
    assert_streq "$(cat build2/ostree/refs/heads/minbase)" "$(cat build/ostree/refs/heads/minbase)"
'

test_done
