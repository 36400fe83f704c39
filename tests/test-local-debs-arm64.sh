#!/bin/bash
# Local .debs for a Jetson board: an L4T-shaped BSP directory of unsigned
# arm64 .debs (Linux_for_Tegra/nv_tegra/l4t_deb_packages, no index) locked
# with a signed arm64 archive served on 127.0.0.1 (real bookworm arm64 base
# .debs) and built on this amd64 machine, stage 2 under qemu-user: one BSP
# package depends on an archive package, one overrides an archive package
# by version, and the image has them installed.  (tests/test-local-debs.sh
# covers the rest of lock --debs on the host's architecture.)
BASE_ARCH=arm64
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"
. "$TOP_SRCDIR/tests/libarm64.sh"

skip_unless_stage2
require_qemu_aarch64

SRV="$SCRATCH/srv"
base_repo "$SRV/debian"
repo_key archive
S=$SCRATCH/stage
mkdir -p "$S/hello/usr/share/hello" "$S/core/usr/lib/aarch64-linux-gnu/nvidia" "$S/hello2/usr/share/hello"
echo "hello 1.0 (archive)" > "$S/hello/usr/share/hello/version"
echo "hello 2.0 (BSP)" > "$S/hello2/usr/share/hello/version"
echo "l4t core" > "$S/core/usr/lib/aarch64-linux-gnu/nvidia/libnvos.so"
( cd "$SRV/debian/pool/main" && make_deb "$S/hello" hello 1.0 arm64 "Priority: optional" ) > /dev/null
repo_publish "$SRV/debian" bookworm arm64 archive
repo_serve "$SRV"

W="$SCRATCH/work"
BSP="$W/Linux_for_Tegra/nv_tegra/l4t_deb_packages"
mkdir -p "$BSP"
(
    cd "$BSP"
    make_deb "$S/core" nvidia-l4t-core 36.4.0-20240912 arm64 "Priority: optional" "Depends: coreutils"
    make_deb "$S/hello2" hello 2.0 arm64 "Priority: optional"
) > /dev/null
cd "$W"
repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
printf '%s\n' $BASE_REQUEST nvidia-l4t-core hello > packages.txt

test_expect_success 'the BSP directory and the arm64 archive lock together, paths relative to the lockfile' '
    cd "$W"
    a2o lock packages.txt --sources sources.list --arch arm64 --variant custom --merged-usr yes \
        --cache cache --debs "[name=l4t] Linux_for_Tegra/nv_tegra/l4t_deb_packages" -o img.lock.json > /dev/null
    grep "\"name\": \"nvidia-l4t-core\", .*\"architecture\": \"arm64\", \"source\": \"l4t\", .*\"path\": \"Linux_for_Tegra/nv_tegra/l4t_deb_packages/" img.lock.json
    grep "\"name\": \"hello\", \"version\": \"2.0\", \"architecture\": \"arm64\", \"source\": \"l4t\"" img.lock.json
    assert_not_file_has_content img.lock.json "$W"
'

test_expect_success 'the arm64 image builds here (stage 2 under qemu): the BSP packages and their archive dependency are ii' '
    cd "$W"
    a2o build img.lock.json --ref img > build.out 2>&1 || { cat build.out; false; }
    a2o --repo build/ostree export img --dir img
    assert_streq "$(cat img/var/lib/dpkg/arch)" arm64
    assert_streq "$(elf_machine img/usr/bin/dpkg)" aarch64
    dpkg-query --admindir=img/var/lib/dpkg -W -f "\${Package} \${Version} \${db:Status-Abbrev}\n" \
        nvidia-l4t-core hello coreutils > st
    assert_streq "$(cat st)" "coreutils 9.1-1 ii 
hello 2.0 ii 
nvidia-l4t-core 36.4.0-20240912 ii "
    assert_streq "$(cat img/usr/share/hello/version)" "hello 2.0 (BSP)"
    assert_streq "$(cat img/usr/lib/aarch64-linux-gnu/nvidia/libnvos.so)" "l4t core"
'

test_done
