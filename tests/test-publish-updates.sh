#!/bin/bash
# publish --history: updates a device takes.  Two deployable images (the
# second with one package more) published one after the other to one ref
# of a served archive repository: each published commit is a new commit of
# the built tree whose parent is the one published before, with a version;
# a static delta from the first to the second is in the summary; a scratch
# sysroot "device" deployed from the first upgrades with "ostree admin
# upgrade" through the delta; the build's refs stay as built; the same
# build published again adds nothing; GPG signs the published commits.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

[ "$(id -u)" = 0 ] || skip_all "stage 2 and ostree admin need root"
command -v ninja > /dev/null || skip_all "ninja is not installed"
command -v ostree > /dev/null || skip_all "ostree is not installed"
ARCH=amd64

base_archive
repo_key publisher
repo_key other
KVER=6.1.0-99-test

# Stand-ins with the files deployable looks for (as tests/test-deployable.sh
# makes them); "extra", the package the update adds, holds 1 MB that does
# not compress.
S="$SCRATCH/stage"
mkdir -p "$S/kernel/boot" "$S/kernel/lib/modules/$KVER/kernel" "$S/kernel/DEBIAN"
echo "kernel $KVER" > "$S/kernel/boot/vmlinuz-$KVER"
echo "CONFIG_TEST=y" > "$S/kernel/boot/config-$KVER"
echo "modules" > "$S/kernel/lib/modules/$KVER/modules.dep"
printf '#!/bin/sh\nset -e\n[ "$1" != configure ] || echo "initramfs %s" > /boot/initrd.img-%s\n' "$KVER" "$KVER" \
    > "$S/kernel/DEBIAN/postinst"
mkdir -p "$S/ostree-boot/usr/lib/ostree" "$S/dracut/usr/bin" "$S/extra/usr/share/extra"
printf '#!/bin/sh\nexit 0\n' > "$S/ostree-boot/usr/lib/ostree/ostree-prepare-root"
chmod 755 "$S/ostree-boot/usr/lib/ostree/ostree-prepare-root"
printf '#!/bin/sh\nexit 0\n' > "$S/dracut/usr/bin/dracut" && chmod 755 "$S/dracut/usr/bin/dracut"
head -c 1000000 /dev/urandom > "$S/extra/usr/share/extra/file"
(
    cd "$D/pool/main"
    make_deb "$S/kernel" "linux-image-$KVER" 1.0 "$ARCH" "Priority: optional"
    make_deb "$S/ostree-boot" ostree-boot 2023.1 "$ARCH" "Priority: optional"
    make_deb "$S/dracut" dracut 059 "$ARCH" "Priority: optional"
    make_deb "$S/extra" extra 1.0 "$ARCH" "Priority: optional"
) > /dev/null
repo_publish "$D" bookworm "$ARCH" archive

serve_work_dir "$SRV"
base_image one "linux-image-$KVER" ostree-boot dracut
base_image two "linux-image-$KVER" ostree-boot dracut extra
REPO="$W/build/ostree"
a2o --repo "$REPO" deployable --ref one-deploy one > /dev/null
a2o --repo "$REPO" deployable --ref two-deploy two > /dev/null
# The served repository, with its own request log.
mkdir -p "$W/srv"
repo_serve "$W/srv"
PUB_URL=$HTTPD_URL
PUB_LOG=$HTTPD_LOG
PUB="$W/srv/pub"
SYS="$W/sysroot"

# build_refs: every ref of the build repository with its commit.
build_refs () {
    ostree --repo="$REPO" refs | sort | while read -r r; do echo "$r $(cat "$REPO/refs/heads/$r")"; done
}

# publish_history_device: publish --history of the ref "device", which
# publishes it and leaves every ref of the build repository as it was.
publish_history_device () {
    build_refs > refs.before
    a2o --repo "$REPO" publish --to "$PUB" --history device > out
    assert_streq "$(cat out)" "$PUB: 1 ref published"
    build_refs > refs.after
    cmp refs.before refs.after
}

# meta REPO REV KEY: the commit's metadata value KEY, unquoted.
meta () {
    ostree --repo="$1" show "$2" --print-metadata-key="$3" | tr -d "'"
}

# root_of REPO REV: the commit's root dirtree and dirmeta checksums.
root_of () {
    ostree --repo="$1" ls -dC "$2" / | awk "{ print \$5 }"
}

# served_bytes: the bytes of every file the device asked the server for
# since $PUB_LOG was emptied (a missing file counts nothing).
served_bytes () {
    local path sum=0
    while read -r path; do
        [ -f "$W/srv$path" ] && sum=$((sum + $(stat -c %s "$W/srv$path")))
    done < "$PUB_LOG"
    echo $sum
}

# load_commits: P1 and P2, the first and second published commits, as the
# tests that published them left them in ./P1 and ./P2 (each test runs in
# a subshell of its own).
load_commits () {
    P1=$(cat P1)
    [ ! -f P2 ] || P2=$(cat P2)
}

# point_ref REF COMMIT: the build repository's REF (the ref a release
# goes out as) at COMMIT, as a build into REF leaves it.
point_ref () {
    ostree --repo="$REPO" refs --force --create="$1" "$2"
}

test_expect_success 'publish --history: the ref gets a new commit of the built tree, version 1, the built commit recorded; the build repository is unchanged' '
    cd "$W"
    point_ref device "$(cat "$REPO/refs/heads/one-deploy")"
    publish_history_device
    B1=$(cat "$REPO/refs/heads/device")
    P1=$(cat "$PUB/refs/heads/device") && echo "$P1" > P1
    [ "$P1" != "$B1" ]
    assert_streq "$(meta "$PUB" "$P1" apt2ostree.built-commit)" "$B1"
    assert_streq "$(meta "$PUB" "$P1" version)" 1
    assert_streq "$(root_of "$PUB" "$P1")" "$(root_of "$REPO" "$B1")"
    ! ostree --repo="$PUB" rev-parse "$P1^" 2> /dev/null
    ostree --repo="$PUB" fsck > /dev/null
'

test_expect_success 'build refs (stage and package trees) are copied as built even with --history' '
    cd "$W"
    deb=$(ostree --repo="$REPO" refs | grep "^deb/" | head -n 1)
    a2o --repo "$REPO" publish --to "$PUB" --history stage1/one "$deb" > out
    assert_streq "$(cat "$PUB/refs/heads/stage1/one")" "$(cat "$REPO/refs/heads/stage1/one")"
    assert_streq "$(cat "$PUB/refs/heads/$deb")" "$(cat "$REPO/refs/heads/$deb")"
'

test_expect_success 'a device deploys the published ref from the served repository' '
    cd "$W"
    load_commits
    mkdir -p "$SYS"
    ostree admin init-fs "$SYS"
    ostree admin os-init --sysroot="$SYS" debian
    ostree --repo="$SYS/ostree/repo" remote add --no-gpg-verify origin "$PUB_URL/pub"
    ostree --repo="$SYS/ostree/repo" pull origin device > /dev/null
    ostree admin deploy --sysroot="$SYS" --os=debian origin:device
    ostree admin status --sysroot="$SYS" > status
    assert_file_has_content status "debian $P1.0"
    assert_file_has_content status "Version: 1"
'

test_expect_success 'the second image published to the same ref: its parent is the first, version 2, and a static delta from the first is in the summary' '
    cd "$W"
    load_commits
    point_ref device "$(cat "$REPO/refs/heads/two-deploy")"
    publish_history_device
    B2=$(cat "$REPO/refs/heads/device")
    P2=$(cat "$PUB/refs/heads/device") && echo "$P2" > P2
    assert_streq "$(ostree --repo="$PUB" rev-parse "$P2^")" "$P1"
    assert_streq "$(meta "$PUB" "$P2" version)" 2
    assert_streq "$(meta "$PUB" "$P2" apt2ostree.built-commit)" "$B2"
    assert_streq "$(root_of "$PUB" "$P2")" "$(root_of "$REPO" "$B2")"
    ostree --repo="$PUB" static-delta list > deltas
    assert_file_has_content deltas "^$P1-$P2\$"
    ostree --repo="$PUB" summary -v > summary
    assert_file_has_content summary "$P1-$P2"
    ostree --repo="$PUB" log device > log
    assert_streq "$(grep -c "^commit " log)" 2
    assert_streq "$(grep "^Version: " log | tr "\n" " ")" "Version: 2 Version: 1 "
    ostree --repo="$PUB" fsck > /dev/null
'

# A client fetches a delta's part only to apply it.  (libostree before
# 2023.7, bookworm's 2022.7 included, also scans the new commit while the
# part is applied and fetches some of its objects one by one all the same:
# how many is a race, so it is not asserted here.)
test_expect_success 'ostree admin upgrade on the device downloads the delta and deploys the second tree; its log shows both versions' '
    cd "$W"
    load_commits
    : > "$PUB_LOG"
    ostree admin upgrade --sysroot="$SYS" --os=debian > up.out
    cat up.out
    part=$(cd "$W/srv" && find pub/deltas -name 0)
    test -n "$part"
    assert_streq "$(echo "$part" | wc -l)" 1
    grep -qx "/$part" "$PUB_LOG"
    ostree admin status --sysroot="$SYS" > status2
    assert_streq "$(grep -o "debian [0-9a-f]\{64\}\.0" status2 | tr "\n" " ")" "debian $P2.0 debian $P1.0 "
    assert_file_has_content status2 "Version: 2"
    cmp "$SYS/ostree/deploy/debian/deploy/$P2.0/usr/share/extra/file" "$S/extra/usr/share/extra/file"
    ostree --repo="$SYS/ostree/repo" log origin:device > dlog
    assert_streq "$(grep "^Version: " dlog | tr "\n" " ")" "Version: 2 Version: 1 "
'

test_expect_success 'publishing the same build again adds nothing: same ref, no new commit, no new delta' '
    cd "$W"
    load_commits
    find "$PUB/objects" -name "*.commit" | sort > commits.before
    ls -R "$PUB/deltas" > deltas.before
    a2o --repo "$REPO" publish --to "$PUB" --history device > out
    assert_streq "$(cat out)" "$PUB: 1 ref published, 1 already there"
    assert_streq "$(cat "$PUB/refs/heads/device")" "$P2"
    find "$PUB/objects" -name "*.commit" | sort > commits.after
    cmp commits.before commits.after
    ls -R "$PUB/deltas" > deltas.after
    cmp deltas.before deltas.after
'

test_expect_success '--version names the version, --delta-from another base; a version that is no number needs --version next time; --no-deltas writes none' '
    cd "$W"
    load_commits
    point_ref device "$(cat "$REPO/refs/heads/one-deploy")"
    a2o --repo "$REPO" publish --to "$PUB" --history --version 2027.1 --delta-from "$P1" device > /dev/null
    P3=$(cat "$PUB/refs/heads/device")
    assert_streq "$(meta "$PUB" "$P3" version)" 2027.1
    assert_streq "$(ostree --repo="$PUB" rev-parse "$P3^")" "$P2"
    ostree --repo="$PUB" static-delta list > deltas
    assert_file_has_content deltas "^$P2-$P3\$"
    assert_file_has_content deltas "^$P1-$P3\$"
    point_ref device "$(cat "$REPO/refs/heads/two-deploy")"
    expect_failure err a2o --repo "$REPO" publish --to "$PUB" --history device
    assert_one_line err
    assert_file_has_content err "device: the version published before is \"2027.1\", not a number"
    assert_streq "$(cat "$PUB/refs/heads/device")" "$P3"
    a2o --repo "$REPO" publish --to "$PUB" --history --version 2027.2 --no-deltas device > /dev/null
    P4=$(cat "$PUB/refs/heads/device") && echo "$P4" > P4
    assert_streq "$(ostree --repo="$PUB" rev-parse "$P4^")" "$P3"
    ! ostree --repo="$PUB" static-delta list | grep -q -- "-$P4\$"
'

test_expect_success 'bad input: a ref published with a history is not overwritten as built; an unknown --delta-from; options without --history' '
    cd "$W"
    P4=$(cat P4)
    expect_failure err a2o --repo "$REPO" publish --to "$PUB" device
    assert_one_line err
    assert_file_has_content err "ref \"device\" was published with a history there; publish it with --history"
    assert_streq "$(cat "$PUB/refs/heads/device")" "$P4"
    point_ref device "$(cat "$REPO/refs/heads/one-deploy")"
    expect_failure err a2o --repo "$REPO" publish --to "$PUB" --history --version 9 --delta-from no/such device
    assert_one_line err
    assert_file_has_content err "delta-from no/such: not in"
    assert_streq "$(cat "$PUB/refs/heads/device")" "$P4"
    expect_failure err a2o --repo "$REPO" publish --to "$PUB" --version 3 device
    assert_file_has_content err "go with --history"
'

test_expect_success 'GPG: the published commits are what is signed; a device trusting the key takes the update, one trusting another key refuses it' '
    cd "$W"
    SIGN="--gpg-sign $(cat "$SCRATCH/keys/publisher.fpr") --gpg-homedir $SCRATCH/gnupg-publisher"
    point_ref device "$(cat "$REPO/refs/heads/one-deploy")"
    a2o --repo "$REPO" publish --to "$W/srv/signed" --history $SIGN device > out
    assert_file_has_content out "1 ref published, signed"
    S1=$(cat "$W/srv/signed/refs/heads/device")
    point_ref device "$(cat "$REPO/refs/heads/two-deploy")"
    a2o --repo "$REPO" publish --to "$W/srv/signed" --history $SIGN device > /dev/null
    S2=$(cat "$W/srv/signed/refs/heads/device")
    assert_streq "$(ostree --repo="$W/srv/signed" rev-parse "$S2^")" "$S1"
    ostree --repo=client init --mode=bare-user
    ostree --repo=client remote add --gpg-import="$SCRATCH/keys/publisher.gpg" signed "$PUB_URL/signed"
    ostree --repo=client pull signed "$S1" > /dev/null
    ostree --repo=client pull signed device > /dev/null
    assert_streq "$(cat client/refs/remotes/signed/device)" "$S2"
    ostree --repo=client show "$S2" > shown
    assert_file_has_content shown "Good signature"
    ostree --repo=client remote add --gpg-import="$SCRATCH/keys/other.gpg" wrongkey "$PUB_URL/signed"
    ! ostree --repo=client pull wrongkey device 2> err
    grep -qi "signature\|gpg" err
'

test_expect_success 'a published commit is never older than the one published before it (ostree admin upgrade refuses an older one)' '
    cd "$W"
    a2o init --repo times --mode bare-user > /dev/null
    mkdir -p t1/usr/share/t t2/usr/share/t
    echo 1 > t1/usr/share/t/f && echo 2 > t2/usr/share/t/f
    SOURCE_DATE_EPOCH=4102444800 a2o --repo times import --ref img t1 > /dev/null
    a2o --repo times publish --to srv/times --history img > /dev/null
    SOURCE_DATE_EPOCH=0 a2o --repo times import --ref img t2 > /dev/null
    a2o --repo times publish --to srv/times --history img > /dev/null
    ostree --repo=srv/times log img > log
    assert_streq "$(grep -c "^Date:  2100-01-01 00:00:00" log)" 2
'

# Bytes a device downloads for the one-package update, with and without the
# delta, beside the whole image and the package's .deb (printed, for the
# man page; on these stand-in images only the order of magnitude means
# anything).
test_expect_success 'measured: the update with and without the delta, the whole image, the .deb' '
    cd "$W"
    load_commits
    for how in delta objects whole; do
        rm -rf "m-$how" && ostree --repo="m-$how" init --mode=bare-user
        ostree --repo="m-$how" remote add --no-gpg-verify origin "$PUB_URL/pub"
        [ $how = whole ] || ostree --repo="m-$how" pull origin "$P1" > /dev/null
        : > "$PUB_LOG"
        ostree --repo="m-$how" pull $([ $how = objects ] && echo --disable-static-deltas) origin "$P2" > /dev/null
        eval "bytes_$how=\$(served_bytes)"
    done
    deb=$(stat -c %s "$D"/pool/main/extra_1.0_amd64.deb)
    echo "update with the delta: $bytes_delta bytes; without: $bytes_objects bytes; whole image: $bytes_whole bytes; extra.deb: $deb bytes" > measured
    [ "$bytes_delta" -lt "$bytes_whole" ]
'
[ ! -f "$W/measured" ] || say "$(cat "$W/measured")"

# Deployments are immutable (chattr +i): let the scratch directory go.
for d in "$SYS"/ostree/deploy/*/deploy/*.0; do
    [ ! -d "$d" ] || chattr -i "$d"
done

test_done
