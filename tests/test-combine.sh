#!/bin/bash
# combine: union of trees by metadata, conflicts, determinism, refs as
# Ninja targets.
. "$TOP_SRCDIR/tests/libtest.sh"

# Two package-like trees sharing directories.
make_pair () {
    new_repo repo
    mkdir -p one/usr/bin one/usr/share/doc/one one/etc
    echo one > one/usr/bin/one
    echo copyright > one/usr/share/doc/one/copyright
    echo shared > one/etc/shared
    mkdir -p two/usr/bin two/usr/share/doc/two two/etc
    echo two > two/usr/bin/two
    echo copyright > two/usr/share/doc/two/copyright
    echo shared > two/etc/shared
    commit_dir repo pkg/one one --owner-uid=0 --owner-gid=0
    commit_dir repo pkg/two two --owner-uid=0 --owner-gid=0
}

test_expect_success 'combine merges directories and keeps every file' '
    make_pair
    a2o --repo repo combine --ref image pkg/one pkg/two
    ls_tree repo image > list
    cat list
    assert_file_has_content list "^-00644 0 0 4 /usr/bin/one\$"
    assert_file_has_content list "^-00644 0 0 4 /usr/bin/two\$"
    assert_file_has_content list "^-00644 0 0 10 /usr/share/doc/one/copyright\$"
    assert_file_has_content list "^-00644 0 0 10 /usr/share/doc/two/copyright\$"
    assert_streq "$(grep -c " /usr/bin\$" list)" 1
'

test_expect_success 'the same file at one path in two trees is fine' '
    make_pair
    a2o --repo repo combine --ref image pkg/one pkg/two
    ls_tree repo image > list
    assert_file_has_content list "^-00644 0 0 7 /etc/shared\$"
'

test_expect_success 'one tree combined alone, or with itself, is that tree' '
    make_pair
    a2o --repo repo combine --ref alone pkg/one
    a2o --repo repo combine --ref twice pkg/one pkg/one
    assert_streq "$(ls_tree repo alone)" "$(ls_tree repo pkg/one)"
    assert_streq "$(ls_tree repo twice)" "$(ls_tree repo pkg/one)"
'

test_expect_success 'two different files at one path: an error naming the path and both trees' '
    make_pair
    mkdir -p three/etc && echo different > three/etc/shared
    commit_dir repo pkg/three three --owner-uid=0 --owner-gid=0
    expect_failure err a2o --repo repo combine --ref image pkg/one pkg/two pkg/three
    assert_one_line err
    assert_file_has_content err "\"/etc/shared\" differs between \"pkg/one\" and \"pkg/three\""
    assert_not_has_file repo/refs/heads/image
'

test_expect_success '--later-wins lets the later file win' '
    make_pair
    mkdir -p three/etc && echo different > three/etc/shared
    commit_dir repo pkg/three three --owner-uid=0 --owner-gid=0
    a2o --repo repo combine --later-wins --ref image pkg/one pkg/three
    assert_streq "$(ostree --repo=repo cat "$(rev_commit repo image)" /etc/shared)" different
'

test_expect_success 'a file against a directory at one path is an error either way round' '
    make_pair
    mkdir -p f/usr && echo file > f/usr/bin
    commit_dir repo pkg/f f --owner-uid=0 --owner-gid=0
    expect_failure err a2o --repo repo combine --ref image pkg/one pkg/f
    assert_one_line err
    assert_file_has_content err "\"/usr/bin\" is a directory in \"pkg/one\" but not in \"pkg/f\""
    expect_failure err a2o --repo repo combine --ref image pkg/f pkg/one
    assert_file_has_content err "\"/usr/bin\" is a directory in \"pkg/one\" but not in \"pkg/f\""
    a2o --repo repo combine --later-wins --ref image pkg/one pkg/f
    ls_tree repo image > list
    assert_file_has_content list "^-00644 0 0 5 /usr/bin\$"
'

test_expect_success 'a symlinked directory below a real directory is a conflict unless --later-wins' '
    make_pair
    mkdir -p merged/usr/bin && ln -s usr/bin merged/bin
    commit_dir repo base/merged-usr merged --owner-uid=0 --owner-gid=0
    mkdir -p legacy/bin && echo sh > legacy/bin/sh
    commit_dir repo pkg/legacy legacy --owner-uid=0 --owner-gid=0
    expect_failure err a2o --repo repo combine --ref image base/merged-usr pkg/legacy
    assert_one_line err
    assert_file_has_content err "\"/bin\" is a directory in \"pkg/legacy\" but not in \"base/merged-usr\""
    a2o --repo repo combine --later-wins --ref image base/merged-usr pkg/legacy
    ls_tree repo image > list
    assert_file_has_content list "^-00644 0 0 3 /bin/sh\$"
'

test_expect_success 'a directory keeps the owner and mode of the first tree that has it, as dpkg does' '
    make_pair
    a2o --repo repo mkdir --ref first pkg/one /var/log --parents --mode 0755 --owner 0:0
    mkdir -p e
    commit_dir repo empty e --owner-uid=0 --owner-gid=0
    a2o --repo repo mkdir --ref second empty /var --mode 0700 --owner 7:7
    a2o --repo repo mkdir --ref second second /var/log --mode 2775 --owner 0:4
    a2o --repo repo combine --ref image first second
    ls_tree repo image > list
    assert_file_has_content list "^d00755 0 0 0 /var\$"
    assert_file_has_content list "^d00755 0 0 0 /var/log\$"
    a2o --repo repo combine --later-wins --ref image2 first second
    ls_tree repo image2 > list
    assert_file_has_content list "^d00700 7 7 0 /var\$"
    assert_file_has_content list "^d02775 0 4 0 /var/log\$"
'

test_expect_success 'the root directory keeps the first tree'"'"'s metadata, not the last one'"'"'s' '
    make_pair
    mkdir -p tmpd && chmod 0700 tmpd && echo x > tmpd/x
    commit_dir repo pkg/mktemp tmpd --owner-uid=0 --owner-gid=0
    a2o --repo repo combine --ref image pkg/one pkg/mktemp
    ls_tree repo image > list
    assert_file_has_content list "^d00755 0 0 0 /\$"
'

test_expect_success 'the same inputs give the same commit in two fresh repositories' '
    make_pair
    a2o --repo repo combine --ref image pkg/one pkg/two
    new_repo other
    commit_dir other pkg/one one --owner-uid=0 --owner-gid=0
    commit_dir other pkg/two two --owner-uid=0 --owner-gid=0
    a2o --repo other combine --ref image pkg/one pkg/two
    assert_streq "$(cat other/refs/heads/image)" "$(cat repo/refs/heads/image)"
    ostree --repo=repo show "$(rev_commit repo image)" > show
    assert_file_has_content show "^Date:  1970-01-01 00:00:00 +0000"
'

test_expect_success 'SOURCE_DATE_EPOCH dates the commit' '
    make_pair
    SOURCE_DATE_EPOCH=86400 a2o --repo repo combine --ref image pkg/one pkg/two
    ostree --repo=repo show "$(rev_commit repo image)" > show
    assert_file_has_content show "^Date:  1970-01-02 00:00:00 +0000"
    expect_failure err env SOURCE_DATE_EPOCH=yesterday "$APT2OSTREE" --repo repo combine --ref image2 pkg/one
    assert_one_line err
    assert_file_has_content err "SOURCE_DATE_EPOCH=\"yesterday\" is not a number"
'

test_expect_success 'combining again with the same result leaves the ref file and its mtime alone' '
    make_pair
    a2o --repo repo combine --ref image pkg/one pkg/two
    before=$(mtime repo/refs/heads/image)
    sleep 0.05
    a2o --repo repo combine --ref image pkg/one pkg/two
    assert_streq "$(mtime repo/refs/heads/image)" "$before"
    echo new > two/usr/bin/two
    commit_dir repo pkg/two two --owner-uid=0 --owner-gid=0
    a2o --repo repo combine --ref image pkg/one pkg/two
    [ "$(mtime repo/refs/heads/image)" != "$before" ]
'

test_expect_success 'with ninja restat, an unchanged combine result does not re-run what depends on it' '
    make_pair
    cat > build.ninja <<NINJA
rule combine
  command = $APT2OSTREE --repo repo combine --ref image pkg/one pkg/two > /dev/null
  restat = 1
rule downstream
  command = echo ran >> downstream.log && touch \$out
build repo/refs/heads/image: combine repo/refs/heads/pkg/one repo/refs/heads/pkg/two
build stamp: downstream repo/refs/heads/image
NINJA
    ninja -v > /dev/null
    assert_streq "$(wc -l < downstream.log)" 1
    # A new commit of pkg/two with the same tree: combine re-runs, its result
    # is the same commit, so the downstream step does not.
    sleep 0.05
    ostree --repo=repo commit --no-bindings -b pkg/two --tree=dir=two --owner-uid=0 --owner-gid=0 -s again > /dev/null
    ninja > ninja.out
    assert_file_has_content ninja.out "combine"
    assert_streq "$(wc -l < downstream.log)" 1
    # A real change flows through.
    echo changed > two/usr/bin/two
    commit_dir repo pkg/two two --owner-uid=0 --owner-gid=0
    ninja > /dev/null
    assert_streq "$(wc -l < downstream.log)" 2
'

test_expect_success 'combine needs --ref and at least one existing input' '
    make_pair
    expect_failure err a2o --repo repo combine pkg/one
    assert_file_has_content err "\-\-ref OUT is required"
    expect_failure err a2o --repo repo combine --ref image
    assert_file_has_content err "expected at least one IN"
    expect_failure err a2o --repo repo combine --ref image pkg/one pkg/missing
    assert_one_line err
    assert_file_has_content err "\"pkg/missing\": no such ref or commit"
    assert_not_has_file repo/refs/heads/image
'

test_expect_success 'inputs may be commit checksums, and the output is fsck-clean' '
    make_pair
    a2o --repo repo combine --ref image "$(rev_commit repo pkg/one)" pkg/two
    ostree --repo=repo fsck > fsck.out
    assert_file_has_content fsck.out "no errors found"
'

test_done
