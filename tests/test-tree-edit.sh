#!/bin/bash
# mkdir, ln, mv, rm, subtree and graft: edits of a tree by metadata alone.
. "$TOP_SRCDIR/tests/libtest.sh"

# A small input tree "base": /usr/bin/tool, /usr/share/doc/pkg/README,
# /etc/conf (owned 0:0 whatever the test's user).
make_base () {
    new_repo repo
    mkdir -p d/usr/bin d/usr/share/doc/pkg d/etc
    echo tool > d/usr/bin/tool
    echo readme > d/usr/share/doc/pkg/README
    echo conf > d/etc/conf
    commit_dir repo base d --owner-uid=0 --owner-gid=0
}

test_expect_success 'mkdir adds a directory with the mode and owner asked for' '
    make_base
    a2o --repo repo mkdir --ref out base /var/lib/x --parents --mode 0700 --owner 5:6
    ls_tree repo out > list
    assert_file_has_content list "^d00700 5 6 0 /var/lib/x\$"
    assert_file_has_content list "^d00755 0 0 0 /var\$"
    assert_file_has_content list "^d00755 0 0 0 /var/lib\$"
'

test_expect_success 'mkdir without --parents needs the parent, and refuses an existing path' '
    make_base
    expect_failure err a2o --repo repo mkdir --ref out base /var/lib
    assert_one_line err
    assert_file_has_content err "\"/var\": no such directory"
    expect_failure err a2o --repo repo mkdir --ref out base /etc
    assert_file_has_content err "\"/etc\" already exists"
    a2o --repo repo mkdir --ref out base /etc --parents
    assert_not_has_file repo/refs/heads/out.tmp
'

test_expect_success 'mkdir takes several paths, and --mode accepts setgid and sticky bits' '
    make_base
    a2o --repo repo mkdir --ref out base /srv /tmp --mode 1777
    ls_tree repo out > list
    assert_file_has_content list "^d01777 0 0 0 /srv\$"
    assert_file_has_content list "^d01777 0 0 0 /tmp\$"
    a2o --repo repo mkdir --ref out2 base /g --mode 2755
    ls_tree repo out2 > list
    assert_file_has_content list "^d02755 0 0 0 /g\$"
'

test_expect_success 'mkdir rejects a bad mode and a bad owner with a one-line error' '
    make_base
    expect_failure err a2o --repo repo mkdir --ref out base /x --mode 9999
    assert_one_line err
    assert_file_has_content err "expected an octal mode"
    expect_failure err a2o --repo repo mkdir --ref out base /x --owner root
    assert_one_line err
    assert_file_has_content err "expected numeric UID:GID"
'

test_expect_success 'ln adds a root-owned symlink and refuses an existing path' '
    make_base
    a2o --repo repo ln --ref out base usr/bin /bin
    ls_tree repo out > list
    assert_file_has_content list "^l00777 0 0 0 /bin -> usr/bin\$"
    expect_failure err a2o --repo repo ln --ref out2 out usr/sbin /bin
    assert_one_line err
    assert_file_has_content err "\"/bin\" already exists"
    assert_not_has_file repo/refs/heads/out2
'

test_expect_success 'ln needs an existing parent directory that is a directory' '
    make_base
    expect_failure err a2o --repo repo ln --ref out base x /etc/conf/link
    assert_one_line err
    assert_file_has_content err "\"/etc/conf\" is not a directory"
'

test_expect_success 'mv moves a file and a whole directory' '
    make_base
    a2o --repo repo mv --ref out1 base /usr/bin/tool /usr/bin/tool2
    a2o --repo repo mv --ref out out1 /usr/share/doc /doc
    ls_tree repo out > list
    assert_file_has_content list "^-00644 0 0 5 /usr/bin/tool2\$"
    assert_not_file_has_content list " /usr/bin/tool\$"
    assert_file_has_content list "^-00644 0 0 7 /doc/pkg/README\$"
    assert_not_file_has_content list "/usr/share/doc"
    d=$(mktemp -d -p .) && rmdir "$d"
    ostree --repo=repo checkout "$(rev_commit repo out)" "$d"
    assert_streq "$(cat "$d/doc/pkg/README")" readme
'

test_expect_success 'mv refuses an existing destination, a missing source and a move into itself' '
    make_base
    expect_failure err a2o --repo repo mv --ref out base /usr/bin/tool /etc/conf
    assert_one_line err
    assert_file_has_content err "\"/etc/conf\" already exists"
    expect_failure err a2o --repo repo mv --ref out base /nope /x
    assert_file_has_content err "\"/nope\": no such file or directory"
    expect_failure err a2o --repo repo mv --ref out base /usr /usr/share/usr
    assert_file_has_content err "into itself"
    assert_not_has_file repo/refs/heads/out
'

test_expect_success 'rm removes files, directories only with --recursive, missing paths only with --force' '
    make_base
    a2o --repo repo rm --ref out base /etc/conf
    ls_tree repo out > list
    assert_not_file_has_content list "/etc/conf"
    expect_failure err a2o --repo repo rm --ref out2 base /usr/share
    assert_one_line err
    assert_file_has_content err "is a directory (use --recursive)"
    a2o --repo repo rm --ref out2 base /usr/share --recursive
    ls_tree repo out2 > list
    assert_not_file_has_content list "/usr/share"
    expect_failure err a2o --repo repo rm --ref out3 base /missing
    assert_file_has_content err "\"/missing\": no such file or directory"
    a2o --repo repo rm --ref out3 base /missing /no/such/dir --force
    assert_streq "$(ls_tree repo out3)" "$(ls_tree repo base)"
'

test_expect_success 'rm refuses the root of the tree' '
    make_base
    expect_failure err a2o --repo repo rm --ref out base / --recursive
    assert_one_line err
    assert_file_has_content err "root of a tree"
'

test_expect_success 'subtree makes a directory the root of a new tree, with its metadata' '
    make_base
    a2o --repo repo mkdir --ref withdir base /opt --mode 0711 --owner 3:4
    a2o --repo repo mkdir --ref withdir withdir /opt/sub
    a2o --repo repo subtree --ref out withdir /opt
    ls_tree repo out > list
    assert_file_has_content list "^d00711 3 4 0 /\$"
    assert_file_has_content list "^d00755 0 0 0 /sub\$"
    expect_failure err a2o --repo repo subtree --ref out2 base /etc/conf
    assert_file_has_content err "is not a directory"
    expect_failure err a2o --repo repo subtree --ref out2 base /nope
    assert_file_has_content err "\"/nope\": no such file or directory"
'

test_expect_success 'graft places a tree at a path, which must not exist' '
    make_base
    mkdir -p k/modules && echo ko > k/modules/m.ko
    commit_dir repo kernel k --owner-uid=0 --owner-gid=0
    a2o --repo repo graft --ref out base /usr/lib kernel
    ls_tree repo out > list
    assert_file_has_content list "^-00644 0 0 3 /usr/lib/modules/m.ko\$"
    assert_file_has_content list "^-00644 0 0 5 /usr/bin/tool\$"
    expect_failure err a2o --repo repo graft --ref out2 base /usr kernel
    assert_one_line err
    assert_file_has_content err "\"/usr\" already exists"
    expect_failure err a2o --repo repo graft --ref out2 base /no/where kernel
    assert_file_has_content err "\"/no\": no such directory"
'

test_expect_success 'a path with .. is refused' '
    make_base
    expect_failure err a2o --repo repo mkdir --ref out base /usr/../../etc
    assert_one_line err
    assert_file_has_content err "\"..\" is not allowed"
'

test_expect_success 'a missing IN, FROM or repository is a one-line error that writes no ref' '
    make_base
    expect_failure err a2o --repo repo mkdir --ref out nosuchref /x
    assert_one_line err
    assert_file_has_content err "\"nosuchref\": no such ref or commit"
    expect_failure err a2o --repo repo graft --ref out base /x nosuchtree
    assert_file_has_content err "\"nosuchtree\": no such ref or commit"
    expect_failure err a2o --repo norepo mkdir --ref out base /x
    assert_file_has_content err "norepo: no OSTree repository here"
    assert_not_has_file repo/refs/heads/out
'

test_expect_success 'an invalid OUT ref name is refused before any work' '
    make_base
    expect_failure err a2o --repo repo mkdir --ref "bad name//" base /x
    assert_one_line err
    assert_file_has_content err "is not a valid ref name"
'

test_expect_success 'a missing argument is a usage error (exit status 2)' '
    make_base
    set +e
    a2o --repo repo mkdir --ref out base 2>err
    rc=$?
    set -e
    assert_streq "$rc" 2
    assert_file_has_content err "see \"apt2ostree mkdir --help\""
'

# Root ignores file permissions, so as root the repository is made read-only
# with a read-only bind mount; as a user, with chmod.
can_make_readonly () {
    [ "$(id -u)" != 0 ] && return 0
    mkdir -p "$SCRATCH/probe" "$SCRATCH/probe-ro"
    mount --bind "$SCRATCH/probe" "$SCRATCH/probe-ro" 2>/dev/null || return 1
    mount -o remount,bind,ro "$SCRATCH/probe-ro" 2>/dev/null; local rc=$?
    umount "$SCRATCH/probe-ro"
    return $rc
}
if can_make_readonly; then
test_expect_success 'an unwritable repository is a one-line error and leaves refs alone' '
    make_base
    if [ "$(id -u)" = 0 ]; then
        mkdir ro && mount --bind repo ro && mount -o remount,bind,ro ro
        set +e; a2o --repo ro mkdir --ref out base /x 2>err; rc=$?; set -e
        umount ro
    else
        chmod -R a-w repo
        set +e; a2o --repo repo mkdir --ref out base /x 2>err; rc=$?; set -e
        chmod -R u+w repo
    fi
    cat err
    [ "$rc" -eq 1 ]
    assert_one_line err
    assert_file_has_content err "cannot write to the repository"
    assert_not_has_file repo/refs/heads/out
'
else
test_skip 'an unwritable repository is a one-line error and leaves refs alone' \
    'root here cannot make a read-only bind mount'
fi

test_expect_success 'ostree ls, cat, checkout and fsck work on the result' '
    make_base
    a2o --repo repo mkdir --ref out base /srv
    a2o --repo repo ln --ref out out usr/bin/tool /tool
    c=$(rev_commit repo out)
    ostree --repo=repo ls -R "$c" > /dev/null
    assert_streq "$(ostree --repo=repo cat "$c" /usr/bin/tool)" tool
    ostree --repo=repo checkout "$c" co
    assert_streq "$(readlink co/tool)" usr/bin/tool
    ostree --repo=repo fsck > fsck.out
    assert_file_has_content fsck.out "no errors found"
'

test_done
