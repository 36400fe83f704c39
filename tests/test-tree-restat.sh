#!/bin/bash
# "ninja --rules": one rule per tree command for a project's own Ninja
# file, each with restat = 1, and each command leaves its output ref file
# alone when the tree it would write is the one the ref holds.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/mod-lib.sh"

command -v ninja > /dev/null || skip_all "ninja is not installed"
command -v bwrap > /dev/null || skip_all "bubblewrap is not installed (apt-get install bubblewrap)"

P="$SCRATCH/project"
mkdir -p "$P/src" "$P/extra/extra"
cd "$P"
a2o --repo repo init
make_base_tar base.tar
echo more > extra/extra/file
tar -C extra -cf extra.tar extra
echo one > src/file
a2o ninja --rules -o rules.ninja

# One edge per command, each reading only the imported trees base and
# extra, so that every one of them can be made to run again at once.
OUTS="combine overlay subtree graft mkdir ln mv rm import_dir mod"
cat > build.ninja <<'NINJA'
repo = repo
include rules.ninja
build repo/refs/heads/base: a2o_import base.tar
  ref = base
build repo/refs/heads/extra: a2o_import extra.tar
  ref = extra
build repo/refs/heads/out/combine: a2o_combine repo/refs/heads/base repo/refs/heads/extra
  ref = out/combine
  trees = base extra
build repo/refs/heads/out/overlay: a2o_overlay repo/refs/heads/base repo/refs/heads/extra
  ref = out/overlay
  base = base
  trees = extra
build repo/refs/heads/out/subtree: a2o_subtree repo/refs/heads/base
  ref = out/subtree
  tree = base
  path = /etc
build repo/refs/heads/out/graft: a2o_graft repo/refs/heads/base repo/refs/heads/extra
  ref = out/graft
  tree = base
  path = /grafted
  from = extra
build repo/refs/heads/out/mkdir: a2o_mkdir repo/refs/heads/base
  ref = out/mkdir
  tree = base
  paths = /newdir
  flags = --mode 0700
build repo/refs/heads/out/ln: a2o_ln repo/refs/heads/base
  ref = out/ln
  tree = base
  target = hello
  path = /etc/hello-link
build repo/refs/heads/out/mv: a2o_mv repo/refs/heads/base
  ref = out/mv
  tree = base
  src = /etc/motd
  dst = /etc/motd.moved
build repo/refs/heads/out/rm: a2o_rm repo/refs/heads/base
  ref = out/rm
  tree = base
  paths = /data/dir
  flags = -r
build repo/refs/heads/out/import_dir: a2o_import_dir src/file repo/refs/heads/base
  ref = out/import_dir
  dir = src
build repo/refs/heads/out/mod: a2o_mod repo/refs/heads/base
  ref = out/mod
  tree = base
  chroot = --chroot
  capture = --capture-subdir /out
  cmd = sh -c "mkdir /out && cat /etc/hello /etc/motd > /out/both"
NINJA

# commits: "REF COMMIT" for each output ref.
commits () {
    local o
    for o in $OUTS; do echo "$o $(cat "repo/refs/heads/out/$o")"; done
}

test_expect_success 'the rules file has one rule per tree command, each with restat = 1' '
    cd "$P"
    for r in init combine overlay subtree graft mkdir ln mv rm import import_dir mod; do
        assert_file_has_content rules.ninja "^rule a2o_$r\$"
    done
    assert_streq "$(grep -c "^rule " rules.ninja)" "$(grep -c "^  restat = 1\$" rules.ninja)"
    a2o ninja --rules -o again.ninja
    cmp rules.ninja again.ninja
'

test_expect_success 'a project'"'"'s Ninja file built with the rules gives each command'"'"'s tree; the no-op does nothing' '
    cd "$P"
    ninja > first.out || { cat first.out; fail "ninja"; }
    assert_streq "$(ostree --repo=repo cat out/combine /extra/file)" "more"
    assert_streq "$(ostree --repo=repo cat out/overlay /extra/file)" "more"
    assert_streq "$(ostree --repo=repo cat out/subtree /hello)" "hello"
    assert_streq "$(ostree --repo=repo cat out/graft /grafted/extra/file)" "more"
    assert_streq "$(mod_ls repo out/mkdir /newdir)" "d00700 0 0"
    ostree --repo=repo ls out/ln /etc/hello-link | grep -q -- "-> hello\$"
    assert_streq "$(ostree --repo=repo cat out/mv /etc/motd.moved)" "motd"
    ! ostree --repo=repo ls out/rm /data/dir > /dev/null 2>&1 || fail "/data/dir is still in out/rm"
    assert_streq "$(ostree --repo=repo cat out/import_dir /file)" "one"
    assert_streq "$(ostree --repo=repo cat out/mod /both | tr "\n" " ")" "hello motd "
    ninja > noop.out
    assert_file_has_content noop.out "^ninja: no work to do"
'

test_expect_success 'every command run again over the same trees leaves its ref file alone (mtime and commit)' '
    cd "$P"
    commits > before
    # Forget what ninja knows, make every output older than base and extra,
    # and base.tar newer than base: every edge runs again.
    rm -f .ninja_log
    for o in $OUTS; do touch -d @1000000000 "repo/refs/heads/out/$o"; done
    touch -d @1000000100 repo/refs/heads/base repo/refs/heads/extra
    touch base.tar
    ninja > again.out || { cat again.out; fail "ninja"; }
    for o in $OUTS; do
        ran again.out | grep -q " out/$o\$" || fail "$o did not run again"
        assert_streq "$(stat -c %Y "repo/refs/heads/out/$o")" 1000000000
    done
    assert_streq "$(stat -c %Y repo/refs/heads/base)" 1000000100
    commits > after
    cmp before after
'

test_expect_success 'a changed input moves the refs that depend on it, and only those' '
    cd "$P"
    # Every input and output of the same age: nothing is out of date,
    # whatever ninja version reads its log.
    touch -d @1000000000 base.tar extra.tar src/file repo/refs/heads/base repo/refs/heads/extra
    for o in $OUTS; do touch -d @1000000000 "repo/refs/heads/out/$o"; done
    ninja > none.out
    assert_file_has_content none.out "^ninja: no work to do"
    echo changed > extra/extra/file
    tar -C extra -cf extra.tar extra
    ninja > changed.out || { cat changed.out; fail "ninja"; }
    ran changed.out | sort > ran.list
    assert_streq "$(cat ran.list | tr "\n" " ")" "combine out/combine graft out/graft import extra overlay out/overlay "
    for o in combine graft overlay; do
        [ "$(stat -c %Y "repo/refs/heads/out/$o")" != 1000000000 ] || fail "out/$o was not rewritten"
    done
    assert_streq "$(ostree --repo=repo cat out/combine /extra/file)" "changed"
'

test_expect_success 'mod --capture-subdir: an input change outside what it captures leaves OUT'"'"'s ref file alone; one inside moves it' '
    cd "$P"
    mkdir -p in/src && echo "int x;" > in/src/a.c && echo unrelated > in/other
    a2o --repo repo import --ref capin in > /dev/null
    m () { a2o --repo repo mod --ref cap capin --capture-subdir /dest -- sh -c "mkdir /work/dest && cp /work/src/a.c /work/dest/a.o"; }
    m > c1
    touch -d @1000000000 repo/refs/heads/cap
    echo "other input" > in/other
    a2o --repo repo import --ref capin in > /dev/null
    m > c2
    assert_streq "$(cat c2)" "$(cat c1)"
    assert_streq "$(stat -c %Y repo/refs/heads/cap)" 1000000000
    echo "int y;" > in/src/a.c
    a2o --repo repo import --ref capin in > /dev/null
    m > c3
    [ "$(cat c3)" != "$(cat c1)" ] || fail "the commit did not change"
    [ "$(stat -c %Y repo/refs/heads/cap)" != 1000000000 ] || fail "the ref file was not rewritten"
'

test_expect_success 'ref-name: derived/OPERATION- and the first 20 hex digits of the SHA-256 of the NUL-ended words; order matters' '
    a2o ref-name combine base extra > name
    assert_streq "$(cat name)" "derived/combine-$(printf "combine\0base\0extra\0" | sha256sum | cut -c1-20)"
    [ "$(a2o ref-name combine extra base)" != "$(cat name)" ] || fail "the order of the inputs is not in the name"
    assert_streq "$(a2o ref-name mod base --chroot -- true)" "derived/mod-$(printf "mod\0base\0--chroot\0--\0true\0" | sha256sum | cut -c1-20)"
    expect_failure err a2o ref-name "a/b" x
    assert_one_line err
    assert_file_has_content err "\"a/b\" cannot be part of a ref name"
'

test_expect_success 'prune --graph deletes the derived refs the Ninja file no longer writes, and keeps what it names and every other ref' '
    cd "$P"
    kept=$(a2o ref-name combine base extra)
    gone=$(a2o ref-name combine extra base)
    cp build.ninja graph.ninja
    printf "build repo/refs/heads/%s: a2o_combine repo/refs/heads/base repo/refs/heads/extra\n  ref = %s\n  trees = base extra\n" "$kept" "$kept" >> graph.ninja
    ninja -f graph.ninja > graph.out || { cat graph.out; fail "ninja"; }
    a2o --repo repo combine --ref "$gone" extra base > /dev/null
    a2o --repo repo prune --graph graph.ninja > pruned
    assert_file_has_content pruned "^$gone\$"
    assert_not_file_has_content pruned "^$kept\$"
    assert_not_has_file "repo/refs/heads/$gone"
    assert_has_file "repo/refs/heads/$kept"
    for o in $OUTS; do assert_has_file "repo/refs/heads/out/$o"; done
    assert_has_file repo/refs/heads/base
    ostree --repo=repo fsck > fsck.out 2>&1 || { cat fsck.out; fail "fsck"; }
'

test_expect_success 'prune --graph with a Ninja file ninja cannot read is a one-line error naming it, and deletes nothing' '
    cd "$P"
    a2o --repo repo combine --ref derived/combine-left base extra > /dev/null
    ls -R repo/refs > refs.before
    echo "build x: no_such_rule" > broken.ninja
    expect_failure err a2o --repo repo prune --graph broken.ninja
    assert_one_line err
    assert_file_has_content err "broken.ninja: cannot list its targets"
    ls -R repo/refs > refs.after
    cmp refs.before refs.after
'

test_done
