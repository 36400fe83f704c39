#!/bin/bash
# A real deployable image from the host's mirror: bookworm minbase with
# linux-image-amd64, dracut, ostree-boot and systemd-sysv, made deployable,
# deployed with ostree admin in a scratch sysroot, upgraded by a second
# image; the upgrade made a disk by "apt2ostree disk-image" and booted under
# qemu-system-x86_64 (KVM when usable, else TCG) with OVMF and the disk's
# GRUB: the serial console shows ostree-prepare-root switching into the
# deployment and the deployed system's login prompt.
. "$TOP_SRCDIR/tests/libtest.sh"

require_mirror
[ "$(id -u)" = 0 ] || skip_all "stage 2 and ostree admin need root"
[ "$(dpkg --print-architecture)" = amd64 ] || skip_all "the boot test is for an amd64 host"
command -v ostree > /dev/null || skip_all "ostree is not installed"

W=$SCRATCH/work
mkdir -p "$W"
cd "$W"
SYS=$W/sysroot
REPO=$W/build/ostree

test_expect_success 'lock and build minbase + linux-image-amd64 dracut ostree-boot systemd-sysv; make it deployable' '
    cd "$W"
    printf "linux-image-amd64\ndracut\nostree-boot\nsystemd-sysv\n" > os.txt
    a2o lock os.txt --variant minbase --arch amd64 -o os.lock.json > /dev/null
    a2o build os.lock.json > build.out 2>&1 || { tail -30 build.out; false; }
    a2o --repo "$REPO" deployable --ref os-deploy os > /dev/null
    a2o --repo "$REPO" export os-deploy --dir img
    ls img/usr/lib/modules/*/vmlinuz img/usr/lib/modules/*/initramfs.img
    assert_has_file img/usr/etc/os-release
    assert_has_file img/usr/lib/ostree/ostree-prepare-root
'

test_expect_success 'ostree admin deploys it; a second image with one package more, built --deployable, deploys as the upgrade' '
    cd "$W"
    mkdir -p "$SYS"
    ostree admin init-fs "$SYS"
    ostree admin os-init --sysroot="$SYS" debian
    ostree --repo="$SYS/ostree/repo" pull-local "$REPO" os-deploy
    ostree admin deploy --sysroot="$SYS" --os=debian --karg=console=ttyS0 os-deploy
    c1=$(cat "$REPO/refs/heads/os-deploy")
    cmp "$SYS/ostree/deploy/debian/deploy/$c1.0/etc/passwd" img/usr/etc/passwd
    printf "linux-image-amd64\ndracut\nostree-boot\nsystemd-sysv\nless\n" > os2.txt
    a2o lock os2.txt --variant minbase --arch amd64 -o os2.lock.json > /dev/null
    # The second one through "build --deployable" (the first used the tree command).
    a2o build os2.lock.json --deployable --ref os2-deploy > build2.out 2>&1 || { tail -30 build2.out; false; }
    test -f "$REPO/refs/heads/before-deployable/os2-deploy"
    ostree --repo="$SYS/ostree/repo" pull-local "$REPO" os2-deploy
    ostree admin deploy --sysroot="$SYS" --os=debian --karg=console=ttyS0 os2-deploy
    c2=$(cat "$REPO/refs/heads/os2-deploy")
    ostree admin status --sysroot="$SYS" > status
    cat status
    assert_streq "$(grep -o "debian [0-9a-f]\{64\}\.0" status | tr "\n" " ")" "debian $c2.0 debian $c1.0 "
'

# as_booted REF: the boot's work on /var without booting (as
# tests/test-deployable.sh plays it) for REF's deployment: the stateroot's
# /var on the deployment's, systemd-tmpfiles over its tmpfiles.d; then the
# packages dpkg lists there (REF.pkgs) and what dpkg --verify says
# (REF.verify).
as_booted () {
    unshare -m sh -ec '
        mount --bind "$1/ostree/deploy/debian/var" "$2/var"
        systemd-tmpfiles --create --root="$2" > /dev/null 2>&1 || :
        dpkg-query --admindir="$2/var/lib/dpkg" -W -f "\${Package}\n" > "$3.pkgs"
        dpkg --root="$2" --verify > "$3.verify" 2>&1 || :
    ' sh "$SYS" "$SYS/ostree/deploy/debian/deploy/$(cat "$REPO/refs/heads/$1").0" "$W/$1"
}

test_expect_success 'each deployment, as booted: dpkg lists its own packages and dpkg --verify finds every file' '
    cd "$W"
    for ref in os-deploy os2-deploy; do
        as_booted $ref
        cat $ref.verify
        test ! -s $ref.verify
        assert_file_has_content $ref.pkgs "^ostree-boot\$"
    done
    assert_not_file_has_content os-deploy.pkgs "^less\$"
    assert_file_has_content os2-deploy.pkgs "^less\$"
'

if ! command -v qemu-system-x86_64 > /dev/null || [ ! -e /usr/share/ovmf/OVMF.fd ]; then
    test_skip 'the disk made by disk-image boots under qemu' "qemu-system-x86_64 or OVMF is not installed (tools/setup installs qemu-system-x86 and ovmf)"
else
    test_expect_success 'disk-image makes the upgrade a disk; it boots under qemu with OVMF and GRUB (no -kernel): ostree-prepare-root, then the deployed system'"'"'s login prompt' '
        cd "$W"
        a2o --repo "$REPO" disk-image os2-deploy -o disk.img --size 4G --karg console=ttyS0 \
            --remote origin=file:///mnt/updates --remote-option gpg-verify=false
        # KVM when it runs OVMF (a nested /dev/kvm may stop it with an
        # "emulation failure"), else TCG.
        for accel in kvm tcg; do
            [ $accel = tcg ] || { [ -r /dev/kvm ] && [ -w /dev/kvm ]; } || continue
            start=$(date +%s)
            timeout 900 qemu-system-x86_64 -accel $accel -m 1536 -nographic -no-reboot \
                -bios /usr/share/ovmf/OVMF.fd \
                -drive file=disk.img,format=raw,if=virtio,snapshot=on > boot.log 2>&1 &
            qemu=$!
            for i in $(seq 900); do
                grep -aq "localhost login:" boot.log 2>/dev/null && break
                grep -aq "emulation failure" boot.log 2>/dev/null && break
                kill -0 $qemu 2>/dev/null || break
                sleep 1
            done
            kill $qemu 2>/dev/null || true
            wait $qemu 2>/dev/null || true
            grep -aq "emulation failure" boot.log || break
        done
        say "boot to the login prompt ($accel): $(( $(date +%s) - start )) s"
        sed "s/\x1b\[[0-9;]*m//g" boot.log | tr -d "\r" > console.log
        grep -a "ostree-prepare-root\|Welcome to\|login:\|ostree=" console.log
        grep -aq "ostree-prepare-root.service" console.log
        grep -aq "^Welcome to Debian GNU/Linux 12 (bookworm)!\$" console.log   # not the initramfs
        grep -aq "localhost login:" console.log
    '
fi

# Deployments are immutable (chattr +i): let the scratch directory go.
for d in "$SYS"/ostree/deploy/*/deploy/*.0; do
    [ ! -d "$d" ] || chattr -i "$d"
done

test_done
