#!/bin/bash
# A real arm64 image on this amd64 machine: lock and build Debian trixie (the
# current stable release) minbase for arm64 from the mirror the host's apt
# configuration names, moved to trixie with "lock --suite" (bookworm arm64
# is built by tests/test-l4t.sh);
# stage 2 runs the image's own dpkg under qemu-user through binfmt_misc.
# Skips, saying why, only when no mirror answers or arm64 programs cannot
# run here.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libarm64.sh"

require_mirror
[ "$(id -u)" = 0 ] || skip_all "stage 2 and chroot need root"
command -v ninja > /dev/null || skip_all "ninja is not installed"
require_qemu_aarch64
curl -fsS --max-time 20 -o /dev/null "$MIRROR/dists/trixie/InRelease" \
    || skip_all "the mirror $MIRROR has no trixie"

W=$SCRATCH/work
mkdir -p "$W"

test_expect_success 'lock and build trixie minbase for arm64 from the host'"'"'s mirror' '
    cd "$W"
    : > minbase.txt
    a2o lock minbase.txt --suite trixie --variant minbase --arch arm64 -o minbase.lock.json
    assert_file_has_content minbase.lock.json "\"architecture\": \"arm64\""
    assert_file_has_content minbase.lock.json "^  \"merged-usr\": true,"
    arm64_deb_cache build
    a2o build minbase.lock.json --ref minbase --builddir build > build.out
    cat build.out
    assert_file_has_content build.out "^image minbase: commit [0-9a-f]\{64\}\$"
    a2o --repo build/ostree export minbase --dir img
'

test_expect_success 'the image is arm64: /usr/bin/bash and dpkg are aarch64 ELF programs' '
    cd "$W"
    assert_streq "$(elf_machine img/usr/bin/bash)" aarch64
    assert_streq "$(elf_machine img/usr/bin/dpkg)" aarch64
    assert_streq "$(cat img/var/lib/dpkg/arch)" arm64
    [ -L img/bin ] && assert_streq "$(readlink img/bin)" usr/bin
'

test_expect_success 'every package is installed and configured (ii) and dpkg --audit is clean' '
    cd "$W"
    dpkg --root="$W/img" -l | awk "NR > 5 { print \$1 }" | sort | uniq -c > states
    cat states
    assert_streq "$(awk "{ print \$2 }" states)" ii
    n=$(grep -c "\"sha256\": " minbase.lock.json)
    assert_streq "$(awk "{ print \$1 }" states)" "$n"
    dpkg --root="$W/img" --audit > audit
    [ ! -s audit ]
'

test_expect_success 'dpkg --verify inside the image, run under qemu, is clean' '
    cd "$W"
    a2o --repo build/ostree export minbase --dir run
    assert_streq "$(chroot "$W/run" /usr/bin/bash -c "echo \$HOSTTYPE")" aarch64
    chroot "$W/run" dpkg --verify > verify.out
    cat verify.out
    [ ! -s verify.out ]
'

test_expect_success 'building again does no work' '
    cd "$W"
    ninja -f build/minbase.ninja minbase > again.out
    assert_file_has_content again.out "no work to do"
'

test_done
