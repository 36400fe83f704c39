#!/bin/bash
# The command line: help, unknown commands, the repository's location.
. "$TOP_SRCDIR/tests/libtest.sh"

test_expect_success 'apt2ostree --help lists the commands' '
    a2o --help > out
    assert_file_has_content out "^Usage: apt2ostree \[--repo DIR\] COMMAND"
    assert_file_has_content out "^  init "
'

test_expect_success 'every command answers --help with its usage' '
    for c in $(a2o --help | sed -n "s/^  \([a-z-]*\)  .*/\1/p"); do
        a2o $c --help > out
        assert_file_has_content out "apt2ostree $c"
    done
'

test_expect_success 'an unknown command is a one-line error and exit status 2' '
    expect_failure err a2o frobnicate
    assert_one_line err
    assert_file_has_content err "unknown command \"frobnicate\""
'

test_expect_success 'init creates a bare repository as root, bare-user otherwise' '
    a2o --repo r init
    if [ "$(id -u)" = 0 ]; then m=bare; else m=bare-user; fi
    assert_file_has_content r/config "^mode=$m\$"
'

test_expect_success 'init --mode archive, and init again is harmless' '
    a2o --repo r init --mode archive
    a2o --repo r init --mode archive
    assert_file_has_content r/config "^mode=archive"
'

test_expect_success 'init refuses an existing repository of another mode' '
    a2o --repo r init --mode archive
    expect_failure err a2o --repo r init --mode bare-user
    assert_one_line err
    assert_file_has_content err "another mode"
'

test_expect_success 'init finishes a repository whose creation was killed before objects/ existed' '
    ostree --repo=r init --mode=archive
    rm -rf r/objects r/tmp r/refs r/state r/extensions
    a2o --repo r init --mode archive
    ostree --repo=r fsck
    mkdir only-config && printf "[core]\nrepo_version=1\nmode=archive\n" > only-config/config
    a2o --repo only-config init --mode archive
    assert_has_file only-config/objects
    ostree --repo=only-config fsck
'

test_expect_success 'the repository comes from --repo, else APT2OSTREE_REPO, else build/ostree' '
    a2o init
    assert_has_file build/ostree/config
    APT2OSTREE_REPO=envrepo a2o init
    assert_has_file envrepo/config
    a2o init --repo after
    assert_has_file after/config
'

test_expect_success 'an unknown mode is a one-line error' '
    expect_failure err a2o --repo r init --mode fancy
    assert_one_line err
    assert_file_has_content err "unknown repository mode \"fancy\""
'

test_expect_success 'an empty option value or operand is a usage error naming it, for every command, and writes nothing' '
    a2o --repo r init
    find r | sort > before
    # COMMAND|ARGS (with one "" in them)|what the error names
    while IFS="|" read -r cmd args names; do
        set +e
        eval a2o --repo r $cmd $args 2> err; rc=$?
        set -e
        [ "$rc" = 2 ] || fail "$cmd $args: exit status $rc, not 2"
        assert_one_line err
        assert_file_has_content err "^apt2ostree $cmd: error: $names is the empty string"
    done <<LIST
lock|""|operand 1
lock|--output "" p.txt|--output
build|""|operand 1
ninja|l.json -o ""|--output
unpack-deb|--ref a ""|operand 1
unpack-deb|--batch ""|--batch
unpack-deb|--cache "" --ref a x.deb|--cache
export|x --dir ""|--dir
import|--ref "" dir|--ref
combine|--ref o a ""|operand 2
rm|--ref o in ""|operand 2
mkdir|--ref o in a --mode ""|--mode
mod|--ref o in --workdir "" -- true|--workdir
stage1|--ref o --arch amd64 --packages-from ""|--packages-from
LIST
    expect_failure err a2o --repo "" init
    assert_file_has_content err "\-\-repo is the empty string"
    find r | sort > after
    diff before after
'

test_expect_success 'an empty argument of the command mod runs is that command'"'"'s own' '
    a2o --repo r init
    expect_failure err a2o --repo r mod --ref o missing -- sh -c ""
    assert_not_file_has_content err "empty string"
    assert_file_has_content err "missing"
'

test_expect_success 'build, ninja and diff given a package list say it is one and to run lock first, in one line, writing nothing' '
    printf "# the image\n\n  dpkg\nopenssh-server\n" > packages.txt
    for cmd in "build packages.txt --builddir b" "ninja packages.txt -o b.ninja --builddir b" \
               "diff packages.txt packages.txt"; do
        expect_failure err a2o $cmd
        assert_one_line err
        assert_file_has_content err "packages.txt looks like a package list, not a lockfile: run \"apt2ostree lock packages.txt\" first"
    done
    assert_not_has_file b
    assert_not_has_file b.ninja
    # Broken JSON is still a JSON error, with its line and column.
    printf "{\"format\": 1,\n" > broken.lock.json
    expect_failure err a2o build broken.lock.json --builddir b
    assert_file_has_content err "broken.lock.json:1:.*[Pp]arse error"
'

test_expect_success 'make install with another prefix: the installed program finds its module and keyrings there, a copy alone says where it looked' '
    : "${TOP_BUILDDIR:?}"
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP_BUILDDIR" install \
        DESTDIR="$PWD/dest" prefix=/opt/a2o > install.log 2>&1 || { cat install.log; fail "make install"; }
    bin=dest/opt/a2o/bin/apt2ostree
    assert_has_file dest/opt/a2o/lib/apt2ostree/apt2ostree-commands.so
    "$bin" --repo r init
    assert_has_file r/config
    "$bin" lock --help > out
    assert_file_has_content out "apt2ostree lock"
    # A source with no Signed-By: its InRelease is checked against the
    # installed keyrings (not read here, they are), not refused for want of them.
    mkdir -p mirror/dists/bookworm && echo not-signed > mirror/dists/bookworm/InRelease
    echo "deb file://$PWD/mirror bookworm main" > sources.list
    echo dpkg > packages.txt
    expect_failure err "$bin" lock packages.txt --sources sources.list --cache cache
    assert_not_file_has_content err "keyrings directory"
    assert_file_has_content err "InRelease"
    mkdir alone && cp "$bin" alone/
    expect_failure err alone/apt2ostree --repo r2 init
    assert_one_line err
    assert_file_has_content err "cannot find its commands module apt2ostree-commands.so (looked in $PWD/alone, .*\"make install\""
    assert_not_has_file r2
'

test_expect_success 'examples/subninja/generate.sh runs the program built in the source tree, else says how to get one' '
    mkdir -p tree/examples
    cp -r "$TOP_SRCDIR/examples/subninja" tree/examples/
    expect_failure err env -u APT2OSTREE PATH=/usr/bin:/bin tree/examples/subninja/generate.sh
    assert_one_line err
    assert_file_has_content err "generate.sh: no apt2ostree: build it (make, in the top directory of its source), install it"
    ln -s "$(realpath "$APT2OSTREE")" tree/apt2ostree
    expect_failure err env -u APT2OSTREE PATH=/usr/bin:/bin tree/examples/subninja/generate.sh
    assert_file_has_content err "^apt2ostree ninja: error: .*base.lock.json"
'

test_done
