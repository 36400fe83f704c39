#!/bin/bash
# An archive shaped like Ubuntu 22.04 (jammy, JetPack 6's base): a Release
# with Ubuntu's Origin, Label, Suite, Codename and Version, every package's
# members compressed with zstd (control.tar.zst, data.tar.zst, as Ubuntu
# builds them since 21.10), made and signed at test time and served on
# 127.0.0.1.  No Ubuntu server is reachable from the machines this runs on;
# the packages are the hermetic base's (real Debian .debs) recompressed.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
command -v zstd > /dev/null || skip_all "zstd is not installed"

SRV="$SCRATCH/srv"
U="$SRV/ubuntu"
base_repo "$SCRATCH/base"
repo_key ubuntu

# zstd_deb IN OUT: IN with both tar members recompressed with zstd.
zstd_deb () {
    local tmp m
    tmp=$(mktemp -d)
    deb_members "$1" "$tmp/m"
    for m in control data; do
        case $(cd "$tmp/m" && ls $m.tar*) in
            $m.tar.xz) xz -dc "$tmp/m/$m.tar.xz" ;;
            $m.tar.gz) gzip -dc "$tmp/m/$m.tar.gz" ;;
            $m.tar.zst) zstd -q -dc "$tmp/m/$m.tar.zst" ;;
            $m.tar) cat "$tmp/m/$m.tar" ;;
        esac | zstd -q -c > "$tmp/$m.tar.zst"
    done
    deb_ar "$2" "$tmp/control.tar.zst" "$tmp/data.tar.zst"
    rm -rf "$tmp"
}

mkdir -p "$U/pool/main"
for deb in "$SCRATCH"/base/pool/main/*.deb; do
    zstd_deb "$deb" "$U/pool/main/$(basename "$deb")"
done
mkdir -p "$SCRATCH/stage/hello/usr/bin"
printf '#!/bin/sh\necho hello from jammy\n' > "$SCRATCH/stage/hello/usr/bin/hello"
chmod 755 "$SCRATCH/stage/hello/usr/bin/hello"
( cd "$U/pool/main" && DEB_COMPRESSION=zstd make_deb "$SCRATCH/stage/hello" hello 1.0-0ubuntu1 amd64 \
    "Priority: optional" "Depends: dash" ) > /dev/null
REPO_ORIGIN=Ubuntu repo_dists "$U" jammy amd64 "$(printf 'Label: Ubuntu\nVersion: 22.04\nDescription: Ubuntu Jammy 22.04')"
repo_sign "$U" jammy ubuntu
repo_serve "$SRV"

W="$SCRATCH/work"
mkdir -p "$W"
repo_sources_line "$HTTPD_URL/ubuntu" jammy ubuntu > "$W/jammy.list"

test_expect_success 'the archive is shaped like jammy: Ubuntu'"'"'s Release fields, zstd members only' '
    assert_file_has_content "$U/dists/jammy/Release" "^Origin: Ubuntu\$"
    assert_file_has_content "$U/dists/jammy/Release" "^Version: 22.04\$"
    for deb in "$U"/pool/main/*.deb; do
        ar t "$deb" | tr "\n" " " > members
        assert_streq "$(cat members)" "debian-binary control.tar.zst data.tar.zst "
    done
'

test_expect_success 'lock records merged /usr from the Release (Ubuntu 22.04) and the source'"'"'s origin' '
    cd "$W"
    printf "%s\n" $BASE_REQUEST hello > jammy.txt
    a2o lock jammy.txt --sources jammy.list --variant custom --cache cache -o jammy.lock.json > /dev/null
    assert_file_has_content jammy.lock.json "^  \"merged-usr\": true,"
    assert_file_has_content jammy.lock.json "\"origin\": \"Ubuntu\", \"version\": \"22.04\""
    assert_file_has_content jammy.lock.json "\"name\": \"hello\", \"version\": \"1.0-0ubuntu1\""
'

test_expect_success 'the image builds from zstd packages: every package ii, merged /usr, the package runs' '
    cd "$W"
    a2o build jammy.lock.json > build.out
    assert_file_has_content build.out "^image jammy: commit [0-9a-f]\{64\}\$"
    a2o --repo build/ostree export jammy --dir img
    dpkg --root="$W/img" -l | awk "NR > 5 { print \$1 }" | sort -u > states
    assert_streq "$(cat states)" ii
    assert_streq "$(readlink img/bin)" usr/bin
    assert_streq "$(chroot img /bin/hello)" "hello from jammy"
'

test_expect_success 'the zstd image has the same files, modes and contents as one built from the xz originals' '
    cd "$W"
    mkdir -p x/pool/main && cp "$SCRATCH"/base/pool/main/*.deb x/pool/main/
    ( cd x/pool/main && DEB_COMPRESSION=xz make_deb "$SCRATCH/stage/hello" hello 1.0-0ubuntu1 amd64 \
        "Priority: optional" "Depends: dash" ) > /dev/null
    REPO_ORIGIN=Ubuntu repo_dists x jammy amd64 "$(printf "Label: Ubuntu\nVersion: 22.04")"
    repo_sign x jammy ubuntu
    mv x "$SRV/xz"
    repo_sources_line "$HTTPD_URL/xz" jammy ubuntu > xz.list
    a2o lock jammy.txt --sources xz.list --variant custom --cache cache-xz -o xz.lock.json > /dev/null
    a2o build xz.lock.json --builddir build-xz > xz.out || { cat xz.out; false; }
    a2o --repo build-xz/ostree export xz --dir img-xz
    (cd img && find . -printf "%M %U %G %s %p %l\n" | sort) > zstd.files
    (cd img-xz && find . -printf "%M %U %G %s %p %l\n" | sort) > xz.files
    diff -u xz.files zstd.files
    diff -r --no-dereference img-xz img
'

test_done
