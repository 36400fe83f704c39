#!/bin/bash
# examples/composition itself, from the mirror the host's apt configuration
# names: its two lockfiles locked (bookworm minbase; the build-root with
# gcc, make, libc6-dev and man-db), the C packages compiled in the
# build-root, ldconfig's cache and mandb's index each made by the real
# program over its one subtree.  What the hermetic test-composition.sh
# checks with stand-ins, checked here on the real build: the program runs
# in the root filesystem, one edited source recompiles one package, a
# comment stops at restat, the no-op does nothing.  Skips, saying why, only
# when no mirror answers.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libarm64.sh"

require_mirror
[ "$(id -u)" = 0 ] || skip_all "stage 2 runs maintainer scripts as root in bubblewrap; run as root"
command -v ninja > /dev/null || skip_all "ninja is not installed"
command -v bwrap > /dev/null || skip_all "bubblewrap is not installed (apt-get install bubblewrap)"
[ "$(dpkg --print-architecture)" = amd64 ] || skip_all "the example's lockfiles are amd64's here"

E="$SCRATCH/composition"
cp -r "$TOP_SRCDIR/examples/composition" "$E"
export APT2OSTREE
cd "$E"
# The .debs outlive the test, in the cache the other mirror tests share.
arm64_deb_cache out

# steps FILE: the steps ninja ran, as "RULE NAME" lines, sorted.
steps () { ran "$1" | sort; }
# in_rootfs CMD...: CMD run in the composed root filesystem.
in_rootfs () { a2o --repo out/ostree run rootfs -- "$@"; }

test_expect_success 'lock both lockfiles, configure, ninja: the C programs run in the root filesystem' '
    cd "$E"
    for l in userspace build-root; do
        a2o lock $l.txt --variant minbase --arch amd64 --suite bookworm -o $l.lock.json > /dev/null
    done
    grep -q "\"name\": \"gcc\"" build-root.lock.json
    ./configure.py
    ninja -j2 > first.out || { tail -n 30 first.out; fail "ninja"; }
    assert_streq "$(in_rootfs /usr/bin/hello)" "hello, world"
    assert_streq "$(in_rootfs /usr/bin/greet you)" "greetings, you"
    # gcc'"'"'s output, not a script.
    assert_streq "$(ostree --repo=out/ostree cat rootfs /usr/bin/hello | head -c 4 | od -An -c | tr -d " ")" "177ELF"
    ! ostree --repo=out/ostree ls rootfs /usr/bin/gcc 2> /dev/null || fail "the compiler is in the root filesystem"
'

test_expect_success 'the ld.so.cache is ldconfig'"'"'s over /usr/lib and lists the libraries; the man index is mandb'"'"'s' '
    cd "$E"
    ostree --repo=out/ostree cat rootfs /etc/ld.so.cache > ld.so.cache
    ostree --repo=out/ostree cat index/ld.so.cache /etc/ld.so.cache | cmp - ld.so.cache
    ldconfig -p -C ld.so.cache > ld.so.cache.list
    grep -q "^[[:space:]]*libc.so.6 (.*) => /usr/lib/x86_64-linux-gnu/libc.so.6\$" ld.so.cache.list \
        || { cat ld.so.cache.list; fail "libc.so.6 is not in the ld.so.cache"; }
    grep -q "libz.so.1 (.*) => " ld.so.cache.list
    ostree --repo=out/ostree cat rootfs /var/cache/man/index.db > index.db
    # The index is mandb'"'"'s (a gdbm file), and holds the example'"'"'s pages.
    grep -q "say hello" index.db
    grep -q "greet someone by name" index.db
'

test_expect_success 'the no-op does nothing' '
    cd "$E"
    ninja > noop.out
    assert_streq "$(cat noop.out)" "ninja: no work to do."
'

test_expect_success 'editing hello.c compiles hello only, then the combine and what follows; neither index is made again' '
    cd "$E"
    sed -i "s/hello, world/hello, composed world/" packages/hello/hello.c
    ninja > edit.out || { cat edit.out; fail "ninja"; }
    steps edit.out > edit.steps
    cat edit.steps
    grep -x "mod package/hello" edit.steps
    grep -x "combine $(a2o ref-name combine userspace kernel package/hello package/greet)" edit.steps
    ! grep "package/greet" edit.steps || fail "greet was compiled again"
    ! grep "index/" edit.steps || fail "an index was made again"
    ! grep "^configure " edit.steps || fail "an image was configured again"
    assert_streq "$(in_rootfs /usr/bin/hello)" "hello, composed world"
'

test_expect_success 'a change inside /usr/share/man runs mandb again, not ldconfig' '
    cd "$E"
    sed -i "s/say hello/say hello to the world/" packages/hello/hello.1
    ninja > man.out || { cat man.out; fail "ninja"; }
    steps man.out > man.steps
    grep -x "mod index/man" man.steps
    ! grep -x "mod index/ld.so.cache" man.steps || fail "ldconfig ran again"
    ostree --repo=out/ostree cat rootfs /var/cache/man/index.db | grep -q "say hello to the world"
'

test_expect_success 'a comment-only edit of greet.c compiles greet again and stops there (restat): gcc gives the same program' '
    cd "$E"
    sed -i "s|^/\\* greet NAME: greet someone by name\\. \\*/\$|/* greet NAME: greet someone, by name. */|" packages/greet/greet.c
    grep -q "someone, by name" packages/greet/greet.c
    ninja > comment.out || { cat comment.out; fail "ninja"; }
    steps comment.out > comment.steps
    cat comment.steps
    grep -x "mod package/greet" comment.steps
    assert_streq "$(wc -l < comment.steps)" 3
    ninja > noop2.out
    assert_streq "$(cat noop2.out)" "ninja: no work to do."
'

test_done
