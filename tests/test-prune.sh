#!/bin/bash
# apt2ostree prune, hermetic: two images built into one repository (the
# real Debian bookworm base plus small packages made here, served on
# 127.0.0.1), then pruned to one of them.  What the other alone used goes,
# refs and objects; what the kept image needs, and every ref no build
# wrote, stays; the kept image still rebuilds as a no-op.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
command -v ostree > /dev/null || skip_all "the ostree command (for ostree fsck) is not installed"

base_archive

test_deb shared 1.0 "" "Depends: coreutils"
test_deb extra 1.0 "" "Depends: shared"
test_deb solo 1.0
repo_publish "$D" bookworm amd64 archive
repo_serve "$SRV"

W="$SCRATCH/work"
R="$W/build/ostree"
mkdir -p "$W"
cd "$W"
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list

# package_refs LOCKFILE: the package trees of LOCKFILE's packages, as the
# refs in the Ninja file "apt2ostree ninja" writes for it.
package_refs () {
    a2o ninja "$1" -o "$W/refs-of.ninja" --builddir build > /dev/null
    sed -n 's/^  ref = \(deb\/.*\)$/\1/p' "$W/refs-of.ninja" | sort
}

# refs_state: every ref of the repository with its commit and mtime.
refs_state () { (cd "$R/refs/heads" && find . -type f -printf '%P %T@ ' -exec cat {} \; | sort); }

# objects: every object file of the repository.
objects () { (cd "$R/objects" && find . -type f | sort); }

test_expect_success 'two images built with one build directory share one repository' '
    cd "$W"
    base_lock one shared
    base_lock two shared extra solo
    a2o build one.lock.json > build-one.out
    ostree --repo=build/ostree refs | grep "^cache/" | LC_ALL=C sort > one.cache
    mkdir -p late/etc && echo "late" > late/etc/late
    a2o build two.lock.json --ref boards/two --after-configure late > build-two.out
    # The keyed refs of its stages (a build writes them for publish).
    ostree --repo=build/ostree refs | grep "^cache/" | LC_ALL=C sort | comm -13 one.cache - \
        > two-only.cache
    assert_streq "$(cut -d/ -f2 two-only.cache | tr "\n" " ")" "configured stage1 "
    for r in one stage1/one boards/two stage1/boards/two configured/boards/two \
             hooks/boards/two/after-configure-1; do
        assert_has_file "$R/refs/heads/$r"
    done
    package_refs one.lock.json > one.debs
    package_refs two.lock.json > two.debs
    comm -13 one.debs two.debs > two-only.debs
    assert_streq "$(cut -d/ -f2 two-only.debs | tr "\n" " ")" "extra solo "
    assert_streq "$(comm -23 one.debs two.debs)" ""
    cat build/ostree/refs/heads/boards/two > two.commit
    cat build/ostree/refs/heads/$(sed -n /extra/p two-only.debs) > extra.commit
    # The file objects of /usr/share/NAME/version, which only NAME ships.
    for p in extra solo; do
        ostree --repo=build/ostree ls -C boards/two /usr/share/$p/version | awk "{ print \$5 }" > $p.file
        [ -n "$(cat $p.file)" ]
    done
'

# Refs no build wrote: a user tree, a ref named like an image that no
# stage ref names, and a ref to a package tree only the other image uses.
test_expect_success 'refs no build wrote are set up beside the images' '
    cd "$W"
    mkdir -p notes && echo "keep me" > notes/README
    a2o --repo build/ostree import --ref mine/notes notes > /dev/null
    a2o --repo build/ostree import --ref three notes > /dev/null
    solo=$(sed -n /solo/p two-only.debs)
    ostree --repo=build/ostree refs --create=release/solo "$(cat "build/ostree/refs/heads/$solo")"
'

test_expect_success 'prune --dry-run lists, one line per ref, what only the other image used, and deletes nothing' '
    cd "$W"
    refs_state > refs.before
    objects > objects.before
    du -sk --apparent-size "$R" | cut -f1 > du.before
    a2o prune --builddir build --dry-run one.lock.json > dry.out
    cat dry.out
    { cat two-only.debs two-only.cache; printf "%s\n" boards/two configured/boards/two hooks/boards/two/after-configure-1 \
                                         stage1/boards/two; } \
        | LC_ALL=C sort > dry.expected
    diff -u dry.expected dry.out
    refs_state > refs.after
    diff -u refs.before refs.after
    objects > objects.after
    cmp objects.before objects.after
'

test_expect_success 'a lockfile that cannot be read is a one-line error naming it, and nothing is deleted' '
    cd "$W"
    echo "{ \"format\": " > broken.lock.json
    expect_failure err a2o prune --builddir build one.lock.json broken.lock.json
    assert_one_line err
    assert_file_has_content err "broken.lock.json"
    expect_failure err2 a2o prune --builddir build one.lock.json missing.lock.json
    assert_one_line err2
    assert_file_has_content err2 "missing.lock.json"
    refs_state > refs.after
    diff -u refs.before refs.after
    objects > objects.after
    cmp objects.before objects.after
'

test_expect_success 'two lockfiles giving one image ref are a usage error naming both, and nothing is deleted' '
    cd "$W"
    mkdir -p other && cp two.lock.json other/one.lock.json
    if a2o prune --builddir build one.lock.json other/one.lock.json 2> err; then
        fail "prune accepted two images named one"
    else
        assert_streq "$?" 2
    fi
    assert_one_line err
    assert_file_has_content err "one.lock.json and other/one.lock.json"
    refs_state > refs.after
    diff -u refs.before refs.after
'

test_expect_success 'prune deletes what only the other image used, refs and objects, and keeps what the listed one needs' '
    cd "$W"
    a2o prune --builddir build one.lock.json > prune.out
    cat prune.out
    head -n -1 prune.out > prune.refs
    diff -u dry.expected prune.refs
    assert_file_has_content prune.out "^deleted 8 refs and [1-9][0-9]* of [0-9]* objects"
    du -sk --apparent-size "$R" | cut -f1 > du.after
    for r in $(cat dry.expected); do assert_not_has_file "$R/refs/heads/$r"; done
    # No directory is left empty (an image named "boards" could not be built).
    for d in boards stage1/boards configured hooks; do assert_not_has_file "$R/refs/heads/$d"; done
    # The kept image: every ref as it was, mtimes too (a rebuild is then a no-op).
    { grep -E "^(one|stage1/one) " refs.before; grep -F -f one.debs refs.before; } > kept.before
    refs_state > refs.after
    { grep -E "^(one|stage1/one) " refs.after; grep -F -f one.debs refs.after; } > kept.after
    assert_streq "$(wc -l < kept.after)" "$(($(wc -l < one.debs) + 2))"
    diff -u kept.before kept.after
    assert_streq "$(cut -d" " -f1 kept.after | grep ^deb/ | LC_ALL=C sort)" "$(LC_ALL=C sort one.debs)"
    # The objects: fewer, the other image commit and its unique package tree gone.
    [ "$(objects | wc -l)" -lt "$(wc -l < objects.before)" ]
    ! ostree --repo=build/ostree show "$(cat two.commit)" > /dev/null 2>&1 || fail "the commit of two is left"
    ! ostree --repo=build/ostree show "$(cat extra.commit)" > /dev/null 2>&1 || fail "the commit of extra is left"
    x=$(cat extra.file); s=$(cat solo.file)
    assert_not_has_file "$R/objects/${x:0:2}/${x:2}.file"
    assert_has_file "$R/objects/${s:0:2}/${s:2}.file"
    ostree --repo=build/ostree fsck > fsck.out 2>&1 || { cat fsck.out; fail "ostree fsck"; }
'

[ -f "$W/du.after" ] && say "repository: $(cat "$W/du.before") KiB before prune, $(cat "$W/du.after") KiB after"

test_expect_success 'refs no build wrote are untouched, and what they reach is still whole' '
    cd "$W"
    grep -E "^(mine/notes|three|release/solo) " refs.before > user.before
    refs_state | grep -E "^(mine/notes|three|release/solo) " > user.after
    diff -u user.before user.after
    assert_streq "$(wc -l < user.after)" 3
    assert_streq "$(ostree --repo=build/ostree cat release/solo /usr/share/solo/version)" "solo 1.0"
    rm -rf co && a2o --repo build/ostree export mine/notes --dir co
    assert_streq "$(cat co/README)" "keep me"
'

test_expect_success 'a build of the kept image right after prune does no work' '
    cd "$W"
    a2o build one.lock.json > again.out
    cat again.out
    assert_file_has_content again.out "ninja: no work to do"
'

test_expect_success 'prune again with the same lockfile finds nothing to delete' '
    cd "$W"
    a2o prune --builddir build one.lock.json > again.out
    assert_file_has_content again.out "^deleted 0 refs and 0 of [0-9]* objects (0 bytes)\$"
    assert_streq "$(wc -l < again.out)" 1
' 

test_expect_success 'the pruned image builds again, to the commit it had' '
    cd "$W"
    a2o build two.lock.json --ref boards/two --after-configure late > rebuild.out
    assert_streq "$(cat build/ostree/refs/heads/boards/two)" "$(cat two.commit)"
    ostree --repo=build/ostree fsck > fsck.out 2>&1 || { cat fsck.out; fail "ostree fsck"; }
'

test_expect_success 'LOCKFILE=REF names the image ref: an image built as another ref keeps its trees under that name' '
    cd "$W"
    a2o build one.lock.json --ref copy > copy.out
    a2o prune --repo build/ostree --dry-run one.lock.json=copy two.lock.json=boards/two > dry.out
    printf "%s\n" one stage1/one > expected
    diff -u expected dry.out
    a2o prune --repo build/ostree one.lock.json=copy two.lock.json=boards/two > prune.out
    assert_not_has_file "$R/refs/heads/one"
    assert_has_file "$R/refs/heads/copy"
    assert_has_file "$R/refs/heads/stage1/copy"
    assert_has_file "$R/refs/heads/stage1/boards/two"
    a2o build one.lock.json --ref copy > again.out
    assert_file_has_content again.out "ninja: no work to do"
'

test_done
