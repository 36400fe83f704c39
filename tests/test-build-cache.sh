#!/bin/bash
# build --cache-url: two repositories stand for two machines.  A builds and
# publishes its repository; B, with an empty repository and download cache,
# no reachable mirror and no bubblewrap, pulls the same image commit from
# the served cache, running no stage 2.  With one package more B pulls the
# rest and builds only that package, stage 1 and stage 2.  A damaged
# object on the server is refused, a server dying mid-pull leaves B's
# repository fsck-clean, and a signed cache refuses another key's commits.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

[ "$(id -u)" = 0 ] || skip_all "stage 2 needs root here"
command -v ninja > /dev/null || skip_all "ninja is not installed"
command -v ostree > /dev/null || skip_all "ostree is not installed"

base_archive
repo_key publisher
repo_key other
mkdir -p "$SCRATCH/stage/extra/usr/share/extra"
echo extra > "$SCRATCH/stage/extra/usr/share/extra/file"
( cd "$D/pool/main" && make_deb "$SCRATCH/stage/extra" extra 1.0 amd64 "Priority: optional" ) > /dev/null
repo_dists "$D" bookworm amd64
repo_sign "$D" bookworm archive
repo_serve "$SRV"
URL=$HTTPD_URL
LOG=$HTTPD_LOG
# A second server for the cache that dies mid-pull (its death must not take
# the first one with it).
repo_serve "$SRV"
DYING=$HTTPD_URL

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
repo_sources_line "$URL/debian" bookworm archive > sources.list
printf '%s\n' $BASE_REQUEST > base.txt
printf '%s\n' $BASE_REQUEST extra > more.txt
for l in base more; do
    a2o lock $l.txt --sources sources.list --variant custom --cache cache -o $l.lock.json > /dev/null
done
SOURCE=$(sed -n 's/.*"name": "\([^"]*\)".*/\1/p' base.lock.json | head -n 1)
DEAD=http://127.0.0.1:1/debian
npkg=$(grep -c '"sha256": ' base.lock.json)

test_expect_success 'machine A builds with --cache-url (the cache is empty: one line per tree, then it builds it) and publishes' '
    cd "$W"
    a2o build base.lock.json --builddir a --cache-url "$URL/cache" > a.out 2>&1 || { cat a.out; false; }
    assert_file_has_content a.out "^image base: commit [0-9a-f]\{64\}\$"
    assert_streq "$(grep -c "building it\$" a.out)" $((npkg + 2))
    assert_streq "$(grep -c "^apt2ostree: image base: not from the cache .*one by one" a.out)" 1
    assert_file_has_content a.out "^apt2ostree: stage 2 (base): not from the cache"
    a2o --repo a/ostree publish --to "$SRV/cache" > pub.out
    ostree --repo="$SRV/cache" refs > published
    assert_file_has_content published "^base\$"
    assert_streq "$(grep -c "^cache/stage1/" published)" 1
    assert_streq "$(grep -c "^cache/configured/" published)" 1
    assert_streq "$(grep -c "^cache/image/" published)" 1
'

test_expect_success 'machine B (empty repository, dead mirror, no bubblewrap) gets the same image commit from the cache and runs no stage 2' '
    cd "$W"
    APT2OSTREE_BWRAP=/bin/false a2o build base.lock.json --builddir b --cache-url "$URL/cache" \
        --mirror "$SOURCE=$DEAD" > b.out 2>&1 || { cat b.out; false; }
    assert_streq "$(cat b/ostree/refs/heads/base)" "$(cat a/ostree/refs/heads/base)"
    assert_not_file_has_content b.out "building it"
    assert_not_file_has_content b.out "^\["
    assert_streq "$(ls b/cache/debs | wc -l)" 0
    ostree fsck --repo=b/ostree > /dev/null
    ! ostree --repo=b/ostree refs | grep -q "apt2ostree-cache"
'

test_expect_success 'with one package more, B pulls every other tree and builds only the new package, stage 1 and stage 2' '
    cd "$W"
    a2o build more.lock.json --builddir a --cache-url "$URL/cache" > /dev/null 2>&1
    : > "$LOG"
    a2o build more.lock.json --builddir b --cache-url "$URL/cache" > b2.out 2>&1
    assert_streq "$(cat b/ostree/refs/heads/more)" "$(cat a/ostree/refs/heads/more)"
    assert_streq "$(grep -c "building it\$" b2.out)" 3
    assert_file_has_content b2.out "^apt2ostree: image more: not from the cache"
    assert_file_has_content b2.out "^apt2ostree: deb/extra/.*: not from the cache"
    assert_file_has_content b2.out "^apt2ostree: stage 1 (stage1/more): not from the cache"
    assert_file_has_content b2.out "^apt2ostree: stage 2 (more): not from the cache"
    assert_streq "$(grep -c "^/debian/pool/" "$LOG")" 1
    assert_file_has_content "$LOG" "^/debian/pool/main/extra_1.0_amd64.deb\$"
'

# refs_mtimes DIR: every ref of the repository DIR with its commit and mtime.
refs_mtimes () { (cd "$1/refs/heads" && find . -type f -printf '%P %T@ ' -exec cat {} \; | sort); }

test_expect_success 'an ordinary build (no --cache-url) writes the keyed refs; a no-op build after it writes nothing' '
    cd "$W"
    a2o build base.lock.json --builddir p > p.out 2>&1 || { cat p.out; false; }
    assert_streq "$(cat p/ostree/refs/heads/base)" "$(cat a/ostree/refs/heads/base)"
    for kind in image stage1 configured; do
        assert_streq "$(ostree --repo=p/ostree refs | grep -c "^cache/$kind/")" 1
        ostree --repo=a/ostree refs | grep -qxF "$(ostree --repo=p/ostree refs | grep "^cache/$kind/")"
    done
    refs_mtimes p/ostree > p.refs.before
    a2o build base.lock.json --builddir p > p2.out 2>&1
    refs_mtimes p/ostree > p.refs.after
    diff -u p.refs.before p.refs.after
    a2o --repo p/ostree publish --to "$SRV/plain" > /dev/null
'

test_expect_success 'a consumer of an ordinary build'"'"'s publish takes the whole image: same commit, no stage 2, no package pulled' '
    cd "$W"
    : > "$LOG"
    APT2OSTREE_BWRAP=/bin/false a2o build base.lock.json --builddir q --cache-url "$URL/plain" \
        --mirror "$SOURCE=$DEAD" > q.out 2>&1 || { cat q.out; false; }
    assert_streq "$(cat q/ostree/refs/heads/base)" "$(cat p/ostree/refs/heads/base)"
    assert_not_file_has_content q.out "not from the cache"
    assert_streq "$(grep -c "/refs/heads/deb/" "$LOG")" 0
'

test_expect_success 'a consumer whose image the cache lacks says once that it pulls package by package, and why' '
    cd "$W"
    a2o build more.lock.json --builddir r --cache-url "$URL/plain" > r.out 2>&1 || { cat r.out; false; }
    assert_streq "$(grep -c "one by one" r.out)" 1
    assert_file_has_content r.out "^apt2ostree: image more: not from the cache $URL/plain (it has no cache/image/[0-9a-f]*: no build of this lockfile"
    assert_streq "$(cat r/ostree/refs/heads/more)" "$(cat a/ostree/refs/heads/more)"
'

test_expect_success 'a flipped byte in a served object is refused: that tree is built instead, the image is the same' '
    cd "$W"
    cp -a "$SRV/cache" "$SRV/bad"
    dpkg_tree=$(ostree --repo="$SRV/bad" refs | grep "^deb/dpkg/")
    obj=$(ostree --repo="$SRV/bad" ls -RC "$dpkg_tree" /usr/bin/dpkg | awk "{ print \$5 }")
    f="$SRV/bad/objects/${obj:0:2}/${obj:2}.filez"
    size=$(stat -c %s "$f")
    printf "\\x5a" | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
    a2o build base.lock.json --builddir c --cache-url "$URL/bad" > c.out 2>&1
    assert_streq "$(grep -c "building it\$" c.out)" 1
    assert_file_has_content c.out "^apt2ostree: image base: not from the cache $URL/bad (.*); its $npkg package trees and its stages are taken from it one by one"
    assert_file_has_content c.out "^apt2ostree: deb/dpkg/.*: not from the cache $URL/bad (.*); building it\$"
    assert_not_file_has_content c.out "No such branch"
    assert_streq "$(cat c/ostree/refs/heads/base)" "$(cat a/ostree/refs/heads/base)"
    ostree fsck --repo=c/ostree > /dev/null
'

test_expect_success 'a flipped byte is refused in a file:/// cache as well (libostree trusts a local source unless told not to)' '
    cd "$W"
    a2o build base.lock.json --builddir c2 --cache-url "file://$SRV/bad" > c2.out 2>&1
    assert_streq "$(grep -c "building it\$" c2.out)" 1
    assert_file_has_content c2.out "^apt2ostree: deb/dpkg/.*: not from the cache file://$SRV/bad (.*); building it\$"
    assert_streq "$(cat c2/ostree/refs/heads/base)" "$(cat a/ostree/refs/heads/base)"
    ostree fsck --repo=c2/ostree > /dev/null
'

test_expect_success 'a cache server that dies mid-pull leaves the repository fsck-clean; the next build completes' '
    cd "$W"
    APT2OSTREE_BWRAP=/bin/false a2o build base.lock.json --builddir d --cache-url "$DYING/fault/die-40/cache" \
        --mirror "$SOURCE=$DEAD" > d.out 2>&1 && false
    grep -c "failed" d.out
    ostree fsck --repo=d/ostree > /dev/null
    a2o build base.lock.json --builddir d --cache-url "$URL/cache" > d2.out 2>&1
    assert_streq "$(cat d/ostree/refs/heads/base)" "$(cat a/ostree/refs/heads/base)"
    ostree fsck --repo=d/ostree > /dev/null
'

test_expect_success 'a signed cache: commits signed with the given key are used' '
    cd "$W"
    a2o --repo a/ostree publish --to "$SRV/signed" --gpg-sign "$(cat "$SCRATCH/keys/publisher.fpr")" \
        --gpg-homedir "$SCRATCH/gnupg-publisher" > /dev/null
    APT2OSTREE_BWRAP=/bin/false a2o build base.lock.json --builddir e --cache-url "$URL/signed" \
        --cache-key "$SCRATCH/keys/publisher.asc" --mirror "$SOURCE=$DEAD" > e.out 2>&1 \
        || { cat e.out; false; }
    assert_streq "$(cat e/ostree/refs/heads/base)" "$(cat a/ostree/refs/heads/base)"
    assert_not_file_has_content e.out "not from the cache\|refused"
'

# One wrong key refuses every tree of the cache alike: said once, not once
# a tree.
test_expect_success 'a wrong --cache-key: one line for all the refused trees (how many, the key and its fingerprint, the signer, what to do); -v lists them' '
    cd "$W"
    a2o build base.lock.json --builddir f --cache-url "$URL/signed" \
        --cache-key "$SCRATCH/keys/other.asc" > f.out 2>&1 || { cat f.out; false; }
    assert_streq "$(grep -c "refused\|not from the cache" f.out)" 1
    assert_file_has_content f.out "^apt2ostree: the cache $URL/signed: $((npkg + 3)) trees refused and built here: the commits are not signed by --cache-key $SCRATCH/keys/other.asc (key $(cat "$SCRATCH/keys/other.fpr")) (.*GPG signature by key $(cat "$SCRATCH/keys/publisher.fpr").*); give --cache-key the public key"
    assert_streq "$(cat f/ostree/refs/heads/base)" "$(cat a/ostree/refs/heads/base)"
    a2o build -v base.lock.json --builddir g --cache-url "$URL/cache" \
        --cache-key "$SCRATCH/keys/publisher.asc" > g.out 2>&1 || { cat g.out; false; }
    assert_streq "$(grep -c "refused\|not from the cache" g.out)" 1
    assert_file_has_content g.out "$((npkg + 3)) trees refused .*the commit has no GPG signature"
    assert_streq "$(grep -c "^deb/" g.out)" "$npkg"
    assert_file_has_content g.out "^stage1/base\$"
'

test_expect_success 'an image built with other options (a configure hook) is not taken from the cache: its key differs' '
    cd "$W"
    a2o build base.lock.json --builddir h --cache-url "$URL/cache" --configure-hook "echo hook > /etc/hooked" \
        > h.out 2>&1 || { cat h.out; false; }
    assert_file_has_content h.out "^apt2ostree: image base: not from the cache"
    assert_file_has_content h.out "^apt2ostree: stage 2 (base): not from the cache"
    assert_not_file_has_content h.out "^apt2ostree: stage 1 (stage1/base): not from"
    a2o --repo h/ostree export base --dir h-img
    assert_streq "$(cat h-img/etc/hooked)" hook
'

test_expect_success 'a lockfile with path filters over the same packages pulls the package trees, and builds its own stage 1 and image' '
    cd "$W"
    a2o lock base.txt --sources sources.list --variant custom --cache cache \
        --path-exclude "/usr/share/doc/*" -o slim.lock.json > /dev/null
    a2o build slim.lock.json --builddir s --cache-url "$URL/cache" > s.out 2>&1 || { cat s.out; false; }
    assert_streq "$(grep -c "building it\$" s.out)" 2
    assert_file_has_content s.out "^apt2ostree: stage 1 (stage1/slim): not from the cache"
    a2o --repo s/ostree export slim --dir s-img
    assert_streq "$(ls s-img/usr/share/doc | wc -l)" 0
'

test_expect_success 'prune deletes the cache refs of the stages it deletes, and keeps those of the image it keeps' '
    cd "$W"
    a2o --repo a/ostree prune --builddir a more.lock.json > prune.out
    assert_file_has_content prune.out "^stage1/base\$"
    assert_streq "$(grep -c "^cache/" prune.out)" 3
    assert_streq "$(ostree --repo=a/ostree refs | grep -c "^cache/")" 3
    ostree fsck --repo=a/ostree > /dev/null
    before=$(cat a/ostree/refs/heads/more)
    a2o build more.lock.json --builddir a --cache-url "$URL/cache" > again.out 2>&1
    assert_file_has_content again.out "^image more: commit $before\$"
    ! grep -q "building it\|^\[" again.out
'

test_expect_success 'usage errors: --cache-key without --cache-url, an unreadable key, a URL that is not one' '
    cd "$W"
    expect_failure err a2o build base.lock.json --builddir x --cache-key "$SCRATCH/keys/other.asc"
    assert_one_line err
    assert_file_has_content err "cache-key goes with --cache-url"
    expect_failure err a2o build base.lock.json --builddir x --cache-url "$URL/cache" --cache-key /nonexistent
    assert_file_has_content err "/nonexistent: cannot read it"
    expect_failure err a2o build base.lock.json --builddir x --cache-url cache
    assert_file_has_content err "is not an http://, https:// or file:/// URL"
    expect_failure err a2o --repo a/ostree cache-pull base
    assert_file_has_content err "cache-url URL is required"
'

test_done
