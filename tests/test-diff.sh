#!/bin/bash
# diff A B: two images (lockfiles or refs) compared package by package (an
# upgrade, a downgrade, an addition and a removal, with both versions and
# their sources), and with --files file by file, grouped by the package that
# owns each file, the files no package owns (a postinst's) apart.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
command -v jq > /dev/null || skip_all "jq is not installed (tools/setup installs it)"

base_archive

# pkg NAME VERSION [POSTINST]: a package shipping /usr/share/NAME/version.
pkg () {
    local name=$1 version=$2 postinst=${3:-}
    local stage="$SCRATCH/stage/$name-$version"
    mkdir -p "$stage/usr/share/$name" "$stage/DEBIAN"
    echo "$name $version" > "$stage/usr/share/$name/version"
    echo "$name docs" > "$stage/usr/share/$name/README"
    [ -z "$postinst" ] || printf '#!/bin/sh\nset -e\n%s\n' "$postinst" > "$stage/DEBIAN/postinst"
    # Named without the epoch, as in Debian's pool.
    ( cd "$D/pool/main" && f=$(make_deb "$stage" "$name" "$version" amd64 "Priority: optional") \
        && { [ "$f" = "${name}_${version#*:}_amd64.deb" ] || mv "$f" "${name}_${version#*:}_amd64.deb"; } )
}
pkg up 1.0
pkg up 1.10
pkg down 1:2.0
pkg down 1:2.0~rc1
pkg gone 1.0
pkg new 1.0 'mkdir -p /var/lib/new; echo made > /var/lib/new/state'
repo_publish "$D" bookworm amd64 archive

serve_work_dir "$SRV"
base_image a up=1.0 down=1:2.0 gone
base_image b up=1.10 down=1:2.0~rc1 new

test_expect_success 'diff of two lockfiles: added, removed, upgraded (1.0 -> 1.10) and downgraded (2.0 -> 2.0~rc1), with sources' '
    cd "$W"
    a2o diff a.lock.json b.lock.json > out
    cat out
    assert_streq "$(cat out)" "downgraded down:amd64 1:2.0 (bookworm) -> 1:2.0~rc1 (bookworm)
removed    gone:amd64 1.0 (bookworm)
added      new:amd64 1.0 (bookworm)
upgraded   up:amd64 1.0 (bookworm) -> 1.10 (bookworm)
1 added, 1 removed, 1 upgraded, 1 downgraded"
'

test_expect_success 'diff of the two images (refs) gives the same packages, without sources; the same image twice gives none' '
    cd "$W"
    a2o --repo build/ostree diff a b > refs.out
    assert_file_has_content refs.out "^upgraded   up:amd64 1.0 -> 1.10\$"
    assert_file_has_content refs.out "^1 added, 1 removed, 1 upgraded, 1 downgraded\$"
    a2o --repo build/ostree diff a a.lock.json > same.out
    assert_streq "$(cat same.out)" "0 added, 0 removed, 0 upgraded, 0 downgraded"
'

test_expect_success '--files groups changed files by the package that owns them, and the unowned apart' '
    cd "$W"
    a2o --repo build/ostree diff a b --files > files.out
    cat files.out
    grep -A5 "^gone:\$" files.out | grep -q "^  D /usr/share/gone/version\$"
    grep -A5 "^gone:\$" files.out | grep -q "^  D /var/lib/dpkg/info/gone.list\$"
    grep -A3 "^new:\$" files.out | grep -q "^  A /usr/share/new/version\$"
    grep -A3 "^up:\$" files.out | grep -q "^  M /usr/share/up/version\$"
    assert_not_file_has_content files.out "/usr/share/up/README"
    sed -n "/^(no package/,\$p" files.out > unowned
    assert_file_has_content unowned "^  A /var/lib/new/state\$"
    assert_file_has_content unowned "^  M /var/lib/dpkg/status\$"
    assert_not_file_has_content unowned "/var/lib/dpkg/info/"
'

test_expect_success '--json: the same changes for tools' '
    cd "$W"
    a2o --repo build/ostree diff a.lock.json b.lock.json --json > out.json
    assert_streq "$(jq -r ".packages[] | select(.name == \"up\") | [.change, .before.version, .after.version, .after.source] | join(\" \")" out.json)" \
        "upgraded 1.0 1.10 bookworm"
    assert_streq "$(jq -r ".packages[] | select(.name == \"gone\") | .change" out.json)" removed
    a2o --repo build/ostree diff a b --files --json > files.json
    assert_streq "$(jq -r ".files[] | select(.path == \"/var/lib/new/state\") | [.change, .package] | join(\" \")" files.json)" "added "
    assert_streq "$(jq -r ".files[] | select(.path == \"/usr/share/up/version\") | .package" files.json)" up
'

test_expect_success 'bad input: --files of a lockfile, an unknown ref, a damaged lockfile are one-line errors' '
    cd "$W"
    expect_failure err a2o --repo build/ostree diff a.lock.json b --files
    assert_file_has_content err "give two refs (\"a.lock.json\" is a lockfile)"
    expect_failure err a2o --repo build/ostree diff a no-such-ref
    assert_file_has_content err "no-such-ref"
    echo "{" > broken.lock.json
    expect_failure err a2o --repo build/ostree diff broken.lock.json b
    assert_one_line err
    assert_file_has_content err "broken.lock.json"
'

test_done
