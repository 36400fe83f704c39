#!/bin/bash
# The store's own transaction (src/barestore/txn.c).  In a bare or bare-user
# repository the commands module writes every object through the
# project's writer and opens no libostree transaction (libostree makes a
# staging directory tmp/staging-* for each of its own), whatever the
# command writes: an unpack, an import, tree edits, a combine, a mod.  An
# archive repository keeps libostree's.  The commits are the same either
# way, and the lean path and the commands module read the repository's
# config the same way.  Watched with strace.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

command -v strace > /dev/null || skip_all "strace is not installed (tools/setup installs it)"

(
    cd "$SCRATCH"
    mkdir -p p/usr/bin p/usr/share/doc/p && echo tool > p/usr/bin/p && ln -s p p/usr/bin/p-alias
    echo doc > p/usr/share/doc/p/README
    mv "$(make_deb p p 1.0 amd64)" p.deb
    mkdir -p src/etc/sub/deeper src/usr/lib
    echo conf > src/etc/conf && echo sub > src/etc/sub/f && echo deep > src/etc/sub/deeper/g
    ln -s ../usr/lib src/etc/lib && echo lib > src/usr/lib/libx.so
    tar --owner=0 --group=0 -C src -cf src.tar .
) > "$SCRATCH/log" 2>&1 || { cat "$SCRATCH/log"; echo "Bail out! cannot build the test inputs"; exit 1; }

# stagings OUT CMD...: run CMD under strace (its exit status is returned);
# OUT gets how many staging directories libostree made (tmp/staging-*).
stagings () {
    local out=$1 rc=0
    shift
    strace -f -o "$out.strace" -e trace=mkdir,mkdirat "$@" > "$out.stdout" 2> "$out.err" || rc=$?
    grep -c "\"staging-[^\"]*\", 0[0-7]*) = 0$" "$out.strace" > "$out" || true
    return $rc
}

# write_all REPO: in REPO, with the commands module, an unpack, a
# directory and a tar archive imported, mkdir, ln, mv of a directory, a
# combine; each run's libostree staging directories counted in
# REPO.NAME.  Prints the commits, one a line.
write_all () {
    local r=$1
    run () {
        local name=$1
        shift
        APT2OSTREE_LEAN=0 stagings "$r.$name" "$APT2OSTREE" --repo "$r" "$@" \
            || { cat "$r.$name.err"; return 1; }
    }
    run unpack unpack-deb --ref p "$SCRATCH/p.deb"
    run import import --ref imp "$SCRATCH/src"
    run tar import --ref tar --tar "$SCRATCH/src.tar"
    run mkdir mkdir --ref mk tar /new/dir --parents --mode 0700
    run ln ln --ref ln mk /usr/lib /lib
    run mv mv --ref mv ln /etc /usr/etc
    run combine combine --ref all p mv
    for ref in p tar mk ln mv all; do ref_commit "$r" $ref; done
}

test_expect_success 'the commands module opens no libostree transaction in bare and bare-user repositories (unpack-deb, import, mkdir, ln, mv, combine), one in archive, and all three get the same commits' '
    for mode in bare bare-user archive; do
        new_repo $mode $mode
        write_all $mode > $mode.commits
        ostree --repo=$mode fsck > fsck.out 2>&1 || { cat fsck.out; false; }
    done
    for mode in bare bare-user; do
        for name in unpack import tar mkdir ln mv combine; do
            assert_streq "$mode $name: $(cat $mode.$name)" "$mode $name: 0"
        done
        assert_streq "$(ls $mode/tmp | grep -c "^staging-")" 0
    done
    for name in unpack import tar mkdir ln mv combine; do
        [ "$(cat archive.$name)" -ge 1 ] || fail "archive $name: no libostree transaction"
    done
    diff -u bare.commits archive.commits
    diff -u bare.commits bare-user.commits
'

test_expect_success 'what the commands module writes there are the objects libostree writes itself (with core.per-object-fsync, libostree'"'"'s transaction)' '
    for mode in bare bare-user; do
        new_repo own.$mode $mode
        new_repo lib.$mode $mode
        ostree --repo=lib.$mode config set core.per-object-fsync true
        write_all own.$mode > own.$mode.commits
        write_all lib.$mode > lib.$mode.commits
        [ "$(cat lib.$mode.unpack)" -ge 1 ] || fail "lib.$mode: no libostree transaction"
        diff -u lib.$mode.commits own.$mode.commits
        objects_stat own.$mode > stat.own
        objects_stat lib.$mode > stat.lib
        test -s stat.own
        diff -u stat.lib stat.own
    done
'

# ref_listing REPO REV PATH: mode, owner, group, path and target of PATH and
# everything under it.
ref_listing () {
    ostree --repo="$1" ls -R "$2" "$3" | awk '{ print $1, $2, $3, $5, $6, $7 }'
}

test_expect_success 'mv moves a directory by checksums: its files, subdirectories, owners and modes' '
    new_repo repo bare
    a2o --repo repo import --ref in --tar "$SCRATCH/src.tar" > /dev/null
    a2o --repo repo mkdir --ref changed in /etc/sub/new --mode 0700 > /dev/null
    a2o --repo repo mv --ref moved changed /etc /usr/etc > /dev/null
    ref_listing repo changed /etc | sed "s| /etc| /usr/etc|" > before
    ref_listing repo moved /usr/etc > after
    diff -u before after
    ostree --repo=repo ls moved /etc > out 2>&1 && false
    assert_streq "$(ostree --repo=repo cat moved /usr/etc/sub/deeper/g)" deep
    a2o --repo repo mv --ref back moved /usr/etc /etc > /dev/null
    # (moved back: the same root dirtree and dirmeta, by checksum)
    assert_streq "$(ostree --repo=repo ls -C -d back /)" "$(ostree --repo=repo ls -C -d changed /)"
    ostree --repo=repo fsck > fsck.out 2>&1 || { cat fsck.out; false; }
'

test_expect_success 'a mod in a bare repository opens no libostree transaction either' '
    command -v bwrap > /dev/null || { say "skipped: no bubblewrap"; return 0; }
    [ "$(id -u)" = 0 ] || { say "skipped: a bare repository needs root"; return 0; }
    new_repo repo bare
    a2o --repo repo import --ref in --tar "$SCRATCH/src.tar" > /dev/null
    APT2OSTREE_LEAN=0 stagings mod "$APT2OSTREE" --repo repo mod --ref m in -- \
        sh -c "echo new > /work/etc/new && ln -s conf /work/etc/conf-link && rm /work/etc/sub/f" \
        || { cat mod.err; false; }
    assert_streq "$(cat mod)" 0
    assert_streq "$(ostree --repo=repo cat m /etc/new)" new
    ostree --repo=repo ls m /etc/conf-link | grep -q -- "-> conf$"
    ostree --repo=repo ls m /etc/sub/f > out 2>&1 && false
    ostree --repo=repo fsck > fsck.out 2>&1 || { cat fsck.out; false; }
'

test_expect_success 'core.min-free-space-size is read the same way by the lean path and the commands module (one line naming the setting, no ref)' '
    new_repo full bare
    new_repo lean bare
    for r in full lean; do ostree --repo=$r config set core.min-free-space-size 1000000TB; done
    APT2OSTREE_LEAN=0 expect_failure err.full "$APT2OSTREE" --repo "$PWD/full" unpack-deb --ref p "$SCRATCH/p.deb"
    strace -f -qq -o st -e trace=openat "$APT2OSTREE" --repo "$PWD/lean" unpack-deb --ref p \
        "$SCRATCH/p.deb" > /dev/null 2> err.lean && false
    # (the lean path ran it: the commands module was not loaded)
    assert_streq "$(grep -c "apt2ostree-commands\.so\", .* = [0-9]" st)" 0
    assert_one_line err.lean
    assert_file_has_content err.lean "min-free-space"
    assert_streq "$(sed "s|/lean:|/full:|" err.lean)" "$(cat err.full)"
    assert_not_has_file full/refs/heads/p
    assert_not_has_file lean/refs/heads/p
'

test_done
