#!/bin/bash
# configure refuses, in one line saying what to install or enable, an image
# whose programs this machine cannot run; it reads the binfmt_misc handlers
# as the kernel uses them (a fake binfmt_misc directory stands for the
# host's, so every case is tried without touching the machine's own).
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

[ "$(uname -m)" = x86_64 ] || skip_all "the cases are written for an x86_64 host"

# An arm64 stage-1 tree: one package, no programs.
stage1_arm64 () {
    new_repo repo
    mkdir -p pkg/usr/share/doc/pkg && echo hi > pkg/usr/share/doc/pkg/hi
    make_deb pkg pkg 1.0 arm64 > pkg.name
    a2o --repo repo unpack-deb --ref deb/pkg "$(cat pkg.name)" > /dev/null
    a2o --repo repo stage1 --ref img/stage1 --arch arm64 deb/pkg > /dev/null
}

AARCH64_MAGIC=7f454c460201010000000000000000000200b700
AARCH64_MASK=ffffffffffffff00fffffffffffffffffeffffff

# fake_binfmt DIR NAME STATE FLAGS: a handler file as the kernel shows it.
fake_binfmt () {
    mkdir -p "$1"
    : > "$1/register"
    [ -e "$1/status" ] || echo enabled > "$1/status"
    printf '%s\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: %s\noffset 0\nmagic %s\nmask %s\n' \
        "$3" "$4" "$AARCH64_MAGIC" "$AARCH64_MASK" > "$1/$2"
}

test_expect_success 'binfmt_misc not mounted: one line saying how to mount it and register qemu' '
    stage1_arm64
    mkdir binfmt
    APT2OSTREE_BINFMT_DIR=$PWD/binfmt expect_failure err a2o --repo repo configure --ref out img/stage1
    assert_one_line err
    assert_file_has_content err "configure img/stage1: the image is arm64, .*binfmt_misc is not mounted"
    assert_file_has_content err "mount -t binfmt_misc"
    assert_file_has_content err "update-binfmts --enable qemu-aarch64"
    assert_not_has_file repo/refs/heads/out
'

test_expect_success 'no handler for aarch64: one line saying to install qemu-user-static and enable it' '
    stage1_arm64
    mkdir binfmt && : > binfmt/register && echo enabled > binfmt/status
    printf "enabled\ninterpreter /usr/bin/java\nflags: \nextension .jar\n" > binfmt/jar
    APT2OSTREE_BINFMT_DIR=$PWD/binfmt expect_failure err a2o --repo repo configure --ref out img/stage1
    assert_one_line err
    assert_file_has_content err "no binfmt_misc handler .* runs them"
    assert_file_has_content err "apt-get install qemu-user-static binfmt-support && update-binfmts --enable qemu-aarch64"
'

test_expect_success 'a handler for another architecture does not count' '
    stage1_arm64
    fake_binfmt binfmt qemu-arm enabled PF
    sed -i "s/^magic .*/magic 7f454c4601010100000000000000000002002800/" binfmt/qemu-arm
    APT2OSTREE_BINFMT_DIR=$PWD/binfmt expect_failure err a2o --repo repo configure --ref out img/stage1
    assert_file_has_content err "no binfmt_misc handler"
'

test_expect_success 'a disabled handler: one line naming it and update-binfmts --enable' '
    stage1_arm64
    fake_binfmt binfmt qemu-aarch64 disabled PF
    APT2OSTREE_BINFMT_DIR=$PWD/binfmt expect_failure err a2o --repo repo configure --ref out img/stage1
    assert_one_line err
    assert_file_has_content err "handler \"qemu-aarch64\" that runs arm64 programs is disabled; run \"update-binfmts --enable qemu-aarch64\""
'

test_expect_success 'binfmt_misc switched off as a whole: one line saying how to switch it on' '
    stage1_arm64
    fake_binfmt binfmt qemu-aarch64 enabled PF
    echo disabled > binfmt/status
    APT2OSTREE_BINFMT_DIR=$PWD/binfmt expect_failure err a2o --repo repo configure --ref out img/stage1
    assert_one_line err
    assert_file_has_content err "binfmt_misc is disabled"
'

test_expect_success 'a handler without the F flag is refused: its interpreter is not inside the sandbox' '
    stage1_arm64
    fake_binfmt binfmt qemu-aarch64 enabled P
    APT2OSTREE_BINFMT_DIR=$PWD/binfmt expect_failure err a2o --repo repo configure --ref out img/stage1
    assert_one_line err
    assert_file_has_content err "has no F (fix binary) flag, so its interpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P cannot be found"
'

test_expect_success 'an enabled handler with the F flag passes the check (the sandbox runs next)' '
    stage1_arm64
    fake_binfmt binfmt qemu-aarch64 enabled PF
    APT2OSTREE_BINFMT_DIR=$PWD/binfmt expect_failure err a2o --repo repo configure --ref out img/stage1
    assert_not_file_has_content err "binfmt"
'

test_expect_success 'an amd64 image needs no handler at all' '
    new_repo repo
    mkdir -p pkg/usr/share/doc/pkg && echo hi > pkg/usr/share/doc/pkg/hi
    make_deb pkg pkg 1.0 amd64 > pkg.name
    a2o --repo repo unpack-deb --ref deb/pkg "$(cat pkg.name)" > /dev/null
    a2o --repo repo stage1 --ref img/stage1 --arch amd64 deb/pkg > /dev/null
    mkdir binfmt
    APT2OSTREE_BINFMT_DIR=$PWD/binfmt expect_failure err a2o --repo repo configure --ref out img/stage1
    assert_not_file_has_content err "binfmt"
'

test_expect_success 'build says it before downloading anything: one line, no .deb fetched' '
    repo_key archive
    repo_deb srv tool 1.0 arm64
    repo_dists srv bookworm arm64
    repo_sign srv bookworm archive
    repo_serve srv
    repo_sources_line "$HTTPD_URL" bookworm archive > sources.list
    echo tool > tool.txt
    a2o lock tool.txt --sources sources.list --variant custom --arch arm64 -o tool.lock.json > /dev/null
    mkdir binfmt
    APT2OSTREE_BINFMT_DIR=$PWD/binfmt expect_failure err a2o build tool.lock.json
    assert_one_line err
    assert_file_has_content err "^apt2ostree build: error: the image is arm64, .*binfmt_misc is not mounted"
    assert_not_file_has_content "$HTTPD_LOG" "pool/"
    assert_not_has_file build/ostree
'

test_done
