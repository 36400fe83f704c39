#!/bin/bash
# Hostile packages: unpack-deb refuses every .deb whose member names or
# control fields dpkg refuses (and the few dpkg takes that OSTree or a file
# system cannot hold), in the lean front and in the full binary alike: one
# line naming the .deb and the member or field, a non-zero exit, no ref,
# nothing staged.  One row per package, built with Python's tarfile and ar
# (dpkg-deb builds none of them); dpkg --unpack of each row shows what dpkg
# itself does with it.  import takes tar member names by the same rule.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

: "${TOP_BUILDDIR:?}"
[ -f "$TOP_BUILDDIR/apt2ostree-commands.so" ] || skip_all "the commands module is not built"

# The control file of a harmless package, and one with FIELD: VALUE lines
# instead of the usual ones (escapes as tar_from_spec TAR_SPEC_ESCAPES=1
# reads them).
control () {
    local package=${1:-evil} version=${2:-1.0} arch=${3:-all} extra=${4:-}
    printf 'f|./control|644|Package: %s\\nVersion: %s\\nArchitecture: %s\\n%sMaintainer: t <t@example.invalid>\\nDescription: hostile\\n' \
        "$package" "$version" "$arch" "$extra"
}
CONTROL=$(control)

n255=$(printf 'n%.0s' $(seq 255))
n256=${n255}n
# 17 components of 250 bytes: 4267 bytes, none of them too long alone.
long_path=$(for i in $(seq 17); do printf '%s/' "$(printf 'd%.0s' $(seq 250))"; done)f
long_target=$(printf 't%.0s' $(seq 4096))

# The table: one row per hostile package.
#   row NAME DPKG CONTROL-SPEC DATA-SPEC ERROR
# DPKG: what dpkg --unpack does with it ("refuses", "accepts", or "-" when
# it is not run: a ".." would take dpkg outside its --root).  The specs are
# tar_from_spec's with escapes, entries separated by " ; ".  ERROR: the
# fixed text the one-line error must hold after "NAME.deb: ".
ROWS=()
row () { ROWS+=("$@"); }

row newline-in-name refuses "$CONTROL" \
    'd|./|755 ; d|./usr|755 ; d|./usr/share|755 ; f|./usr/share/a\n/etc/shadow|644|root::0:0' \
    'data.tar.xz entry "./usr/share/a\n/etc/shadow" contains a newline, which dpkg refuses'
row newline-in-directory refuses "$CONTROL" \
    'd|./|755 ; d|./usr|755 ; d|./usr/a\nb|755' \
    'data.tar.xz entry "./usr/a\nb/" contains a newline'
row newline-in-hardlink-target refuses "$CONTROL" \
    'd|./|755 ; d|./usr|755 ; f|./usr/a|644|a ; h|./usr/b|./usr/a\n/etc/shadow' \
    'hard link target of entry "./usr/a\n/etc/shadow" contains a newline'
row dotdot-in-name - "$CONTROL" \
    'd|./|755 ; f|./usr/../../etc/passwd|644|root::0:0' \
    'data.tar.xz entry "./usr/../../etc/passwd" climbs out of the tree with ".."'
row dotdot-in-hardlink-target - "$CONTROL" \
    'd|./|755 ; d|./usr|755 ; h|./usr/shadow|./usr/../../etc/shadow' \
    'hard link target of entry "./usr/../../etc/shadow" climbs out of the tree'
row absolute-name accepts "$CONTROL" \
    'd|./|755 ; d|./etc|755 ; f|/etc/passwd|644|root::0:0' \
    'data.tar.xz entry "/etc/passwd" has an absolute path'
row component-of-256-bytes refuses "$CONTROL" \
    "d|./|755 ; d|./usr|755 ; f|./usr/$n256|644|x" \
    "data.tar.xz entry \"./usr/$(printf 'n%.0s' $(seq 194))...\" has a component longer than 255 bytes (NAME_MAX)"
row path-of-4267-bytes refuses "$CONTROL" \
    "d|./|755 ; f|./$long_path|644|x" \
    "data.tar.xz entry \"./$(printf 'd%.0s' $(seq 198))...\" is longer than 4095 bytes (PATH_MAX), which dpkg cannot install"
row name-not-utf8 accepts "$CONTROL" \
    'd|./|755 ; d|./usr|755 ; f|./usr/caf\xe9|644|x' \
    'data.tar.xz entry "./usr/caf\xe9" is not valid UTF-8, which OSTree cannot store'
row symlink-target-of-4096-bytes refuses "$CONTROL" \
    "d|./|755 ; d|./usr|755 ; l|./usr/l|$long_target" \
    'symlink "./usr/l" has a target that is not valid UTF-8 or longer than 4095 bytes'
row symlink-target-not-utf8 accepts "$CONTROL" \
    'd|./|755 ; d|./usr|755 ; l|./usr/l|caf\xe9' \
    'symlink "./usr/l" has a target that is not valid UTF-8'
row package-with-slash refuses "$(control a/b)" 'd|./|755' \
    'control file: Package "a/b" contains a character other than letters, digits and "+-._"'
row package-climbing refuses "$(control ../../etc/cron.d/evil)" 'd|./|755' \
    'control file: Package "../../etc/cron.d/evil" does not start with a letter or digit'
row version-with-space refuses "$(control evil '1.0 evil')" 'd|./|755' \
    'control file: Version "1.0 evil" contains a space'
row version-on-two-lines refuses "$(control evil '1.0\n evil')" 'd|./|755' \
    'control file: Version "1.0\n evil" contains a control character'
row architecture-climbing refuses "$(control evil 1.0 ../../x)" 'd|./|755' \
    'control file: Architecture "../../x" does not start with a letter or digit'
row multi-arch-unknown refuses "$(control evil 1.0 all 'Multi-Arch: bogus\n')" 'd|./|755' \
    'control file: Multi-Arch "bogus" is not one of no, same, foreign, allowed'
row status-field-in-control refuses "$(control evil 1.0 all 'Triggers-Awaited: libc-bin\n')" 'd|./|755' \
    "control file: a Triggers-Awaited field, which only dpkg's status file may hold"
row control-member-of-101-bytes refuses "$CONTROL ; f|./$(printf 'c%.0s' $(seq 101))|755|#!/bin/sh\n" 'd|./|755' \
    "control.tar.gz entry \"./$(printf 'c%.0s' $(seq 101))\" has a name longer than 100 bytes, which dpkg refuses"
row control-member-newline accepts "$CONTROL ; f|./post\ninst|755|#!/bin/sh\n" 'd|./|755' \
    'control.tar.gz entry "./post\ninst" contains a newline'
row control-member-climbing - "$CONTROL ; f|../evil.postinst|755|#!/bin/sh\n" 'd|./|755' \
    'control.tar.gz entry "../evil.postinst" climbs out of the tree'
row conffile-flag-unknown refuses "$CONTROL ; f|./conffiles|644|obsolete /etc/x\n" \
    'd|./|755 ; d|./etc|755 ; f|./etc/x|644|x' \
    'conffiles: unknown flag "obsolete" for "/etc/x" (dpkg knows remove-on-upgrade only)'
row conffile-climbing - "$CONTROL ; f|./conffiles|644|/etc/../../x\n" \
    'd|./|755 ; d|./etc|755 ; f|./etc/x|644|x' \
    'conffiles entry "etc/../../x" climbs out of the tree'

FIX="$SCRATCH/fixtures"
mkdir -p "$FIX"
(
    cd "$FIX"
    for ((i = 0; i < ${#ROWS[@]}; i += 5)); do
        control_spec=${ROWS[i + 2]}
        data_spec=${ROWS[i + 3]}
        deb_from_specs "${ROWS[i]}.deb" "${control_spec// ; /$'\n'}" "${data_spec// ; /$'\n'}"
    done
) > "$FIX/log" 2>&1 || { cat "$FIX/log"; echo "Bail out! cannot build the hostile packages"; exit 1; }

# refused_cleanly NAME ERROR: unpack-deb of NAME.deb fails with one line
# holding "NAME.deb: ERROR", leaving no ref and no file in objects/ or tmp/.
refused_cleanly () {
    local name=$1 error=$2
    rm -rf repo
    new_repo
    expect_failure err a2o --repo repo unpack-deb --ref evil "$FIX/$name.deb"
    assert_one_line err
    grep -q -F -e "apt2ostree unpack-deb: error: $FIX/$name.deb: $error" err \
        || fail "the error does not hold \"$name.deb: $error\""
    assert_not_has_file repo/refs/heads/evil
    [ -z "$(find repo/objects repo/tmp -type f)" ] || fail "files left: $(find repo/objects repo/tmp -type f)"
}

for ((i = 0; i < ${#ROWS[@]}; i += 5)); do
    name=${ROWS[i]} dpkg=${ROWS[i + 1]} error=${ROWS[i + 4]}
    test_expect_success "$name: refused with one line naming the .deb and the member or field, no ref, nothing staged (lean front and full binary)" '
        refused_cleanly '"$name"' "$error"
        APT2OSTREE_LEAN=0 refused_cleanly '"$name"' "$error"
    '
    [ "$dpkg" != - ] || continue
    test_expect_success "$name: dpkg --unpack $dpkg it" '
        if dpkg_unpack root "$FIX/'"$name"'.deb" 2> dpkg.err; then verdict=accepts; else verdict=refuses; fi
        cat dpkg.err
        assert_streq "$verdict" '"$dpkg"'
    '
done

# --- what is accepted: the limits themselves, and what dpkg leaves out -----

test_expect_success 'a component of 255 bytes and a symlink target of 4095 bytes are kept (lean front and full binary)' '
    deb_from_specs edge.deb "$CONTROL" "d|./|755
d|./usr|755
f|./usr/$n255|644|x
l|./usr/l|${long_target:1}"
    for lean in 1 0; do
        rm -rf repo && new_repo
        APT2OSTREE_LEAN=$lean a2o --repo repo unpack-deb --ref edge edge.deb > /dev/null
        ostree --repo=repo ls edge /usr/$n255 > /dev/null
        assert_streq "$(ostree --repo=repo cat edge /var/lib/dpkg/info/evil.list | grep -c /usr/n)" 1
    done
'

test_expect_success 'a control.tar member whose name has a dot is left out, as dpkg leaves it out' '
    deb_from_specs dot.deb "$CONTROL
f|./evil2.postinst|755|#!/bin/sh\n
f|./postinst|755|#!/bin/sh\n" "d|./|755"
    new_repo
    a2o --repo repo unpack-deb --ref dot dot.deb > /dev/null
    ostree --repo=repo ls -R dot /var/lib/dpkg/info > tree
    assert_file_has_content tree "/var/lib/dpkg/info/evil.postinst$"
    assert_not_file_has_content tree "evil2"
    dpkg_unpack root dot.deb
    assert_has_file root/var/lib/dpkg/info/evil.postinst
    assert_not_has_file root/var/lib/dpkg/info/evil.evil2.postinst
'

test_expect_success 'a conffile flagged remove-on-upgrade, the one flag dpkg knows, is accepted' '
    deb_from_specs rou.deb "$CONTROL
f|./conffiles|644|remove-on-upgrade /etc/old\n/etc/x\n" "d|./|755
d|./etc|755
f|./etc/x|644|x"
    new_repo
    a2o --repo repo unpack-deb --ref rou rou.deb > /dev/null
    ostree --repo=repo cat rou /var/lib/apt2ostree/status/evil:all > stanza
    assert_file_has_content stanza "^ /etc/x "
'

# --- stage1: package trees made before these checks ------------------------

test_expect_success 'stage1 refuses a package tree whose commit metadata names the package "a/b"' '
    new_repo
    mkdir -p t/usr
    ostree --repo=repo commit -b pkg --tree=dir=t --add-metadata-string=apt2ostree.package=a/b \
        --add-metadata-string=apt2ostree.architecture=amd64 \
        --add-metadata-string=apt2ostree.multi-arch=no \
        --add-metadata=apt2ostree.merged-usr=true > /dev/null
    expect_failure err a2o --repo repo stage1 --ref out --arch amd64 pkg
    assert_one_line err
    assert_file_has_content err "\"pkg\": the package name \"a/b\" in its commit metadata contains a character"
    assert_not_has_file repo/refs/heads/out
'

# --- import: tar member names by the same rule -----------------------------

for spec in 'f|./a\n/etc/shadow|644|x' 'f|./a/../../etc/shadow|644|x' "f|./$n256|644|x" 'f|./caf\xe9|644|x'; do
    test_expect_success "import refuses a tar entry \"${spec:2:40}\" with one line naming the archive and the entry" '
        new_repo
        TAR_SPEC_ESCAPES=1 tar_from_spec t.tar "d|./|755
'"$spec"'"
        expect_failure err a2o --repo repo import --ref t --tar t.tar
        assert_one_line err
        assert_file_has_content err "t.tar: entry \".*\" \(contains a newline\|climbs out\|has a component longer\|is not valid UTF-8\)"
        assert_not_has_file repo/refs/heads/t
    '
done

test_done
