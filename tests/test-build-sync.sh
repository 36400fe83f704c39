#!/bin/bash
# apt2ostree build makes its writes durable once, at its end: its steps
# skip their syncs while its marker (REPO/apt2ostree-unsynced/BOOT_ID.PID)
# is on disk and named in their environment.  Plain ninja over the same
# file syncs in every step.  A marker left by a killed build of this boot
# is synced and removed; one of another boot (the machine stopped) has
# every tree written since its time removed and built again.  Hermetic:
# real bookworm .debs from a repository served on 127.0.0.1.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

base_archive
test_deb hello 1.0 "" "Depends: coreutils"
test_deb failing 1.0 'echo "failing: cannot frobnicate the widget" >&2; exit 3'
repo_publish "$D" bookworm amd64 archive
serve_work_dir "$SRV"

MARKERS=build/ostree/apt2ostree-unsynced
BOOT=$(cat /proc/sys/kernel/random/boot_id)

# syncfs_count LOG: the syncfs calls an strace log shows.
syncfs_count () {
    grep -c ' syncfs(' "$1" || true
}

# ref_mtimes: every ref of the build's repository with its mtime.
ref_mtimes () {
    (cd build/ostree/refs/heads && find . -type f -printf '%p %T@\n' | sort)
}

test_expect_success 'build: its steps are given its marker, the first that writes makes it, and they skip their syncs; one sync at the end, the marker gone after' '
    cd "$W"
    base_lock one hello
    # ninja as the build runs it, telling what its steps will be given
    cat > ninja-probe <<EOF
#!/bin/sh
echo "env: \$APT2OSTREE_UNSYNCED" > "$W/probe"
ls -A "$W/$MARKERS" >> "$W/probe"
exec ninja "\$@"
EOF
    chmod +x ninja-probe
    strace -f -qq -e trace=syncfs -e signal=none -o build.strace "$APT2OSTREE" build one.lock.json --ninja "$W/ninja-probe" > /dev/null
    cat probe
    name=$(sed -n "s/^env: //p" probe)
    case $name in "$BOOT".[0-9]*) ;; *) fail "the steps were given \"$name\", not a marker of this boot" ;; esac
    # (none made before a step writes)
    [ "$(wc -l < probe)" = 1 ]
    n=$(grep -c "\"sha256\": " one.lock.json)
    # a step of each package, stage 1 and stage 2 ran; the build synced
    # at its end (and its cache record after)
    [ "$(ls build/ostree/refs/heads/deb | wc -l)" -ge "$n" ]
    syncs=$(syncfs_count build.strace)
    echo "syncfs calls: $syncs for $n packages"
    [ "$syncs" -ge 1 ] && [ "$syncs" -le 4 ]
    [ -z "$(ls -A $MARKERS)" ]
    a2o --repo build/ostree export one --dir img
    assert_streq "$(cat img/usr/share/hello/version)" "hello 1.0"
    ostree --repo=build/ostree fsck > fsck.out 2>&1 || { cat fsck.out; false; }
'

test_expect_success 'a build with nothing to do makes no marker and syncs nothing' '
    cd "$W"
    strace -f -qq -e trace=syncfs,fsync,fdatasync -e signal=none -o noop.strace "$APT2OSTREE" build one.lock.json > noop.out
    cat noop.strace
    [ ! -s noop.strace ]
    [ -z "$(ls -A $MARKERS)" ]
'

test_expect_success 'plain ninja over the generated file: every step syncs as before (no marker named)' '
    cd "$W"
    a2o ninja one.lock.json -o one.ninja > /dev/null
    rm -rf build/ostree build/.ninja_log
    strace -f -qq -e trace=syncfs -e signal=none -o ninja.strace ninja -f one.ninja one > /dev/null
    n=$(grep -c "\"sha256\": " one.lock.json)
    syncs=$(syncfs_count ninja.strace)
    echo "syncfs calls: $syncs for $n packages"
    [ "$syncs" -ge $((2 * n)) ]
    [ ! -e $MARKERS ] || [ -z "$(ls -A $MARKERS)" ]
'

test_expect_success 'a build that fails ends its marker too' '
    cd "$W"
    base_lock bad hello failing
    expect_failure err a2o build bad.lock.json
    [ -z "$(ls -A $MARKERS)" ]
'

test_expect_success 'a build killed in this boot left its marker: the next build syncs and removes it, and keeps every tree' '
    cd "$W"
    a2o build one.lock.json > /dev/null
    ref_mtimes > before
    sh -c "exit 0" & dead=$!; wait $dead
    : > "$MARKERS/$BOOT.$dead"
    a2o build one.lock.json > again.out 2> again.err
    cat again.err
    [ ! -e "$MARKERS/$BOOT.$dead" ]
    assert_not_file_has_content again.err "machine stopped"
    ref_mtimes > after
    diff -u before after
'

test_expect_success 'a marker of another boot: every tree written from a minute before it on is removed (one line says so) and built again, the same; older trees are kept' '
    cd "$W"
    commit=$(cat build/ostree/refs/heads/one)
    # every tree but the image was written long before the stop; the
    # image and a tree of the user'"'"'s, just before it
    find build/ostree/refs/heads -type f ! -path "*/heads/one" -exec touch -d "-1 hour" {} +
    a2o --repo build/ostree mkdir --ref window one /late-dir > /dev/null
    window=$(cat build/ostree/refs/heads/window)
    ref_mtimes | grep -v -e "^./one " -e "^./window " > before
    : > "$MARKERS/00000000-0000-0000-0000-000000000000.4242"
    a2o build one.lock.json > rec.out 2> rec.err
    cat rec.err
    assert_file_has_content rec.err "^apt2ostree: .*build/ostree: the machine stopped during a build begun at .*, before its writes were on disk: its 2 trees are removed"
    [ ! -e build/ostree/refs/heads/window ]
    ! ostree --repo=build/ostree show "$window" > /dev/null 2>&1
    assert_streq "$(cat build/ostree/refs/heads/one)" "$commit"
    ref_mtimes | grep -v -e "^./one " > after
    diff -u before after
    [ -z "$(ls -A $MARKERS)" ]
    ostree --repo=build/ostree fsck > fsck.out 2>&1 || { cat fsck.out; false; }
'

test_expect_success 'while a marker of another boot is there, nothing writes to the repository but build, which says so: plain ninja and the tree commands fail in one line saying what to run' '
    cd "$W"
    commit=$(cat build/ostree/refs/heads/one)
    rm build/ostree/refs/heads/one
    : > "$MARKERS/00000000-0000-0000-0000-000000000000.4243"
    # (ninja prints a failed step'"'"'s output on its own standard output)
    if ninja -f one.ninja one > err 2>&1; then fail "ninja built on the untrusted trees"; fi
    assert_file_has_content err "build/ostree: the machine stopped during a build (apt2ostree-unsynced/00000000-0000-0000-0000-000000000000.4243) before its writes were on disk, so trees it wrote may be damaged; run .apt2ostree build. on one of the repository.s lockfiles first"
    expect_failure err2 a2o --repo build/ostree mkdir --ref window2 stage1/one /x
    assert_file_has_content err2 "the machine stopped during a build"
    [ ! -e build/ostree/refs/heads/one ] && [ ! -e build/ostree/refs/heads/window2 ]
    a2o build one.lock.json > rec2.out 2> rec2.err
    assert_file_has_content rec2.err "the machine stopped during a build"
    assert_streq "$(cat build/ostree/refs/heads/one)" "$commit"
    [ -z "$(ls -A $MARKERS)" ]
'

test_expect_success 'names in the marker directory that are no marker are left alone' '
    cd "$W"
    : > "$MARKERS/not-a-marker"
    : > "$MARKERS/00000000-0000-0000-0000-000000000000.x1"
    a2o build one.lock.json > odd.out 2> odd.err
    assert_not_file_has_content odd.err "machine stopped"
    [ -e "$MARKERS/not-a-marker" ]
    rm "$MARKERS/not-a-marker" "$MARKERS/00000000-0000-0000-0000-000000000000.x1"
'

test_done
