#!/bin/bash
# Many images in one Ninja file and one repository (apt2ostree ninja and
# build with several lockfiles), hermetic: real Debian bookworm .debs plus
# small packages made here, signed and served on 127.0.0.1.  Four images:
# "base" and "dev" (bookworm, amd64, dev = base + hello), "other" (another
# release of the archive, amd64, base + extra) and "arm" (arm64: one
# package of its own, built to stage 1; its stage 2 would need arm64 dpkg,
# which the hermetic archive does not have: tests/test-arm64-mirror.sh
# configures arm64 images).
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

base_archive

# small_deb NAME VERSION ARCH [FIELD: VALUE]...: a package in $D's pool that
# ships /usr/share/NAME/version.
small_deb () {
    local name=$1 version=$2 arch=$3
    shift 3
    local stage="$SCRATCH/stage/$name-$version-$arch"
    rm -rf "$stage"
    mkdir -p "$stage/usr/share/$name"
    echo "$name $version" > "$stage/usr/share/$name/version"
    ( cd "$D/pool/main" && make_deb "$stage" "$name" "$version" "$arch" "Priority: optional" "$@" ) \
        > /dev/null
}

reindex () {
    repo_dists "$D" bookworm "amd64 arm64"
    repo_sign "$D" bookworm archive
    repo_dists "$D" trixie amd64
    repo_sign "$D" trixie archive
}

small_deb hello 1.0 amd64 "Depends: coreutils"
small_deb extra 1.0 amd64
small_deb tiny 1.0 arm64
reindex
repo_serve "$SRV"

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list

# lock_image NAME [LOCK-OPTION...] -- PACKAGE...: NAME.lock.json.
lock_image () {
    local name=$1; shift
    local options=()
    while [ "$1" != -- ]; do options+=("$1"); shift; done
    shift
    printf '%s\n' "$@" > "$name.txt"
    a2o lock "$name.txt" --sources sources.list --variant custom --merged-usr yes \
        --cache cache "${options[@]}" -o "$name.lock.json" > /dev/null
}
lock_image base -- $BASE_REQUEST
lock_image dev -- $BASE_REQUEST hello
lock_image other --suite trixie -- $BASE_REQUEST extra
lock_image arm --arch arm64 -- tiny

# The images ninja builds here: three configured, the arm64 one to stage 1.
TARGETS="base dev other arm/stage1"

# packages LOCKFILE...: "name version arch sha256" of each package, each once.
packages () {
    python3 - "$@" <<"EOF"
import json, sys
seen = set()
for path in sys.argv[1:]:
    for p in json.load(open(path))["packages"]:
        seen.add((p["name"], p["version"], p["architecture"], p["sha256"]))
for p in sorted(seen):
    print(*p)
EOF
}

test_expect_success 'one Ninja file for four lockfiles: each package has one fetch+unpack edge, each image its own stage 1 and stage 2' '
    cd "$W"
    a2o ninja base.lock.json dev.lock.json other.lock.json arm.lock.json -o all.ninja \
        --builddir build --sources sources.list
    n_all=$(cat base.lock.json dev.lock.json other.lock.json arm.lock.json | grep -c "\"sha256\": ")
    n_unique=$(packages base.lock.json dev.lock.json other.lock.json arm.lock.json | wc -l)
    echo "$n_all packages in the lockfiles, $n_unique different ones"
    [ "$n_unique" -lt "$n_all" ]
    ninja -f all.ninja -t commands base dev other arm > commands
    assert_streq "$(grep -c " unpack-deb " commands)" "$n_unique"
    assert_streq "$(grep " unpack-deb " commands | sort | uniq -d)" ""
    for image in base dev other arm; do
        assert_streq "$(grep -c " stage1 --ref stage1/$image " commands)" 1
        assert_streq "$(grep -c " configure --ref $image " commands)" 1
    done
    grep " stage1 --ref stage1/arm " commands | grep -q -- "--arch arm64"
    assert_file_has_content all.ninja "^default base dev other arm\$"
'

test_expect_success 'ninja builds the images; every package shared by images is fetched and unpacked once' '
    cd "$W"
    ninja -f all.ninja $TARGETS > ninja.out
    ran ninja.out > steps
    n_unique=$(packages base.lock.json dev.lock.json other.lock.json arm.lock.json | wc -l)
    assert_streq "$(grep -c "^fetch+unpack " steps)" "$n_unique"
    assert_streq "$(grep "^fetch+unpack " steps | sort | uniq -d)" ""
    # The log of the commands ninja ran: one deb/ output per package.
    assert_streq "$(grep -c "	build/ostree/refs/heads/deb/" build/.ninja_log)" "$n_unique"
    grep -x -F "configure base (dpkg --configure -a)" steps
    grep -x -F "configure dev (dpkg --configure -a)" steps
    grep -x -F "configure other (dpkg --configure -a)" steps
    grep -x -F "stage1 stage1/arm" steps
    a2o --repo build/ostree export dev --dir dev-root
    assert_streq "$(cat dev-root/usr/share/hello/version)" "hello 1.0"
    a2o --repo build/ostree export other --dir other-root
    assert_streq "$(cat other-root/usr/share/extra/version)" "extra 1.0"
    [ ! -e other-root/usr/share/hello ]
'

test_expect_success 'every image is the commit the same lockfile gives built alone' '
    cd "$W"
    for image in base dev other; do
        a2o --repo "alone-$image/ostree" build "$image.lock.json" --builddir "alone-$image" \
            --sources sources.list > /dev/null
        assert_streq "$(cat "alone-$image/ostree/refs/heads/$image")" "$(cat "build/ostree/refs/heads/$image")"
    done
    a2o ninja arm.lock.json -o alone-arm.ninja --builddir alone-arm --sources sources.list
    ninja -f alone-arm.ninja arm/stage1 > /dev/null
    assert_streq "$(cat alone-arm/ostree/refs/heads/stage1/arm)" "$(cat build/ostree/refs/heads/stage1/arm)"
'

test_expect_success 'two images sharing all but one package take at most 1.1 times the repository of one' '
    cd "$W"
    a2o build base.lock.json dev.lock.json --builddir pair --sources sources.list > /dev/null
    one=$(du -sk alone-base/ostree/objects | cut -f1)
    two=$(du -sk pair/ostree/objects | cut -f1)
    echo "objects: base alone ${one} KiB, base and dev ${two} KiB," \
        "ratio $(awk -v a="$two" -v b="$one" "BEGIN { printf \"%.3f\", a / b }")" > "$W/disk.txt"
    [ $((two * 10)) -le $((one * 11)) ]
'
[ ! -f "$W/disk.txt" ] || say "$(cat "$W/disk.txt")"

test_expect_success 'ninja again does no work, and explains nothing as dirty' '
    cd "$W"
    ninja -f all.ninja $TARGETS > again.out
    assert_file_has_content again.out "ninja: no work to do"
    ninja -f all.ninja -n -d explain $TARGETS > explain.out 2>&1
    assert_not_file_has_content explain.out "is dirty"
    assert_file_has_content explain.out "ninja: no work to do"
'

test_expect_success 'a changed lockfile regenerates the file and rebuilds only its own image' '
    cd "$W"
    base=$(cat build/ostree/refs/heads/base)
    other=$(cat build/ostree/refs/heads/other)
    small_deb hello 1.1 amd64 "Depends: coreutils"
    rm "$D"/pool/main/hello_1.0_amd64.deb
    reindex
    a2o lock --update dev.lock.json
    ninja -f all.ninja $TARGETS > ninja.out
    ran ninja.out > steps
    cat steps
    grep -x -F "regenerate all.ninja" steps
    grep -x -F "fetch+unpack hello 1.1" steps
    grep -x -F "stage1 stage1/dev" steps
    grep -x -F "configure dev (dpkg --configure -a)" steps
    assert_streq "$(grep -c "^fetch+unpack " steps)" 1
    ! grep -E "(base|other|arm)" steps || fail "steps of other images ran"
    assert_streq "$(cat build/ostree/refs/heads/base)" "$base"
    assert_streq "$(cat build/ostree/refs/heads/other)" "$other"
    a2o --repo build/ostree export dev --dir dev-root-2
    assert_streq "$(cat dev-root-2/usr/share/hello/version)" "hello 1.1"
    ninja -f all.ninja $TARGETS > again.out
    assert_file_has_content again.out "ninja: no work to do"
'

test_expect_success 'ninja update-lockfiles re-locks every lockfile the file was generated from, building nothing' '
    cd "$W"
    dev=$(cat build/ostree/refs/heads/dev)
    ninja -f all.ninja update-lockfiles > update.out
    ran update.out > steps
    cat steps
    for image in base dev other arm; do
        grep -x -F "lock --update $image.lock.json" steps
    done
    ! grep -E "^(fetch\+unpack|stage1|configure) " steps || fail "steps ran again"
    assert_streq "$(cat build/ostree/refs/heads/dev)" "$dev"
'

test_expect_success 'build takes several lockfiles: one Ninja file, one repository, a commit line per image' '
    cd "$W"
    # update-lockfiles recorded the archive'"'"'s new Release dates (stage 2'"'"'s
    # date): bring the images up to date first.
    ninja -f all.ninja $TARGETS > /dev/null
    a2o build base.lock.json dev.lock.json other.lock.json --sources sources.list > build.out
    cat build.out
    assert_has_file build/images.ninja
    for image in base dev other; do
        assert_file_has_content build.out "^image $image: commit $(cat build/ostree/refs/heads/$image)\$"
    done
    # The images are built already (the same edges, the same log).
    ! grep -E "^\[[0-9]+/[0-9]+\] (fetch\+unpack|stage1|configure) " build.out
'

test_expect_success 'LOCKFILE=REF names an image; two lockfiles with one ref (or nested refs), or --ref with two, are usage errors naming the files' '
    cd "$W"
    a2o ninja base.lock.json=mine dev.lock.json -o named.ninja --builddir build --sources sources.list
    assert_file_has_content named.ninja "^build mine: phony [$]repo/refs/heads/mine\$"
    assert_file_has_content named.ninja "^build dev: phony [$]repo/refs/heads/dev\$"
    assert_file_has_content named.ninja " ninja base.lock.json=mine dev.lock.json -o named.ninja "
    mkdir -p copy && cp base.lock.json copy/
    set +e
    a2o ninja base.lock.json copy/base.lock.json -o x.ninja 2> err; rc=$?
    set -e
    assert_streq "$rc" 2
    assert_one_line err
    assert_file_has_content err "base.lock.json and copy/base.lock.json both give the image ref \"base\""
    assert_file_has_content err "LOCKFILE=REF"
    set +e
    a2o build base.lock.json=one dev.lock.json=one 2> err; rc=$?
    set -e
    assert_streq "$rc" 2
    assert_file_has_content err "base.lock.json and dev.lock.json both give the image ref \"one\""
    set +e
    a2o ninja base.lock.json dev.lock.json --ref one -o x.ninja 2> err; rc=$?
    set -e
    assert_streq "$rc" 2
    assert_file_has_content err "LOCKFILE=REF"
    set +e
    a2o ninja base.lock.json=os dev.lock.json=os/dev -o x.ninja 2> err; rc=$?
    set -e
    assert_streq "$rc" 2
    assert_one_line err
    assert_file_has_content err "base.lock.json gives the image ref \"os\" and dev.lock.json \"os/dev\""
    # A newline in a ref given as LOCKFILE=REF: one line, escaped.
    expect_failure err a2o ninja "base.lock.json=$(printf "a\nb")" -o x.ninja
    assert_one_line err
    assert_file_has_content err "the image ref \"a\\\\nb\" contains"
    assert_not_has_file x.ninja
'

test_expect_success 'two files generated separately for one repository fail in one parent build with an error naming the fix; for two repositories they work' '
    cd "$W"
    a2o ninja base.lock.json -o sep/base.ninja --builddir build --sources sources.list --subninja
    a2o ninja dev.lock.json -o sep/dev.ninja --builddir build --sources sources.list --subninja
    printf "subninja sep/base.ninja\nsubninja sep/dev.ninja\n" > parent.ninja
    expect_failure err ninja -f parent.ninja -n
    cat err
    assert_file_has_content err "multiple rules generate build/ostree/one-ninja-file-per-repository.give-every-lockfile-to-one-apt2ostree-ninja"
    a2o ninja base.lock.json -o sep2/base.ninja --builddir b1 --sources sources.list --subninja
    a2o ninja dev.lock.json -o sep2/dev.ninja --builddir b2 --sources sources.list --subninja
    printf "subninja sep2/base.ninja\nsubninja sep2/dev.ninja\n" > parent2.ninja
    ninja -f parent2.ninja -n base dev > dry.out
    assert_file_has_content dry.out "configure base"
    assert_file_has_content dry.out "configure dev"
'

test_done
