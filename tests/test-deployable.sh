#!/bin/bash
# deployable: a configured image made an OSTree deployment (kernel and
# initramfs in /usr/lib/modules/KVER, device trees beside them, /etc in
# /usr/etc, the dpkg and debconf databases in /usr/lib/sysimage, the rest
# of /var made entry by entry at boot, state directories as links into
# /var), which "ostree admin deploy" accepts in a scratch sysroot; a second
# image deploys as an upgrade with the first kept for rollback.  The
# device's boots are played without booting: systemd-sysusers and
# systemd-tmpfiles over each deployment with the stateroot's shared /var,
# then the deployment's own dpkg-query and dpkg --verify, run inside it.
# With BASE_ARCH=arm64 (tests/test-deployable-arm64.sh) the images are
# arm64's, stage 2 and those checks run under qemu-user, and deploying
# needs no emulation.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

[ "$(id -u)" = 0 ] || skip_all "stage 2 and ostree admin need root"
command -v ninja > /dev/null || skip_all "ninja is not installed"
command -v ostree > /dev/null || skip_all "ostree is not installed"
ARCH=${BASE_ARCH:-amd64}
if [ "$ARCH" = arm64 ]; then
    . "$TOP_SRCDIR/tests/libarm64.sh"
    require_qemu_aarch64
fi

base_archive
KVER=6.1.0-99-test

# Stand-ins with the files the real packages have where deployable looks:
# the kernel (its postinst makes the initramfs, as dracut's hook does), a
# device tree where Debian's arm64 kernels put them, ostree-boot's
# ostree-prepare-root, dracut.
S="$SCRATCH/stage"
mkdir -p "$S/kernel/boot" "$S/kernel/lib/modules/$KVER/kernel" "$S/kernel/usr/lib/linux-image-$KVER/vendor" "$S/kernel/DEBIAN"
echo "kernel $KVER" > "$S/kernel/boot/vmlinuz-$KVER"
echo "CONFIG_TEST=y" > "$S/kernel/boot/config-$KVER"
echo "modules" > "$S/kernel/lib/modules/$KVER/modules.dep"   # where Debian's kernels ship them
echo "board" > "$S/kernel/usr/lib/linux-image-$KVER/vendor/board.dtb"
printf '#!/bin/sh\nset -e\n[ "$1" != configure ] || echo "initramfs %s" > /boot/initrd.img-%s\n' "$KVER" "$KVER" \
    > "$S/kernel/DEBIAN/postinst"
mkdir -p "$S/ostree-boot/usr/lib/ostree" "$S/dracut/usr/bin" "$S/extra/usr/share/extra"
printf '#!/bin/sh\nexit 0\n' > "$S/ostree-boot/usr/lib/ostree/ostree-prepare-root"
chmod 755 "$S/ostree-boot/usr/lib/ostree/ostree-prepare-root"
printf '#!/bin/sh\nexit 0\n' > "$S/dracut/usr/bin/dracut" && chmod 755 "$S/dracut/usr/bin/dracut"
echo extra > "$S/extra/usr/share/extra/file"
# State the package keeps in /var (a name tmpfiles.d must escape among it),
# and a stand-in for debconf's database.
mkdir -p "$S/extra/var/lib/extra" "$S/extra/var/cache/debconf"
echo "extra state" > "$S/extra/var/lib/extra/state"
echo odd > "$S/extra/var/lib/extra/odd name%n"
echo "Name: extra/question" > "$S/extra/var/cache/debconf/config.dat"
# Its system user and group, made by its postinst (as adduser --system does).
mkdir -p "$S/extra/DEBIAN"
printf '#!/bin/sh\nset -e\n[ "$1" != configure ] || { echo "_extra:x:120:" >> /etc/group; echo "_extra:x:120:120:extra daemon:/var/lib/extra:/usr/sbin/nologin" >> /etc/passwd; }\n' \
    > "$S/extra/DEBIAN/postinst"
# A name a tmpfiles.d line cannot hold (a carriage return ends its line).
mkdir -p "$S/crname/var/lib/crname"
echo x > "$S/crname/var/lib/crname/a"$'\r'"b"
(
    cd "$D/pool/main"
    make_deb "$S/kernel" "linux-image-$KVER" 1.0 "$ARCH" "Priority: optional"
    make_deb "$S/ostree-boot" ostree-boot 2023.1 "$ARCH" "Priority: optional"
    make_deb "$S/dracut" dracut 059 "$ARCH" "Priority: optional"
    make_deb "$S/extra" extra 1.0 "$ARCH" "Priority: optional"
    make_deb "$S/crname" crname 1.0 "$ARCH" "Priority: optional"
) > /dev/null
repo_publish "$D" bookworm "$ARCH" archive

serve_work_dir "$SRV"
base_image one "linux-image-$KVER" ostree-boot dracut
base_image two "linux-image-$KVER" ostree-boot dracut extra
base_image noboot "linux-image-$KVER" dracut
base_image crname "linux-image-$KVER" ostree-boot dracut crname
MERGED=no base_image split "linux-image-$KVER" ostree-boot dracut
REPO="$W/build/ostree"
SYS=$W/sysroot
VAR=$SYS/ostree/deploy/debian/var

# boot_packages COMMIT: what a boot of the deployment COMMIT does, without
# booting: the stateroot's /var bound on the deployment's /var (as
# ostree-prepare-root does), systemd-sysusers and systemd-tmpfiles --create
# over the deployment's sysusers.d and tmpfiles.d (in the order the boot
# runs them); then the packages the deployment's own dpkg-query reports, a
# line each, run inside it (chroot; an arm64 image's under qemu-user),
# through /var/lib/dpkg as on the device.
boot_packages () {
    unshare -m sh -ec '
        mount --bind "$1" "$2/var"
        systemd-sysusers --root="$2"
        systemd-tmpfiles --create --root="$2"
        chroot "$2" dpkg-query -W -f "\${Package}\n"
    ' sh "$VAR" "$SYS/ostree/deploy/debian/deploy/$1.0"
}

# boot_verify COMMIT: the deployment's own dpkg --verify, inside the
# deployment COMMIT as booted (after boot_packages): what it says is wrong,
# nothing when all is well.
boot_verify () {
    unshare -m sh -ec '
        mount --bind "$1" "$2/var"
        chroot "$2" dpkg --verify
    ' sh "$VAR" "$SYS/ostree/deploy/debian/deploy/$1.0"
}

test_expect_success "deployable puts kernel, initramfs, config and device trees of the $ARCH image in /usr/lib/modules/KVER" '
    cd "$W"
    a2o --repo "$REPO" export one --dir one-img
    assert_streq "$(cat one-img/var/lib/dpkg/arch)" "$ARCH"
    a2o --repo "$REPO" deployable --ref one-deploy one > /dev/null
    a2o --repo "$REPO" export one-deploy --dir img
    M=img/usr/lib/modules/$KVER
    assert_streq "$(cat $M/vmlinuz)" "kernel $KVER"
    assert_streq "$(cat $M/initramfs.img)" "initramfs $KVER"
    assert_streq "$(cat $M/config)" "CONFIG_TEST=y"
    assert_streq "$(cat $M/dtb/vendor/board.dtb)" board
    assert_not_has_file img/boot/vmlinuz-$KVER
    # dpkg is told where the files that left /boot went (the device'"'"'s /boot
    # is the boot loader'"'"'s), and Debian'"'"'s device tree directory links to
    # where its files went
    D=img/usr/lib/sysimage/dpkg/diversions
    assert_file_has_content $D "^/boot/vmlinuz-$KVER\$"
    assert_streq "$(grep -A2 -x "/boot/config-$KVER" $D | tr "\n" " ")" "/boot/config-$KVER /usr/lib/modules/$KVER/config : "
    assert_streq "$(readlink img/usr/lib/linux-image-$KVER)" "modules/$KVER/dtb"
'

test_expect_success '/etc is /usr/etc, /var is empty; the dpkg database is in /usr and linked at boot, the rest of /var made entry by entry; state directories link into /var' '
    cd "$W"
    assert_not_has_file img/etc
    assert_has_file img/usr/etc/passwd
    assert_streq "$(ls -A img/var)" ""
    assert_has_file img/usr/lib/sysimage/dpkg/status
    assert_not_has_file img/usr/share/factory/var/lib/dpkg
    T=img/usr/lib/tmpfiles.d/apt2ostree-factory.conf
    assert_file_has_content $T "^L+ /var/lib/dpkg - - - - ../../usr/lib/sysimage/dpkg\$"
    assert_file_has_content $T "^d /var/lib 0755 0 0 -\$"
    assert_not_file_has_content $T "^C /var/lib "
    assert_file_has_content $T "^d /var/home 0755 0 0 -\$"
    assert_file_has_content $T "^d /var/tmp 1777 0 0 -\$"
    assert_file_has_content $T "^L /var/run - - - - /run\$"
    assert_streq "$(grep -c " /var/opt " $T)" 1
    for l in home:var/home root:var/roothome opt:var/opt srv:var/srv mnt:var/mnt media:run/media \
             ostree:sysroot/ostree usr/local:../var/usrlocal; do
        assert_streq "$(readlink img/${l%%:*})" "${l#*:}"
    done
    test -d img/sysroot
'

test_expect_success 'ostree admin deploys it in a scratch sysroot: /etc holds the image'"'"'s configuration, status lists it' '
    cd "$W"
    SYS=$W/sysroot
    mkdir -p $SYS
    ostree admin init-fs $SYS
    ostree admin os-init --sysroot=$SYS debian
    ostree --repo=$SYS/ostree/repo pull-local "$REPO" one-deploy
    ostree admin deploy --sysroot=$SYS --os=debian one-deploy
    c1=$(cat "$REPO/refs/heads/one-deploy")
    ostree admin status --sysroot=$SYS > status
    cat status
    assert_file_has_content status "debian $c1.0"
    cmp $SYS/ostree/deploy/debian/deploy/$c1.0/etc/passwd img/usr/etc/passwd
    assert_streq "$(cat $SYS/ostree/deploy/debian/deploy/$c1.0/usr/lib/modules/$KVER/dtb/vendor/board.dtb)" board
    [ "$ARCH" != arm64 ] || assert_streq "$(elf_machine $SYS/ostree/deploy/debian/deploy/$c1.0/usr/bin/dpkg)" aarch64
    grep -l "ostree=" $SYS/boot/loader/entries/*.conf
'

test_expect_success 'its first boot: dpkg on the device reports the image'"'"'s packages, through /var/lib/dpkg, a link into /usr' '
    cd "$W"
    c1=$(cat "$REPO/refs/heads/one-deploy")
    boot_packages $c1 > one.pkgs
    cat one.pkgs
    assert_file_has_content one.pkgs "^ostree-boot\$"
    assert_not_file_has_content one.pkgs "^extra\$"
    assert_streq "$(readlink $VAR/lib/dpkg)" ../../usr/lib/sysimage/dpkg
    echo mine > $VAR/lib/device-state   # the device'"'"'s own
    echo "deviceuser:x:1000:1000::/home/deviceuser:/bin/sh" >> $SYS/ostree/deploy/debian/deploy/$c1.0/etc/passwd
'

test_expect_success 'a second image with one package more deploys as the upgrade; the first stays for rollback' '
    cd "$W"
    SYS=$W/sysroot
    a2o --repo "$REPO" deployable --ref two-deploy two > /dev/null
    ostree --repo=$SYS/ostree/repo pull-local "$REPO" two-deploy
    ostree admin deploy --sysroot=$SYS --os=debian two-deploy
    c1=$(cat "$REPO/refs/heads/one-deploy")
    c2=$(cat "$REPO/refs/heads/two-deploy")
    ostree admin status --sysroot=$SYS > status2
    cat status2
    # Not booted, so no "*": the default deployment comes first, the
    # rollback after it, and each has its boot loader entry.
    assert_streq "$(grep -o "debian [0-9a-f]\{64\}\.0" status2 | tr "\n" " ")" "debian $c2.0 debian $c1.0 "
    assert_streq "$(ls $SYS/boot/loader/entries/*.conf | wc -l)" 2
    assert_has_file $SYS/ostree/deploy/debian/deploy/$c2.0/usr/share/extra/file
'

test_expect_success 'the upgrade'"'"'s boot: dpkg reports the second image'"'"'s packages, the added package gets its /var/lib entries, the device'"'"'s state stays' '
    cd "$W"
    c2=$(cat "$REPO/refs/heads/two-deploy")
    boot_packages $c2 > two.pkgs
    cat two.pkgs
    assert_file_has_content two.pkgs "^extra\$"
    assert_streq "$(grep -vx extra two.pkgs)" "$(cat one.pkgs)"
    T=$SYS/ostree/deploy/debian/deploy/$c2.0/usr/lib/tmpfiles.d/apt2ostree-factory.conf
    assert_file_has_content $T "^d /var/lib/extra 0755 0 0 -\$"
    assert_file_has_content $T "^C /var/lib/extra/state - - - - /usr/share/factory/var/lib/extra/state\$"
    assert_file_has_content $T "^L+ /var/cache/debconf - - - - ../../usr/lib/sysimage/debconf\$"
    assert_streq "$(cat $VAR/lib/extra/state)" "extra state"
    assert_streq "$(cat "$VAR/lib/extra/odd name%n")" odd
    assert_streq "$(readlink $VAR/cache/debconf)" ../../usr/lib/sysimage/debconf
    assert_streq "$(cat $SYS/ostree/deploy/debian/deploy/$c2.0/usr/lib/sysimage/debconf/config.dat)" "Name: extra/question"
    assert_streq "$(cat $VAR/lib/device-state)" mine
    # The device changed /etc/passwd, so it kept its own copy through the
    # upgrade: the user extra'"'"'s postinst made comes from the image'"'"'s
    # sysusers.d, with its number.
    E=$SYS/ostree/deploy/debian/deploy/$c2.0/etc
    assert_file_has_content $E/passwd "^deviceuser:x:1000:1000:"
    assert_file_has_content $E/passwd "^_extra:x:120:120:extra daemon:/var/lib/extra:/usr/sbin/nologin\$"
    assert_file_has_content $E/group "^_extra:x:120:"
    assert_file_has_content $SYS/ostree/deploy/debian/deploy/$c2.0/usr/lib/sysusers.d/apt2ostree-image.conf \
        "^u \"_extra\" \"120:120\" \"extra daemon\" \"/var/lib/extra\" \"/usr/sbin/nologin\"\$"
    boot_verify $c2 > verify.out 2>&1
    cat verify.out
    test ! -s verify.out
    echo changed > $VAR/lib/extra/state
    boot_packages $c2 > /dev/null
    assert_streq "$(cat $VAR/lib/extra/state)" changed
'

test_expect_success 'a rollback'"'"'s boot: dpkg reports the first image'"'"'s packages again; the device'"'"'s state stays' '
    cd "$W"
    c1=$(cat "$REPO/refs/heads/one-deploy")
    boot_packages $c1 > rollback.pkgs
    assert_streq "$(cat rollback.pkgs)" "$(cat one.pkgs)"
    assert_streq "$(cat $VAR/lib/extra/state)" changed
    assert_streq "$(cat $VAR/lib/device-state)" mine
'

test_expect_success 'a /var/lib/dpkg directory that an older image'"'"'s boot copied is replaced by the link' '
    cd "$W"
    c2=$(cat "$REPO/refs/heads/two-deploy")
    rm -rf $VAR/lib/dpkg
    mkdir -p $VAR/lib/dpkg/info
    printf "Package: stale\nStatus: install ok installed\nVersion: 1\nArchitecture: all\n\n" > $VAR/lib/dpkg/status
    boot_packages $c2 > after-old.pkgs
    assert_streq "$(cat after-old.pkgs)" "$(cat two.pkgs)"
    assert_streq "$(readlink $VAR/lib/dpkg)" ../../usr/lib/sysimage/dpkg
'

test_expect_success 'without merged /usr the modules move from /lib/modules to /usr/lib/modules, and /lib/modules links there' '
    cd "$W"
    a2o --repo "$REPO" deployable --ref split-deploy split > /dev/null
    a2o --repo "$REPO" export split-deploy --dir split-img
    test -d split-img/lib
    test ! -L split-img/lib
    assert_streq "$(readlink split-img/lib/modules)" ../usr/lib/modules
    assert_streq "$(cat split-img/usr/lib/modules/$KVER/modules.dep)" modules
    assert_streq "$(cat split-img/usr/lib/modules/$KVER/vmlinuz)" "kernel $KVER"
'

test_expect_success 'an image without ostree-boot, or made deployable twice, is a one-line error and no ref' '
    cd "$W"
    expect_failure err a2o --repo "$REPO" deployable --ref bad noboot
    assert_one_line err
    assert_file_has_content err "has no ostree-boot installed"
    test ! -e "$REPO/refs/heads/bad"
    expect_failure err a2o --repo "$REPO" deployable --ref bad2 one-deploy
    assert_file_has_content err "deployable already"
'

test_expect_success 'a file in /var whose name holds a control character is a one-line error naming it, and no ref' '
    cd "$W"
    expect_failure err a2o --repo "$REPO" deployable --ref bad3 crname
    assert_one_line err
    assert_file_has_content err "/var/lib/crname/a.*b: a control character in the name"
    test ! -e "$REPO/refs/heads/bad3"
'

test_expect_success 'a tree without a dpkg database: deployable, sbom and diff give the one error of the one reader (image/imagedb.c)' '
    cd "$W"
    mkdir -p nodpkg-tree/etc && echo x > nodpkg-tree/etc/x
    ostree --repo="$REPO" commit -b nodpkg --tree=dir=nodpkg-tree > /dev/null
    for cmd in "deployable --ref bad4 nodpkg" "sbom nodpkg" "diff nodpkg nodpkg"; do
        expect_failure err a2o --repo "$REPO" $cmd
        assert_one_line err
        assert_file_has_content err "\"nodpkg\" has no var/lib/dpkg/status: not a Debian image"
    done
    test ! -e "$REPO/refs/heads/bad4"
'

test_expect_success 'build --deployable makes the image ref the deployment (the configured image kept as before-deployable/NAME); a lockfile without ostree-boot is refused' '
    cd "$W"
    a2o build one.lock.json --deployable --ref one-built > bd.out
    assert_file_has_content bd.out "^image one-built: commit [0-9a-f]\{64\}\$"
    assert_streq "$(cat "$REPO/refs/heads/one-built")" "$(cat "$REPO/refs/heads/one-deploy")"
    test -f "$REPO/refs/heads/before-deployable/one-built"
    a2o build one.lock.json --deployable --ref one-built > again.out
    assert_file_has_content again.out "no work to do"
    expect_failure err a2o build noboot.lock.json --deployable --ref nb
    assert_one_line err
    assert_file_has_content err "noboot.lock.json: --deployable needs \"ostree-boot\""
    test ! -e "$REPO/refs/heads/nb"
'

# recipe: the deployment recipe of the man page (deployable), as its lines
# read, with SYSROOT, URL and IMAGE filled in.
recipe () {
    sed -n '/^mkdir \\-p SYSROOT$/,/^ostree admin upgrade /p' "$TOP_SRCDIR/man/apt2ostree.1" \
        | sed 's/\\-/-/g; s|SYSROOT|$W/recipe-sys|g; s|URL|file://$W/recipe-pub|g; s|IMAGE|recipe|g'
}

test_expect_success 'the man page'"'"'s deployment recipe runs as written: a first deployment from a remote, then ostree admin upgrade' '
    cd "$W"
    recipe > recipe.sh
    cat recipe.sh
    [ "$(wc -l < recipe.sh)" -ge 6 ]
    ostree --repo="$REPO" refs --create=recipe "$(cat "$REPO/refs/heads/one-deploy")"
    a2o --repo "$REPO" publish --to recipe-pub recipe > /dev/null
    W=$W sh -ex -c "$(grep -v "^ostree admin upgrade" recipe.sh)"
    ostree --repo="$REPO" refs --delete recipe
    ostree --repo="$REPO" refs --create=recipe "$(cat "$REPO/refs/heads/two-deploy")"
    a2o --repo "$REPO" publish --to recipe-pub recipe > /dev/null
    W=$W sh -ex -c "$(grep "^ostree admin upgrade" recipe.sh)"
    ostree admin status --sysroot=recipe-sys > status
    cat status
    assert_streq "$(grep -o "debian [0-9a-f]\{64\}\.0" status | tr "\n" " ")" \
        "debian $(cat "$REPO/refs/heads/two-deploy").0 debian $(cat "$REPO/refs/heads/one-deploy").0 "
    grep -q "console=ttyS0" recipe-sys/boot/loader/entries/*.conf
'

# Deployments are immutable (chattr +i): let the scratch directory go.
for d in "$W"/sysroot/ostree/deploy/*/deploy/*.0 "$W"/recipe-sys/ostree/deploy/*/deploy/*.0; do
    [ ! -d "$d" ] || chattr -i "$d"
done

test_done
