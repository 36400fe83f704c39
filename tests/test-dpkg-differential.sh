#!/bin/bash
# Stage 1 against dpkg itself: the same .debs unpacked by unpack-deb and
# stage1, and by the real "dpkg --unpack" (in the same order, into a root
# with the same merged-/usr links), give the same files and the same dpkg
# database, but for the differences the man page documents (DIFFERENCES
# FROM MMDEBSTRAP) and tests/dpkg-unpack-differences.txt lists: conffiles
# in place with their md5sum rather than FILE.dpkg-new and "newconffile";
# the status file's last blank line; the trigger state, which stage 2
# builds; dpkg's own lock and backup files.  The packages cover the odd
# cases: no md5sums, conffiles, Multi-Arch: same, trigger interests (file,
# explicit, noawait) and activations, hard links, symlinks, setuid, empty
# directories, an epoch, a name that another begins with.  (No maintainer
# scripts: dpkg runs them here outside a chroot.  The real mirror's
# packages, preinsts and all, are compared in a chroot by the *-mirror.sh
# tests, with tests/libdifferential.sh.)
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libdifferential.sh"

[ "$(id -u)" = 0 ] || skip_all "dpkg --unpack with root's owners needs root"
command -v ostree > /dev/null || skip_all "ostree is not installed"

S=$SCRATCH/stage
mkdir -p "$S"/plain/usr/bin "$S"/plain-doc/usr/share/doc/plain "$S"/nomd5/usr/share/nomd5 "$S"/conf/etc/conf "$S"/conf/usr/share/conf \
    "$S"/ma/usr/lib/x86_64-linux-gnu "$S"/trig/usr/share/trig "$S"/trig/usr/lib/trig-plugins \
    "$S"/links/usr/bin "$S"/links/usr/share/empty "$S"/conf/DEBIAN "$S"/trig/DEBIAN "$S"/nomd5/DEBIAN
echo plain > "$S"/plain/usr/bin/plain && chmod 4755 "$S"/plain/usr/bin/plain
echo doc > "$S"/plain-doc/usr/share/doc/plain/README
echo a > "$S"/nomd5/usr/share/nomd5/a && : > "$S"/nomd5/usr/share/nomd5/empty
echo x=1 > "$S"/conf/etc/conf/conf.cfg && echo c > "$S"/conf/usr/share/conf/c
echo /etc/conf/conf.cfg > "$S"/conf/DEBIAN/conffiles
echo lib > "$S"/ma/usr/lib/x86_64-linux-gnu/libma.so.1
echo t > "$S"/trig/usr/share/trig/t
printf 'interest /usr/lib/trig-plugins\ninterest-noawait trig-explicit\nactivate-noawait ldconfig\n' \
    > "$S"/trig/DEBIAN/triggers
echo l > "$S"/links/usr/bin/l1 && ln "$S"/links/usr/bin/l1 "$S"/links/usr/bin/l2 && ln -s l1 "$S"/links/usr/bin/l3
printf 'Package: nomd5\nVersion: 1.0\nArchitecture: amd64\nMaintainer: t <t@example.invalid>\nDescription: no md5sums\n built with plain dpkg-deb -b\n' \
    > "$S"/nomd5/DEBIAN/control
D=$SCRATCH/debs
mkdir -p "$D"
(
    cd "$D"
    make_deb "$S"/plain plain 1.0 amd64
    make_deb "$S"/plain-doc plain-doc 1.0 all
    make_deb "$S"/conf conf 1:2.0-1 amd64
    make_deb "$S"/ma libma1 1.0 amd64 "Multi-Arch: same"
    make_deb "$S"/trig trig 1.0 all
    make_deb "$S"/links links 1.0 amd64
    dpkg-deb --root-owner-group -b "$S"/nomd5 nomd5_1.0_amd64.deb
) > /dev/null
ORDER="plain conf libma1 trig links nomd5 plain-doc"

W=$SCRATCH/work
mkdir -p "$W"
cd "$W"
a2o --repo repo init > /dev/null
refs= debs=
for p in $ORDER; do
    deb=$(ls "$D/${p}"_*.deb)
    a2o --repo repo unpack-deb --ref "deb/$p" --merged-usr "$deb" > /dev/null
    refs="$refs deb/$p" debs="$debs $deb"
done
a2o --repo repo stage1 --ref s1 --arch amd64 $refs > /dev/null
ostree --repo=repo checkout s1 T
# dpkg's root: the merged-/usr links stage 1 makes, an empty database.
mkdir -p R/usr/bin R/usr/sbin R/usr/lib R/var/lib/dpkg/info R/var/lib/dpkg/updates R/var/lib/dpkg/triggers
ln -s usr/bin R/bin && ln -s usr/sbin R/sbin && ln -s usr/lib R/lib
: > R/var/lib/dpkg/status
: > R/var/lib/dpkg/available
dpkg --root="$W/R" --log=/dev/null --force-script-chrootless --force-depends --unpack $debs > /dev/null

test_expect_success 'the same files, modes, owners, sizes, contents and link targets as dpkg --unpack (its FILE.dpkg-new is stage 1'"'"'s FILE)' '
    cd "$W"
    dpkg_new_in_place R
    assert_same_unpacked_files R T
'

test_expect_success 'every info file dpkg writes, byte for byte: .list, md5sums (made for the package that has none), conffiles, triggers, PKG:ARCH names for Multi-Arch: same; the same status stanzas, but for the documented conffile hash and last blank line' '
    cd "$W"
    assert_same_unpacked_database R T
    assert_has_file T/var/lib/dpkg/info/libma1:amd64.list
    assert_has_file T/var/lib/dpkg/info/nomd5.md5sums
    assert_file_has_content T/var/lib/dpkg/status "^ /etc/conf/conf.cfg [0-9a-f]\{32\}\$"
    assert_streq "$(grep -c "^Status: install ok unpacked\$" T/var/lib/dpkg/status)" 7
'

test_expect_success 'the status stanzas in dpkg'"'"'s order, by name then architecture' '
    assert_same_status_order "$W/R" "$W/T"
'

test_expect_success 'the rest of the database: the trigger state is stage 2'"'"'s to make; the files dpkg makes on its first run are there empty' '
    cd "$W"
    assert_streq "$(ls R/var/lib/dpkg/triggers | tr "\n" " ")" "File Lock Unincorp trig-explicit "
    assert_streq "$(ls T/var/lib/dpkg/triggers)" ""
    diff <(cd R/var/lib/dpkg && ls) <(printf "%s\n" available info lock lock-frontend status status-old triggers updates)
    for f in diversions statoverride; do
        assert_has_file T/var/lib/dpkg/$f
        [ ! -s T/var/lib/dpkg/$f ]
    done
'

test_done
