#!/bin/bash
# A failing stage 2, as a user meets it through build, ninja and configure:
# the error suggests --keep-on-failure (or, for ninja,
# APT2OSTREE_KEEP_ON_FAILURE=1), and each of them keeps the scratch tree;
# build -v shows dpkg's output; neither changes the Ninja file, so neither
# configures a built image again.  Hermetic: real
# Debian bookworm .debs (tests/libbuildtest.sh) plus a package made here
# whose postinst fails, in a repository signed and served on 127.0.0.1.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

base_archive
test_deb failing 1.0 'echo "failing: cannot frobnicate the widget" >&2; exit 3'
repo_publish "$D" bookworm amd64 archive

serve_work_dir "$SRV"
base_lock bad failing

# kept_dir ERR: the scratch directory the error says it kept.
kept_dir () {
    sed -n 's/.*scratch kept in \([^ ]*\) .*/\1/p' "$1" | head -n 1
}

test_expect_success 'a failed build suggests --keep-on-failure, and the Ninja file names neither it nor -v' '
    cd "$W"
    expect_failure err a2o build bad.lock.json > out
    cat out err > all
    assert_file_has_content all "scratch removed (keep it with --keep-on-failure, or APT2OSTREE_KEEP_ON_FAILURE=1 in ninja"
    assert_not_file_has_content build/bad.ninja "keep-on-failure"
    assert_not_file_has_content build/bad.ninja "pool = console"
    assert_has_file build/ostree/refs/heads/stage1/bad
    assert_not_has_file build/ostree/refs/heads/bad
'

test_expect_success 'build --keep-on-failure keeps the failed stage 2'"'"'s scratch tree and names it' '
    cd "$W"
    expect_failure err a2o build bad.lock.json --keep-on-failure > out
    cat out err > all
    assert_file_has_content all "scratch kept in "
    dir=$(kept_dir all)
    [ -n "$dir" ] || fail "no kept directory named"
    assert_file_has_content "$dir/output.log" "cannot frobnicate the widget"
    assert_has_file "$dir/upper"
    assert_not_has_file build/ostree/refs/heads/bad
'

test_expect_success 'build -v shows dpkg'"'"'s output; the Ninja file stays as it was' '
    cd "$W"
    cp build/bad.ninja bad.ninja.before
    expect_failure err a2o build bad.lock.json -v > out
    cat out err > all
    # Packages configured before the failing one: only dpkg itself says so.
    assert_file_has_content all "^Setting up dash "
    cmp bad.ninja.before build/bad.ninja
'

test_expect_success 'under plain ninja, APT2OSTREE_KEEP_ON_FAILURE=1 keeps the scratch tree (the Ninja file has no option for it)' '
    cd "$W"
    a2o ninja bad.lock.json -o bad.ninja --builddir nb
    assert_not_file_has_content bad.ninja "keep-on-failure"
    expect_failure err env APT2OSTREE_KEEP_ON_FAILURE=1 ninja -f bad.ninja > out
    cat out err > all
    dir=$(kept_dir all)
    [ -n "$dir" ] || fail "no kept directory named"
    assert_file_has_content "$dir/output.log" "cannot frobnicate the widget"
'

test_expect_success 'build -v and build --keep-on-failure do not configure a built image again' '
    cd "$W"
    base_lock good
    a2o build good.lock.json > out 2>&1 || { cat out; false; }
    before=$(cat build/ostree/refs/heads/good)
    a2o build good.lock.json -v > out 2>&1
    assert_file_has_content out "no work to do"
    a2o build good.lock.json --keep-on-failure > out 2>&1
    assert_file_has_content out "no work to do"
    assert_streq "$(cat build/ostree/refs/heads/good)" "$before"
'

test_expect_success 'configure --keep-on-failure keeps the scratch tree; without it the error suggests the option configure has' '
    cd "$W"
    expect_failure err a2o --repo build/ostree configure --ref c1 stage1/bad
    assert_file_has_content err "keep it with --keep-on-failure"
    expect_failure err a2o --repo build/ostree configure --ref c1 --keep-on-failure stage1/bad
    dir=$(kept_dir err)
    [ -n "$dir" ] || fail "no kept directory named"
    assert_file_has_content "$dir/output.log" "cannot frobnicate the widget"
    assert_not_has_file build/ostree/refs/heads/c1
'

test_done
