#!/bin/bash
# Names OSTree cannot store: a file name or a symlink target that is not
# UTF-8, a path deeper than PATH_MAX.  Whether a command in the sandbox
# made it or a directory or archive brought it, it is refused in one line
# naming the path (its bytes escaped), nothing is committed, and no scratch
# directory is left for the next run to trip on.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/mod-lib.sh"

# A byte that is never UTF-8 on its own.
BAD=$(printf '\377')

R="$SCRATCH/repo"
setup_base_repo "$R" || { echo "Bail out! cannot build the base tree"; exit 1; }

# refused ERR REF FRAGMENT: the run failed in one line holding FRAGMENT,
# wrote no REF and left no scratch directory.
refused () {
    assert_one_line "$1"
    assert_file_has_content "$1" "$3"
    assert_not_file_has_content "$1" "CRITICAL"
    assert_not_has_file "$R/refs/heads/$2"
    no_scratch_left "$R"
}

if command -v bwrap > /dev/null; then
    test_expect_success 'mod: a file name made by the command that is not UTF-8 is refused in one line naming it, escaped' '
        expect_failure err a2o --repo "$R" mod --ref bad-name base --chroot -- \
            sh -c "mkdir /data/new; echo x > \"/data/new/f${BAD}g\""
        refused err bad-name "/data/new/f\\\\xffg: the name is not valid UTF-8"
    '

    test_expect_success 'mod: a symlink whose target is not UTF-8 is refused in one line naming it, not committed' '
        expect_failure err a2o --repo "$R" mod --ref bad-target base --chroot -- \
            sh -c "ln -s \"/x${BAD}\" /data/link"
        refused err bad-target "/data/link: a symlink whose target is not valid UTF-8"
    '

    test_expect_success 'mod: a tree deeper than PATH_MAX is refused in one line, its scratch removed, and the next run works' '
        expect_failure err a2o --repo "$R" mod --ref deep base --chroot -- sh -c "
            cd /data; i=0
            while [ \$i -lt 450 ]; do mkdir dddddddddd; cd dddddddddd; i=\$((i + 1)); done
            echo x > file"
        refused err deep "too deep: a path longer than PATH_MAX"
        a2o --repo "$R" mod --ref after-deep base --chroot -- sh -c "echo y > /data/new" > out 2> err
        assert_streq "$(cat err)" ""
        assert_streq "$(ostree --repo="$R" cat after-deep /data/new)" "y"
        no_scratch_left "$R"
    '
else
    for t in "a file name that is not UTF-8" "a symlink target that is not UTF-8" \
             "a tree deeper than PATH_MAX"; do
        test_skip "mod: $t" "bubblewrap is not installed"
    done
fi

test_expect_success 'a scratch directory a killed run left, deeper than PATH_MAX, is removed by the next run' '
    dir="$R/tmp/mod-DEEP01"
    mkdir "$dir"
    (cd "$dir" && i=0 && while [ $i -lt 450 ]; do mkdir dddddddddd; cd dddddddddd; i=$((i + 1)); done \
        && echo x > file && mkdir -p a/b && chmod 0 a)
    a2o --repo "$R" mod --ref after-reap base --chroot -- sh -c "echo z > /data/new" > out 2> err
    assert_streq "$(cat err)" ""
    assert_not_has_file "$dir"
'

test_expect_success 'import DIR: a symlink whose target is not UTF-8, and a name that is not, are refused in one line each' '
    mkdir -p tree/d && ln -s "/x${BAD}" tree/d/link
    expect_failure err a2o --repo "$R" import --ref imp tree
    assert_one_line err
    assert_file_has_content err "tree/d/link: a symlink whose target is not valid UTF-8"
    rm tree/d/link && echo x > "tree/d/f${BAD}"
    expect_failure err a2o --repo "$R" import --ref imp tree
    assert_one_line err
    assert_file_has_content err "tree/d/f\\\\xff: the name is not valid UTF-8"
    assert_not_has_file "$R/refs/heads/imp"
'

test_expect_success 'import --tar: a symlink whose target is not UTF-8 is refused in one line naming the entry' '
    mkdir -p tree/d && ln -s "/x${BAD}" tree/d/link && tar -C tree -cf tree.tar .
    expect_failure err a2o --repo "$R" import --ref imp --tar tree.tar
    refused err imp "tree.tar: entry \"./d/link\": a symlink whose target is not valid UTF-8"
'

test_done
