#!/bin/bash
# Hooks around stage 2, as mmdebstrap has them: build --before-configure
# DIR|REF and --after-configure DIR|REF put a directory or a tree over the
# image before or after dpkg --configure -a, and --configure-hook COMMAND
# runs a command in the stage-2 sandbox.  Hermetic: real Debian bookworm
# .debs (tests/libbuildtest.sh) plus packages made here, in a repository
# signed and served on 127.0.0.1 at test time.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

base_archive

# script_deb NAME SCRIPT BODY [FIELD: VALUE]...: a package in $D's pool
# shipping /usr/share/NAME/version, whose maintainer SCRIPT is BODY.
script_deb () {
    local name=$1 script=$2 body=$3
    shift 3
    local stage="$SCRATCH/stage/$name"
    rm -rf "$stage"
    mkdir -p "$stage/usr/share/$name" "$stage/DEBIAN"
    echo "$name 1.0" > "$stage/usr/share/$name/version"
    printf '#!/bin/sh\nset -e\n%s\n' "$body" > "$stage/DEBIAN/$script"
    ( cd "$D/pool/main" && make_deb "$stage" "$name" 1.0 amd64 "Priority: optional" "$@" ) > /dev/null
}

# Like nvidia-l4t-core: its preinst refuses to run without a board file.
script_deb board-check preinst '[ -e /etc/board_release ] || { echo "board-check: /etc/board_release is missing: not a supported board" >&2; exit 1; }'
# Its postinst writes a state file that an after-configure tree replaces.
script_deb stateful postinst 'if [ "$1" = configure ]; then echo "written by postinst" > /etc/stateful.conf; fi' "Depends: coreutils"
repo_publish "$D" bookworm amd64 archive

serve_work_dir "$SRV"
base_lock img board-check stateful

# The hook directories a user would write: root-owned, 0755 directories.
mkdir -p -m 0755 before/etc after/etc
echo "board 1" > before/etc/board_release
echo "written by the user" > after/etc/stateful.conf

test_expect_success 'without the hook file, the build fails naming the package and its preinst' '
    cd "$W"
    expect_failure err a2o build img.lock.json --builddir b0 > out
    cat out err > all
    assert_file_has_content all "board-check: /etc/board_release is missing"
    assert_file_has_content all "package board-check (1.0): its preinst script failed"
    assert_not_has_file b0/ostree/refs/heads/img
'

test_expect_success 'build --before-configure DIR: the preinst finds the file, and the file is in the image' '
    cd "$W"
    a2o build img.lock.json --before-configure before > out
    cat out
    a2o --repo build/ostree export img --dir rootfs
    assert_streq "$(cat rootfs/etc/board_release)" "board 1"
    dpkg --root="$W/rootfs" -l | awk "NR > 5 { print \$1 }" | sort -u > states
    assert_streq "$(cat states)" ii
    assert_streq "$(stat -c "%a %u %g" rootfs)" "755 0 0"
    assert_streq "$(stat -c "%a %u %g" rootfs/etc)" "755 0 0"
    ostree --repo=build/ostree ls -R "$(cat build/ostree/refs/heads/before-configure/img)" /etc/board_release
'

test_expect_success 'the Ninja file imports the directory into hooks/NAME/ and puts it over stage 1 for configure' '
    cd "$W"
    assert_file_has_content build/img.ninja ": a2o_import "
    assert_file_has_content build/img.ninja "dir = before"
    assert_file_has_content build/img.ninja "^build \$repo/refs/heads/before-configure/img: a2o_overlay "
    assert_file_has_content build/img.ninja "trees = stage1/img hooks/img/before-configure-1"
    assert_file_has_content build/img.ninja "^build \$repo/refs/heads/img: a2o_configure \$repo/refs/heads/before-configure/img"
    assert_file_has_content build/img.ninja "^  command = .* ninja img.lock.json .* --before-configure before"
    assert_has_file build/ostree/refs/heads/hooks/img/before-configure-1
'

test_expect_success 'building again with the same directory imports it again but configures nothing' '
    cd "$W"
    before=$(mtime build/ostree/refs/heads/img)
    a2o build img.lock.json --before-configure before > out
    ran out > steps
    cat steps
    assert_streq "$(cat steps)" "import before"
    assert_streq "$(mtime build/ostree/refs/heads/img)" "$before"
'

test_expect_success 'a changed hook directory configures the image again, with the new file' '
    cd "$W"
    echo "board 2" > before/etc/board_release
    a2o build img.lock.json --before-configure before > out
    ran out > steps
    cat steps
    grep -x "configure img (dpkg --configure -a)" steps
    a2o --repo build/ostree export img --dir rootfs2
    assert_streq "$(cat rootfs2/etc/board_release)" "board 2"
    echo "board 1" > before/etc/board_release
'

test_expect_success 'build --after-configure DIR: its files replace what the postinst wrote; configured/NAME keeps the image before' '
    cd "$W"
    a2o build img.lock.json --before-configure before --after-configure after > out
    ran out > steps
    cat steps
    grep -x "overlay img" steps
    a2o --repo build/ostree export img --dir rootfs3
    assert_streq "$(cat rootfs3/etc/stateful.conf)" "written by the user"
    a2o --repo build/ostree export configured/img --dir configured
    assert_streq "$(cat configured/etc/stateful.conf)" "written by postinst"
    assert_streq "$(stat -c "%a %u %g" rootfs3)" "755 0 0"
'

test_expect_success 'build --before-configure REF: a tree of the repository, combined by metadata only' '
    cd "$W"
    mkdir -p -m 0755 reftree/etc
    echo "board from a ref" > reftree/etc/board_release
    a2o --repo build/ostree import --ref user/board reftree > /dev/null
    a2o build img.lock.json --before-configure user/board --builddir build > out
    cat out
    a2o --repo build/ostree export img --dir rootfs4
    assert_streq "$(cat rootfs4/etc/board_release)" "board from a ref"
    assert_not_file_has_content build/img.ninja ": a2o_import"
    assert_file_has_content build/img.ninja "trees = stage1/img user/board"
'

test_expect_success 'build --configure-hook COMMAND runs in the image just before dpkg --configure -a' '
    cd "$W"
    a2o build img.lock.json --before-configure before \
        --configure-hook "grep -A1 -x \"Package: stateful\" /var/lib/dpkg/status | tail -n 1 > /etc/hook-ran" > out
    a2o --repo build/ostree export img --dir rootfs5
    assert_streq "$(cat rootfs5/etc/hook-ran)" "Status: install ok unpacked"
    assert_file_has_content build/img.ninja "hooks = --configure-hook "
'

test_expect_success 'a failing --configure-hook stops the build; the image ref keeps its commit' '
    cd "$W"
    before=$(cat build/ostree/refs/heads/img)
    expect_failure err a2o build img.lock.json --before-configure before --configure-hook "echo hook-says-no >&2; exit 4" > out
    cat out err > all
    assert_file_has_content all "hook-says-no"
    assert_streq "$(cat build/ostree/refs/heads/img)" "$before"
'

# overlay, as the hooks use it, on small trees made with the ostree CLI.
overlay_base () {
    new_repo repo
    mkdir -p base/etc base/usr/bin && ln -s usr/bin base/bin
    echo image > base/etc/motd && echo tool > base/usr/bin/tool
    chmod 0755 base base/etc base/usr base/usr/bin
    commit_dir repo base base --owner-uid=0 --owner-gid=0 --add-metadata-string=origin=base
}

test_expect_success 'overlay: a hook directory made with mktemp -d (0700, not root'"'"'s) leaves the image'"'"'s / and /etc as they were' '
    overlay_base
    mkdir -p hook/etc/new && echo user > hook/etc/motd && echo x > hook/etc/new/file
    chmod 0700 hook hook/etc && chmod 0750 hook/etc/new
    commit_dir repo hook hook --owner-uid=1000 --owner-gid=1000
    a2o --repo repo overlay --ref out base hook > /dev/null
    ostree --repo=repo ls "$(rev_commit repo out)" -d / /etc /etc/new /etc/motd > ls
    cat ls
    assert_file_has_content ls "^d00755 0 0 .* /\$"
    assert_file_has_content ls "^d00755 0 0 .* /etc\$"
    assert_file_has_content ls "^d00750 1000 1000 .* /etc/new\$"
    assert_streq "$(ostree --repo=repo cat "$(rev_commit repo out)" /etc/motd)" user
    assert_streq "$(ostree --repo=repo cat "$(rev_commit repo out)" /usr/bin/tool)" tool
'

test_expect_success 'overlay keeps the base commit'"'"'s metadata (stage 1'"'"'s package list)' '
    overlay_base
    mkdir -p hook/etc && echo user > hook/etc/motd
    commit_dir repo hook hook --owner-uid=0 --owner-gid=0
    a2o --repo repo overlay --ref out base hook > /dev/null
    ostree --repo=repo show --print-metadata-key=origin "$(rev_commit repo out)" > origin
    assert_file_has_content origin "base"
'

test_expect_success 'overlay refuses a hook directory where the image has a symlink (bin in merged /usr), naming the path' '
    overlay_base
    mkdir -p hook/bin && echo mine > hook/bin/mine
    commit_dir repo hook hook --owner-uid=0 --owner-gid=0
    expect_failure err a2o --repo repo overlay --ref out base hook
    assert_one_line err
    assert_file_has_content err "\"/bin\" is a directory in \"hook\" but a file or symlink in \"base\"; .*usr/bin rather than bin"
    assert_not_has_file repo/refs/heads/out
'

test_expect_success 'overlay refuses a hook file where the image has a directory' '
    overlay_base
    mkdir -p hook && echo oops > hook/etc
    commit_dir repo hook hook --owner-uid=0 --owner-gid=0
    expect_failure err a2o --repo repo overlay --ref out base hook
    assert_one_line err
    assert_file_has_content err "\"/etc\" is a file in \"hook\" but a directory in \"base\""
'

test_expect_success 'overlay: later trees win over earlier ones' '
    overlay_base
    mkdir -p h1/etc h2/etc && echo one > h1/etc/motd && echo two > h2/etc/motd
    commit_dir repo h1 h1 --owner-uid=0 --owner-gid=0
    commit_dir repo h2 h2 --owner-uid=0 --owner-gid=0
    a2o --repo repo overlay --ref out base h1 h2 > /dev/null
    assert_streq "$(ostree --repo=repo cat "$(rev_commit repo out)" /etc/motd)" two
'

test_done
