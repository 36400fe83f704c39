#!/bin/bash
# apt2ostree mod: a command over a tree in bubblewrap, its changes committed.
# Runs as root (bare repository, real ownership) and, through
# test-mod-unprivileged.sh, as a normal user (bare-user, fakeroot).
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/mod-lib.sh"

if [ "$(id -u)" = 0 ]; then MODE=root; else MODE=unprivileged; fi
say "mode: $MODE"
command -v bwrap > /dev/null || skip_all "bubblewrap is not installed (apt-get install bubblewrap)"

R="$SCRATCH/repo"
setup_base_repo "$R" || { echo "Bail out! cannot build the base tree"; exit 1; }
m () { a2o --repo "$R" mod "$@"; }

test_expect_success 'appending to, truncating, chmod and chown of checked-out files never write through to the repository' '
    m --ref t1 base --chroot -- sh -c "echo more >> /etc/hello; : > /data/keep; truncate -s 2 /etc/motd; chmod 600 /etc/owned; chown 7:8 /etc/owned; chmod 700 /usr/bin/tool" > commit
    ostree --repo="$R" fsck > fsck.out 2>&1 || { cat fsck.out; fail "fsck"; }
    assert_streq "$(ostree --repo="$R" cat base /etc/hello)" "hello"
    assert_streq "$(ostree --repo="$R" cat base /data/keep)" "keep"
    assert_streq "$(ostree --repo="$R" cat base /etc/motd)" "motd"
    assert_streq "$(mod_ls "$R" base /etc/owned)" "-00644 0 0"
    assert_streq "$(mod_ls "$R" base /usr/bin/tool)" "-00755 0 0"
    assert_streq "$(ostree --repo="$R" cat t1 /etc/hello | tr "\n" " ")" "hello more "
    assert_streq "$(ostree --repo="$R" cat t1 /data/keep | wc -c)" "0"
    assert_streq "$(ostree --repo="$R" cat t1 /etc/motd)" "mo"
    assert_streq "$(mod_ls "$R" t1 /etc/owned)" "-00600 7 8"
    assert_streq "$(mod_ls "$R" t1 /usr/bin/tool)" "-00700 0 0"
    assert_streq "$(cat commit)" "$(ref_commit "$R" t1)"
    no_scratch_left "$R"
'

test_expect_success 'a command that exits non-zero writes no OUT, reports its status and last lines, and leaves no scratch' '
    expect_failure err m --ref t2 base --chroot -- sh -c "echo early; echo touching; touch /new; echo last words >&2; exit 3"
    assert_one_line err
    assert_file_has_content err "exited with status 3"
    assert_file_has_content err "last words"
    assert_file_has_content err "OUT t2 not written"
    assert_file_has_content err "scratch removed"
    assert_not_has_file "$R/refs/heads/t2"
    no_scratch_left "$R"
'

test_expect_success 'a command killed by a signal is reported, and --keep-on-failure keeps and names the scratch' '
    expect_failure err m --ref t3 base --chroot --keep-on-failure -- sh -c "echo x > /new; kill -9 \$\$"
    assert_one_line err
    assert_file_has_content err "killed by signal 9"
    assert_not_has_file "$R/refs/heads/t3"
    dir=$(sed -n "s/.*scratch kept in \([^ ]*\) .*/\1/p" err)
    test -n "$dir" || fail "no scratch directory named"
    assert_file_has_content "$dir/upper/new" x
    # (never chmod -R a scratch directory: lower/ holds the repository'"'"'s own files)
    chmod -R u+rwx "$dir/work" 2>/dev/null || true
    rm -rf "$dir"
'

test_expect_success 'deletions, renames over files, replaced directories, symlinks, setuid bits and owners land in OUT' '
    m --ref t4 base --chroot -- sh -c "
        rm /data/keep
        mv /etc/a /etc/b
        rm -r /data/dir && mkdir /data/dir && echo fresh > /data/dir/new
        ln -s ../etc/hello /data/link
        chmod 4755 /usr/bin/tool
        chown 1:2 /etc/b
        chmod 2770 /data/dir
        mkdir -p /srv/www && chown 33:33 /srv/www" > /dev/null
    ostree --repo="$R" ls -R t4 > ls.out
    assert_not_file_has_content ls.out " /data/keep$"
    assert_not_file_has_content ls.out " /etc/a$"
    assert_streq "$(ostree --repo="$R" cat t4 /etc/b)" "a"
    assert_streq "$(mod_ls "$R" t4 /etc/b)" "-00644 1 2"
    assert_not_file_has_content ls.out "/data/dir/old"
    assert_not_file_has_content ls.out "/data/dir/sub"
    assert_streq "$(ostree --repo="$R" cat t4 /data/dir/new)" "fresh"
    assert_streq "$(mod_ls "$R" t4 /data/dir)" "d02770 0 0"
    assert_file_has_content ls.out "^l00777 0 0 *0 /data/link -> ../etc/hello$"
    assert_streq "$(mod_ls "$R" t4 /usr/bin/tool)" "-04755 0 0"
    assert_streq "$(mod_ls "$R" t4 /srv/www)" "d00755 33 33"
    mkdir co && a2o --repo "$R" export t4 --dir co/t4
    assert_has_file co/t4/data/link
    assert_not_has_file co/t4/data/keep
'

test_expect_success 'files the command only looked at keep their objects, directories their metadata' '
    m --ref t5 base --chroot -- sh -c "cat /etc/shadow > /dev/null; ls -l /var/mail > /dev/null; touch /data/dir/sub/newer" > /dev/null
    assert_streq "$(mod_ls "$R" t5 /etc/shadow)" "-00640 0 42"
    assert_streq "$(mod_ls "$R" t5 /var/mail)" "d02775 0 8"
    assert_streq "$(mod_ls "$R" t5 /data/dir)" "d00755 0 0"
    assert_streq "$(ostree --repo="$R" rev-parse t5^ 2>/dev/null || true)" ""
    ostree --repo="$R" diff base t5 > diff.out
    assert_streq "$(cat diff.out)" "A    /data/dir/sub/newer"
'

test_expect_success 'the command sees the owners and modes OSTree stores' '
    m --ref t6 base --chroot -- sh -c "stat -c \"%a %u %g %n\" /etc/shadow /var/mail /usr/bin/tool > /seen; id -u >> /seen" > /dev/null
    assert_streq "$(ostree --repo="$R" cat t6 /seen | tr "\n" ,)" "640 0 42 /etc/shadow,2775 0 8 /var/mail,755 0 0 /usr/bin/tool,0,"
'

# A wide and deep tree: 24 top directories, 4 levels each, files in every
# directory, read-only and setgid directories, setuid files, symlinks, one
# content under many names, xattrs on files and directories, empty files, a
# file its owner cannot read and a directory its owner cannot search.
make_wide_tar () {
    python3 - "$1" <<'PY'
import io, sys, tarfile
tar = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
def add(name, kind, mode, uid=0, gid=0, data=b"", target=None, xattr=None):
    ti = tarfile.TarInfo(name)
    ti.mode, ti.uid, ti.gid, ti.mtime = mode, uid, gid, 0
    if xattr:
        ti.pax_headers = {"SCHILY.xattr.user.wide": xattr}
    if kind == "d":
        ti.type = tarfile.DIRTYPE
        tar.addfile(ti)
    elif kind == "l":
        ti.type, ti.linkname = tarfile.SYMTYPE, target
        tar.addfile(ti)
    else:
        ti.size = len(data)
        tar.addfile(ti, io.BytesIO(data))
for t in range(24):
    path = "t%02d" % t
    for depth in range(4):
        add(path, "d", 0o2775 if depth == 2 else 0o755, gid=t if depth == 2 else 0,
            xattr="dir-%d" % t if depth == 1 else None)
        for f in range(6):
            add("%s/f%d" % (path, f), "f", 0o4755 if f == 0 else 0o644, uid=f,
                data=b"same\n" if f == 1 else ("%s %d\n" % (path, f)).encode(),
                xattr="file" if f == 2 else None)
        add(path + "/link", "l", 0o777, target="f1")
        if depth == 0:
            add(path + "/empty", "f", 0o644)
        path += "/d%d" % depth
    if t == 1:
        # not searchable by its owner, with a subdirectory and files
        add(path, "d", 0o600)
        add(path + "/inner", "d", 0o755)
        add(path + "/inner/f", "f", 0o644, data=b"inner\n")
        add(path + "/secret", "f", 0o200, data=b"write-only\n")
        continue
    # an empty directory at the bottom, read-only in every third tree
    add(path, "d", 0o555 if t % 3 == 0 else 0o755)
tar.close()
PY
}

test_expect_success 'the command sees the tree ostree checkout gives (many directories, modes, owners, links)' '
    make_wide_tar wide.tar
    a2o --repo "$R" import --ref wide --tar wide.tar > /dev/null
    m --ref tw wide -- sh -c "cd /work && find . -printf \"%y %m %U %G %s %p %l\\n\" | LC_ALL=C sort > /tmp/listing; cp /tmp/listing /work/listing" > /dev/null
    ostree --repo="$R" cat tw /listing > seen
    assert_file_has_content seen "^f 4755 0 0 "
    assert_file_has_content seen "^d 555 0 0 [0-9]* ./t00/d0/d1/d2/d3 $"
    assert_file_has_content seen "^d 2775 0 5 [0-9]* ./t05/d0/d1 $"
    assert_file_has_content seen "^d 600 0 0 [0-9]* ./t01/d0/d1/d2/d3 $"
    assert_file_has_content seen "^f 200 0 0 11 ./t01/d0/d1/d2/d3/secret $"
    if [ "$MODE" = root ]; then
        ostree --repo="$R" checkout wide co
        (cd co && find . -printf "%y %m %U %G %s %p %l\n" | LC_ALL=C sort) > expected
        # the root directory: the listing file the command wrote is not in
        # ostree'"'"'s checkout, and "." is 0755 in both.  A directory'"'"'s
        # size is its file system'"'"'s (a tmpfs counts its entries), not
        # the tree'"'"'s: left out.
        for f in expected seen; do
            sed "s/^\(d [0-9]* [0-9]* [0-9]*\) [0-9]* /\1 - /" $f | LC_ALL=C sort > $f.nodirsize
        done
        diff -u expected.nodirsize seen.nodirsize
        chmod -R u+w co && rm -rf co
    fi
    no_scratch_left "$R"
'

# tree_listing DIR OUT: OUT.dirs, "path mode uid gid mtime" of every
# directory of the tree at DIR as it is, opened up once listed (only
# directories: the files are the repository's own); OUT.files, "path type
# mode uid gid size inode target" of every other entry.
tree_listing () {
    python3 - "$1" "$2" <<'PY'
import os, stat, sys
top, out = sys.argv[1], sys.argv[2]
dirs, files = [], []
def walk(rel):
    st = os.lstat(os.path.join(top, rel))
    dirs.append("%s %o %d %d %d" % (rel, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid,
                                    st.st_mtime))
    os.chmod(os.path.join(top, rel), stat.S_IMODE(st.st_mode) | 0o700)
    for name in os.listdir(os.path.join(top, rel)):
        sub = os.path.join(rel, name)
        st = os.lstat(os.path.join(top, sub))
        if stat.S_ISDIR(st.st_mode):
            walk(sub)
            continue
        link = os.readlink(os.path.join(top, sub)) if stat.S_ISLNK(st.st_mode) else ""
        files.append("%s %s %o %d %d %d %d %s" % (sub, "l" if link else "f",
                     stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_size, st.st_ino, link))
walk(".")
for name, lines in (("dirs", dirs), ("files", files)):
    with open("%s.%s" % (out, name), "w") as f:
        f.write("".join(l + "\n" for l in sorted(lines)))
PY
}

# check_links EXPECTED.files SEEN.files: a file with content is its object
# (the same inode in both checkouts); not as root, an empty file or one its
# owner cannot read is a copy in both (as root ostree copies empty files,
# mod links them).
check_links () {
    LC_ALL=C join "$1" "$2" | awk -v mode="$MODE" '
        $2 == "f" { linked = $7 == $13; copy = $6 == 0 || (mode != "root" && $1 ~ /secret$/)
          if (mode == "root" ? !copy && !linked : linked == copy) { print "wrong:", $0; bad = 1 } }
        END { exit bad }'
}

test_expect_success 'the checkout itself is ostree checkout'"'"'s (-U not as root): modes, links, copies, directory times' '
    expect_failure err m --ref tk wide --keep-on-failure -- false
    dir=$(sed -n "s/.*scratch kept in \([^ ]*\) .*/\1/p" err)
    test -d "$dir/lower" || fail "no scratch kept"
    if [ "$MODE" = root ]; then ostree --repo="$R" checkout wide co; else ostree --repo="$R" checkout -U wide co; fi
    tree_listing co expected
    tree_listing "$dir/lower" seen
    if [ "$MODE" = root ]; then
        assert_file_has_content seen.dirs "^./t01/d0/d1/d2/d3 600 0 0 0$"
    else
        # not root, the owner keeps searching its directories (the command
        # is shown 0600 by fakeroot: the test above)
        sed -i "s|^\(./t01/d0/d1/d2/d3\) 600 |\1 700 |" expected.dirs
    fi
    diff -u expected.dirs seen.dirs
    assert_streq "$(cut -d" " -f5 seen.dirs | sort -u)" 0
    diff -u <(cut -d" " -f1-6,8- expected.files) <(cut -d" " -f1-6,8- seen.files)
    assert_file_has_content seen.files "^./t01/d0/d1/d2/d3/inner/f f 644 [0-9]* [0-9]* 6 "
    check_links expected.files seen.files
    chmod -R u+rwx "$dir/work" 2> /dev/null || true
    rm -rf co "$dir"
'

if [ "$MODE" = root ] && command -v getfattr > /dev/null; then
test_expect_success 'the checkout carries the xattrs OSTree stores, and a changed file keeps them' '
    ostree --repo="$R" ls -X base /etc/labelled | grep -q "mod-test" || fail "import lost the xattr"
    m --ref t6e base -- sh -c "getfattr --only-values -n user.mod-test /work/etc/labelled > /work/seen; echo more >> /work/etc/labelled" > /dev/null
    assert_streq "$(ostree --repo="$R" cat t6e /seen)" "file-label"
    ostree --repo="$R" ls -X t6e /etc/labelled > x.out
    assert_file_has_content x.out "mod-test"
'
else
test_skip 'the checkout carries the xattrs OSTree stores, and a changed file keeps them' \
    "bare-user checkouts keep xattrs in OSTree's metadata only (covered by the root run), or getfattr (attr) is missing"
fi

test_expect_success 'owners survive a rename, and a chown alone (no copy-up) of files and directories lands in OUT' '
    m --ref t6b base --chroot -- sh -c "mv /etc/shadow /etc/shadow-; chgrp 50 /var; chown 3:4 /data/dir/sub/file; chmod 711 /data/dir/sub" > /dev/null
    assert_streq "$(mod_ls "$R" t6b /etc/shadow-)" "-00640 0 42"
    assert_streq "$(mod_ls "$R" t6b /var)" "d00755 0 50"
    assert_streq "$(mod_ls "$R" t6b /data/dir/sub/file)" "-00644 3 4"
    assert_streq "$(mod_ls "$R" t6b /data/dir/sub)" "d00711 0 0"
    assert_streq "$(ostree --repo="$R" cat t6b /data/dir/sub/file)" "deep"
'

test_expect_success 'a directory replaced by a file and a file replaced by a directory land in OUT' '
    m --ref t6c base --chroot -- sh -c "rm -r /data/dir && echo now-a-file > /data/dir; rm /etc/motd && mkdir /etc/motd && echo inside > /etc/motd/f" > /dev/null
    assert_streq "$(mod_ls "$R" t6c /data/dir)" "-00644 0 0"
    assert_streq "$(ostree --repo="$R" cat t6c /data/dir)" "now-a-file"
    assert_streq "$(mod_ls "$R" t6c /etc/motd)" "d00755 0 0"
    assert_streq "$(ostree --repo="$R" cat t6c /etc/motd/f)" "inside"
'

test_expect_success 'a fifo left in the tree is a one-line error naming it, and OUT is not written' '
    expect_failure err m --ref t6d base --chroot -- mkfifo /data/pipe
    assert_one_line err
    assert_file_has_content err "/data/pipe: the command left a fifo here"
    assert_not_has_file "$R/refs/heads/t6d"
    no_scratch_left "$R"
'

if [ "$MODE" = root ] && command -v setcap > /dev/null; then
test_expect_success 'a security.capability set by setcap lands in OUT' '
    m --ref t7 base -- setcap cap_net_raw+ep /work/usr/bin/tool > /dev/null
    ostree --repo="$R" ls -X t7 /usr/bin/tool > x.out
    assert_file_has_content x.out "security.capability"
    a2o --repo "$R" export t7 --dir co
    getcap co/usr/bin/tool > cap.out
    assert_file_has_content cap.out "cap_net_raw=ep"
    ostree --repo="$R" ls -X base /usr/bin/tool > base.out
    assert_not_file_has_content base.out "security.capability"
'
else
test_skip 'a security.capability set by setcap lands in OUT' \
    "needs root (fakeroot keeps xattrs in its daemon and never saves them) and setcap (libcap2-bin)"
fi

test_expect_success 'the same IN and the same command give the same commit, and the ref file is not rewritten' '
    m --ref t8a base --chroot -- sh -c "echo x > /x; chmod 711 /x; rm /etc/motd" > c1
    m --ref t8b base --chroot -- sh -c "echo x > /x; chmod 711 /x; rm /etc/motd" > c2
    assert_streq "$(cat c1)" "$(cat c2)"
    before=$(mtime "$R/refs/heads/t8a")
    sleep 0.05
    m --ref t8a base --chroot -- sh -c "echo x > /x; chmod 711 /x; rm /etc/motd" > c3
    assert_streq "$(cat c3)" "$(cat c1)"
    assert_streq "$(mtime "$R/refs/heads/t8a")" "$before"
    SOURCE_DATE_EPOCH=1700000000 m --ref t8c base --chroot -- sh -c "echo x > /x; chmod 711 /x; rm /etc/motd" > c4
    test "$(cat c4)" != "$(cat c1)" || fail "SOURCE_DATE_EPOCH made no difference"
'

test_expect_success '--capture-subdir makes OUT the directory the command filled' '
    m --ref t9 base --chroot --capture-subdir /dest -- sh -c "mkdir -p /dest/usr/bin && echo hi > /dest/usr/bin/x && chmod 755 /dest/usr/bin/x" > /dev/null
    ostree --repo="$R" ls -R t9 > ls.out
    assert_file_has_content ls.out "^-00755 0 0 *3 /usr/bin/x$"
    assert_not_file_has_content ls.out "/etc"
    expect_failure err m --ref t9b base --chroot --capture-subdir /nowhere -- true
    assert_one_line err
    assert_file_has_content err "capture-subdir /nowhere"
    assert_not_has_file "$R/refs/heads/t9b"
'

test_expect_success 'without --chroot the tree is /work and the host is read-only' '
    m --ref t10 base -- sh -c "set -e; test \"\$(pwd)\" = /work; cat /work/etc/hello > /work/copied; if touch /usr/probe 2>/dev/null; then echo /usr is writable >&2; exit 1; fi; touch /outside-the-tree" > /dev/null
    assert_streq "$(ostree --repo="$R" cat t10 /copied)" "hello"
    ostree --repo="$R" ls -R t10 > ls.out
    assert_not_file_has_content ls.out "probe"
    assert_not_file_has_content ls.out "outside-the-tree"
'

test_expect_success 'mount points, binds, /tmp and /run are not committed' '
    mkdir src && echo from-host > src/file
    m --ref t11 base --chroot --bind "$PWD/src" /src --ro-bind "$PWD/src" /mnt/deep/ro -- sh -c "cat /src/file > /copied; echo t > /tmp/t; echo r > /run/r; echo w > /src/written; test -e /dev/null; test -e /proc/self" > /dev/null
    ostree --repo="$R" ls t11 / > ls.out
    assert_streq "$(ostree --repo="$R" cat t11 /copied)" "from-host"
    for p in /src /mnt /tmp /run /dev /proc /sys; do
        assert_not_file_has_content ls.out " $p$"
    done
    assert_file_has_content src/written w
'

test_expect_success 'the environment is PATH, LC_ALL, SOURCE_DATE_EPOCH and what --setenv adds' '
    HOSTVAR=leak m --ref t12 base --chroot --setenv GREETING "hello world" -- sh -c "env > /env" > /dev/null
    ostree --repo="$R" cat t12 /env > env
    assert_file_has_content env "^PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin$"
    assert_file_has_content env "^LC_ALL=C.UTF-8$"
    assert_file_has_content env "^SOURCE_DATE_EPOCH=0$"
    assert_file_has_content env "^GREETING=hello world$"
    assert_not_file_has_content env "HOSTVAR"
    assert_not_file_has_content env "^HOME="
'

test_expect_success 'there is no network unless --network' '
    m --ref t13 base --chroot -- sh -c "cat /proc/net/dev > /net" > /dev/null
    ostree --repo="$R" cat t13 /net > net
    assert_streq "$(tail -n +3 net | wc -l)" "1"
    assert_file_has_content net "lo:"
    if [ "$(tail -n +3 /proc/net/dev | wc -l)" -gt 1 ]; then
        m --ref t13b base --chroot --network -- sh -c "cat /proc/net/dev > /net" > /dev/null
        test "$(ostree --repo="$R" cat t13b /net | tail -n +3 | wc -l)" -gt 1
    fi
'

test_expect_success 'a missing IN is a one-line error' '
    expect_failure err m --ref t14 no-such-ref -- true
    assert_one_line err
    assert_file_has_content err "no-such-ref"
'

test_expect_success 'a command not found inside the chroot is a one-line error naming it' '
    expect_failure err m --ref t15 base --chroot -- frobnicate --now
    assert_one_line err
    assert_file_has_content err "command \"frobnicate\" not found inside the sandbox"
    assert_not_has_file "$R/refs/heads/t15"
    no_scratch_left "$R"
'

test_expect_success 'a missing bubblewrap is a one-line error naming the package' '
    expect_failure err env APT2OSTREE_BWRAP=/nonexistent/bwrap "$APT2OSTREE" --repo "$R" mod --ref t16 base -- true
    assert_one_line err
    assert_file_has_content err "APT2OSTREE_BWRAP=\"/nonexistent/bwrap\""
    assert_file_has_content err "\"bubblewrap\" package"
    mkdir bin && ln -s "$(command -v ostree)" bin/ostree
    expect_failure err env PATH="$PWD/bin" "$APT2OSTREE" --repo "$R" mod --ref t16 base -- true
    assert_one_line err
    assert_file_has_content err "\"bwrap\") not found in PATH; install the \"bubblewrap\" package"
    no_scratch_left "$R"
'

test_expect_success '--workdir on the repository'"'"'s filesystem holds the scratch, and -v shows the output and the time of each step' '
    mkdir wd
    m --ref t16b base --chroot --workdir "$PWD/wd" -v -- sh -c "echo visible-output; echo x > /x" > out 2> err
    assert_file_has_content err "visible-output"
    assert_file_has_content err "^apt2ostree mod: checkout [0-9.]* s, command [0-9.]* s, commit [0-9.]* s, cleanup [0-9.]* s$"
    assert_streq "$(cat out)" "$(ref_commit "$R" t16b)"
    assert_streq "$(ls -A wd)" ""
    m --ref t16c base --chroot -- sh -c "echo quiet-output; echo x > /x" > out 2> err
    assert_not_file_has_content err "quiet-output"
'

test_expect_success 'a work directory on another filesystem than the repository is refused' '
    # /dev/shm, or /tmp when the scratch directory is on /dev/shm'"'"'s file system
    other=$(mktemp -d /dev/shm/a2o-mod.XXXXXX)
    if [ "$(stat -c %d "$other")" = "$(stat -c %d "$R")" ]; then
        rmdir "$other"
        other=$(mktemp -d /tmp/a2o-mod.XXXXXX)
    fi
    [ "$(stat -c %d "$other")" != "$(stat -c %d "$R")" ] || fail "no other file system than the repository'"'"'s"
    expect_failure err m --ref t17 base --workdir "$other" -- true
    rmdir "$other"
    assert_one_line err
    assert_file_has_content err "not on the filesystem of the repository"
'

test_expect_success 'a filesystem that cannot hold the overlay is a one-line error' '
    # An overlay cannot be the upper layer of another overlay.
    if [ "$MODE" = root ]; then
        mkdir -p lo up wk mnt
        mount -t overlay overlay -o lowerdir=lo,upperdir=up,workdir=wk mnt
        trap "umount \"$PWD/mnt\"" EXIT
        a2o --repo mnt/repo init
        a2o --repo mnt/repo import --ref base --tar "$SCRATCH/base.tar" > /dev/null
        expect_failure err a2o --repo mnt/repo mod --ref t18 base -- true
        assert_one_line err
        assert_file_has_content err "cannot mount an overlay"
    else
        say "needs root to mount the outer overlay; covered by the root run"
    fi
'

test_expect_success 'usage errors: no --ref, no IN, no command' '
    expect_failure err m base -- true
    assert_file_has_content err "\-\-ref OUT is required"
    expect_failure err m --ref x -- true
    assert_file_has_content err "expected IN"
    expect_failure err m --ref x base
    assert_file_has_content err "expected -- COMMAND"
    expect_failure err m --ref x base --bind onlyone
    assert_file_has_content err "takes two arguments"
'

ostree --repo="$R" fsck > "$SCRATCH/fsck.out" 2>&1 || { cat "$SCRATCH/fsck.out"; echo "not ok - final fsck"; }
test_done
