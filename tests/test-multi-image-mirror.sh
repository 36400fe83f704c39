#!/bin/bash
# Two real images in one build, from the mirror the host's apt configuration
# names: Debian bookworm minbase, and minbase plus a dozen packages.  The
# second image costs only its extra packages and its own stage 1 and 2.
# Skips, saying why, only when no mirror answers.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libarm64.sh"

require_mirror
[ "$(id -u)" = 0 ] || skip_all "stage 2 runs maintainer scripts as root in bubblewrap; run as root"
command -v ninja > /dev/null || skip_all "ninja is not installed"
[ "$(dpkg --print-architecture)" = amd64 ] || skip_all "the images are amd64's"

W=$SCRATCH/work
mkdir -p "$W"
cd "$W"
EXTRA="less nano vim-tiny curl ca-certificates iproute2 procps file jq tree zstd xz-utils"

# names LOCKFILE: "name version arch" of each package.
names () {
    grep -o '"name": "[^"]*", "version": "[^"]*", "architecture": "[^"]*"' "$1" \
        | sed 's/"name": "\([^"]*\)", "version": "\([^"]*\)".*/\1 \2/' | sort -u
}

test_expect_success 'lock bookworm minbase, and minbase plus a dozen packages' '
    cd "$W"
    : > minbase.txt
    printf "%s\n" $EXTRA > dev.txt
    a2o lock minbase.txt --variant minbase --arch amd64 --suite bookworm -o minbase.lock.json > /dev/null
    a2o lock dev.txt --variant minbase --arch amd64 --suite bookworm -o dev.lock.json > /dev/null
    [ "$(names dev.lock.json | wc -l)" -gt "$(names minbase.lock.json | wc -l)" ]
'

test_expect_success 'minbase alone, then both in one build: the second image runs only its own packages and stages' '
    cd "$W"
    arm64_deb_cache build
    a2o build minbase.lock.json --builddir build > alone.out
    du -sk build/ostree/objects | cut -f1 > one.kib
    a2o build minbase.lock.json dev.lock.json --builddir build > both.out
    ran both.out > steps
    cat steps
    comm -13 <(names minbase.lock.json) <(names dev.lock.json) > extra
    assert_streq "$(grep -c "^fetch+unpack " steps)" "$(wc -l < extra)"
    while read -r name version; do
        grep -q -x -F "fetch+unpack $name $version" steps || fail "no unpack of $name $version"
    done < extra
    grep -x -F "stage1 stage1/dev" steps
    grep -x -F "configure dev (dpkg --configure -a)" steps
    ! grep -F minbase steps || fail "steps of minbase ran again"
    assert_file_has_content both.out "^image minbase: commit $(cat build/ostree/refs/heads/minbase)\$"
    assert_file_has_content both.out "^image dev: commit $(cat build/ostree/refs/heads/dev)\$"
    du -sk build/ostree/objects | cut -f1 > two.kib
    echo "$(wc -l < extra) extra packages; objects: minbase $(cat one.kib) KiB, both $(cat two.kib) KiB," \
        "ratio $(awk -v a="$(cat two.kib)" -v b="$(cat one.kib)" "BEGIN { printf \"%.3f\", a / b }")" \
        > "$W/disk.txt"
'
[ ! -f "$W/disk.txt" ] || say "$(cat "$W/disk.txt")"

test_expect_success 'both again do no work' '
    cd "$W"
    ninja -f build/images.ninja > again.out
    assert_file_has_content again.out "ninja: no work to do"
'

test_expect_success 'the second image is the commit its lockfile gives built alone' '
    cd "$W"
    arm64_deb_cache alone
    a2o build dev.lock.json --builddir alone > /dev/null
    assert_streq "$(cat alone/ostree/refs/heads/dev)" "$(cat build/ostree/refs/heads/dev)"
'

test_done
