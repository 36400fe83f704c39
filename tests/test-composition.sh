#!/bin/bash
# examples/composition: the article's build.  A root filesystem composed
# from trees in a project's own Ninja file (the rules of "ninja --rules",
# derived ref names): an image from a lockfile, a kernel tarball, two
# packages compiled in a build-root tree with mod --capture-subdir, a
# container tree, and two caches each made by a mod over the one subtree
# it reads, laid over it.  Its claims, checked from what ninja ran.  Built
# hermetically: real Debian .debs from a repository signed and served here;
# the userspace and the build-root come from one lockfile, to build one
# image only, and the packages are the stand-ins of
# tests/composition-packages, which "compile" with sed: that build-root
# has no gcc, make or mandb (the example's README says so;
# test-composition-mirror.sh builds the example itself).
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
command -v bwrap > /dev/null || skip_all "bubblewrap is not installed (apt-get install bubblewrap)"

base_archive
repo_publish "$D" bookworm amd64 archive
repo_serve "$SRV"

# The example as a user has it, with a hermetic lockfile; apt2ostree found
# through $APT2OSTREE, as configure.py allows.
P="$SCRATCH/project"
mkdir -p "$P"
cp -r "$TOP_SRCDIR/examples/composition" "$P/"
E="$P/composition"
export APT2OSTREE
cd "$E"
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
printf '%s\n' $BASE_REQUEST > userspace.txt
cp -r "$TOP_SRCDIR/tests/composition-packages" stand-ins
a2o lock userspace.txt --sources sources.list --variant custom --merged-usr yes --cache out/lists \
    > /dev/null

# Proof that ninja -j2 compiles both packages at once: while the file
# out/stamps/meet exists, each build says it started, waits for the other
# to start (a minute at most) and notes that it did.  Run one at a time,
# neither would see the other.
STAMPS="$E/out/stamps"
mkdir -p "$STAMPS"
for p in hello greet; do
    other=$([ $p = hello ] && echo greet || echo hello)
    sed -i "s|^set -e\$|&\nif [ -e /stamps/meet ]; then touch /stamps/$p.start; i=0; while [ ! -e /stamps/$other.start ] \&\& [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done; [ -e /stamps/$other.start ] \&\& touch /stamps/$p.saw-$other; fi|" \
        "stand-ins/$p/build"
done
./configure.py --build-root userspace.lock.json --package-dir stand-ins --compile-bind "$STAMPS:/stamps" \
    || { echo "Bail out! configure.py failed"; exit 1; }

# steps FILE: the steps ninja ran, as "RULE NAME" lines, sorted.
steps () { ran "$1" | sort; }

test_expect_success 'ninja -j2 builds the root filesystem from every tree, compiling the two packages at once' '
    cd "$E"
    touch "$STAMPS/meet"
    ninja -j2 > first.out || { tail -n 30 first.out; fail "ninja"; }
    rm "$STAMPS/meet"
    assert_has_file "$STAMPS/hello.saw-greet"
    assert_has_file "$STAMPS/greet.saw-hello"
    r () { ostree --repo=out/ostree cat rootfs "$1"; }
    assert_streq "$(r /usr/bin/hello | tr "\n" " ")" "#!/bin/sh echo \"hello, world\" "
    assert_streq "$(r /usr/lib/modules/6.1.0-toy/vmlinuz)" "a toy kernel image, built elsewhere"
    assert_streq "$(r /var/lib/machines/web/srv/www/index.html)" "<p>served from a container</p>"
    r /var/lib/machines/web/usr/bin/dpkg > /dev/null
    assert_streq "$(r /var/cache/man-index/whatis | tr "\n" " ")" "greet (man1) - greet someone by name hello (man1) - say hello "
    # The real ldconfig (the build-root'"'"'s libc-bin) over /usr/lib alone.
    r /etc/ld.so.cache > ld.so.cache
    ostree --repo=out/ostree cat index/ld.so.cache /etc/ld.so.cache | cmp - ld.so.cache
    ldconfig -p -C ld.so.cache > ld.so.cache.list
    grep -q "^[[:space:]]*libc.so.6 (.*) => /usr/lib/x86_64-linux-gnu/libc.so.6\$" ld.so.cache.list \
        || { cat ld.so.cache.list; fail "libc.so.6 is not in the ld.so.cache"; }
    r /usr/bin/dpkg > /dev/null
'

test_expect_success 'the no-op does nothing; every derived ref is the name ref-name gives, and prune --graph keeps them all' '
    cd "$E"
    ninja > noop.out
    assert_streq "$(cat noop.out)" "ninja: no work to do."
    src=$(a2o ref-name import stand-ins/hello)
    assert_has_file "out/ostree/refs/heads/$src"
    assert_has_file "out/ostree/refs/heads/$(a2o ref-name graft userspace /src "$src")"
    a2o --repo out/ostree prune --graph build.ninja --dry-run > prune.out
    assert_streq "$(cat prune.out)" ""
'

test_expect_success 'editing one source compiles that package only, then runs the combine and what follows, and not the man index' '
    cd "$E"
    before=$(cat out/ostree/refs/heads/rootfs)
    echo "$before" > "$SCRATCH/before"
    sed -i "s/hello, world/hello, composed world/" stand-ins/hello/hello.in
    ninja > edit.out || { cat edit.out; fail "ninja"; }
    steps edit.out > edit.steps
    cat edit.steps
    grep -x "mod package/hello" edit.steps
    grep -x "combine $(a2o ref-name combine userspace kernel package/hello package/greet)" edit.steps
    ! grep -x "combine container/web" edit.steps || fail "the container was made again"
    ! grep "package/greet" edit.steps || fail "greet was compiled again"
    ! grep "index/" edit.steps || fail "an index was made again"
    ! grep "^configure " edit.steps || fail "the image was configured again"
    # import, graft into the build-root, compile; combine, graft the
    # container, the two subtrees (unchanged: their caches stop there), the
    # two caches laid over it.
    assert_streq "$(sed "s/ .*//" edit.steps | uniq -c | tr -s " " | tr "\n" ";")" " 1 combine; 2 graft; 1 import; 1 mkdir; 1 mod; 1 overlay; 2 subtree;"
    assert_streq "$(ostree --repo=out/ostree cat rootfs /usr/bin/hello | tail -n 1)" "echo \"hello, composed world\""
'

test_expect_success 'apt2ostree diff --files of the root filesystem before and after: the change a CI job would post' '
    cd "$E"
    a2o --repo out/ostree diff --files "$(cat "$SCRATCH/before")" rootfs > diff.out
    cat diff.out
    assert_file_has_content diff.out "/usr/bin/hello"
    assert_not_file_has_content diff.out "/usr/bin/greet"
'

test_expect_success 'a change inside /usr/share/man makes the man index again; the library index stays' '
    cd "$E"
    sed -i "s/say hello/say hello to the world/" stand-ins/hello/hello.1
    ninja > man.out || { cat man.out; fail "ninja"; }
    steps man.out > man.steps
    grep -x "mod index/man" man.steps
    ! grep -x "mod index/ld.so.cache" man.steps || fail "the library index was made again"
    ostree --repo=out/ostree cat rootfs /var/cache/man-index/whatis | grep -x "hello (man1) - say hello to the world"
'

test_expect_success 'a comment-only edit compiles the package again and stops there: the same tree, the same ref (restat)' '
    cd "$E"
    sed -i "s/^# greet NAME: greet someone by name\\.\$/# greet NAME: greet someone, by name./" stand-ins/greet/greet.in
    grep -q "someone, by name" stand-ins/greet/greet.in
    ninja > comment.out || { cat comment.out; fail "ninja"; }
    steps comment.out > comment.steps
    cat comment.steps
    grep -x "mod package/greet" comment.steps
    assert_streq "$(wc -l < comment.steps)" 3
    ! grep "^combine " comment.steps || fail "the combine ran again"
    ninja > noop2.out
    assert_streq "$(cat noop2.out)" "ninja: no work to do."
'

test_expect_success 'a broken lockfile: configure.py fails with apt2ostree'"'"'s one-line error, no traceback' '
    cp -r "$TOP_SRCDIR/examples/composition" "$SCRATCH/broken"
    cd "$SCRATCH/broken"
    echo "{not json" > build-root.lock.json
    ! ./configure.py --userspace build-root.lock.json > out.txt 2> err.txt || fail "configure.py succeeded"
    cat err.txt
    assert_streq "$(wc -l < err.txt)" 1
    assert_file_has_content err.txt "build-root.lock.json"
    assert_not_file_has_content err.txt "Traceback"
'
test_done
