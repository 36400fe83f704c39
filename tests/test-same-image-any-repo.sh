#!/bin/bash
# The same lockfile gives the same image commit in any repository, even
# when a maintainer script records the times of the files it reads (as
# man-db's index records each man page's, many of them symlinks): in the
# stage-2 tree every file and every symlink is dated 0, whenever its
# object was written.  Hermetic: real bookworm .debs from a repository
# served on 127.0.0.1, and a package made here.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

base_archive
# a package with a file and a symlink to it, whose postinst records the
# time of each as stat gives it
stage="$SCRATCH/stage/times"
mkdir -p "$stage/usr/share/times" "$stage/DEBIAN"
echo "times 1.0" > "$stage/usr/share/times/page"
ln -s page "$stage/usr/share/times/link"
cat > "$stage/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  mkdir -p /var/lib/times
  stat -c '%n %y' /usr/share/times/page /usr/share/times/link > /var/lib/times/seen
fi
EOF
chmod 755 "$stage/DEBIAN/postinst"
( cd "$D/pool/main" && make_deb "$stage" times 1.0 amd64 "Priority: optional" "Depends: coreutils" ) > /dev/null
repo_publish "$D" bookworm amd64 archive
serve_work_dir "$SRV"

test_expect_success 'two build directories, one after the other: the same image commit, and the script saw every time as 0' '
    cd "$W"
    base_lock one times
    a2o build one.lock.json --builddir a > /dev/null
    sleep 1
    a2o build one.lock.json --builddir b > /dev/null
    assert_streq "$(cat b/ostree/refs/heads/one)" "$(cat a/ostree/refs/heads/one)"
    a2o --repo a/ostree export one --dir img
    cat img/var/lib/times/seen
    assert_streq "$(cut -d" " -f2- img/var/lib/times/seen | sort -u)" "1970-01-01 00:00:00.000000000 +0000"
'

test_expect_success 'a repository written before symlinks were dated 0 gives the same commit as a new one' '
    cd "$W"
    # date every symlink object as a repository written before had it
    find a/ostree/objects -type l -exec touch -h -d "2025-01-02 03:04:05" {} +
    rm a/ostree/refs/heads/one
    rm -rf a/ostree/refs/heads/cache
    a2o build one.lock.json --builddir a > /dev/null
    assert_streq "$(cat a/ostree/refs/heads/one)" "$(cat b/ostree/refs/heads/one)"
'

test_done
