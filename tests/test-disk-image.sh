#!/bin/bash
# disk-image: a deployable image as a bootable raw disk, read back without
# mounting anything: the GPT (sfdisk --dump), GRUB in the EFI system
# partition (mdir), the syslinux.cfg libostree wrote in /boot naming the
# deployment and the kernel arguments (debugfs), the sysroot's remote,
# boot loader backend and the deployment's origin and fstab; a second
# deployment into the disk's sysroot rewrites the boot loader config.  The
# real boot (OVMF, no -kernel) is in tests/test-deployable-mirror.sh.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
command -v ostree > /dev/null || skip_all "ostree is not installed"
for tool in sfdisk mkfs.vfat mcopy grub-mkstandalone debugfs; do
    command -v $tool > /dev/null || skip_all "$tool is not installed (tools/setup installs it)"
done

base_archive
KVER=6.1.0-99-test

# Stand-ins with the files deployable looks for: a kernel whose postinst
# makes the initramfs, ostree-boot's ostree-prepare-root, dracut.
S="$SCRATCH/stage"
mkdir -p "$S/kernel/boot" "$S/kernel/lib/modules/$KVER" "$S/kernel/DEBIAN" \
    "$S/ostree-boot/usr/lib/ostree" "$S/dracut/usr/bin" "$S/extra/usr/share/extra"
echo "kernel $KVER" > "$S/kernel/boot/vmlinuz-$KVER"
echo modules > "$S/kernel/lib/modules/$KVER/modules.dep"
printf '#!/bin/sh\nset -e\n[ "$1" != configure ] || echo "initramfs %s" > /boot/initrd.img-%s\n' "$KVER" "$KVER" \
    > "$S/kernel/DEBIAN/postinst"
printf '#!/bin/sh\nexit 0\n' > "$S/ostree-boot/usr/lib/ostree/ostree-prepare-root"
printf '#!/bin/sh\nexit 0\n' > "$S/dracut/usr/bin/dracut"
chmod 755 "$S/ostree-boot/usr/lib/ostree/ostree-prepare-root" "$S/dracut/usr/bin/dracut"
echo extra > "$S/extra/usr/share/extra/file"
(
    cd "$D/pool/main"
    make_deb "$S/kernel" "linux-image-$KVER" 1.0 amd64 "Priority: optional"
    make_deb "$S/ostree-boot" ostree-boot 2023.1 amd64 "Priority: optional"
    make_deb "$S/dracut" dracut 059 amd64 "Priority: optional"
    make_deb "$S/extra" extra 1.0 amd64 "Priority: optional"
) > /dev/null
repo_publish "$D" bookworm amd64 archive

serve_work_dir "$SRV"
base_image one "linux-image-$KVER" ostree-boot dracut
base_image two "linux-image-$KVER" ostree-boot dracut extra
REPO="$W/build/ostree"

# part IMAGE N OUT: partition N of the disk IMAGE copied to the file OUT.
part () {
    local line start size
    line=$(sfdisk --dump "$1" | grep "^$1$2 :")
    start=$(echo "$line" | sed 's/.*start= *\([0-9]*\).*/\1/')
    size=$(echo "$line" | sed 's/.*size= *\([0-9]*\).*/\1/')
    dd if="$1" of="$3" bs=512 skip="$start" count="$size" conv=sparse status=none
}

test_expect_success 'disk-image writes a GPT disk: an EFI system partition, /boot and the root' '
    cd "$W"
    a2o --repo "$REPO" deployable --ref one-deploy one > /dev/null
    a2o --repo "$REPO" deployable --ref two-deploy two > /dev/null
    a2o --repo "$REPO" disk-image one-deploy -o disk.img --karg console=ttyS0 --karg quiet \
        --remote origin=http://127.0.0.1:1/repo --remote-option gpg-verify=false > out
    c1=$(cat "$REPO/refs/heads/one-deploy")
    assert_streq "$(cat out)" "disk.img: $c1 deployed"
    sfdisk --dump disk.img > table
    cat table
    assert_file_has_content table "^label: gpt\$"
    assert_file_has_content table "^disk.img1 : start= *2048, size= *131072, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, .*name=\"EFI\""
    assert_file_has_content table "^disk.img2 : .*type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, .*name=\"boot\""
    assert_file_has_content table "^disk.img3 : .*type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, .*name=\"root\""
    part disk.img 1 esp.img && part disk.img 2 boot.img && part disk.img 3 root.img
    ls -ls disk.img
'

test_expect_success 'the EFI system partition holds GRUB, which finds /boot by its UUID and reads its syslinux.cfg' '
    cd "$W"
    MTOOLS_SKIP_CHECK=1 mdir -b -i esp.img ::/EFI/BOOT > esp.list
    assert_file_has_content esp.list "BOOTX64.EFI"
    MTOOLS_SKIP_CHECK=1 mcopy -i esp.img ::/EFI/BOOT/BOOTX64.EFI grub.efi
    boot_uuid=$(dumpe2fs -h boot.img 2>/dev/null | sed -n "s/^Filesystem UUID: *//p")
    grep -aq "insmod part_gpt" grub.efi
    grep -aq "insmod ext2" grub.efi
    grep -aq "search --no-floppy --fs-uuid --set=root $boot_uuid" grub.efi
    grep -aq "syslinux_configfile -r (\$root)/ (\$root)/loader/syslinux.cfg" grub.efi
'

test_expect_success 'the syslinux.cfg libostree wrote on /boot names the deployment, its kernel and the kernel arguments; extlinux.conf links to it' '
    cd "$W"
    debugfs -R "cat /loader/syslinux.cfg" boot.img > syslinux.cfg 2>/dev/null
    cat syslinux.cfg
    root_uuid=$(dumpe2fs -h root.img 2>/dev/null | sed -n "s/^Filesystem UUID: *//p")
    assert_streq "$(grep -c "^LABEL " syslinux.cfg)" 1
    assert_file_has_content syslinux.cfg "^DEFAULT .*(ostree:0)\$"
    assert_file_has_content syslinux.cfg "^	KERNEL /boot/ostree/debian-[0-9a-f]*/vmlinuz-$KVER\$"
    assert_file_has_content syslinux.cfg "^	INITRD /boot/ostree/debian-[0-9a-f]*/initramfs-$KVER.img\$"
    assert_file_has_content syslinux.cfg "^	APPEND root=UUID=$root_uuid rw console=ttyS0 quiet ostree=/ostree/boot.1/debian/[0-9a-f]*/0\$"
    debugfs -R "stat /extlinux/extlinux.conf" boot.img 2>/dev/null | grep -q "Fast link dest: \"../loader/syslinux.cfg\""
    debugfs -R "stat /syslinux/syslinux.cfg" boot.img 2>/dev/null | grep -q "Fast link dest: \"../loader/syslinux.cfg\""
    debugfs -R "stat /boot" boot.img 2>/dev/null | grep -q "Fast link dest: \".\""
    # The kernel it names is there, and the ostree= path leads to the deployment.
    k=$(sed -n "s|^	KERNEL /boot||p" syslinux.cfg)
    assert_streq "$(debugfs -R "cat $k" boot.img 2>/dev/null)" "kernel $KVER"
'

test_expect_success 'the root partition: the sysroot repository has the syslinux backend and the remote, the deployment its origin and an fstab for / and /boot' '
    cd "$W"
    c1=$(cat "$REPO/refs/heads/one-deploy")
    debugfs -R "cat /ostree/repo/config" root.img > config 2>/dev/null
    cat config
    assert_file_has_content config "^bootloader=syslinux\$"
    assert_file_has_content config "^\[remote \"origin\"\]\$"
    assert_file_has_content config "^url=http://127.0.0.1:1/repo\$"
    assert_file_has_content config "^gpg-verify=false\$"
    debugfs -R "cat /ostree/deploy/debian/deploy/$c1.0.origin" root.img > origin 2>/dev/null
    assert_file_has_content origin "^refspec=origin:one-deploy\$"
    assert_streq "$(debugfs -R "cat /ostree/repo/refs/remotes/origin/one-deploy" root.img 2>/dev/null)" "$c1"
    debugfs -R "cat /ostree/deploy/debian/deploy/$c1.0/etc/fstab" root.img > fstab 2>/dev/null
    root_uuid=$(dumpe2fs -h root.img 2>/dev/null | sed -n "s/^Filesystem UUID: *//p")
    boot_uuid=$(dumpe2fs -h boot.img 2>/dev/null | sed -n "s/^Filesystem UUID: *//p")
    assert_file_has_content fstab "^UUID=$root_uuid / ext4 defaults 0 1\$"
    assert_file_has_content fstab "^UUID=$boot_uuid /boot ext4 defaults 0 2\$"
    debugfs -R "ls -l /boot" root.img 2>/dev/null > boot.ls
    assert_streq "$(grep -v "^\$" boot.ls | grep -cv " \.\.\?\$")" 0
'

test_expect_success 'an upgrade deployed into the disk'"'"'s sysroot rewrites syslinux.cfg: the new deployment first, the old one kept' '
    cd "$W"
    mkdir -p sys
    debugfs -R "rdump / sys" root.img 2>/dev/null
    rm -rf sys/boot sys/lost+found && mkdir sys/boot
    debugfs -R "rdump / sys/boot" boot.img 2>/dev/null
    rm -rf sys/boot/lost+found
    # The ostree= argument leads to the deployment.
    c1=$(cat "$REPO/refs/heads/one-deploy")
    o=$(sed -n "s|.* ostree=\([^ ]*\)\$|\1|p" syslinux.cfg)
    assert_streq "$(readlink -f "sys$o" | xargs basename)" "$c1.0"
    ostree --repo=sys/ostree/repo pull-local "$REPO" two-deploy
    ostree admin deploy --sysroot=sys --os=debian two-deploy
    c2=$(cat "$REPO/refs/heads/two-deploy")
    cat sys/boot/syslinux/syslinux.cfg
    assert_streq "$(grep -c "^LABEL " sys/boot/syslinux/syslinux.cfg)" 2
    assert_streq "$(readlink sys/boot/loader)" loader.0
    first=$(grep -m1 "APPEND" sys/boot/loader/syslinux.cfg)
    echo "$first" | grep -q " ostree=/ostree/boot.0/debian/[0-9a-f]*/0\$"
    assert_streq "$(readlink -f sys/ostree/boot.0/debian/*/0 | xargs basename)" "$c2.0"
'

test_expect_success 'a repeated disk-image gives the same identifiers; an existing -o needs --force' '
    cd "$W"
    expect_failure err a2o --repo "$REPO" disk-image one-deploy -o disk.img
    assert_one_line err
    assert_file_has_content err "disk.img exists: give --force to replace it"
    a2o --repo "$REPO" disk-image one-deploy -o disk.img --force > /dev/null
    sfdisk --dump disk.img > table2
    assert_streq "$(grep -v "^device:" table2)" "$(grep -v "^device:" table)"
'

test_expect_success 'a non-deployable ref, a --size too small and a bad --bootloader are one-line errors, and nothing is left at -o' '
    cd "$W"
    expect_failure err a2o --repo "$REPO" disk-image one -o bad.img
    assert_one_line err
    assert_file_has_content err "\"one\" is not a deployable image"
    assert_not_has_file bad.img
    expect_failure err a2o --repo "$REPO" disk-image one-deploy -o bad.img --size 300M
    assert_one_line err
    assert_file_has_content err "\-\-size 300M is too small for \"one-deploy\": its disk needs [0-9]*M at least"
    assert_not_has_file bad.img
    expect_failure err a2o --repo "$REPO" disk-image one-deploy -o bad.img --bootloader lilo
    assert_one_line err
    assert_file_has_content err "expected grub-efi or extlinux"
    assert_streq "$(ls -a | grep -c "^\.apt2ostree-disk")" 0
'

test_expect_success 'a missing program is a one-line error naming it and its package; nothing is left at -o' '
    cd "$W"
    mkdir -p nobin
    for t in mkfs.ext4 sfdisk dd mkfs.vfat mmd mcopy; do ln -sf "$(command -v $t)" nobin/; done
    expect_failure err env PATH="$W/nobin" "$APT2OSTREE" --repo "$REPO" disk-image one-deploy -o bad.img
    cat err
    assert_one_line err
    assert_file_has_content err "grub-mkstandalone is not installed (Debian package grub-efi-amd64-bin)"
    assert_not_has_file bad.img
'

test_expect_success '--bootloader extlinux: no EFI system partition, /boot first' '
    cd "$W"
    a2o --repo "$REPO" disk-image one-deploy -o ext.img --bootloader extlinux > /dev/null
    sfdisk --dump ext.img > ext.table
    assert_streq "$(grep -c "^ext.img[0-9]" ext.table)" 2
    assert_file_has_content ext.table "^ext.img1 : start= *2048, .*name=\"boot\""
    part ext.img 1 ext-boot.img
    debugfs -R "cat /loader/syslinux.cfg" ext-boot.img 2>/dev/null | grep -q "^	KERNEL /boot/ostree/"
    debugfs -R "stat /extlinux/extlinux.conf" ext-boot.img 2>/dev/null | grep -q "Fast link dest: \"../loader/syslinux.cfg\""
'

# Deployments are immutable (chattr +i): let the scratch directory go.
for d in "$W"/sys/ostree/deploy/*/deploy/*.0; do
    [ ! -d "$d" ] || chattr -i "$d"
done

test_done
