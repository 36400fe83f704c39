#!/bin/bash
# Issue #26's opening case: packages built with plain dpkg-deb -b (as
# vendors' and CI-built packages often are) ship no DEBIAN/md5sums, and one
# of them diverts, from its preinst, a file of another package.  dpkg
# --unpack computes the md5sums such a package lacks (an empty file when it
# has no regular file); stage 1 must write the same, so that a full dpkg
# --verify inside the built image is clean and checks those packages' files.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

[ "$(id -u)" = 0 ] || skip_all "stage 2 runs maintainer scripts as root in bubblewrap; run as root"
command -v ninja > /dev/null || skip_all "ninja is not installed"

base_archive

# plain_deb DIR NAME [FIELD: VALUE]...: DIR built as NAME 1.0 amd64 with
# dpkg-deb -b alone: no md5sums.
plain_deb () {
    local dir=$1 name=$2; shift 2
    mkdir -p "$dir/DEBIAN"
    {
        printf 'Package: %s\nVersion: 1.0\nArchitecture: amd64\nPriority: optional\n' "$name"
        printf 'Maintainer: apt2ostree tests <tests@example.invalid>\n'
        [ $# = 0 ] || printf '%s\n' "$@"
        printf 'Description: %s, built with plain dpkg-deb -b\n' "$name"
    } > "$dir/DEBIAN/control"
    dpkg-deb --root-owner-group -Zgzip -b "$dir" "$D/pool/main/${name}_1.0_amd64.deb" > /dev/null
}

S="$SCRATCH/stage"
# vendor: a tool and a library, no md5sums.
mkdir -p "$S/vendor/usr/bin" "$S/vendor/usr/lib/vendor"
printf '#!/bin/sh\necho vendor\n' > "$S/vendor/usr/bin/vendor-tool" && chmod 755 "$S/vendor/usr/bin/vendor-tool"
echo "vendor library" > "$S/vendor/usr/lib/vendor/libvendor.so"
plain_deb "$S/vendor" vendor
# diverter: its preinst diverts vendor's tool and diffutils' cmp (renamed
# away), and it ships its own of both; no md5sums either.
mkdir -p "$S/diverter/usr/bin" "$S/diverter/DEBIAN"
printf '#!/bin/sh\necho wrapped\n' > "$S/diverter/usr/bin/vendor-tool"
printf '#!/bin/sh\necho my cmp\n' > "$S/diverter/usr/bin/cmp"
chmod 755 "$S/diverter/usr/bin/vendor-tool" "$S/diverter/usr/bin/cmp"
cat > "$S/diverter/DEBIAN/preinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = install ]; then
    dpkg-divert --package diverter --add --rename --divert /usr/bin/vendor-tool.real /usr/bin/vendor-tool
    dpkg-divert --package diverter --add --rename --divert /usr/bin/cmp.real /usr/bin/cmp
fi
EOF
chmod 755 "$S/diverter/DEBIAN/preinst"
plain_deb "$S/diverter" diverter "Depends: vendor, diffutils"
# nofiles: a directory and a symlink, no regular file and no md5sums.
mkdir -p "$S/nofiles/usr/share/nofiles"
ln -s ../../bin/vendor-tool "$S/nofiles/usr/share/nofiles/tool"
plain_deb "$S/nofiles" nofiles

repo_dists "$D" bookworm amd64
repo_sign "$D" bookworm archive
repo_serve "$SRV"

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
printf '%s\n' $BASE_REQUEST vendor diverter nofiles > image.txt
a2o lock image.txt --sources sources.list --variant custom --merged-usr yes --cache cache \
    -o image.lock.json > /dev/null
a2o build image.lock.json > build.out 2>&1 || { cat build.out; exit 1; }
REPO="$W/build/ostree"
a2o --repo "$REPO" export image --dir img

test_expect_success 'the packages without md5sums get the md5sums dpkg computes, an empty one for the package with no regular file' '
    cd "$W"
    for p in vendor diverter nofiles; do test -f img/var/lib/dpkg/info/$p.md5sums; done
    test ! -s img/var/lib/dpkg/info/nofiles.md5sums
    assert_file_has_content img/var/lib/dpkg/info/vendor.md5sums "  usr/bin/vendor-tool$"
    assert_file_has_content img/var/lib/dpkg/info/diverter.md5sums "  usr/bin/cmp$"
'

test_expect_success 'the diversions are in place: the diverted files renamed, the diverter'"'"'s own at their paths' '
    cd "$W"
    chroot img dpkg-divert --list > diversions
    assert_file_has_content diversions "^diversion of /usr/bin/vendor-tool to /usr/bin/vendor-tool.real by diverter$"
    assert_file_has_content diversions "^diversion of /usr/bin/cmp to /usr/bin/cmp.real by diverter$"
    assert_streq "$(chroot img /usr/bin/vendor-tool)" wrapped
    assert_streq "$(chroot img /usr/bin/vendor-tool.real)" vendor
    chroot img /usr/bin/cmp.real /etc/passwd /etc/passwd
'

test_expect_success 'a full dpkg --verify inside the image is clean, and every package is configured' '
    cd "$W"
    chroot img dpkg --verify > verify.out
    [ ! -s verify.out ] || { cat verify.out; false; }
    chroot img dpkg --audit > audit.out
    [ ! -s audit.out ] || { cat audit.out; false; }
    chroot img dpkg-query -W -f "\${db:Status-Abbrev}\n" | sort -u > states
    assert_streq "$(cat states)" "ii "
'

test_expect_success 'dpkg --verify checks those packages'"'"' files: a changed one is reported (a diverted one is not checked, by dpkg either)' '
    cd "$W"
    echo changed >> img/usr/lib/vendor/libvendor.so
    echo changed >> img/usr/bin/cmp
    echo changed >> img/usr/bin/vendor-tool.real
    chroot img dpkg --verify vendor diverter > changed.out || true
    cat changed.out
    assert_streq "$(sed "s/  */ /" changed.out)" "??5?????? /usr/lib/vendor/libvendor.so
??5?????? /usr/bin/cmp"
'

test_done
