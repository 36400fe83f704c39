#!/bin/bash
# unpack-deb on local .debs built here with dpkg-deb: the tree equals
# dpkg-deb -x, the dpkg metadata, determinism, and every error path.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

FIX="${SCRATCH:?}/fixtures"
mkdir -p "$FIX"

(
    cd "$FIX"
    make_everything_debs gzip zstd none
    recompress_deb everything.deb bzip2 everything-bzip2.deb
    recompress_deb everything.deb lzma everything-lzma.deb
) > "$FIX/log" 2>&1 || { cat "$FIX/log"; echo "Bail out! cannot build the test packages"; exit 1; }

EVERYTHING="$FIX/everything.deb"
EVERYTHING_SHA=$(sha256sum "$EVERYTHING" | cut -d' ' -f1)

test_expect_success 'a .deb unpacks to the same tree as dpkg-deb -x with the merged-/usr rewrite' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > out 2> err
    assert_streq "$(cat out)" "$(ref_commit repo pkg)"
    compare_with_dpkg "$EVERYTHING" repo pkg
    ls_tree repo pkg > tree
    assert_file_has_content tree "^l00777 0 0 0 /usr/bin/tool-relative -> tool$"
    assert_not_file_has_content tree "[0-9] /bin/"
    assert_not_file_has_content tree "[0-9] /lib64"
'

for z in gzip zstd none bzip2 lzma; do
    test_expect_success "data.tar compressed with $z gives the same tree as with xz" '
        new_repo
        a2o --repo repo unpack-deb --ref xz "$EVERYTHING" > /dev/null 2>&1
        a2o --repo repo unpack-deb --ref '$z' "$FIX/everything-'$z'.deb" > /dev/null 2>&1
        compare_with_dpkg "$FIX/everything-'$z'.deb" repo '$z'
        assert_streq "$(ostree --repo=repo ls -d -C '$z' / | awk "{print \$5}")" \
                     "$(ostree --repo=repo ls -d -C xz / | awk "{print \$5}")"
    '
done

test_expect_success '--no-merged-usr keeps bin, sbin and lib* where the package ships them' '
    new_repo
    a2o --repo repo unpack-deb --no-merged-usr --ref pkg "$EVERYTHING" > /dev/null 2>&1
    compare_with_dpkg "$EVERYTHING" repo pkg --no-merged-usr
    ls_tree repo pkg > tree
    assert_file_has_content tree " /bin/tool$"
    assert_file_has_content tree " /lib64/ld.so$"
'

test_expect_success '--merged-usr and --no-merged-usr together are a usage error' '
    new_repo
    expect_failure err a2o --repo repo unpack-deb --merged-usr --no-merged-usr --ref pkg "$EVERYTHING"
    assert_one_line err
    assert_file_has_content err "exclude each other"
'

test_expect_success 'hard links share one content object, also when the merged-/usr rewrite moves the target' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > /dev/null 2>&1
    a=$(ostree --repo=repo ls -C pkg /usr/bin/tool | awk "{print \$5}")
    b=$(ostree --repo=repo ls -C pkg /usr/bin/tool-hardlink | awk "{print \$5}")
    assert_streq "$b" "$a"
    a=$(ostree --repo=repo ls -C pkg /usr/bin/sgid | awk "{print \$5}")
    b=$(ostree --repo=repo ls -C pkg /usr/bin/sgid-hardlink | awk "{print \$5}")
    assert_streq "$b" "$a"
'

test_expect_success 'setuid, setgid and sticky bits, private modes and numeric owners are kept' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > /dev/null 2>&1
    ls_tree repo pkg > tree
    assert_file_has_content tree "^-04755 0 0 5 /usr/bin/suid$"
    assert_file_has_content tree "^-02755 0 0 5 /usr/bin/sgid$"
    assert_file_has_content tree "^d01777 0 0 0 /tmp$"
    assert_file_has_content tree "^d00700 0 0 0 /var/spool/private$"
    assert_file_has_content tree "^-00750 0 0 6 /usr/sbin/admin$"
    if [ "$(id -u)" = 0 ]; then
        assert_file_has_content tree "^d02775 1234 5678 0 /usr/share/doc/everything$"
        assert_file_has_content tree "^-00600 4321 8765 7 /etc/everything/secret$"
    fi
'

test_expect_success 'names and symlink targets longer than 100 characters are kept' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > /dev/null 2>&1
    ostree --repo=repo cat pkg "/$long_dir/$long_name" > content
    assert_file_has_content content "^long$"
    ls_tree repo pkg > tree
    assert_file_has_content tree "/usr/share/doc/everything/long-target -> /$long_dir/$long_name$"
'

test_expect_success 'a fifo is skipped with a warning naming it, and recorded in the commit and the .list' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > out 2> err
    assert_file_has_content err "warning: .*everything.deb: \"/etc/everything/fifo\" is a fifo, which OSTree cannot store; skipped"
    ostree --repo=repo show pkg --print-metadata-key=apt2ostree.skipped > skipped
    assert_file_has_content skipped "(./etc/everything/fifo., .fifo.)"
    ls_tree repo pkg > tree
    assert_not_file_has_content tree "fifo"
    ostree --repo=repo cat pkg /var/lib/dpkg/info/everything.list > list
    assert_file_has_content list "^/etc/everything/fifo$"
'

test_expect_success 'the .list file holds the shipped paths in archive order, as dpkg writes it' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > /dev/null 2>&1
    ostree --repo=repo cat pkg /var/lib/dpkg/info/everything.list > list
    dpkg-deb --fsys-tarfile "$EVERYTHING" | tar -t | sed -e "s#^\./#/#" -e "s#/\$##" -e "s#^\$#/.#" > expected
    diff -u expected list
    assert_streq "$(head -n 1 list)" "/."
    assert_file_has_content list "^/bin/tool$"
'

test_expect_success 'control files become var/lib/dpkg/info/PKG.* with their modes; control itself does not' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > /dev/null 2>&1
    ls_tree repo pkg > tree
    for s in preinst postinst prerm postrm; do
        assert_file_has_content tree "^-00755 0 0 [0-9]* /var/lib/dpkg/info/everything.$s$"
    done
    for f in conffiles md5sums triggers shlibs list; do
        assert_file_has_content tree "^-00644 0 0 [0-9]* /var/lib/dpkg/info/everything.$f$"
    done
    assert_not_file_has_content tree "everything.control"
    ostree --repo=repo cat pkg /var/lib/dpkg/info/everything.triggers > triggers
    assert_file_has_content triggers "^activate-noawait ldconfig$"
    dpkg-deb --info "$EVERYTHING" md5sums > expected
    ostree --repo=repo cat pkg /var/lib/dpkg/info/everything.md5sums > md5sums
    diff -u expected md5sums
'

test_expect_success 'the status stanza says "install ok unpacked" and lists each conffile with its md5sum' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > /dev/null 2>&1
    ostree --repo=repo cat pkg /var/lib/apt2ostree/status/everything:amd64 > stanza
    assert_streq "$(head -n 2 stanza)" "Package: everything
Status: install ok unpacked"
    sum=$(echo setting=1 | md5sum | cut -d" " -f1)
    assert_file_has_content stanza "^Conffiles:$"
    assert_file_has_content stanza "^ /etc/everything/everything.conf $sum$"
    assert_file_has_content stanza "^Version: 1:2.0+b1~rc1-1$"
    assert_file_has_content stanza "^Depends: libc6 (>= 2.36)$"
    assert_file_has_content stanza "^Homepage: https://example.invalid/$"
    assert_file_has_content stanza "^ built by tests/libdeb.sh$"
    # dpkg can read it: a status file made of it parses.
    mkdir -p admin/info admin/updates && cp stanza admin/status && : > admin/available
    dpkg-query --admindir=admin -W -f="\${Package} \${Status} \${Version}\n" everything > q
    assert_file_has_content q "^everything install ok unpacked 1:2.0+b1~rc1-1$"
    [ "$(tail -c 1 stanza | od -An -c | tr -d " ")" = "\\n" ]
    [ "$(tail -c 2 stanza | head -c 1 | od -An -c | tr -d " ")" != "\\n" ]
'

test_expect_success 'Multi-Arch: same packages name their info files PKG:ARCH.*' '
    new_repo
    a2o --repo repo unpack-deb --ref same "$FIX/libsame1.deb" > /dev/null
    ls_tree repo same > tree
    assert_file_has_content tree " /var/lib/dpkg/info/libsame1:amd64.list$"
    assert_file_has_content tree " /var/lib/dpkg/info/libsame1:amd64.postinst$"
    assert_file_has_content tree " /var/lib/dpkg/info/libsame1:amd64.md5sums$"
    assert_file_has_content tree " /var/lib/apt2ostree/status/libsame1:amd64$"
    assert_not_file_has_content tree "info/libsame1\."
'

# stanza_without_conffile_sums: a status stanza with the hash of each
# Conffiles line left out (dpkg writes "newconffile" until it configures).
stanza_without_conffile_sums () { sed -E "s#^ (/[^ ]*) [^ ]+( .*)?\$# \\1\\2#"; }

for pkg in everything libsame1; do
    test_expect_success "dpkg --unpack of $pkg records the same info files, .list and status stanza as unpack-deb" '
        deb=$([ '$pkg' = everything ] && echo "$EVERYTHING" || echo "$FIX/libsame1.deb")
        dpkg_unpack root "$deb"
        new_repo
        a2o --repo repo unpack-deb --ref pkg "$deb" > /dev/null 2>&1
        ostree --repo=repo checkout pkg co
        (cd root/var/lib/dpkg/info && ls | grep -v "^format\$") > dpkg.files
        (cd co/var/lib/dpkg/info && ls) > ours.files
        diff -u dpkg.files ours.files
        for f in $(cat ours.files); do
            cmp "root/var/lib/dpkg/info/$f" "co/var/lib/dpkg/info/$f"
            assert_streq "$(stat -c %a "co/var/lib/dpkg/info/$f")" "$(stat -c %a "root/var/lib/dpkg/info/$f")"
        done
        # (a status file ends each stanza with a blank line; the stanza file does not)
        stanza_without_conffile_sums < root/var/lib/dpkg/status | sed "/^\$/d" > dpkg.stanza
        stanza_without_conffile_sums < co/var/lib/apt2ostree/status/*:amd64 > ours.stanza
        diff -u dpkg.stanza ours.stanza
    '
done

test_expect_success 'the commit records the package name, version, architecture and the .deb sha256' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > /dev/null 2>&1
    m () { ostree --repo=repo show pkg --print-metadata-key="$1"; }
    assert_streq "$(m apt2ostree.package)" "'"'everything'"'"
    assert_streq "$(m apt2ostree.version)" "'"'1:2.0+b1~rc1-1'"'"
    assert_streq "$(m apt2ostree.architecture)" "'"'amd64'"'"
    assert_streq "$(m apt2ostree.multi-arch)" "'"'foreign'"'"
    assert_streq "$(m apt2ostree.deb-sha256)" "'"'$EVERYTHING_SHA'"'"
    assert_streq "$(m apt2ostree.merged-usr)" "true"
    ostree --repo=repo log pkg > log
    assert_file_has_content log "everything 1:2.0+b1~rc1-1 amd64"
'

test_expect_success 'the same .deb gives the same commit in a bare, bare-user or archive repository, SOURCE_DATE_EPOCH unset' '
    new_repo r1
    new_repo r2 bare-user
    a2o --repo r1 unpack-deb --ref first "$EVERYTHING" > c1 2>/dev/null
    cp "$EVERYTHING" copy.deb
    (unset SOURCE_DATE_EPOCH; a2o --repo r2 unpack-deb --ref other/name copy.deb > c2 2>/dev/null)
    assert_streq "$(cat c2)" "$(cat c1)"
    new_repo r3 archive
    a2o --repo r3 unpack-deb --ref third "$EVERYTHING" > c3 2>/dev/null
    assert_streq "$(cat c3)" "$(cat c1)"
    ostree --repo=r1 show first > show
    assert_file_has_content show "^Date:  1970-01-01"
'

test_expect_success 'unpacking again onto a ref that holds the result leaves the ref file untouched' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > c1 2>/dev/null
    before=$(mtime repo/refs/heads/pkg)
    sleep 0.05
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > c2 2>/dev/null
    assert_streq "$(cat c2)" "$(cat c1)"
    assert_streq "$(mtime repo/refs/heads/pkg)" "$before"
'

test_expect_success 'a ref holding the package is redone when SOURCE_DATE_EPOCH or --no-merged-usr changes the result' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > c1 2>/dev/null
    SOURCE_DATE_EPOCH=1000000000 a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > c2 2>/dev/null
    [ "$(cat c2)" != "$(cat c1)" ]
    ostree --repo=repo show pkg > show
    assert_file_has_content show "^Date:  2001-09-09"
    a2o --repo repo unpack-deb --ref pkg "$EVERYTHING" > c3 2>/dev/null
    assert_streq "$(cat c3)" "$(cat c1)"
    a2o --repo repo unpack-deb --no-merged-usr --ref pkg "$EVERYTHING" > c4 2>/dev/null
    [ "$(cat c4)" != "$(cat c1)" ]
    assert_streq "$(ostree --repo=repo show pkg --print-metadata-key=apt2ostree.merged-usr)" false
'

test_expect_success 'a ref holding the package does not excuse a local file with the wrong sha256' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg --sha256 "$EVERYTHING_SHA" "$EVERYTHING" > /dev/null 2>&1
    expect_failure err a2o --repo repo unpack-deb --ref pkg --sha256 "$EVERYTHING_SHA" "$FIX/libsame1.deb"
    assert_one_line err
    assert_file_has_content err "libsame1.deb: sha256 mismatch"
'

# as_user CMD...: CMD as an unprivileged user (nobody when the tests run as
# root).
as_user () {
    if [ "$(id -u)" = 0 ]; then
        setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
    else
        "$@"
    fi
}

if [ "$(id -u)" != 0 ] || command -v setpriv > /dev/null; then
    test_expect_success 'an unprivileged user unpacks into a bare-user repository with root ownership and setuid bits kept' '
        chmod 755 "$SCRATCH" .
        cp "$EVERYTHING" mine.deb && chmod 644 mine.deb
        mkdir user && chmod 777 user
        as_user "$APT2OSTREE" --repo user/repo init --mode bare-user
        as_user "$APT2OSTREE" --repo user/repo unpack-deb --ref pkg mine.deb > c 2> /dev/null
        ls_tree user/repo pkg > tree
        assert_file_has_content tree "^-04755 0 0 5 /usr/bin/suid$"
        new_repo r2 bare-user
        a2o --repo r2 unpack-deb --ref pkg mine.deb > c2 2> /dev/null
        assert_streq "$(cat c)" "$(cat c2)"
    '
else
    test_skip 'an unprivileged user unpacks into a bare-user repository' 'setpriv is not installed'
fi

test_expect_success 'pax extended attributes on files and directories are kept' '
    new_repo
    deb_from_spec x.deb xattrs "d|./|755
d|./usr/|755
f|./usr/file|644|content|xattr=user.test=hello|xattr=user.other=2
f|./usr/plain|644|plain"
    a2o --repo repo unpack-deb --ref x x.deb > /dev/null
    ostree --repo=repo ls -X x /usr/file > attrs
    assert_file_has_content attrs "user.test"
    assert_file_has_content attrs "0x68, 0x65, 0x6c, 0x6c, 0x6f"
    assert_file_has_content attrs "user.other"
    ostree --repo=repo ls -X x /usr/plain > attrs
    assert_not_file_has_content attrs "user.test"
'

test_expect_success 'file content with xattrs gets the checksum libostree computes itself (archive repositories)' '
    new_repo r1
    new_repo r2 bare-user
    new_repo r3 archive
    deb_from_spec x.deb xattrs "d|./|755
d|./usr/|755
f|./usr/file|4755|content|xattr=user.test=hello|xattr=user.other=2
f|./usr/empty|600|"
    for r in r1 r2 r3; do a2o --repo $r unpack-deb --ref x x.deb > c.$r 2>/dev/null; done
    assert_streq "$(cat c.r1)" "$(cat c.r3)"
    assert_streq "$(cat c.r2)" "$(cat c.r3)"
'

test_expect_success 'every object unpack-deb writes passes ostree fsck (bare and bare-user)' '
    new_repo r1
    new_repo r2 bare-user
    for r in r1 r2; do
        a2o --repo $r unpack-deb --ref a "$EVERYTHING" > /dev/null 2>&1
        a2o --repo $r unpack-deb --ref b "$FIX/libsame1.deb" > /dev/null 2>&1
        ostree fsck --repo=$r > fsck.$r 2>&1 || { cat fsck.$r; false; }
        assert_not_file_has_content fsck.$r "corrupt"
    done
'


test_expect_success 'the objects are the files libostree writes itself (bare and bare-user, fsync on and off)' '
    for mode in bare bare-user; do
        new_repo own.$mode $mode
        new_repo nofsync.$mode $mode
        new_repo lib.$mode $mode
        ostree --repo=nofsync.$mode config set core.fsync false
        # With per-object fsync libostree writes every object itself.
        ostree --repo=lib.$mode config set core.per-object-fsync true
        for r in own.$mode nofsync.$mode lib.$mode; do
            a2o --repo $r unpack-deb --ref a "$EVERYTHING" > c.$r 2>/dev/null
            a2o --repo $r unpack-deb --ref b "$FIX/libsame1.deb" >> c.$r 2>/dev/null
            objects_stat $r > stat.$r
        done
        for r in own.$mode nofsync.$mode; do
            assert_streq "$(cat c.$r)" "$(cat c.lib.$mode)"
            test -s stat.$r
            assert_streq "$(cat stat.$r)" "$(cat stat.lib.$mode)"
        done
    done
'

# (trusted.* xattrs need root; user.* ones cannot be set on a symlink)
if [ "$(id -u)" = 0 ]; then
test_expect_success 'a symlink with xattrs is stored as libostree stores it (bare, bare-user, archive)' '
    deb_from_spec x.deb xattrs "d|./|755
d|./usr/|755
f|./usr/file|644|content
l|./usr/link|file|xattr=trusted.test=hello"
    for mode in bare bare-user; do
        new_repo own.$mode $mode
        new_repo lib.$mode $mode
        ostree --repo=lib.$mode config set core.per-object-fsync true
        for r in own.$mode lib.$mode; do
            a2o --repo $r unpack-deb --ref x x.deb > c.$r 2>/dev/null
            objects_stat $r > stat.$r
        done
        assert_streq "$(cat c.own.$mode)" "$(cat c.lib.$mode)"
        assert_streq "$(cat stat.own.$mode)" "$(cat stat.lib.$mode)"
        ostree fsck --repo=own.$mode > /dev/null 2>&1
    done
    grep -q "trusted.test=0x68656c6c6f" stat.own.bare
    new_repo arch archive
    a2o --repo arch unpack-deb --ref x x.deb > c.arch 2>/dev/null
    assert_streq "$(cat c.own.bare)" "$(cat c.arch)"
'
else
    test_skip 'a symlink with xattrs is stored as libostree stores it' 'trusted.* xattrs need root'
fi

if ! command -v strace > /dev/null; then
    test_skip 'with core.fsync=false regular files are written whole too' 'strace is not installed'
else
test_expect_success 'with core.fsync=false regular files are written whole too (no preallocation per object)' '
    new_repo on
    new_repo off
    ostree --repo=off config set core.fsync false
    for r in on off; do
        strace -f -y -o st.$r -e trace=fallocate "$APT2OSTREE" --repo $r unpack-deb --ref a "$EVERYTHING" > /dev/null 2>&1
        grep "^[0-9]* *fallocate" st.$r | grep -vc "/refs/" > n.$r || true
    done
    # (libostree preallocates every object it writes but symlinks.)
    assert_streq "$(cat n.on)" 0
    assert_streq "$(cat n.off)" 0
'
fi

test_expect_success 'the repository min-free-space setting is kept: an unpack that would pass it fails, writing no ref' '
    new_repo
    ostree --repo=repo config set core.min-free-space-size 1000000TB
    expect_failure err a2o --repo repo unpack-deb --ref pkg "$EVERYTHING"
    assert_file_has_content err "min-free-space"
    assert_one_line err
    assert_not_has_file repo/refs/heads/pkg
'

test_expect_success 'a file larger than what is held in memory (64 MiB) is streamed, with the same checksum' '
    mkdir -p big/usr/share/big
    head -c 67108865 /dev/zero > big/usr/share/big/zeros
    echo small > big/usr/share/big/small
    mv "$(make_deb big big 1.0 all)" big.deb
    new_repo r1
    new_repo r3 archive
    a2o --repo r1 unpack-deb --ref big big.deb > c1 2>/dev/null
    a2o --repo r3 unpack-deb --ref big big.deb > c3 2>/dev/null
    assert_streq "$(cat c1)" "$(cat c3)"
    ostree --repo=r1 ls big /usr/share/big/zeros > ls
    assert_file_has_content ls " 67108865 /usr/share/big/zeros"
    ostree fsck --repo=r1 > /dev/null 2>&1
'

# Every package is unpacked by a process of its own: what the binary loads
# at start is paid hundreds of times per build.
test_expect_success 'the commands module loads neither libsolvext (only lock opens it) nor a second libcurl' '
    ldd "$TOP_BUILDDIR/apt2ostree-commands.so" > libs
    assert_not_file_has_content libs "libsolvext"
    assert_not_file_has_content libs "librpm"
    assert_streq "$(grep -c "libcurl" libs)" 1
'

test_expect_success 'a --sha256 and --size that match are accepted' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg --sha256 "$EVERYTHING_SHA" --size "$(stat -c %s "$EVERYTHING")" \
        "$EVERYTHING" > /dev/null 2>&1
    assert_has_file repo/refs/heads/pkg
'

# --- errors: one line, naming the file and the problem; no ref -------------

# fails_cleanly ERR-PATTERN ARGS...: unpack-deb fails with a one-line error
# matching the pattern, and writes no ref.
fails_cleanly () {
    local pattern=$1
    shift
    new_repo
    expect_failure err a2o --repo repo unpack-deb --ref broken "$@"
    assert_one_line err
    assert_file_has_content err "^apt2ostree unpack-deb: error: .*$pattern"
    assert_not_has_file repo/refs/heads/broken
}

test_expect_success 'a wrong --sha256 is refused before anything is written' '
    fails_cleanly "everything.deb: sha256 mismatch (expected 0000000000000000000000000000000000000000000000000000000000000000, got $EVERYTHING_SHA)" \
        --sha256 0000000000000000000000000000000000000000000000000000000000000000 "$EVERYTHING"
    [ -z "$(find repo/objects -type f)" ]
'

test_expect_success 'a wrong --size is refused' '
    fails_cleanly "everything.deb: size mismatch (expected 12 bytes" --size 12 "$EVERYTHING"
'

test_expect_success 'a --sha256 that is not hex is a usage error' '
    new_repo
    expect_failure err a2o --repo repo unpack-deb --ref bad --sha256 xyz "$EVERYTHING"
    assert_one_line err
    assert_file_has_content err "is not 64 hex digits"
'

test_expect_success 'a truncated .deb is a corrupt archive' '
    head -c $(( $(stat -c %s "$EVERYTHING") * 2 / 3 )) "$EVERYTHING" > cut.deb
    fails_cleanly "cut.deb: .*\(truncated\|corrupt\)" cut.deb
'

test_expect_success 'a corrupt ar header is an error' '
    cp "$EVERYTHING" bad.deb
    printf "garbage!" | dd of=bad.deb bs=1 seek=72 conv=notrunc 2>/dev/null
    fails_cleanly "bad.deb: " bad.deb
'

test_expect_success 'a corrupt data.tar is an error naming the member' '
    deb_members "$FIX/everything-gzip.deb" m
    size=$(stat -c %s m/data.tar.gz)
    dd if=/dev/zero of=m/data.tar.gz bs=1 seek=$((size / 2)) count=64 conv=notrunc 2>/dev/null
    deb_ar bad.deb m/control.tar.* m/data.tar.gz
    fails_cleanly "bad.deb: data.tar.gz" bad.deb
'

# A package whose data is incompressible: gzip and xz store it as it is, so
# bytes changed inside it still decompress, and only the stream's check
# (gzip's CRC-32 in its trailer, xz's CRC64 after its block) tells.
make_incompressible () {
    mkdir -p big/usr/share/big && head -c 2000000 /dev/urandom > big/usr/share/big/blob
    DEB_COMPRESSION=$1 make_deb big big 1.0 amd64
}

test_expect_success 'a gzip data.tar whose data does not match its CRC-32 is refused (libarchive does not check it)' '
    mv "$(make_incompressible gzip)" big.deb
    new_repo
    a2o --repo repo unpack-deb --ref good big.deb > /dev/null 2>&1
    deb_members big.deb m
    size=$(stat -c %s m/data.tar.gz)
    dd if=/dev/zero of=m/data.tar.gz bs=1 seek=$((size - 5000)) count=64 conv=notrunc 2>/dev/null
    deb_ar bad.deb m/control.tar.* m/data.tar.gz
    ! dpkg-deb -x bad.deb dpkg-out 2>/dev/null || fail "dpkg-deb unpacks bad.deb"
    fails_cleanly "bad.deb: data.tar.gz is corrupt: its data does not match the gzip trailer" bad.deb
'

test_expect_success 'an xz data.tar whose block check is wrong is refused' '
    mv "$(make_incompressible xz)" big.deb
    deb_members big.deb m
    # the check: the last 8 bytes before the index, which is 12 + 8 bytes
    # (its header and one record, padded) before the 12-byte stream footer
    size=$(stat -c %s m/data.tar.xz)
    printf "\\377\\377\\377\\377" | dd of=m/data.tar.xz bs=1 seek=$((size - 12 - 12 - 8)) conv=notrunc 2>/dev/null
    deb_ar bad.deb m/control.tar.* m/data.tar.xz
    ! xz -t m/data.tar.xz 2>/dev/null || fail "m/data.tar.xz is not damaged"
    fails_cleanly "bad.deb: data.tar.xz" bad.deb
'

test_expect_success 'a damaged tar header is an error' '
    deb_members "$FIX/everything-none.deb" m
    dd if=/dev/zero of=m/data.tar bs=1 seek=600 count=200 conv=notrunc 2>/dev/null
    deb_ar bad.deb m/control.tar* m/data.tar
    fails_cleanly "bad.deb: data.tar is corrupt" bad.deb
'

test_expect_success 'an entry with ".." is refused' '
    deb_from_spec evil.deb evil "d|./|755
f|./usr/../../etc/passwd|644|root::0:0"
    fails_cleanly "evil.deb: data.tar.gz entry \"./usr/../../etc/passwd\" climbs out of the tree" evil.deb
'

test_expect_success 'an entry with an absolute path is refused' '
    deb_from_spec evil.deb evil "d|./|755
f|/etc/passwd|644|root::0:0"
    fails_cleanly "evil.deb: data.tar.gz entry \"/etc/passwd\" has an absolute path" evil.deb
'

test_expect_success 'an entry under a symlink of the same package is refused' '
    deb_from_spec evil.deb evil "d|./|755
l|./etc|/tmp
f|./etc/passwd|644|root::0:0"
    fails_cleanly "evil.deb: entry \"./etc/passwd\" would land under the symlink \"/etc\" of the same package" evil.deb
'

test_expect_success 'an entry under a merged-/usr symlink target of the same package is refused too' '
    deb_from_spec evil.deb evil "d|./|755
d|./usr/|755
l|./usr/lib|/tmp
f|./lib/x|644|x"
    fails_cleanly "evil.deb: entry \"./lib/x\" would land under the symlink \"/usr/lib\"" evil.deb
'

test_expect_success 'one path shipped twice with different content (bin/x and usr/bin/x) is refused' '
    deb_from_spec evil.deb evil "d|./|755
f|./bin/x|755|one
f|./usr/bin/x|755|two"
    fails_cleanly "evil.deb: entry \"./usr/bin/x\" lands on \"/usr/bin/x\", which an earlier entry of the package already holds with other content" evil.deb
'

test_expect_success 'the same file at bin/x and usr/bin/x is fine under merged /usr, and kept apart without it' '
    deb_from_spec twice.deb twice "d|./|755
f|./bin/x|755|same
f|./usr/bin/x|755|same"
    new_repo
    a2o --repo repo unpack-deb --ref merged twice.deb > /dev/null
    a2o --repo repo unpack-deb --no-merged-usr --ref split twice.deb > /dev/null
    ls_tree repo merged > merged
    assert_file_has_content merged " /usr/bin/x$"
    ls_tree repo split > split
    assert_file_has_content split " /bin/x$"
'

test_expect_success 'a directory where the package already has a file is refused' '
    deb_from_spec evil.deb evil "d|./|755
f|./etc|644|file
d|./etc/|755"
    fails_cleanly "evil.deb: entry \"./etc/\" is a directory, but the package also ships \"/etc\" as a file" evil.deb
'

test_expect_success 'a hard link to a path not earlier in the package is refused' '
    deb_from_spec evil.deb evil "d|./|755
h|./usr/x|./etc/shadow"
    fails_cleanly "evil.deb: hard link \"./usr/x\" points to \"./etc/shadow\", which is not an earlier file" evil.deb
'

test_expect_success 'a file that is not a .deb is refused' '
    echo "just text" > notadeb.deb
    fails_cleanly "notadeb.deb: not a Debian package" notadeb.deb
    tar -cf tarball.deb notadeb.deb
    fails_cleanly "tarball.deb: not a Debian package" tarball.deb
'

test_expect_success 'an ar archive that is not a .deb is refused' '
    echo x > something
    ar rc other.deb something 2>/dev/null
    fails_cleanly "other.deb: not a Debian package (the first member is \"something\"" other.deb
'

test_expect_success 'a .deb format other than 2.x is refused' '
    deb_members "$EVERYTHING" m
    echo 3.0 > debian-binary
    (cd m && ar rc ../v3.deb ../debian-binary control.tar.* data.tar.*)
    fails_cleanly "v3.deb: unsupported .deb format \"3.0\"" v3.deb
'

test_expect_success 'a .deb without data.tar is refused' '
    deb_members "$EVERYTHING" m
    deb_ar nodata.deb m/control.tar.*
    fails_cleanly "nodata.deb: truncated or corrupt package: no data.tar member" nodata.deb
'

test_expect_success 'a missing file is a one-line error' '
    fails_cleanly "missing.deb: No such file or directory" missing.deb
'

test_expect_success 'a missing repository is an error that says how to create it' '
    expect_failure err a2o --repo nope unpack-deb --ref pkg "$EVERYTHING"
    assert_one_line err
    assert_file_has_content err "apt2ostree --repo nope init"
    assert_not_has_file nope
'

test_expect_success 'an invalid ref name is refused before any work' '
    fails_cleanly "\"deb/1:2\" is not a valid ref name" --ref deb/1:2 "$EVERYTHING"
'

test_expect_success '--ref is required, and exactly one package' '
    new_repo
    expect_failure err a2o --repo repo unpack-deb "$EVERYTHING"
    assert_file_has_content err "\-\-ref is required"
    expect_failure err a2o --repo repo unpack-deb --ref x
    assert_file_has_content err "expected one FILE.deb or URL"
    set +e; a2o --repo repo unpack-deb --ref x 2>/dev/null; rc=$?; set -e
    assert_streq "$rc" 2
'

# --- --batch: many packages, one process, one transaction ------------------

test_expect_success '--batch unpacks each package into its own ref, with the commits one run each gives' '
    new_repo single
    a2o --repo single unpack-deb --ref a "$EVERYTHING" > ca 2>/dev/null
    a2o --repo single unpack-deb --ref b/libsame "$FIX/libsame1.deb" > cb 2>/dev/null
    a2o --repo single unpack-deb --no-merged-usr --ref c "$FIX/everything-zstd.deb" > cc 2>/dev/null
    new_repo
    printf "# a comment, then a blank line\n\na %s\n  b/libsame\t%s %s %s\n" "$EVERYTHING" \
        "$FIX/libsame1.deb" "$(sha256sum < "$FIX/libsame1.deb" | cut -d" " -f1)" \
        "$(stat -c %s "$FIX/libsame1.deb")" > list
    a2o --repo repo unpack-deb --batch list > out 2>/dev/null
    printf "%s a\n%s b/libsame\n" "$(cat ca)" "$(cat cb)" > expected
    diff -u expected out
    assert_streq "$(ref_commit repo a)" "$(cat ca)"
    assert_streq "$(ref_commit repo b/libsame)" "$(cat cb)"
    echo "c $FIX/everything-zstd.deb -" | a2o --repo repo unpack-deb --no-merged-usr --batch - > out 2>/dev/null
    assert_streq "$(cat out)" "$(cat cc) c"
    ostree --repo=repo fsck > /dev/null 2>&1
'

test_expect_success '--batch leaves the ref files of packages already held untouched' '
    new_repo
    printf "a %s\nb %s\n" "$EVERYTHING" "$FIX/libsame1.deb" > list
    a2o --repo repo unpack-deb --batch list > out1 2>/dev/null
    before=$(mtime repo/refs/heads/a)
    sleep 0.05
    printf "a %s\nb %s\nc %s\n" "$EVERYTHING" "$FIX/libsame1.deb" "$FIX/everything-gzip.deb" > list
    a2o --repo repo unpack-deb --batch list > out2 2>/dev/null
    assert_streq "$(mtime repo/refs/heads/a)" "$before"
    assert_streq "$(head -n 2 out2)" "$(cat out1)"
    assert_has_file repo/refs/heads/c
'

test_expect_success '--batch writes no ref at all when one package fails, and names its line' '
    new_repo
    printf "good %s\nbad %s 0000000000000000000000000000000000000000000000000000000000000000\n" \
        "$FIX/libsame1.deb" "$EVERYTHING" > list
    expect_failure err a2o --repo repo unpack-deb --batch list
    assert_one_line err
    assert_file_has_content err "^apt2ostree unpack-deb: error: list:2: .*everything.deb: sha256 mismatch"
    assert_not_has_file repo/refs/heads/good
    assert_not_has_file repo/refs/heads/bad
    head -c 2000 "$EVERYTHING" > cut.deb
    printf "good %s\nbad %s\n" "$FIX/libsame1.deb" cut.deb > list
    expect_failure err a2o --repo repo unpack-deb --batch list
    assert_one_line err
    assert_file_has_content err "list:2: cut.deb: "
    assert_not_has_file repo/refs/heads/good
    [ -z "$(ls repo/refs/heads)" ]
    [ -z "$(find repo/objects -type f)" ]
'

test_expect_success 'a --batch list that is wrong is refused before any work, naming the line' '
    new_repo
    batch_fails () {
        printf "$1" > list
        expect_failure err a2o --repo repo unpack-deb --batch list
        assert_one_line err
        assert_file_has_content err "$2"
        [ -z "$(ls repo/refs/heads)" ]
        [ -z "$(find repo/objects -type f)" ]
    }
    batch_fails "a\n" "list:1: expected \"REF FILE.deb|URL \[SHA256|- \[SIZE\]\]\", got 1 field$"
    batch_fails "a $EVERYTHING\nb x y z w\n" "list:2: expected .*got 5 fields"
    batch_fails "deb/1:2 $EVERYTHING\n" "list:1: \"deb/1:2\" is not a valid ref name"
    batch_fails "a $EVERYTHING xyz\n" "list:1: sha256 \"xyz\" is not 64 hex digits"
    batch_fails "a $EVERYTHING - 12k\n" "list:1: size \"12k\" is not a number of bytes"
    batch_fails "a $EVERYTHING\n\nb $EVERYTHING\na $EVERYTHING\n" "list:4: ref \"a\" is already written by line 1"
    batch_fails "# nothing\n\n" "list: no packages listed"
    expect_failure err a2o --repo repo unpack-deb --batch missing-list
    assert_one_line err
    assert_file_has_content err "missing-list"
'

test_expect_success '--batch with --ref, --sha256 or a package on the command line is a usage error' '
    new_repo
    echo "a $EVERYTHING" > list
    set +e
    a2o --repo repo unpack-deb --batch list --ref x 2> err; rc1=$?
    a2o --repo repo unpack-deb --batch list "$EVERYTHING" 2> err2; rc2=$?
    set -e
    assert_streq "$rc1 $rc2" "2 2"
    assert_file_has_content err "go on each line of the --batch list"
    assert_file_has_content err2 "takes its packages from LIST"
    a2o unpack-deb --help > help
    assert_file_has_content help "\-\-batch"
'

test_expect_success 'a package that ships no md5sums gets the one dpkg --unpack writes (files in order, the conffile, a hard link, an empty file; no symlink)' '
    rm -rf nomd && mkdir -p nomd/p/DEBIAN nomd/p/usr/bin nomd/p/etc
    echo hi > nomd/p/usr/bin/a && ln nomd/p/usr/bin/a nomd/p/usr/bin/b && ln -s a nomd/p/usr/bin/c
    : > nomd/p/usr/bin/empty && echo conf > nomd/p/etc/x.conf
    printf "Package: nomd\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.invalid>\nDescription: t\n" \
        > nomd/p/DEBIAN/control
    echo /etc/x.conf > nomd/p/DEBIAN/conffiles
    dpkg-deb --root-owner-group -b nomd/p nomd/nomd.deb > /dev/null
    dpkg_unpack nomd/root nomd/nomd.deb
    new_repo
    a2o --repo repo unpack-deb --ref nomd nomd/nomd.deb > /dev/null
    ostree --repo=repo cat nomd /var/lib/dpkg/info/nomd.md5sums > nomd/ours
    cat nomd/ours
    cmp nomd/root/var/lib/dpkg/info/nomd.md5sums nomd/ours
'

test_expect_success 'a package with no md5sums and no regular file gets the empty md5sums dpkg --unpack writes' '
    rm -rf nofile && mkdir -p nofile/p/DEBIAN nofile/p/usr/share/nofile
    ln -s /etc/hostname nofile/p/usr/share/nofile/link
    printf "Package: nofile\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.invalid>\nDescription: t\n" \
        > nofile/p/DEBIAN/control
    dpkg-deb --root-owner-group -b nofile/p nofile/nofile.deb > /dev/null
    dpkg_unpack nofile/root nofile/nofile.deb
    new_repo
    a2o --repo repo unpack-deb --ref nofile nofile/nofile.deb > /dev/null
    ostree --repo=repo cat nofile /var/lib/dpkg/info/nofile.md5sums > nofile/ours
    test -f nofile/root/var/lib/dpkg/info/nofile.md5sums
    cmp nofile/root/var/lib/dpkg/info/nofile.md5sums nofile/ours
    ostree --repo=repo ls nofile /var/lib/dpkg/info/nofile.md5sums > nofile/ls
    assert_file_has_content nofile/ls "^-00644 0 0 *0 "
'

test_expect_success 'the paths data.tar links together are recorded in the package commit, in a fixed order; a package without links has no such key' '
    rm -rf hl && mkdir -p hl/p/DEBIAN hl/p/usr/bin hl/p/bin hl/p/usr/share/hl
    echo one > hl/p/usr/bin/z && ln hl/p/usr/bin/z hl/p/usr/bin/a && ln hl/p/usr/bin/z hl/p/bin/m
    echo two > hl/p/usr/share/hl/x && ln hl/p/usr/share/hl/x hl/p/usr/share/hl/y
    echo two > hl/p/usr/share/hl/twin
    printf "Package: hl\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.invalid>\nDescription: t\n" \
        > hl/p/DEBIAN/control
    dpkg-deb --root-owner-group -b hl/p hl/hl.deb > /dev/null
    new_repo
    a2o --repo repo unpack-deb --ref hl hl/hl.deb > /dev/null
    a2o --repo repo unpack-deb --ref hl2 hl/hl.deb > /dev/null
    assert_streq "$(ref_commit repo hl)" "$(ref_commit repo hl2)"
    ostree --repo=repo show --print-metadata-key=apt2ostree.hardlinks hl > hl/groups
    assert_streq "$(tr "\047" "\"" < hl/groups)" "[[\"/usr/bin/a\", \"/usr/bin/m\", \"/usr/bin/z\"], [\"/usr/share/hl/x\", \"/usr/share/hl/y\"]]"
    rm -rf nl && mkdir -p nl/p/DEBIAN nl/p/usr/bin && echo x > nl/p/usr/bin/x && cp nl/p/usr/bin/x nl/p/usr/bin/y
    printf "Package: nl\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.invalid>\nDescription: t\n" \
        > nl/p/DEBIAN/control
    dpkg-deb --root-owner-group -b nl/p nl/nl.deb > /dev/null
    a2o --repo repo unpack-deb --ref nl nl/nl.deb > /dev/null
    ! ostree --repo=repo show --print-metadata-key=apt2ostree.hardlinks nl 2> /dev/null
'

test_done
