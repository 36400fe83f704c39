#!/bin/bash
# export --squashfs and --ext4: file system images made with mksquashfs and
# mkfs.ext4 -d, mounted read-only and compared file by file (owners, modes,
# links, capabilities) with export --dir; the same ref gives the same bytes.
. "$TOP_SRCDIR/tests/libtest.sh"

[ "$(id -u)" = 0 ] || skip_all "owners and capabilities need root (and so does mounting the images)"
for tool in mksquashfs mkfs.ext4 faketime debugfs setcap; do
    command -v $tool > /dev/null || skip_all "$tool is not installed (tools/setup installs it)"
done

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
REPO="$W/repo"
a2o init --repo "$REPO" --mode bare > /dev/null

T="$W/tree"
mkdir -p "$T/usr/bin" "$T/etc" "$T/home/user" "$T/tmp" "$T/usr/share/doc/x"
printf '#!/bin/sh\necho hi\n' > "$T/usr/bin/hello" && chmod 0755 "$T/usr/bin/hello"
cp "$T/usr/bin/hello" "$T/usr/bin/suid" && chmod 4755 "$T/usr/bin/suid"
cp "$T/usr/bin/hello" "$T/usr/bin/ping" && setcap cap_net_raw+ep "$T/usr/bin/ping"
echo secret > "$T/etc/shadow" && chmod 0640 "$T/etc/shadow" && chgrp 42 "$T/etc/shadow"
echo mine > "$T/home/user/file" && chown -R 1000:1000 "$T/home/user"
head -c 3000000 /dev/urandom > "$T/usr/share/doc/x/big"
chmod 1777 "$T/tmp"
ln -s hello "$T/usr/bin/hi"
a2o --repo "$REPO" import --ref tree "$T" > /dev/null
a2o --repo "$REPO" export tree --dir plain

listing plain > want

# check_mounted IMAGE TYPE: mount it read-only and compare with plain/.
check_mounted () {
    mkdir -p "mnt-$2"
    mount -o loop,ro -t "$2" "$1" "mnt-$2" || return 1
    local rc=0
    listing "mnt-$2" > "got-$2" && diff want "got-$2" \
        && diff -r --no-dereference -x lost+found plain "mnt-$2" \
        && assert_streq "$(getcap "mnt-$2/usr/bin/ping" | sed "s/.* //")" "cap_net_raw=ep" || rc=1
    umount "mnt-$2"
    return $rc
}
can_mount () {
    truncate -s 8M probe.img && mkfs.ext4 -q -F probe.img && mkdir -p probe \
        && mount -o loop,ro probe.img probe 2>/dev/null && umount probe
}

test_expect_success 'export --squashfs twice gives the same bytes; --ext4 twice too, and e2fsck finds it clean' '
    cd "$W"
    a2o --repo "$REPO" export tree --squashfs one.sqfs
    sleep 1
    a2o --repo "$REPO" export tree --squashfs two.sqfs
    cmp one.sqfs two.sqfs
    a2o --repo "$REPO" export tree --ext4 one.ext4
    sleep 1
    a2o --repo "$REPO" export tree --ext4 two.ext4
    cmp one.ext4 two.ext4
    e2fsck -fn one.ext4
    assert_streq "$(dumpe2fs -h one.ext4 2>/dev/null | sed -n "s/^Filesystem UUID: *//p")" \
        "$(dumpe2fs -h two.ext4 2>/dev/null | sed -n "s/^Filesystem UUID: *//p")"
'

if can_mount; then
    test_expect_success 'the squashfs image mounted read-only holds the files, owners, modes and capabilities of export --dir' '
        cd "$W"
        check_mounted one.sqfs squashfs
    '
    test_expect_success 'the ext4 image mounted read-only holds the files, owners, modes and capabilities of export --dir' '
        cd "$W"
        check_mounted one.ext4 ext4
    '
else
    test_skip 'the squashfs image mounted read-only holds what export --dir gives' "loop devices cannot be mounted here"
    test_skip 'the ext4 image mounted read-only holds what export --dir gives' "loop devices cannot be mounted here"
fi

test_expect_success '--size sets the ext4 image size; too small is an error naming mkfs.ext4, and nothing is left' '
    cd "$W"
    a2o --repo "$REPO" export tree --ext4 sized.ext4 --size 64M
    assert_streq "$(stat -c %s sized.ext4)" 67108864
    expect_failure err a2o --repo "$REPO" export tree --ext4 tiny.ext4 --size 1M
    assert_file_has_content err "mkfs.ext4"
    test ! -e tiny.ext4
    ! ls -d .apt2ostree-image-* 2>/dev/null || fail "scratch files left in the output directory"
    expect_failure err a2o --repo "$REPO" export tree --ext4 bad.ext4 --size lots
    assert_file_has_content err "expected a size"
    expect_failure err a2o --repo "$REPO" export tree --squashfs x.sqfs --size 64M
    assert_file_has_content err "size goes with --ext4"
'

test_expect_success '--compression zstd or xz makes the squashfs image with it; gzip stays the default' '
    cd "$W"
    assert_file_has_content <(unsquashfs -s one.sqfs) "^Compression gzip$"
    a2o --repo "$REPO" export tree --squashfs gzip.sqfs --compression gzip
    cmp one.sqfs gzip.sqfs
    for comp in zstd xz; do
        a2o --repo "$REPO" export tree --squashfs $comp.sqfs --compression $comp
        assert_file_has_content <(unsquashfs -s $comp.sqfs) "^Compression $comp$"
        unsquashfs -q -n -d out-$comp $comp.sqfs > /dev/null
        diff -r --no-dereference plain out-$comp
    done
    expect_failure err a2o --repo "$REPO" export tree --squashfs lz.sqfs --compression lz4
    assert_file_has_content err "expected gzip|zstd|xz"
    expect_failure err a2o --repo "$REPO" export tree --ext4 c.ext4 --compression xz
    assert_file_has_content err "compression goes with --squashfs"
    test ! -e lz.sqfs && test ! -e c.ext4
'

test_done
