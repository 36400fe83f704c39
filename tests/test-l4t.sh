#!/bin/bash
# An NVIDIA L4T-shaped image: the real Debian bookworm arm64 archive (from
# the mirror the host's apt configuration names) with a second apt
# repository on top, shaped like NVIDIA's (a "common" part and a SoC part,
# "t194"), made at test time, signed by a key of its own and served on
# 127.0.0.1.  Its arm64 packages do what L4T's do: nvidia-l4t-core's preinst
# refuses to run without /etc/nv_tegra_release; nvidia-l4t-init's preinst
# diverts (dpkg-divert --rename) a file coreutils ships and nvidia-l4t-x11's
# diverts another without --rename; netbase overrides Debian's at a higher
# pin priority, with a lower version.  Also: each source is checked against
# its own Signed-By key only, and a bionic-like archive locks without merged
# /usr.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libarm64.sh"

require_mirror
[ "$(id -u)" = 0 ] || skip_all "stage 2 and chroot need root"
command -v ninja > /dev/null || skip_all "ninja is not installed"
DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f $DEBIAN_KEYRING ] || skip_all "debian-archive-keyring is not installed"
require_qemu_aarch64

SRV="$SCRATCH/srv"
repo_key nvidia
repo_key impostor

# l4t_deb PART NAME VERSION [FIELD: VALUE]...: an arm64 package staged in
# $SCRATCH/stage/NAME (add files and DEBIAN scripts there first) into
# $SRV/l4t/PART/pool/main.
l4t_deb () {
    local part=$1 name=$2 version=$3
    shift 3
    mkdir -p "$SRV/l4t/$part/pool/main" "$SCRATCH/stage/$name/usr/share/doc/$name"
    echo "$name $version (L4T-shaped test package)" > "$SCRATCH/stage/$name/usr/share/doc/$name/README"
    ( cd "$SRV/l4t/$part/pool/main" && make_deb "$SCRATCH/stage/$name" "$name" "$version" arm64 \
        "Priority: optional" "$@" ) > /dev/null
}

S="$SCRATCH/stage"
mkdir -p "$S/nvidia-l4t-core/DEBIAN" "$S/nvidia-l4t-core/usr/lib/aarch64-linux-gnu/tegra"
echo "tegra core" > "$S/nvidia-l4t-core/usr/lib/aarch64-linux-gnu/tegra/nvcore.txt"
cat > "$S/nvidia-l4t-core/DEBIAN/preinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ ! -e /etc/nv_tegra_release ]; then
    echo "nvidia-l4t-core: /etc/nv_tegra_release not found: not a Jetson board" >&2
    exit 1
fi
SCRIPT
l4t_deb t194 nvidia-l4t-core 32.7.4-20230608212426

mkdir -p "$S/nvidia-l4t-init/DEBIAN" "$S/nvidia-l4t-init/usr/bin"
printf '#!/bin/sh\necho nvidia factor "$@"\n' > "$S/nvidia-l4t-init/usr/bin/nv-factor"
chmod 755 "$S/nvidia-l4t-init/usr/bin/nv-factor"
cat > "$S/nvidia-l4t-init/DEBIAN/preinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = install ]; then
    dpkg-divert --package nvidia-l4t-init --rename --divert /usr/bin/factor.distrib --add /usr/bin/factor
fi
SCRIPT
cat > "$S/nvidia-l4t-init/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    ln -sf nv-factor /usr/bin/factor
fi
SCRIPT
l4t_deb t194 nvidia-l4t-init 32.7.4-20230608212426 "Depends: nvidia-l4t-core, coreutils"

mkdir -p "$S/nvidia-l4t-x11/DEBIAN"
cat > "$S/nvidia-l4t-x11/DEBIAN/preinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = install ]; then
    dpkg-divert --package nvidia-l4t-x11 --divert /usr/bin/tsort.distrib --add /usr/bin/tsort
fi
SCRIPT
l4t_deb t194 nvidia-l4t-x11 32.7.4-20230608212426 "Depends: nvidia-l4t-core, coreutils"

# Debian's netbase is 6.4 (all); this one is older, but its source is pinned higher.
mkdir -p "$S/netbase/etc"
echo "# NVIDIA's protocols" > "$S/netbase/etc/protocols"
l4t_deb common netbase 6.3-nvidia1 "Multi-Arch: foreign"

for part in common t194; do
    repo_dists "$SRV/l4t/$part" r32.7 arm64
    repo_sign "$SRV/l4t/$part" r32.7 nvidia
done
repo_serve "$SRV"

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"

# l4t_sources KEY: Debian from the host's mirror, then the two L4T parts
# signed by KEY (nvidia, or impostor for the wrong-key test).
l4t_sources () {
    cat <<SOURCES
Types: deb
URIs: $MIRROR
Suites: bookworm
Components: main
Signed-By: $DEBIAN_KEYRING
X-Name: debian

Types: deb
URIs: $HTTPD_URL/l4t/common
Suites: r32.7
Components: main
Signed-By: $SCRATCH/keys/$1.gpg
Pin-Priority: 600
X-Name: nvidia-common

Types: deb
URIs: $HTTPD_URL/l4t/t194
Suites: r32.7
Components: main
Signed-By: $SCRATCH/keys/$1.gpg
Pin-Priority: 600
X-Name: nvidia-t194
SOURCES
}
l4t_sources nvidia > l4t.sources
printf '%s\n' base-files base-passwd coreutils dash diffutils dpkg grep libc-bin mawk sed \
    netbase nvidia-l4t-core nvidia-l4t-init nvidia-l4t-x11 > l4t.txt

mkdir -p -m 0755 hooks/etc
printf '# R32 (release), REVISION: 7.4, GCID: 33514132, BOARD: t186ref, EABI: aarch64\n' \
    > hooks/etc/nv_tegra_release

# package_line NAME: NAME's line in the lockfile.
package_line () { grep "{\"name\": \"$1\"," l4t.lock.json; }

test_expect_success 'one lockfile from Debian and both L4T parts, each source verified against its own key' '
    cd "$W"
    a2o lock l4t.txt --sources l4t.sources --variant custom --arch arm64 -o l4t.lock.json
    cat l4t.lock.json
    fpr=$(cat "$SCRATCH/keys/nvidia.fpr")
    grep "\"name\": \"nvidia-common\"" l4t.lock.json | grep -q "$fpr"
    grep "\"name\": \"nvidia-t194\"" l4t.lock.json | grep -q "$fpr"
    ! grep "\"name\": \"debian\"" l4t.lock.json | grep -q "$fpr" || fail "the debian source is pinned to $fpr"
    grep "\"name\": \"nvidia-t194\"" l4t.lock.json | grep -q "\"pin-priority\": 600"
'

test_expect_success 'the lock picks each package from the right source: NVIDIA'"'"'s older netbase wins by pin priority' '
    cd "$W"
    package_line netbase | grep -q "\"version\": \"6.3-nvidia1\", \"architecture\": \"arm64\", \"source\": \"nvidia-common\""
    package_line nvidia-l4t-core | grep -q "\"source\": \"nvidia-t194\""
    package_line nvidia-l4t-init | grep -q "\"source\": \"nvidia-t194\""
    package_line coreutils | grep -q "\"architecture\": \"arm64\", \"source\": \"debian\""
    package_line libc6 | grep -q "\"source\": \"debian\""
    assert_file_has_content l4t.lock.json "^  \"merged-usr\": true,"
'

test_expect_success 'without /etc/nv_tegra_release the build fails, naming nvidia-l4t-core and its preinst' '
    cd "$W"
    arm64_deb_cache nohook
    expect_failure err a2o build l4t.lock.json --builddir nohook > out
    cat out err > all
    assert_file_has_content all "nvidia-l4t-core: /etc/nv_tegra_release not found: not a Jetson board"
    assert_file_has_content all "package nvidia-l4t-core (32.7.4-20230608212426): its preinst script failed"
    assert_not_has_file nohook/ostree/refs/heads/l4t
'

test_expect_success 'with the hook file (--before-configure DIR) the build succeeds: every package ii, the file in the image' '
    cd "$W"
    arm64_deb_cache build
    a2o build l4t.lock.json --before-configure hooks > out
    cat out
    a2o --repo build/ostree export l4t --dir img
    dpkg --root="$W/img" -l | awk "NR > 5 { print \$1 }" | sort | uniq -c > states
    cat states
    assert_streq "$(awk "{ print \$2 }" states)" ii
    assert_streq "$(cat img/etc/nv_tegra_release)" "$(cat hooks/etc/nv_tegra_release)"
    assert_streq "$(elf_machine img/usr/bin/ls)" aarch64
    assert_streq "$(cat img/etc/protocols)" "# NVIDIA'"'"'s protocols"
'

test_expect_success 'the diverted files sit where dpkg puts them: coreutils'"'"' factor and tsort under .distrib' '
    cd "$W"
    assert_streq "$(elf_machine img/usr/bin/factor.distrib)" aarch64
    assert_streq "$(readlink img/usr/bin/factor)" nv-factor
    assert_streq "$(elf_machine img/usr/bin/tsort.distrib)" aarch64
    assert_not_has_file img/usr/bin/tsort
    chroot img dpkg-divert --list > diversions
    cat diversions
    assert_file_has_content diversions "diversion of /usr/bin/factor to /usr/bin/factor.distrib by nvidia-l4t-init"
    assert_file_has_content diversions "diversion of /usr/bin/tsort to /usr/bin/tsort.distrib by nvidia-l4t-x11"
    assert_streq "$(chroot img /usr/bin/factor.distrib 6)" "6: 2 3"
    assert_streq "$(chroot img /usr/bin/factor 6)" "nvidia factor 6"
'

test_expect_success 'dpkg --verify inside the image (under qemu) is clean, diversions included' '
    cd "$W"
    a2o --repo build/ostree export l4t --dir run
    chroot run dpkg --verify > verify.out
    cat verify.out
    [ ! -s verify.out ]
'

test_expect_success 'a second source signed with a key other than its Signed-By is refused, naming it' '
    cd "$W"
    l4t_sources impostor > wrong.sources
    expect_failure err a2o lock l4t.txt --sources wrong.sources --variant custom --arch arm64 -o wrong.lock.json
    assert_one_line err
    assert_file_has_content err "nvidia-common"
    assert_not_has_file wrong.lock.json
'

test_expect_success 'the Debian source is not accepted with NVIDIA'"'"'s key either' '
    cd "$W"
    sed "0,/^Signed-By: .*/s||Signed-By: $SCRATCH/keys/nvidia.gpg|" l4t.sources > swapped.sources
    expect_failure err a2o lock l4t.txt --sources swapped.sources --variant custom --arch arm64 -o swapped.lock.json
    assert_one_line err
    assert_file_has_content err "debian"
'

test_expect_success 'lockfiles/bionic-l4t/l4t.sources holds no host, and --mirror NAME=URI gives each of its five sources a location' '
    cd "$W"
    ex="$TOP_SRCDIR/lockfiles/bionic-l4t"
    ! grep -E "^URIs:" "$ex/l4t.sources" | grep -v "\.invalid/" || fail "a URI that resolves"
    mirrors=()
    for name in ubuntu-ports-bionic ubuntu-ports-bionic-updates ubuntu-ports-bionic-security nvidia-common nvidia-t194; do
        mirrors+=(--mirror "$name=$HTTPD_URL/nowhere/$name")
    done
    expect_failure err a2o lock "$ex/packages.txt" --sources "$ex/l4t.sources" --variant minbase --arch arm64 "${mirrors[@]}" -o ex.lock.json
    assert_one_line err
    assert_file_has_content err "source \"ubuntu-ports-bionic\" ($HTTPD_URL/nowhere/ubuntu-ports-bionic/dists/bionic)"
    for name in ubuntu-ports-bionic-updates ubuntu-ports-bionic-security nvidia-common nvidia-t194; do
        grep -q "/nowhere/$name/dists/" "$HTTPD_LOG" || fail "no request for $name"
    done
'

# What switch-bsp and NVIDIA's own packages do too: the diverting package
# ships the diverted path itself.
mkdir -p "$S/nvidia-l4t-tac/DEBIAN" "$S/nvidia-l4t-tac/usr/bin"
printf '#!/bin/sh\necho nvidia tac\n' > "$S/nvidia-l4t-tac/usr/bin/tac"
chmod 755 "$S/nvidia-l4t-tac/usr/bin/tac"
cat > "$S/nvidia-l4t-tac/DEBIAN/preinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = install ]; then
    dpkg-divert --package nvidia-l4t-tac --rename --divert /usr/bin/tac.distrib --add /usr/bin/tac
fi
SCRIPT

test_expect_success 'a package that diverts a path and ships it too: both files end where dpkg puts them' '
    cd "$W"
    l4t_deb t194 nvidia-l4t-tac 32.7.4-20230608212426 "Depends: coreutils"
    repo_dists "$SRV/l4t/t194" r32.7 arm64
    repo_sign "$SRV/l4t/t194" r32.7 nvidia
    { cat l4t.txt; echo nvidia-l4t-tac; } > tac.txt
    a2o lock tac.txt --sources l4t.sources --variant custom --arch arm64 -o tac.lock.json
    arm64_deb_cache build
    a2o build tac.lock.json --before-configure hooks > out 2> err || { cat out err; false; }
    a2o --repo build/ostree export tac --dir tac
    assert_streq "$(elf_machine tac/usr/bin/tac.distrib)" aarch64
    assert_streq "$(chroot tac /usr/bin/tac)" "nvidia tac"
'

# A bionic-like archive: Ubuntu 18.04 predates merged /usr.
ubuntu_archive () {
    local root=$SRV/ubuntu-$1
    mkdir -p "$S/tool-$1/bin" "$S/tool-$1/usr/bin"
    printf "#!/bin/sh\necho tool\n" > "$S/tool-$1/bin/tool"
    chmod 755 "$S/tool-$1/bin/tool"
    mkdir -p "$root/pool/main"
    ( cd "$root/pool/main" && make_deb "$S/tool-$1" tool 1.0 arm64 "Priority: optional" ) > /dev/null
    REPO_ORIGIN=Ubuntu repo_dists "$root" "$1" arm64 "Version: $2"
    repo_sign "$root" "$1" nvidia
}

test_expect_success 'a bionic archive (Ubuntu 18.04) locks without merged /usr, and stage 1 keeps /bin a directory' '
    cd "$W"
    ubuntu_archive bionic 18.04
    repo_sources_line "$HTTPD_URL/ubuntu-bionic" bionic nvidia > bionic.list
    echo tool > tool.txt
    a2o lock tool.txt --sources bionic.list --variant custom --arch arm64 -o bionic.lock.json
    assert_file_has_content bionic.lock.json "^  \"merged-usr\": false,"
    a2o ninja bionic.lock.json -o bionic.ninja --builddir bb
    ninja -f bionic.ninja bionic/stage1 > /dev/null
    ostree --repo=bb/ostree ls "$(cat bb/ostree/refs/heads/stage1/bionic)" /bin > bin.ls
    cat bin.ls
    assert_file_has_content bin.ls "^d.* /bin\$"
    ostree --repo=bb/ostree ls "$(cat bb/ostree/refs/heads/stage1/bionic)" /bin/tool
'

test_expect_success 'Ubuntu 20.10 and later lock with merged /usr; --merged-usr yes overrides bionic'"'"'s default' '
    cd "$W"
    ubuntu_archive groovy 20.10
    repo_sources_line "$HTTPD_URL/ubuntu-groovy" groovy nvidia > groovy.list
    a2o lock tool.txt --sources groovy.list --variant custom --arch arm64 -o groovy.lock.json
    assert_file_has_content groovy.lock.json "^  \"merged-usr\": true,"
    a2o lock tool.txt --sources bionic.list --variant custom --arch arm64 --merged-usr yes -o forced.lock.json
    assert_file_has_content forced.lock.json "^  \"merged-usr\": true,"
'

test_done
