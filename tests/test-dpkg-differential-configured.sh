#!/bin/bash
# After stage 2, against dpkg itself: an image of real bookworm base .debs
# plus packages with the cases stage 2 must get right (a preinst diversion
# with and without --rename, of a file of a package unpacked later; a
# statoverride; a file replaced between packages; a conffile; a file
# trigger and an explicit one; a capability a postinst sets with setcap;
# setuid and setgid files; a package without md5sums) built by apt2ostree,
# against the same base made by mmdebstrap and the same packages unpacked
# by the real dpkg --unpack in the lockfile's install order, then dpkg
# --configure -a, in a chroot: the packages' files, owners, modes, xattrs
# and contents, and their part of the dpkg database (status stanzas, info
# files, diversions, statoverride, trigger state) are the same.  (The base
# itself is compared with mmdebstrap's by the real-mirror tests.)
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

[ "$(id -u)" = 0 ] || skip_all "stage 2 and mmdebstrap --mode=root need root"
command -v ninja > /dev/null || skip_all "ninja is not installed"
command -v mmdebstrap > /dev/null || skip_all "mmdebstrap is not installed"

base_archive
S=$SCRATCH/stage
mk () { mkdir -p "$S/$1/DEBIAN" "$S/$1/$2"; }
mk hello usr/bin
printf '#!/bin/sh\necho hello\n' > "$S/hello/usr/bin/hello"; chmod 755 "$S/hello/usr/bin/hello"
mkdir -p "$S/hello/usr/share/hello" && echo doc > "$S/hello/usr/share/hello/doc"
# Diverts hello's program before hello is unpacked (it sorts and is
# installed first: hello depends on nothing, diverter pre-depends on nothing).
mk diverter usr/bin
printf '#!/bin/sh\necho diverted\n' > "$S/diverter/usr/bin/hello"; chmod 755 "$S/diverter/usr/bin/hello"
cat > "$S/diverter/DEBIAN/preinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = install ]; then
    dpkg-divert --package diverter --add --rename --divert /usr/bin/hello.distrib /usr/bin/hello
    dpkg-divert --package diverter --add --divert /usr/share/hello/doc.orig /usr/share/hello/doc
fi
SH
mk statov usr/bin
echo tool > "$S/statov/usr/bin/statov-tool"; chmod 755 "$S/statov/usr/bin/statov-tool"
cat > "$S/statov/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ] && ! dpkg-statoverride --list /usr/bin/statov-tool > /dev/null; then
    dpkg-statoverride --update --add root root 4711 /usr/bin/statov-tool
fi
SH
mk repl-a usr/share/common && echo a > "$S/repl-a/usr/share/common/file"
echo a-only > "$S/repl-a/usr/share/common/a-only"
mk repl-b usr/share/common && echo b > "$S/repl-b/usr/share/common/file"
mk conf etc/conf && echo x=1 > "$S/conf/etc/conf/conf.cfg"
echo /etc/conf/conf.cfg > "$S/conf/DEBIAN/conffiles"
mk trig usr/lib/trig-plugins
printf 'interest /usr/lib/trig-plugins\ninterest-noawait trig-explicit\n' > "$S/trig/DEBIAN/triggers"
cat > "$S/trig/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = triggered ]; then
    mkdir -p /var/lib/trig && ls /usr/lib/trig-plugins > /var/lib/trig/plugins
fi
SH
mk plug usr/lib/trig-plugins && echo p > "$S/plug/usr/lib/trig-plugins/p"
printf 'activate-noawait trig-explicit\n' > "$S/plug/DEBIAN/triggers"
# A capability set by the postinst (dpkg carries no xattrs from data.tar):
# the base has no libcap2-bin, so the package ships a static setcap.
mk capped usr/bin && mkdir -p "$S/capped/usr/lib/capped"
printf '#!/bin/sh\necho capped\n' > "$S/capped/usr/bin/capped"; chmod 755 "$S/capped/usr/bin/capped"
${CC:-cc} -std=c11 -O2 -static -o "$S/capped/usr/lib/capped/setcap-static" "$TOP_SRCDIR/tests/setcap-static.c" \
    || skip_all "cannot link tests/setcap-static.c statically (libc6-dev's libc.a)"
cat > "$S/capped/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    /usr/lib/capped/setcap-static 13 /usr/bin/capped
fi
SH
mk suid usr/bin
echo suid > "$S/suid/usr/bin/suid-tool" && chmod 4755 "$S/suid/usr/bin/suid-tool"
echo sgid > "$S/suid/usr/bin/sgid-tool" && chmod 2755 "$S/suid/usr/bin/sgid-tool"
# Built with plain dpkg-deb -b, as vendors' packages often are: no md5sums
# (the issue's opening case, with the diversions above: dpkg --verify clean).
mk nomd5 usr/bin && echo nomd5 > "$S/nomd5/usr/bin/nomd5-tool" && chmod 755 "$S/nomd5/usr/bin/nomd5-tool"
printf 'Package: nomd5\nVersion: 1.0\nArchitecture: amd64\nPriority: optional\nMaintainer: t <t@example.invalid>\nDescription: no md5sums\n built with plain dpkg-deb -b\n' \
    > "$S/nomd5/DEBIAN/control"
(
    cd "$D/pool/main"
    make_deb "$S/hello" hello 1.0 amd64 "Priority: optional"
    make_deb "$S/diverter" diverter 1.0 amd64 "Priority: optional"
    make_deb "$S/statov" statov 1.0 amd64 "Priority: optional"
    make_deb "$S/repl-a" repl-a 1.0 amd64 "Priority: optional"
    make_deb "$S/repl-b" repl-b 1.0 amd64 "Priority: optional" "Replaces: repl-a"
    make_deb "$S/conf" conf 1.0 amd64 "Priority: optional"
    make_deb "$S/trig" trig 1.0 all "Priority: optional"
    make_deb "$S/plug" plug 1.0 all "Priority: optional" "Depends: trig"
    make_deb "$S/capped" capped 1.0 amd64 "Priority: optional"
    make_deb "$S/suid" suid 1.0 amd64 "Priority: optional"
    dpkg-deb --root-owner-group -b "$S/nomd5" nomd5_1.0_amd64.deb
) > /dev/null
repo_dists "$D" bookworm amd64
repo_sign "$D" bookworm archive

serve_work_dir "$SRV"
EXTRA="hello diverter statov repl-a repl-b conf trig plug capped suid nomd5"

# The fixture packages in the lockfile's install order (what stage 1 and
# stage 2 follow).
order () {
    sed -n '/"install-order"/,/\]/p' img.lock.json | tr -d ' ",[]' | grep -x -F -f <(printf '%s\n' $EXTRA)
}

test_expect_success 'apt2ostree builds the image; the reference is the base from mmdebstrap, then the real dpkg --unpack of the same .debs in the same order and dpkg --configure -a, in a chroot' '
    cd "$W"
    MERGED=no base_image img $EXTRA
    a2o --repo build/ostree export img --dir ours
    # (apt reads the key as root: the scratch directory is private.)  The
    # packages go in through mmdebstrap'"'"'s own hooks, which run with its
    # /dev and /proc mounted in the chroot.
    unpack="cd /debs && dpkg --unpack $(for p in $(order); do printf "%s " ${p}_*.deb; done) && dpkg --configure -a"
    mkdir debs
    for p in $(order); do cp "$D"/pool/main/${p}_*.deb debs/; done
    mmdebstrap --quiet --mode=root --variant=custom --include="$(echo $BASE_REQUEST | tr " " ,)" \
        --aptopt="APT::Sandbox::User \"root\"" \
        --customize-hook="mkdir \"\$1/debs\" && cp debs/*.deb \"\$1/debs/\"" \
        --customize-hook="chroot \"\$1\" sh -c \"$unpack\" > /dev/null" \
        --customize-hook="rm -r \"\$1/debs\"" \
        bookworm ref.tar sources.list
    mkdir ref && tar -C ref --exclude="./dev/*" --xattrs --xattrs-include="*" -xf ref.tar
    diff <(dpkg-query --admindir=ref/var/lib/dpkg -W -f="\${Package} \${Version} \${Status}\n") \
         <(dpkg-query --admindir=ours/var/lib/dpkg -W -f="\${Package} \${Version} \${Status}\n")
'

test_expect_success 'the diversions, with and without --rename, of a file of a package unpacked after the diverter' '
    cd "$W"
    diff <(paste - - - < ref/var/lib/dpkg/diversions | sort) <(paste - - - < ours/var/lib/dpkg/diversions | sort)
    assert_streq "$(chroot ours /usr/bin/hello)" diverted
    cmp ref/usr/bin/hello.distrib ours/usr/bin/hello.distrib
    diff <(cd ref/usr/share/hello && ls) <(cd ours/usr/share/hello && ls)
    cmp ref/usr/share/hello/doc.orig ours/usr/share/hello/doc.orig
'

test_expect_success 'the statoverride, the file replaced between packages, the conffile, the file and explicit triggers' '
    cd "$W"
    diff ref/var/lib/dpkg/statoverride ours/var/lib/dpkg/statoverride
    assert_streq "$(stat -c %a ours/usr/bin/statov-tool)" "$(stat -c %a ref/usr/bin/statov-tool)"
    assert_streq "$(cat ours/usr/share/common/file)" b
    cmp ref/etc/conf/conf.cfg ours/etc/conf/conf.cfg
    diff ref/var/lib/trig/plugins ours/var/lib/trig/plugins
    diff <(grep " trig\$" ref/var/lib/dpkg/triggers/File) <(grep " trig\$" ours/var/lib/dpkg/triggers/File)
    diff ref/var/lib/dpkg/triggers/trig-explicit ours/var/lib/dpkg/triggers/trig-explicit
    diff ref/var/lib/dpkg/triggers/Unincorp ours/var/lib/dpkg/triggers/Unincorp
'

# file_caps FILE: FILE's security.capability xattr in hex, or "none".
file_caps () {
    python3 -c 'import os, sys
try: print(os.getxattr(sys.argv[1], "security.capability", follow_symlinks=False).hex())
except OSError: print("none")' "$1"
}

test_expect_success 'a capability a postinst sets (setcap) is in the image commit and its export, as in dpkg'"'"'s; setuid and setgid modes too' '
    cd "$W"
    # CAP_NET_RAW (13), permitted and effective, revision 2.
    assert_streq "$(file_caps ref/usr/bin/capped)" 0100000200200000000000000000000000000000
    assert_streq "$(file_caps ours/usr/bin/capped)" "$(file_caps ref/usr/bin/capped)"
    ostree --repo=build/ostree ls -X img /usr/bin/capped > capped.ls
    assert_file_has_content capped.ls "security.capability"
    assert_streq "$(file_caps ours/usr/bin/hello.distrib)" none
    assert_streq "$(stat -c "%a %U:%G" ours/usr/bin/suid-tool)" "$(stat -c "%a %U:%G" ref/usr/bin/suid-tool)"
    assert_streq "$(stat -c "%a %U:%G" ours/usr/bin/sgid-tool)" "$(stat -c "%a %U:%G" ref/usr/bin/sgid-tool)"
    assert_streq "$(stat -c %a ours/usr/bin/suid-tool) $(stat -c %a ours/usr/bin/sgid-tool)" "4755 2755"
'

test_expect_success 'a package without md5sums in an image with diversions: a full dpkg --verify is clean, as dpkg'"'"'s own' '
    cd "$W"
    cmp ref/var/lib/dpkg/info/nomd5.md5sums ours/var/lib/dpkg/info/nomd5.md5sums
    chroot ref dpkg --verify > ref.verify || true
    chroot ours dpkg --verify > ours.verify || true
    diff ref.verify ours.verify
    [ ! -s ours.verify ]
    [ -s ours/var/lib/dpkg/diversions ]
'

test_expect_success 'the packages'"'"' status stanzas and info files are what dpkg writes, byte for byte' '
    cd "$W"
    for p in $EXTRA; do
        diff <(dpkg-query --admindir=ref/var/lib/dpkg -s $p) <(dpkg-query --admindir=ours/var/lib/dpkg -s $p)
        for f in ref/var/lib/dpkg/info/$p.*; do
            cmp "$f" "ours/var/lib/dpkg/info/${f##*/}"
        done
        diff <(cd ref/var/lib/dpkg/info && ls $p.*) <(cd ours/var/lib/dpkg/info && ls $p.*)
    done
'

test_expect_success 'the packages'"'"' files: the same paths, types, modes, owners and contents' '
    cd "$W"
    for p in $EXTRA; do cat ours/var/lib/dpkg/info/$p.list; done | sort -u > paths
    while read -r f; do
        # (A path diverted away exists in neither.)
        if ! [ -e "ref$f" ] && ! [ -L "ref$f" ]; then
            ! [ -e "ours$f" ] && ! [ -L "ours$f" ] || { echo "only in ours: $f"; exit 1; }
            continue
        fi
        assert_streq "$(stat -c "%F %a %U:%G" "ours$f")" "$(stat -c "%F %a %U:%G" "ref$f")" || exit 1
        [ ! -f "ref$f" ] || [ -L "ref$f" ] || cmp "ref$f" "ours$f" || exit 1
    done < paths
'

test_done
