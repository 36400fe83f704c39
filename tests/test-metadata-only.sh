#!/bin/bash
# combine, mkdir, ln, mv, rm, subtree and graft never read file content:
# every one of them runs in a repository whose file-content objects have all
# been deleted, and gives the same commit as in the intact repository.
. "$TOP_SRCDIR/tests/libtest.sh"

# Inputs with many files (some large) and shared directories, in an intact
# repository "full" and a copy "bare" whose content objects are deleted.
make_repos () {
    local mode=$1 i p
    new_repo full "$mode"
    for p in alpha beta; do
        mkdir -p $p/usr/bin $p/usr/share/doc/$p $p/usr/lib/$p $p/etc
        for i in $(seq 1 50); do echo "$p $i" > $p/usr/lib/$p/f$i; done
        head -c 1048576 /dev/urandom > $p/usr/bin/$p
        echo doc > $p/usr/share/doc/$p/copyright
        ln -s ../lib/$p/f1 $p/usr/bin/$p-link
        commit_dir full pkg/$p $p --owner-uid=0 --owner-gid=0
    done
    mkdir -p extra/share && echo extra > extra/share/extra
    commit_dir full extra extra --owner-uid=0 --owner-gid=0
    cp -a full stripped
    local n
    n=$(find stripped/objects -name "*.file" -o -name "*.filez" | wc -l)
    [ "$n" -gt 100 ] || fail "expected over 100 content objects, found $n"
    find stripped/objects \( -name "*.file" -o -name "*.filez" \) -delete
    # Proof that content is really gone: reading a file now fails.
    ! ostree --repo=stripped cat "$(rev_commit stripped pkg/alpha)" /usr/lib/alpha/f1 2>/dev/null \
        || fail "content is still readable in the stripped repository"
}

# run_both OP ARGS…: the same operation in both repositories; same commit.
run_both () {
    a2o --repo full "$@" > /dev/null
    a2o --repo stripped "$@" > /dev/null
    local ref=$2
    assert_streq "$(cat stripped/refs/heads/$ref)" "$(cat full/refs/heads/$ref)"
}

for mode in bare archive; do
test_expect_success "every tree operation works with no file content in a repository of mode $mode" '
    make_repos '"$mode"'
    run_both combine --ref image pkg/alpha pkg/beta
    run_both mkdir --ref step1 image /var/lib/app --parents --mode 0750 --owner 1:2
    run_both ln --ref step2 step1 usr/bin/alpha /usr/bin/alias
    run_both mv --ref step3 step2 /usr/lib/beta /usr/lib/beta-moved
    run_both mv --ref step4 step3 /usr/bin/beta /usr/bin/beta-moved
    run_both rm --ref step5 step4 /usr/share/doc/alpha --recursive
    run_both rm --ref step6 step5 /usr/lib/alpha/f2
    run_both subtree --ref lib step6 /usr/lib
    run_both graft --ref final step6 /opt extra
    ls_tree full final > list
    assert_file_has_content list "^d00750 1 2 0 /var/lib/app\$"
    assert_file_has_content list "^l00777 0 0 0 /usr/bin/alias -> usr/bin/alpha\$"
    assert_file_has_content list "^-00644 0 0 1048576 /usr/bin/beta-moved\$"
    assert_file_has_content list "^-00644 0 0 7 /usr/lib/beta-moved/f9\$"
    assert_file_has_content list "^-00644 0 0 6 /opt/share/extra\$"
    assert_file_has_content list " /usr/lib/alpha/f1\$"
    assert_not_file_has_content list " /usr/lib/alpha/f2\$"
    assert_not_file_has_content list "/usr/share/doc/alpha"
    assert_streq "$(grep -c " /usr/lib/alpha/f" list)" 49
    ls_tree full lib > lib.list
    assert_file_has_content lib.list "^-00644 0 0 9 /alpha/f10\$"
'
done

test_done
