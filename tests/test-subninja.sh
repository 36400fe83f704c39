#!/bin/bash
# examples/subninja: a parent build.ninja that includes the one generated
# file for its two images (one repository, shared package trees) with
# subninja and runs a rule of its own over each image.  Built hermetically
# (real Debian .debs from a repository signed and served here), run with
# ninja from the parent's directory.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

base_archive

# hello_deb VERSION: a package with a postinst, in $D's pool.
hello_deb () {
    local stage="$SCRATCH/stage/hello-$1"
    mkdir -p "$stage/usr/share/hello" "$stage/DEBIAN"
    echo "hello $1" > "$stage/usr/share/hello/version"
    printf '#!/bin/sh\nset -e\necho "hello %s" > /etc/hello\n' "$1" > "$stage/DEBIAN/postinst"
    ( cd "$D/pool/main" && make_deb "$stage" hello "$1" amd64 "Priority: optional" "Depends: coreutils" ) > /dev/null
}
hello_deb 1.0
repo_publish "$D" bookworm amd64 archive
repo_serve "$SRV"

# The example, copied as a user would have it, with hermetic package lists
# and lockfiles.  apt2ostree and ostree are found on PATH, as the example
# expects.
P="$SCRATCH/project"
mkdir -p "$P"
cp -r "$TOP_SRCDIR/examples/subninja" "$P/"
E="$P/subninja"
PATH="$(dirname "$(command -v "$APT2OSTREE")"):$PATH"
export PATH APT2OSTREE
cd "$E"
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
printf '%s\n' $BASE_REQUEST > base.txt
printf '%s\n' $BASE_REQUEST hello > dev.txt
for image in base dev; do
    a2o lock "$image.txt" --sources sources.list --variant custom --merged-usr yes --cache out/lists \
        > /dev/null
done

# unique LOCKFILE...: how many different packages (name version arch sha256).
unique () {
    cat "$@" | grep -o "\"name\": \"[^\"]*\", \"version\": \"[^\"]*\", \"architecture\": \"[^\"]*\"" \
        | sort -u | wc -l
}

test_expect_success 'generate.sh writes one file for both images, with one pool and one edge per package' '
    cd "$E"
    ./generate.sh
    assert_has_file out/images.ninja
    assert_not_has_file out/base.ninja
    assert_not_file_has_content out/images.ninja "^build update-lockfiles"
    assert_not_file_has_content out/images.ninja "^builddir"
    [ "$(grep -c "^pool " out/images.ninja)" = 1 ]
    n=$(unique base.lock.json dev.lock.json)
    [ "$n" -lt "$(cat base.lock.json dev.lock.json | grep -c "\"sha256\": ")" ]
    assert_streq "$(grep -c ": a2o_unpack " out/images.ninja)" "$n"
'

test_expect_success 'ninja in the parent directory builds both images into one repository, each package once, and runs the parent'"'"'s own rule over each' '
    cd "$E"
    ninja > ninja.out
    ran ninja.out > steps
    grep -x -F "configure base (dpkg --configure -a)" steps
    grep -x -F "configure dev (dpkg --configure -a)" steps
    grep -x -F "file list out/base.files" steps
    grep -x -F "file list out/dev.files" steps
    assert_streq "$(grep -c "^fetch+unpack " steps)" "$(unique base.lock.json dev.lock.json)"
    assert_streq "$(grep "^fetch+unpack " steps | sort | uniq -d)" ""
    assert_has_file out/ostree/refs/heads/base
    assert_has_file out/ostree/refs/heads/dev
    assert_file_has_content out/dev.files " /usr/share/hello/version\$"
    assert_not_file_has_content out/base.files "hello"
    assert_file_has_content out/base.files " /usr/bin/dpkg\$"
    assert_file_has_content out/dev.files " /etc/hello\$"
'

test_expect_success 'ninja again does no work' '
    cd "$E"
    ninja > again.out
    assert_file_has_content again.out "ninja: no work to do"
'

test_expect_success 'the same paths work with ninja -C from a parent directory' '
    cd "$P"
    ninja -C subninja > c.out
    assert_file_has_content c.out "ninja: no work to do"
'

test_expect_success 'a changed image re-runs the parent'"'"'s rule for that image only, after its file regenerates' '
    cd "$E"
    base_files=$(mtime out/base.files)
    dev_files=$(mtime out/dev.files)
    hello_deb 1.1
    rm "$D"/pool/main/hello_1.0_amd64.deb
    repo_publish "$D" bookworm amd64 archive
    a2o lock --update dev.lock.json
    ninja > ninja.out
    ran ninja.out > steps
    cat steps
    grep -x -F "regenerate out/images.ninja" steps
    grep -x -F "fetch+unpack hello 1.1" steps
    grep -x -F "configure dev (dpkg --configure -a)" steps
    grep -x -F "file list out/dev.files" steps
    ! grep -E "(base|out/base.files)" steps || fail "steps of base ran"
    assert_streq "$(grep -c "^fetch+unpack " steps)" 1
    assert_streq "$(mtime out/base.files)" "$base_files"
    [ "$(mtime out/dev.files)" != "$dev_files" ]
    ninja > again.out
    assert_file_has_content again.out "ninja: no work to do"
'

test_expect_success 'an image rebuilt to the same commit does not re-run the parent'"'"'s rule' '
    cd "$E"
    image=$(cat out/ostree/refs/heads/dev)
    dev_files=$(mtime out/dev.files)
    # Stage 1 looks newer than the image: stage 2 runs again, gives the
    # same commit, leaves the ref file alone, and restat stops there.
    touch out/ostree/refs/heads/stage1/dev
    ninja > ninja.out
    ran ninja.out > steps
    cat steps
    grep -x -F "configure dev (dpkg --configure -a)" steps
    assert_streq "$(cat out/ostree/refs/heads/dev)" "$image"
    ! grep -F "file list" steps || fail "a file list was made again"
    assert_streq "$(mtime out/dev.files)" "$dev_files"
    touch dev.lock.json
    ninja > touched.out
    ! grep -F "file list" <(ran touched.out) || fail "a file list was made again"
    ninja > again.out
    assert_file_has_content again.out "ninja: no work to do"
'

test_expect_success 'ninja update-lockfiles in the parent re-locks both images without building' '
    cd "$E"
    image=$(cat out/ostree/refs/heads/dev)
    ninja update-lockfiles > update.out
    ran update.out > steps
    cat steps
    grep -x -F "lock --update base.lock.json" steps
    grep -x -F "lock --update dev.lock.json" steps
    ! grep -E "^(fetch\+unpack|stage1|configure|file list) " steps || fail "steps ran again"
    assert_streq "$(cat out/ostree/refs/heads/dev)" "$image"
'

test_expect_success 'a parent adds an image as the README says: only its own packages and stages run' '
    cd "$E"
    # (update-lockfiles above re-locked base and dev: what that changed
    # is built first, so that what runs below is for the new image alone)
    ninja > before.out
    printf "%s\n" $BASE_REQUEST hello > tools.txt
    a2o lock tools.txt --sources sources.list --variant custom --merged-usr yes --cache out/lists \
        > /dev/null
    sed -i "s/^IMAGES=\"\(.*\)\"/IMAGES=\"\1 tools.lock.json=tools\"/" generate.sh
    ./generate.sh
    printf "build out/tools.files: file_list \$repo/refs/heads/tools\nbuild all2: phony all out/tools.files\ndefault all2\n" \
        >> build.ninja
    ninja > ninja.out
    ran ninja.out > steps
    cat steps
    grep -x -F "stage1 stage1/tools" steps
    grep -x -F "configure tools (dpkg --configure -a)" steps
    grep -x -F "file list out/tools.files" steps
    ! grep -E "^fetch\+unpack " steps || fail "a package was fetched again"
    ! grep -E "(base|dev)" steps || fail "steps of base or dev ran"
    assert_streq "$(cat out/ostree/refs/heads/tools)" "$(cat out/ostree/refs/heads/dev)"
'

test_done
