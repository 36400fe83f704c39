#!/bin/bash
# Local .debs (issue 19): a BSP-shaped directory of unsigned .debs with no
# index (Linux_for_Tegra/nv_tegra/l4t_deb_packages) given with lock --debs,
# and a .deb the package list names (a CI build's output), resolved together
# with a signed archive served on 127.0.0.1: one depends on an archive
# package, one overrides an archive package by version.  The lockfile
# records each .deb's sha256, size and path relative to itself; build takes
# them into the download cache by sha256; a .deb changed since lock is a
# one-line error naming the file and both sums.
#
# The .debs here are of the host's architecture (amd64), on the amd64
# hermetic base; an arm64 .deb in the directory shows the architecture is
# honoured.  An arm64 BSP locked and built with an arm64 archive (stage 2
# under qemu) is tests/test-local-debs-arm64.sh's.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2

SRV="$SCRATCH/srv"
base_repo "$SRV/debian"
repo_key archive
mkdir -p "$SCRATCH/stage/hello/usr/share/hello"
echo "hello 1.0 (archive)" > "$SCRATCH/stage/hello/usr/share/hello/version"
( cd "$SRV/debian/pool/main" && make_deb "$SCRATCH/stage/hello" hello 1.0 amd64 "Priority: optional" ) > /dev/null
repo_publish "$SRV/debian" bookworm "amd64 arm64" archive
repo_serve "$SRV"

W="$SCRATCH/work"
BSP="$W/Linux_for_Tegra/nv_tegra/l4t_deb_packages"
# local_deb DIR NAME VERSION ARCH [FIELD]...: a package built into DIR,
# shipping /usr/share/NAME/version.
local_deb () {
    local dir=$1 name=$2 version=$3 arch=$4
    shift 4
    local stage="$SCRATCH/stage/$name-$version-$arch"
    mkdir -p "$dir" "$stage/usr/share/$name"
    echo "$name $version (local)" > "$stage/usr/share/$name/version"
    ( cd "$dir" && make_deb "$stage" "$name" "$version" "$arch" "Priority: optional" "$@" ) > /dev/null
}
local_deb "$BSP" nvidia-l4t-core 36.4.0-20240912 amd64 "Depends: coreutils"
local_deb "$BSP" hello 2.0 amd64
local_deb "$BSP" nvidia-l4t-arm-only 36.4.0-20240912 arm64
local_deb "$W/image/out" mypkg 1.0 amd64 "Depends: nvidia-l4t-core (>= 36)"
cd "$W"
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
printf '%s\n' $BASE_REQUEST nvidia-l4t-core hello ./out/mypkg_1.0_amd64.deb > image/packages.txt
DEBS="[name=l4t] Linux_for_Tegra/nv_tegra/l4t_deb_packages"
CORE=nvidia-l4t-core_36.4.0-20240912_amd64.deb

test_expect_success 'lock --debs reads a directory of .debs with no index and resolves it with the signed archive' '
    cd "$W"
    a2o lock image/packages.txt --sources sources.list --variant custom --merged-usr yes \
        --cache cache --debs "$DEBS" -o image/img.lock.json > out
    cat image/img.lock.json
    grep "\"name\": \"l4t\", .*\"pin-priority\": 500, .*\"local\": true, \"dir\": \"../Linux_for_Tegra/nv_tegra/l4t_deb_packages\"}" image/img.lock.json
    grep "\"name\": \"nvidia-l4t-core\", \"version\": \"36.4.0-20240912\", \"architecture\": \"amd64\", \"source\": \"l4t\", .*\"filename\": \"$CORE\", \"path\": \"../Linux_for_Tegra/nv_tegra/l4t_deb_packages/$CORE\"}" image/img.lock.json
    grep "\"name\": \"hello\", \"version\": \"2.0\", \"architecture\": \"amd64\", \"source\": \"l4t\"" image/img.lock.json
    grep "\"name\": \"coreutils\", .*\"source\": \"bookworm\"" image/img.lock.json
    assert_not_file_has_content image/img.lock.json nvidia-l4t-arm-only
'

test_expect_success 'a .deb path in the package list is read, locked from the source "local" and recorded relative to the lockfile' '
    cd "$W"
    grep "\"packages\": \[.*\"out/mypkg_1.0_amd64.deb\"\]" image/img.lock.json
    grep "\"name\": \"local\", .*\"local\": true}" image/img.lock.json
    sha=$(sha256sum < image/out/mypkg_1.0_amd64.deb | cut -d" " -f1)
    size=$(stat -c %s image/out/mypkg_1.0_amd64.deb)
    grep "\"name\": \"mypkg\", \"version\": \"1.0\", \"architecture\": \"amd64\", \"source\": \"local\", .*\"size\": $size, \"sha256\": \"$sha\", \"filename\": \"mypkg_1.0_amd64.deb\", \"path\": \"out/mypkg_1.0_amd64.deb\"}" image/img.lock.json
'

test_expect_success 'the lockfile holds no absolute path and no host' '
    cd "$W"
    assert_not_file_has_content image/img.lock.json "$SCRATCH"
    assert_not_file_has_content image/img.lock.json "\"/"
    assert_not_file_has_content image/img.lock.json "127.0.0.1"
'

test_expect_success 'lock --update from another directory leaves the lockfile byte for byte' '
    cd "$W"
    cp image/img.lock.json before.json
    mkdir -p elsewhere
    cd elsewhere
    a2o lock --update ../image/img.lock.json --cache ../cache > /dev/null
    cmp ../before.json ../image/img.lock.json
'

test_expect_success 'a local package competes by pin priority: below the archive'"'"'s, the archive'"'"'s hello wins' '
    cd "$W"
    a2o lock image/packages.txt --sources sources.list --variant custom --merged-usr yes \
        --cache cache --debs "[name=l4t pin-priority=100] $BSP" -o image/pin.lock.json > /dev/null
    grep "\"name\": \"l4t\", .*\"pin-priority\": 100," image/pin.lock.json
    grep "\"name\": \"hello\", \"version\": \"1.0\", \"architecture\": \"amd64\", \"source\": \"bookworm\"" image/pin.lock.json
    grep "\"name\": \"nvidia-l4t-core\", .*\"source\": \"l4t\"" image/pin.lock.json
    assert_not_file_has_content image/pin.lock.json "$SCRATCH"
'

test_expect_success 'the image builds: the local packages are ii, the override installed, the .debs cached by sha256' '
    cd "$W"
    a2o build image/img.lock.json --ref img --builddir b1 > b1.out 2>&1 || { cat b1.out; false; }
    a2o --repo b1/ostree export img --dir img
    dpkg-query --admindir=img/var/lib/dpkg -W -f "\${Package} \${Version} \${db:Status-Abbrev}\n" \
        nvidia-l4t-core hello mypkg coreutils > st
    cat st
    assert_streq "$(cat st)" "coreutils 9.1-1 ii 
hello 2.0 ii 
mypkg 1.0 ii 
nvidia-l4t-core 36.4.0-20240912 ii "
    assert_streq "$(cat img/usr/share/hello/version)" "hello 2.0 (local)"
    sha=$(sha256sum < image/out/mypkg_1.0_amd64.deb | cut -d" " -f1)
    find b1 -name "$sha" | grep -q cache/debs/
'

test_expect_success 'a .deb rebuilt after lock, in a build directory that has its tree: the locked one is kept, and one line says which file and that lock --update takes it' '
    cd "$W"
    before=$(cat b1/ostree/refs/heads/img)
    old=$(sha256sum < image/out/mypkg_1.0_amd64.deb | cut -d" " -f1)
    # Unchanged: a no-op build says nothing and writes no record.
    a2o build image/img.lock.json --ref img --builddir b1 > out 2> err || { cat out err; false; }
    assert_not_file_has_content err "changed since it was locked"
    assert_not_has_file b1/cache/local-debs
    cp image/out/mypkg_1.0_amd64.deb rebuilt-saved.deb
    stage="$SCRATCH/stage/mypkg-1.0-amd64"
    cp "$stage/usr/share/mypkg/version" version-saved
    echo "rebuilt after lock" >> "$stage/usr/share/mypkg/version"
    ( cd image/out && make_deb "$stage" mypkg 1.0 amd64 "Priority: optional" \
        "Depends: nvidia-l4t-core (>= 36)" ) > /dev/null
    cp version-saved "$stage/usr/share/mypkg/version"
    new=$(sha256sum < image/out/mypkg_1.0_amd64.deb | cut -d" " -f1)
    a2o build image/img.lock.json --ref img --builddir b1 > out 2> err || { cat out err; false; }
    cat err
    grep "changed since it was locked" err > line
    assert_one_line line
    assert_file_has_content line "^apt2ostree build: image/out/mypkg_1.0_amd64.deb changed since it was locked in image/img.lock.json"
    assert_file_has_content line "the image keeps the locked mypkg 1.0 (sha256 $old)"
    assert_file_has_content line "run \"apt2ostree lock --update image/img.lock.json\" to take the new one"
    assert_streq "$(cat b1/ostree/refs/heads/img)" "$before"
    # Said again on the next build.
    a2o build image/img.lock.json --ref img --builddir b1 > out 2> err
    grep "changed since it was locked" err > line
    assert_one_line line
    # What it says works: lock --update takes the new one.
    cp image/img.lock.json image/new.lock.json
    a2o lock --update image/new.lock.json --cache cache > /dev/null
    assert_file_has_content image/new.lock.json "$new"
    rm image/new.lock.json
    # The same size, other bytes: hashed, and the new sha256 said.
    cp rebuilt-saved.deb image/out/mypkg_1.0_amd64.deb
    python3 -c "import sys; f = open(sys.argv[1], \"r+b\"); f.seek(-1, 2); b = f.read(1); f.seek(-1, 2); f.write(bytes([b[0] ^ 0xff]))" \
        image/out/mypkg_1.0_amd64.deb
    other=$(sha256sum < image/out/mypkg_1.0_amd64.deb | cut -d" " -f1)
    a2o build image/img.lock.json --ref img --builddir b1 > out 2> err
    grep "changed since it was locked" err > line
    assert_one_line line
    assert_file_has_content line "(now sha256 $other)"
    assert_file_has_content b1/cache/local-debs "^$other [0-9]* [0-9/]* image/out/mypkg_1.0_amd64.deb\$"
    # The locked bytes back (a new ctime): hashed once, nothing said.
    cp rebuilt-saved.deb image/out/mypkg_1.0_amd64.deb
    a2o build image/img.lock.json --ref img --builddir b1 > out 2> err
    assert_not_file_has_content err "changed since it was locked"
    assert_file_has_content b1/cache/local-debs "^$old "
    assert_streq "$(cat b1/ostree/refs/heads/img)" "$before"
'

test_expect_success 'build --apt-sources writes the archive'"'"'s source only: local .debs are no apt source' '
    cd "$W"
    a2o build image/img.lock.json --ref img-apt --builddir b1 --apt-sources > /dev/null
    a2o --repo b1/ostree export img-apt --dir aptimg
    S=aptimg/etc/apt/sources.list.d/apt2ostree.sources
    cat $S
    assert_streq "$(grep -c "^Types: deb\$" $S)" 1
    assert_not_file_has_content $S "l4t"
    assert_not_file_has_content $S "file:"
'

test_expect_success 'a .deb whose path has a space and a "$" locks and builds (the Ninja file escapes its URL)' '
    cd "$W"
    mkdir -p "odd \$dir"
    cp "$BSP/hello_2.0_amd64.deb" "odd \$dir/hello 2.0.deb"
    printf "%s\n" $BASE_REQUEST hello > odd.txt
    a2o lock odd.txt --sources sources.list --variant custom --merged-usr yes --cache cache \
        --debs "[name=odd] odd \$dir" > /dev/null
    grep "\"filename\": \"hello_2.0_amd64.deb\", \"path\": \"odd \$dir/hello 2.0.deb\"" odd.lock.json
    a2o build odd.lock.json --ref odd --builddir b1 > odd.out 2>&1 || { cat odd.out; false; }
    a2o --repo b1/ostree export odd --dir oddimg
    assert_streq "$(cat oddimg/usr/share/hello/version)" "hello 2.0 (local)"
'

test_expect_success 'an arm64 image takes the directory'"'"'s arm64 .debs and leaves the amd64 ones' '
    cd "$W"
    echo nvidia-l4t-arm-only > arm.txt
    a2o lock arm.txt --arch arm64 --sources sources.list --variant custom --merged-usr yes \
        --cache cache --debs "$DEBS" > /dev/null
    grep "\"name\": \"nvidia-l4t-arm-only\", \"version\": \"36.4.0-20240912\", \"architecture\": \"arm64\", \"source\": \"l4t\", .*\"path\": \"Linux_for_Tegra/nv_tegra/l4t_deb_packages/nvidia-l4t-arm-only_36.4.0-20240912_arm64.deb\"}" arm.lock.json
    assert_not_file_has_content arm.lock.json "_amd64.deb"
'

test_expect_success 'a .deb changed since lock is a one-line error naming the file and both sums; no ref, nothing cached' '
    cd "$W"
    old=$(sha256sum < image/out/mypkg_1.0_amd64.deb | cut -d" " -f1)
    cp image/out/mypkg_1.0_amd64.deb saved.deb
    echo "rebuilt" >> "$SCRATCH/stage/mypkg-1.0-amd64/usr/share/mypkg/version"
    ( cd image/out && make_deb "$SCRATCH/stage/mypkg-1.0-amd64" mypkg 1.0 amd64 "Priority: optional" \
        "Depends: nvidia-l4t-core (>= 36)" ) > /dev/null
    new=$(sha256sum < image/out/mypkg_1.0_amd64.deb | cut -d" " -f1)
    ! a2o build image/img.lock.json --ref img --builddir b2 > b2.out 2>&1 || fail "the build succeeded"
    cat b2.out
    grep "changed since it was locked" b2.out > line
    assert_one_line line
    assert_file_has_content line "$W/image/out/mypkg_1.0_amd64.deb changed since it was locked"
    assert_file_has_content line "$old"
    assert_file_has_content line "$new"
    test ! -e b2/ostree/refs/heads/img
    ! find b2 -name "$new" | grep . || fail "$new kept"
    ! find b2 -name "$old" | grep . || fail "$old kept"
    # (the fetch service keeps its socket, lock and log there: no downloads)
    ! find b2 -name ".fetch-*" ! -name ".fetch-service*" | grep . || fail "partial fetches kept"
    cp saved.deb image/out/mypkg_1.0_amd64.deb
'

test_expect_success 'an untrusted lockfile: an absolute path, a control character or a path on an archive package is refused' '
    cd "$W"
    sed "s#\"path\": \"out/mypkg#\"path\": \"/tmp/out/mypkg#" image/img.lock.json > image/abs.lock.json
    expect_failure err a2o build image/abs.lock.json --builddir b3
    assert_one_line err
    assert_file_has_content err "package \"mypkg\": \"path\".*is an absolute path"
    sed "s#\"path\": \"out/mypkg#\"path\": \"out\\\\n/mypkg#" image/img.lock.json > image/nl.lock.json
    expect_failure err a2o build image/nl.lock.json --builddir b3
    assert_one_line err
    assert_file_has_content err "control character"
    sed "s#\"filename\": \"pool/main/hello_1.0_amd64.deb\"#&, \"path\": \"x/hello.deb\"#" image/pin.lock.json > image/arch.lock.json
    grep -q "x/hello.deb" image/arch.lock.json
    expect_failure err a2o build image/arch.lock.json --builddir b3
    assert_file_has_content err "is only for a package of a local source"
    test ! -e b3/ostree/refs/heads/img
'

test_expect_success 'errors name what is at fault: an empty directory, a bad option, a missing .deb' '
    cd "$W"
    mkdir -p empty
    expect_failure err a2o lock image/packages.txt --sources sources.list --cache cache --debs empty -o x.lock.json
    assert_one_line err
    assert_file_has_content err "empty: the directory holds no .deb file"
    expect_failure err a2o lock image/packages.txt --sources sources.list --cache cache --debs "[pin=9] $BSP" -o x.lock.json
    assert_file_has_content err "\"pin=9\" is not name=NAME or pin-priority=N"
    printf "%s\n" dpkg ./out/missing_1.0_amd64.deb > image/missing.txt
    expect_failure err a2o lock image/missing.txt --sources sources.list --cache cache -o x.lock.json
    assert_one_line err
    assert_file_has_content err "image/./out/missing_1.0_amd64.deb: No such file"
    test ! -e x.lock.json
    expect_failure err a2o lock --update image/img.lock.json --debs "$BSP"
    assert_file_has_content err "only -o, --sources, --cache and --mirror go with it"
'

test_expect_success 'a symlink in a --debs directory to a file outside it is refused in one line naming it; one to a file inside is read' '
    cd "$W"
    mkdir -p links/pool outside
    local_deb outside evil 1.0 amd64
    ln -s ../outside/evil_1.0_amd64.deb links/evil_1.0_amd64.deb
    printf "%s\n" inner > image/links.txt
    expect_failure err a2o lock image/links.txt --sources sources.list --cache cache --debs links -o x.lock.json
    assert_one_line err
    assert_file_has_content err "links/evil_1.0_amd64.deb: a symlink to .*/outside/evil_1.0_amd64.deb, outside the directory"
    test ! -e x.lock.json
    rm links/evil_1.0_amd64.deb
    local_deb links/pool inner 1.0 amd64
    ln -s pool/inner_1.0_amd64.deb links/inner_1.0_amd64.deb
    a2o lock image/links.txt --sources sources.list --variant custom --merged-usr yes --cache cache \
        --debs links -o x.lock.json > /dev/null
    grep "\"name\": \"inner\", .*\"path\": \"links/inner_1.0_amd64.deb\"" x.lock.json
'

test_expect_success '--help and the man page describe local .debs' '
    a2o lock --help > help
    assert_file_has_content help "--debs"
    assert_file_has_content "$TOP_SRCDIR/man/apt2ostree.1" "^\.B Local \.debs"
    assert_file_has_content "$TOP_SRCDIR/man/apt2ostree.1" "^\.BI \\\\-\\\\-debs"
    assert_file_has_content "$TOP_SRCDIR/man/apt2ostree.1" "(the \.deb, relative to the lockfile"
    assert_file_has_content "$TOP_SRCDIR/README.md" "lock --debs"
'

test_done
