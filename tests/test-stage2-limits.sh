#!/bin/bash
# Stage 2 ends: a postinst that leaves a process in the background does not
# hold the build (the process is killed with the sandbox), and one that
# never exits is killed at --timeout with an error naming the package.
# Hermetic: real Debian bookworm .debs (tests/libbuildtest.sh) plus
# packages made here, in a repository signed and served on 127.0.0.1.
# Every build runs under "timeout", so a hang fails the test instead of
# hanging it.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

base_archive

# postinst_deb NAME BODY: a package in $D's pool whose postinst is BODY.
postinst_deb () {
    local name=$1 body=$2
    local stage="$SCRATCH/stage/$name"
    mkdir -p "$stage/usr/share/$name" "$stage/DEBIAN"
    echo "$name 1.0" > "$stage/usr/share/$name/version"
    printf '#!/bin/sh\nset -e\n%s\n' "$body" > "$stage/DEBIAN/postinst"
    ( cd "$D/pool/main" && make_deb "$stage" "$name" 1.0-2 amd64 "Priority: optional" "Depends: coreutils" ) > /dev/null
}

# A daemon-like postinst: its child keeps stdout and stderr (dpkg's pipe).
postinst_deb lingering 'if [ "$1" = configure ]; then sleep 100031 & echo "lingering configured"; fi'
# A postinst that waits for ever.
postinst_deb stuck 'if [ "$1" = configure ]; then echo "stuck waits"; sleep 100032; fi'
repo_publish "$D" bookworm amd64 archive

serve_work_dir "$SRV"
base_lock bg lingering
base_lock stuck stuck

test_expect_success 'a postinst that leaves a process in the background lets the build finish, and the process goes' '
    cd "$W"
    timeout 150 "$APT2OSTREE" build bg.lock.json --builddir bbg > out 2> err || { cat out err; fail "build failed or hung"; }
    a2o --repo bbg/ostree export bg --dir rootfs
    dpkg --root="$W/rootfs" -l lingering | grep -q "^ii  lingering"
    no_process_left "sleep 100031"
'

test_expect_success 'build --timeout ends a postinst that never exits, naming the package, and the image ref is not written' '
    cd "$W"
    expect_failure err timeout 120 "$APT2OSTREE" build stuck.lock.json --builddir bstuck --timeout 5 > out
    cat out err > all
    assert_file_has_content all "ran past the 5 s timeout while configuring stuck (1.0-2) (--timeout)"
    assert_file_has_content all "last lines of output: .*stuck waits"
    assert_not_has_file bstuck/ostree/refs/heads/stuck
    assert_file_has_content bstuck/stuck.ninja "^  limits = \$ --timeout 5$"
    no_process_left "sleep 100032"
'

test_expect_success 'the Ninja file names no limit unless one is given, so existing builds are not configured again' '
    cd "$W"
    a2o ninja bg.lock.json -o plain.ninja
    assert_not_file_has_content plain.ninja "limits ="
    assert_not_file_has_content plain.ninja "\-\-timeout"
'

test_expect_success 'configure --timeout, in one line' '
    cd "$W"
    expect_failure err timeout 120 "$APT2OSTREE" --repo bstuck/ostree configure --ref again --timeout 3 stage1/stuck
    assert_one_line err
    assert_file_has_content err "configure stage1/stuck: .* ran past the 3 s timeout while configuring stuck (1.0-2) (--timeout)"
    assert_not_has_file bstuck/ostree/refs/heads/again
    no_process_left "sleep 100032"
'

test_done
