#!/bin/bash
# After stage 2, against dpkg itself: an image of real bookworm base .debs
# plus packages with the cases stage 2 must get right (a preinst diversion
# with and without --rename, of a file of a package unpacked later; a
# statoverride; a file replaced between packages; a conffile; a file
# trigger and an explicit one) built by apt2ostree, against the same base
# made by mmdebstrap and the same packages unpacked by the real dpkg
# --unpack in the lockfile's install order, then dpkg --configure -a, in a
# chroot: the packages' files, owners, modes and contents, and their part
# of the dpkg database (status stanzas, info files, diversions,
# statoverride, trigger state) are the same.  (The base itself is
# compared with mmdebstrap's by the real-mirror tests.)
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

[ "$(id -u)" = 0 ] || skip_all "stage 2 and mmdebstrap --mode=root need root"
command -v ninja > /dev/null || skip_all "ninja is not installed"
command -v mmdebstrap > /dev/null || skip_all "mmdebstrap is not installed"

SRV=$SCRATCH/srv
D=$SRV/debian
base_repo "$D"
repo_key archive
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
) > /dev/null
repo_dists "$D" bookworm amd64
repo_sign "$D" bookworm archive
repo_serve "$SRV"

W=$SCRATCH/work
mkdir -p "$W"
cd "$W"
EXTRA="hello diverter statov repl-a repl-b conf trig plug"
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list

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
    mkdir ref && tar -C ref --exclude="./dev/*" -xf ref.tar
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

test_expect_success 'the packages'"'"' status stanzas and info files are what dpkg writes, byte for byte' '
    cd "$W"
    for p in $EXTRA; do
        diff <(dpkg-query --admindir=ref/var/lib/dpkg -s $p) <(dpkg-query --admindir=ours/var/lib/dpkg -s $p)
        for f in ref/var/lib/dpkg/info/$p.*; do
            # Documented: for a package with no regular file and no md5sums,
            # dpkg writes an empty md5sums file, stage 1 none.
            [ "${f##*/}" = $p.md5sums ] && [ ! -s "$f" ] && [ ! -e ours/var/lib/dpkg/info/$p.md5sums ] \
                && continue
            cmp "$f" "ours/var/lib/dpkg/info/${f##*/}"
        done
        diff <(cd ref/var/lib/dpkg/info && ls $p.* | grep -v -x "trig.md5sums") \
             <(cd ours/var/lib/dpkg/info && ls $p.*)
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
