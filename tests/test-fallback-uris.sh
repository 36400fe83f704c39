#!/bin/bash
# A lockfile keeps building after the archive drops the version it pins: a
# "primary" mirror that has moved on and a "snapshot" that still has the
# locked .deb, each on its own port, given as two URIs of one source; the
# old lockfile builds through the snapshot with no re-lock.  A .deb that is
# different on the snapshot is an error naming that URI, and nothing of it
# is kept; with no URI left, the error says how to add one.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

P="$SCRATCH/primary"
base_repo "$P/debian"
repo_key archive
mkdir -p "$SCRATCH/stage/hello/usr/share/hello"
echo "hello 1.0" > "$SCRATCH/stage/hello/usr/share/hello/version"
( cd "$P/debian/pool/main" && make_deb "$SCRATCH/stage/hello" hello 1.0 amd64 "Priority: optional" ) > /dev/null
repo_publish "$P/debian" bookworm amd64 archive
S="$SCRATCH/snapshot"
cp -a "$P" "$S"
repo_serve "$P"
PRIMARY=$HTTPD_URL/debian
PRIMARY_LOG=$HTTPD_LOG
repo_serve "$S"
SNAPSHOT=$HTTPD_URL/debian
SNAPSHOT_LOG=$HTTPD_LOG

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
repo_sources_line "$PRIMARY" bookworm archive > sources.list
printf '%s\n' $BASE_REQUEST hello > img.txt
a2o lock img.txt --sources sources.list --variant custom --merged-usr yes --cache cache \
    -o img.lock.json > /dev/null

# The primary moves on: hello 1.0 is gone, 1.1 is there.
rm "$P/debian/pool/main/hello_1.0_amd64.deb"
echo "hello 1.1" > "$SCRATCH/stage/hello/usr/share/hello/version"
( cd "$P/debian/pool/main" && make_deb "$SCRATCH/stage/hello" hello 1.1 amd64 "Priority: optional" ) > /dev/null
repo_publish "$P/debian" bookworm amd64 archive

test_expect_success 'with only the primary, the build fails naming the .deb and saying how to add a fallback URI' '
    cd "$W"
    ! a2o build img.lock.json --builddir b0 > err 2>&1 || fail "the build succeeded"   # ninja prints the step'"'"'s error
    assert_file_has_content err "hello_1.0_amd64.deb: not found"
    assert_file_has_content err "add a fallback URI that still serves it"
    test ! -e b0/ostree/refs/heads/img
'

test_expect_success 'the old lockfile builds through the snapshot given as a second URI, without re-locking' '
    cd "$W"
    cp img.lock.json before.json
    : > "$SNAPSHOT_LOG"
    a2o build img.lock.json --builddir b1 --mirror bookworm=$PRIMARY --mirror bookworm=$SNAPSHOT > b1.out
    cmp before.json img.lock.json
    assert_file_has_content "$SNAPSHOT_LOG" "hello_1.0_amd64.deb"
    a2o --repo b1/ostree export img --dir img
    assert_streq "$(cat img/usr/share/hello/version)" "hello 1.0"
'

test_expect_success 'a deb822 source with both URIs does the same' '
    cd "$W"
    printf "Types: deb\nURIs: %s %s\nSuites: bookworm\nComponents: main\nSigned-By: %s\n" \
        "$PRIMARY" "$SNAPSHOT" "$SCRATCH/keys/archive.gpg" > two.sources
    a2o build img.lock.json --builddir b2 --sources two.sources > /dev/null
    assert_streq "$(cat b2/ostree/refs/heads/img)" "$(cat b1/ostree/refs/heads/img)"
'

test_expect_success 'a different .deb on the snapshot is an error naming that URI; nothing of it is kept' '
    cd "$W"
    f="$S/debian/pool/main/hello_1.0_amd64.deb"
    printf "X" | dd of="$f" bs=1 seek=100 conv=notrunc 2>/dev/null
    ! a2o build img.lock.json --builddir b3 --mirror bookworm=$PRIMARY --mirror bookworm=$SNAPSHOT > err 2>&1 \
        || fail "the build succeeded"
    assert_file_has_content err "$SNAPSHOT/pool/main/hello_1.0_amd64.deb: sha256 mismatch"
    # (ninja makes the directories of the ref an edge writes before it runs)
    ! find b3/ostree/refs/heads/deb/hello -type f 2>/dev/null | grep . || fail "a ref of hello is written"
    ! ls b3/cache/debs 2>/dev/null | grep -q "$(grep -o "\"name\": \"hello\".*" img.lock.json | sed -n "s/.*\"sha256\": \"\([0-9a-f]*\)\".*/\1/p")"
'

test_done
