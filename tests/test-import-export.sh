#!/bin/bash
# import and export: files in and out of the repository, as directories and
# as tar archives, with owners, modes, symlinks and extended attributes kept.
. "$TOP_SRCDIR/tests/libtest.sh"

is_root () { [ "$(id -u)" = 0 ]; }
U=$(id -u) G=$(id -g)  # owner of what the tests make without chown

# test_as_root NAME BODY: a test that needs other owners and file
# capabilities, skipped with the reason when not root.
test_as_root () {
    if is_root; then
        test_expect_success "$1" "$2"
    else
        test_skip "$1" "needs root to make files of other owners and file capabilities"
    fi
}

# make_tree DIR: a directory with what a root filesystem holds.  As root it
# also has files of other owners and a file capability.
make_tree () {
    mkdir -p "$1"/usr/bin "$1"/empty "$1"/tmp "$1"/etc "$1"/srv/shared
    cp /bin/true "$1"/usr/bin/su
    chmod 4755 "$1"/usr/bin/su
    chmod 1777 "$1"/tmp
    chmod 2775 "$1"/srv/shared
    echo "conf" > "$1"/etc/conf
    chmod 0600 "$1"/etc/conf
    ln -s usr/bin "$1"/bin
    ln -s ../etc/conf "$1"/srv/dangling-or-not
    echo "same content" > "$1"/etc/hard1
    ln "$1"/etc/hard1 "$1"/etc/hard2
    setfattr -n user.foo -v bar "$1"/etc/conf
    setfattr -n user.dir -v yes "$1"/srv
    local long
    long=$(printf 'l%.0s' $(seq 1 250))
    mkdir -p "$1/deep/$long/$long"
    echo "long" > "$1/deep/$long/$long/$long"
    echo "utf-8" > "$1/etc/naïve file"
    if is_root; then
        echo "other" > "$1"/etc/other
        chown 1234:5678 "$1"/etc/other "$1"/srv/shared
        chgrp 42 "$1"/etc/conf
        cp /bin/true "$1"/usr/bin/ping
        setcap cap_net_raw+ep "$1"/usr/bin/ping
    fi
}

# describe DIR: every entry with type, mode, owner, size and content digest
# or link target, and its extended attributes; no times.  Two directories
# hold the same files exactly when their descriptions are equal.
describe () {
    (cd "$1" && find . | LC_ALL=C sort | while IFS= read -r p; do
        case "$(stat -c %F "$p")" in
            "regular file"|"regular empty file")
                echo "f $(stat -c '%a %u %g %s' "$p") $(sha256sum < "$p" | cut -c1-16) $p" ;;
            "symbolic link") echo "l $(stat -c '%u %g' "$p") $p -> $(readlink "$p")" ;;
            directory) echo "d $(stat -c '%a %u %g' "$p") $p" ;;
            *) echo "? $p" ;;
        esac
        getfattr -h -d -m - --absolute-names "$p" 2>/dev/null | grep -v '^#' | grep . | sed 's/^/    /' || true
    done)
}

test_expect_success 'import of a directory keeps owners, modes, symlinks, xattrs and empty directories' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src > commit
    assert_streq "$(cat commit)" "$(ref_commit repo t)"
    ls_tree repo t > list
    assert_file_has_content list "^-04755 $U $G .* /usr/bin/su\$"
    assert_file_has_content list "^d01777 $U $G 0 /tmp\$"
    assert_file_has_content list "^d00755 $U $G 0 /empty\$"
    assert_file_has_content list "^l00777 $U $G 0 /bin -> usr/bin\$"
    ostree --repo=repo ls -X t /etc/conf /srv > xattrs
    assert_file_has_content xattrs "user.foo.*0x62, 0x61, 0x72"
    assert_file_has_content xattrs "user.dir"
    if is_root; then
        assert_file_has_content list "^-00644 1234 5678 .* /etc/other\$"
        assert_file_has_content list "^-00600 0 42 .* /etc/conf\$"
        assert_file_has_content list "^d02775 1234 5678 0 /srv/shared\$"
        ostree --repo=repo ls -X t /usr/bin/ping > caps
        assert_file_has_content caps "security.capability"
    fi
'

test_expect_success 'import of a directory gives the very tree ostree commit makes of it' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    ostree --repo=repo commit -b ostree --tree=dir=src > /dev/null
    ostree --repo=repo ls -C -d t / > ours
    ostree --repo=repo ls -C -d ostree / > theirs
    diff -u theirs ours
'

test_expect_success 'a hardlinked pair is one object in the repository' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    ostree --repo=repo ls -C t /etc/hard1 /etc/hard2 | awk "{print \$5}" > sums
    [ "$(sort -u sums | wc -l)" = 1 ]
'

test_as_root 'export --dir gives back exactly the imported files, owners, modes and xattrs' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    a2o --repo repo export t --dir out
    describe src > expected
    describe out > actual
    diff -u expected actual
    getcap out/usr/bin/ping | grep -q cap_net_raw
'

test_expect_success 'export --dir copies files, so changing them cannot touch the repository' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    a2o --repo repo export t --dir out
    assert_streq "$(stat -c %h out/etc/hard1)" 1
    assert_streq "$(stat -c %h out/usr/bin/su)" 1
    echo "changed" >> out/etc/hard1
    ostree --repo=repo fsck > fsck
    ostree --repo=repo cat t /etc/hard1 > content
    assert_streq "$(cat content)" "same content"
'

test_expect_success 'export --dir fills an existing empty directory and gives it the root metadata' '
    new_repo repo
    make_tree src
    chmod 0750 src
    a2o --repo repo import --ref t src
    mkdir out
    a2o --repo repo export t --dir out
    assert_streq "$(stat -c %a out)" 750
    assert_has_file out/etc/conf
'

test_expect_success 'export --tar lists exact owners, modes and link targets, with the commit time' '
    new_repo repo
    make_tree src
    SOURCE_DATE_EPOCH=1700000000 a2o --repo repo import --ref t src
    a2o --repo repo export t --tar out.tar
    tar --numeric-owner -tvf out.tar > list
    assert_file_has_content list "^-rwsr-xr-x $U/$G .* 2023-11-14 22:13 \./usr/bin/su\$"
    assert_file_has_content list "^drwxrwxrwt $U/$G .* \./tmp/\$"
    assert_file_has_content list "^lrwxrwxrwx $U/$G .* \./bin -> usr/bin\$"
    assert_streq "$(head -n 1 list | awk "{print \$6}")" "./"
    if is_root; then
        assert_file_has_content list "^-rw-r--r-- 1234/5678 .* \./etc/other\$"
        assert_file_has_content list "^drwxrwsr-x 1234/5678 .* \./srv/shared/\$"
    fi
    # depth first, byte order, each directory before its contents
    awk "{print \$6}" list > names
    LC_ALL=C sort names > sorted
    diff -u sorted names
'

test_as_root 'a tar extracted with GNU tar gives back the imported files, owners, modes and xattrs' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    a2o --repo repo export t --tar out.tar
    mkdir out
    tar --xattrs --xattrs-include="*" --numeric-owner -xpf out.tar -C out
    describe src > expected
    describe out > actual
    diff -u expected actual
'

test_expect_success 'export --tar writes the same bytes for the same tree, in every compression' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    for f in a.tar a.tar.gz a.tar.xz a.tar.zst a.tar.bz2 a.tgz; do
        a2o --repo repo export t --tar "$f"
        a2o --repo repo export "$(ref_commit repo t)" --tar "again-$f"
        cmp "$f" "again-$f"
    done
    gzip -t a.tar.gz
    xz -t a.tar.xz
    [ "$(head -c 4 a.tar.zst | od -An -tx1 | tr -d " ")" = 28b52ffd ]
    a2o --repo repo export t --tar - > stdout.tar
    cmp a.tar stdout.tar
    ls > files
    assert_not_file_has_content files "tmp-"
'

test_expect_success 'the same directory gives the same commit in two fresh repositories' '
    make_tree src
    new_repo one
    new_repo two
    a2o --repo one import --ref t src > c1
    a2o --repo two import --ref other/name src > c2
    assert_streq "$(cat c1)" "$(cat c2)"
    SOURCE_DATE_EPOCH=1 a2o --repo two import --ref t src > c3
    [ "$(cat c3)" != "$(cat c1)" ]
    ostree --repo=one show t | grep -q "^Date:  *1970-01-01 00:00:00 +0000"
    ostree --repo=one log t | grep -c "^commit " > n
    assert_streq "$(cat n)" 1
'

test_expect_success 'an exported tar imports to the very commit the directory gave, in every compression' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref dir src > c
    for f in a.tar a.tar.gz a.tar.xz a.tar.zst; do
        a2o --repo repo export dir --tar "$f"
        a2o --repo repo import --ref "tar-$f" --tar "$f" > c2
        assert_streq "$(cat c2)" "$(cat c)"
    done
    a2o --repo repo import --ref stdin --tar - < a.tar > c3
    assert_streq "$(cat c3)" "$(cat c)"
'

test_expect_success 'importing the same content again leaves the ref file untouched' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    before=$(mtime repo/refs/heads/t)
    sleep 0.05
    a2o --repo repo import --ref t src
    assert_streq "$(mtime repo/refs/heads/t)" "$before"
    a2o --repo repo export t --tar t.tar
    a2o --repo repo import --ref t --tar t.tar
    assert_streq "$(mtime repo/refs/heads/t)" "$before"
    echo new > src/new
    a2o --repo repo import --ref t src
    [ "$(mtime repo/refs/heads/t)" != "$before" ]
'

test_expect_success 'ostree fsck is clean and ostree ls, cat and checkout work on imported trees' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    a2o --repo repo export t --tar t.tar.gz
    a2o --repo repo import --ref t2 --tar t.tar.gz
    ostree --repo=repo fsck > fsck
    ostree --repo=repo ls -R t2 > list
    assert_file_has_content list "/usr/bin/su\$"
    assert_streq "$(ostree --repo=repo cat t2 /etc/hard2)" "same content"
    ostree --repo=repo checkout -U t2 co
    assert_has_file co/etc/conf
'

# mktar FILE ENTRY...: a tar made with Python, for entries GNU tar will not
# write (fifos without mkfifo, "..", absolute paths).  ENTRY is
# TYPE:PATH[:LINK[:MODE[:UID]]] with TYPE f (one byte of data), d, l
# (symlink), h (hardlink), p (fifo), c (character device).
mktar () {
    python3 - "$@" <<'PY'
import io, sys, tarfile
types = {"f": tarfile.REGTYPE, "d": tarfile.DIRTYPE, "l": tarfile.SYMTYPE,
         "h": tarfile.LNKTYPE, "p": tarfile.FIFOTYPE, "c": tarfile.CHRTYPE}
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for spec in sys.argv[2:]:
        kind, path, link, mode, uid = (spec.split(":") + ["", "", ""])[:5]
        ti = tarfile.TarInfo(path)
        ti.type = types[kind]
        ti.linkname = link
        ti.mode = int(mode, 8) if mode else (0o755 if kind == "d" else 0o644)
        ti.uid = ti.gid = int(uid) if uid else 0
        data = None
        if kind == "f":
            data = io.BytesIO(b"x")
            ti.size = 1
        if kind == "c":
            ti.devmajor, ti.devminor = 1, 3
        t.addfile(ti, data)
PY
}

test_expect_success 'import --tar leaves out device nodes and fifos with a warning naming each' '
    new_repo repo
    mktar t.tar d:./ d:dev/ c:dev/null p:run/ctl f:run/file h:run/ctl2:run/ctl
    a2o --repo repo import --ref t --tar t.tar > out 2> err
    cat err
    assert_file_has_content err "warning: t.tar: left out /dev/null (character device)"
    assert_file_has_content err "warning: t.tar: left out /run/ctl (fifo)"
    assert_file_has_content err "warning: t.tar: left out /run/ctl2 (hardlink to /run/ctl)"
    ls_tree repo t > list
    assert_file_has_content list " /run/file\$"
    assert_file_has_content list "^d00755 0 0 0 /dev\$"
    assert_not_file_has_content list "/dev/null"
    assert_not_file_has_content list "/run/ctl"
'

test_expect_success 'import of a directory leaves out a fifo with a warning naming it' '
    new_repo repo
    mkdir -p src/run
    mkfifo src/run/ctl
    echo x > src/file
    a2o --repo repo import --ref t src 2> err
    assert_file_has_content err "warning: src: left out /run/ctl (fifo)"
    ls_tree repo t > list
    assert_file_has_content list " /file\$"
    assert_not_file_has_content list "/run/ctl"
'

test_expect_success 'import --tar gives unlisted directories 0755 root:root and the root the metadata of "./"' '
    new_repo repo
    mktar with-root.tar d:./::0700:5 f:a/b/c::0640:7 d:a/x/::0711:9 f:a/x/y
    a2o --repo repo import --ref t --tar with-root.tar
    ls_tree repo t > list
    assert_file_has_content list "^d00700 5 5 0 /\$"
    assert_file_has_content list "^d00755 0 0 0 /a\$"
    assert_file_has_content list "^d00755 0 0 0 /a/b\$"
    assert_file_has_content list "^-00640 7 7 1 /a/b/c\$"
    assert_file_has_content list "^d00711 9 9 0 /a/x\$"
    mktar no-root.tar f:a/b/c::0640:7
    a2o --repo repo import --ref u --tar no-root.tar
    ls_tree repo u > list
    assert_file_has_content list "^d00755 0 0 0 /\$"
'

test_expect_success 'import --tar keeps a hardlink as the same object, wherever it points' '
    new_repo repo
    mktar t.tar f:a/file::04755 h:b/link:a/file
    a2o --repo repo import --ref t --tar t.tar
    ostree --repo=repo ls -C t /a/file /b/link | awk "{print \$1, \$5}" > sums
    [ "$(awk "{print \$2}" sums | sort -u | wc -l)" = 1 ]
    assert_file_has_content sums "^-04755"
'

test_expect_success 'a later entry for the same file in an archive wins, as with tar -x' '
    new_repo repo
    mktar t.tar f:a::0644 f:a::0600:3 d:d/::0700 d:d/::0750:4
    a2o --repo repo import --ref t --tar t.tar
    ls_tree repo t > list
    assert_file_has_content list "^-00600 3 3 1 /a\$"
    assert_file_has_content list "^d00750 4 4 0 /d\$"
'

test_as_root 'bare, bare-user and archive repositories give the same commit and export it back' '
    make_tree src
    describe src > expected
    for mode in bare bare-user archive; do
        new_repo "repo-$mode" "$mode"
        a2o --repo "repo-$mode" import --ref t src > "commit-$mode"
        assert_streq "$(cat "commit-$mode")" "$(cat commit-bare)"
        a2o --repo "repo-$mode" export t --dir "out-$mode"
        describe "out-$mode" > actual
        diff -u expected actual
        a2o --repo "repo-$mode" export t --tar "$mode.tar"
        cmp bare.tar "$mode.tar"
    done
'

# fails_cleanly ERRFILE PATTERN CMD...: CMD fails with one line matching
# PATTERN and no ref appears.
fails_cleanly () {
    local err=$1 pattern=$2; shift 2
    local refs_before
    refs_before=$(ls -R repo/refs 2>/dev/null)
    expect_failure "$err" "$@"
    assert_one_line "$err"
    assert_file_has_content "$err" "$pattern"
    assert_streq "$(ls -R repo/refs 2>/dev/null)" "$refs_before"
}

test_expect_success 'import refuses hostile and broken archives with a one-line error and writes no ref' '
    new_repo repo
    mktar abs.tar f:/etc/passwd
    fails_cleanly err "entry \"/etc/passwd\" has an absolute path" a2o --repo repo import --ref t --tar abs.tar
    mktar up.tar f:../evil
    fails_cleanly err "entry \"../evil\" climbs out of the tree" a2o --repo repo import --ref t --tar up.tar
    mktar up2.tar d:a/ f:a/../../evil
    fails_cleanly err "entry \"a/../../evil\" climbs out" a2o --repo repo import --ref t --tar up2.tar
    mktar hl-up.tar f:a h:b:../a
    fails_cleanly err "entry \"b\" (a hardlink to \"../a\") climbs out" a2o --repo repo import --ref t --tar hl-up.tar
    mktar hl-abs.tar h:b:/etc/shadow
    fails_cleanly err "hardlink to \"/etc/shadow\") has an absolute path" a2o --repo repo import --ref t --tar hl-abs.tar
    mktar hl-none.tar h:b:nothere
    fails_cleanly err "entry \"b\" is a hardlink to \"nothere\", which is not a file earlier" a2o --repo repo import --ref t --tar hl-none.tar
    mktar both.tar f:a d:a/
    fails_cleanly err "entry \"a/\" is listed both as a directory and as a file" a2o --repo repo import --ref t --tar both.tar
    mktar under-file.tar f:a f:a/b
    fails_cleanly err "entry \"a/b\": /a is not a directory" a2o --repo repo import --ref t --tar under-file.tar
'

test_expect_success 'import refuses unreadable archives with a one-line error and writes no ref' '
    new_repo repo
    fails_cleanly err "nothere.tar: cannot open the archive: No such file or directory" \
        a2o --repo repo import --ref t --tar nothere.tar
    echo "not a tar" > garbage.tar
    fails_cleanly err "garbage.tar: cannot read the archive: Unrecognized archive format" \
        a2o --repo repo import --ref t --tar garbage.tar
    make_tree src
    tar -cf good.tar -C src .
    head -c 30000 good.tar > truncated.tar
    fails_cleanly err "truncated.tar: .*runcated" a2o --repo repo import --ref t --tar truncated.tar
    gzip -c good.tar | head -c 3000 > truncated.tar.gz
    fails_cleanly err "truncated.tar.gz: " a2o --repo repo import --ref t --tar truncated.tar.gz
    mkdir adir
    fails_cleanly err "adir: cannot read the archive" a2o --repo repo import --ref t --tar adir
'

test_expect_success 'import usage errors and bad arguments are one line and write no ref' '
    new_repo repo
    mkdir src
    fails_cleanly err "--ref REF is required" a2o --repo repo import src
    fails_cleanly err "not both" a2o --repo repo import --ref t src --tar x.tar
    fails_cleanly err "expected a directory or --tar FILE" a2o --repo repo import --ref t
    fails_cleanly err "\"bad ref\" is not a valid ref name" a2o --repo repo import --ref "bad ref" src
    fails_cleanly err "missing: cannot import: No such file or directory" a2o --repo repo import --ref t missing
    touch afile
    fails_cleanly err "afile: not a directory (use --tar FILE" a2o --repo repo import --ref t afile
    fails_cleanly err "norepo: no OSTree repository here" a2o --repo norepo import --ref t src
    a2o --repo repo import src 2>/dev/null || [ $? = 2 ]
'

test_expect_success 'export errors are one line: unknown REV, busy or odd DIR, unknown suffix' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    fails_cleanly err "\"nosuch\": no such ref or commit" a2o --repo repo export nosuch --dir out
    fails_cleanly err "\"nosuch\": no such ref or commit" a2o --repo repo export nosuch --tar out.tar
    mkdir busy && touch busy/x
    fails_cleanly err "busy exists and is not empty" a2o --repo repo export t --dir busy
    touch plain
    fails_cleanly err "plain exists and is not a directory" a2o --repo repo export t --dir plain
    fails_cleanly err "out.zip: unknown archive suffix" a2o --repo repo export t --tar out.zip
    fails_cleanly err "exactly one of --dir, --tar, --oci, --squashfs and --ext4" a2o --repo repo export t
    fails_cleanly err "exactly one of --dir, --tar, --oci, --squashfs and --ext4" a2o --repo repo export t --dir a --tar b.tar
    fails_cleanly err "expected REV" a2o --repo repo export --dir out
    fails_cleanly err "no/such/dir/out.tar: cannot create: No such file or directory" \
        a2o --repo repo export t --tar no/such/dir/out.tar
    fails_cleanly err "no/such/dir: cannot export" a2o --repo repo export t --dir no/such/dir
    ls > files
    assert_not_file_has_content files "^out"
'

test_expect_success 'a failed export leaves no partial directory or archive behind' '
    new_repo repo
    make_tree src
    a2o --repo repo import --ref t src
    # Break the repository: remove the object of one file.
    sum=$(ostree --repo=repo ls -C t /etc/hard1 | awk "{print \$5}")
    rm repo/objects/${sum:0:2}/${sum:2}.file
    fails_cleanly err "out: cannot export \"t\"" a2o --repo repo export t --dir out
    assert_not_has_file out
    mkdir empty
    fails_cleanly err "empty: cannot export \"t\"" a2o --repo repo export t --dir empty
    assert_streq "$(ls -A empty)" ""
    fails_cleanly err "" a2o --repo repo export t --tar out.tar
    ls > files
    assert_not_file_has_content files "out.tar"
'

# The round trip without root: a bare-user repository and files owned by the
# caller.  setpriv drops to nobody in a directory that user can write.
if ! is_root; then
    test_skip 'a non-root user round-trips a tree through a bare-user repository, user.* xattrs included' \
        'needs root to switch to an unprivileged user with setpriv'
elif ! command -v setpriv > /dev/null; then
    test_skip 'a non-root user round-trips a tree through a bare-user repository, user.* xattrs included' \
        'setpriv (util-linux) is not installed'
elif ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$APT2OSTREE"; then
    test_skip 'a non-root user round-trips a tree through a bare-user repository, user.* xattrs included' \
        "user 65534 cannot run $APT2OSTREE (build directory not readable)"
else
test_expect_success 'a non-root user round-trips a tree through a bare-user repository, user.* xattrs included' '
    chmod 0755 "$SCRATCH" .
    mkdir nobody
    chown 65534:65534 nobody
    cd nobody
    cat > run.sh <<EOF
set -e
A="$APT2OSTREE"
mkdir -p src/usr/bin src/tmp src/empty
cp /bin/true src/usr/bin/su && chmod 4755 src/usr/bin/su
chmod 1777 src/tmp
echo conf > src/conf && chmod 0600 src/conf
setfattr -n user.foo -v bar src/conf
echo ro > src/ro && setfattr -n user.ro -v 1 src/ro && chmod 0444 src/ro
mkdir src/rodir && setfattr -n user.dir -v 2 src/rodir && chmod 0555 src/rodir
ln -s usr/bin src/bin
"\$A" --repo repo init
"\$A" --repo repo import --ref t src
"\$A" --repo repo export t --dir out
"\$A" --repo repo export t --tar out.tar
ostree --repo=repo fsck > /dev/null
EOF
    setpriv --reuid=65534 --regid=65534 --clear-groups bash run.sh
    assert_file_has_content repo/config "^mode=bare-user\$"
    ls_tree repo t > list
    assert_file_has_content list "^-04755 65534 65534 .* /usr/bin/su\$"
    assert_file_has_content list "^d01777 65534 65534 0 /tmp\$"
    # user mode checkout: owned by the caller, setuid dropped (libostree), user.* xattrs kept
    assert_streq "$(stat -c "%a %u" out/usr/bin/su)" "755 65534"
    assert_streq "$(stat -c "%a %u" out/tmp)" "1777 65534"
    assert_streq "$(stat -c "%a" out/conf)" 600
    assert_streq "$(getfattr -h --only-values -n user.foo out/conf)" bar
    # even on what is read-only
    assert_streq "$(getfattr -h --only-values -n user.ro out/ro)" 1
    assert_streq "$(stat -c "%a" out/ro)" 444
    assert_streq "$(getfattr -h --only-values -n user.dir out/rodir)" 2
    assert_streq "$(stat -c "%a" out/rodir)" 555
    assert_streq "$(readlink out/bin)" usr/bin
    # the tar keeps the modes exactly
    tar --numeric-owner -tvf out.tar > tarlist
    assert_file_has_content tarlist "^-rwsr-xr-x 65534/65534 .* \./usr/bin/su\$"
    # attributes only root may set are counted in a warning
    new_repo rootrepo bare-user
    mkdir caps && cp /bin/true caps/ping && setcap cap_net_raw+ep caps/ping
    a2o --repo rootrepo import --ref t caps
    chown -R 65534:65534 rootrepo
    setpriv --reuid=65534 --regid=65534 --clear-groups "$APT2OSTREE" --repo rootrepo export t --dir capsout 2> err
    assert_file_has_content err "warning: capsout: 1 extended attributes outside user.\* (or on symlinks) left out"
    assert_has_file capsout/ping
'
fi

test_done
