#!/bin/bash
# A real deployable image from the host's mirror: bookworm minbase with
# linux-image-amd64, dracut, ostree-boot and systemd-sysv, made deployable,
# deployed with ostree admin in a scratch sysroot, upgraded by a second
# image.  Then a device, booted under qemu-system-x86_64 (KVM when usable,
# else TCG) with OVMF and the GRUB of the disk "apt2ostree disk-image"
# made: image 1 published with a history, then image 2, on a second
# virtual disk (the device's file:// remote).  A probe in both images
# (tests/device/) runs each boot's step from that disk without a login and
# powers off: boot 1 makes the device's own state (a file in /var/lib, a
# user, a conffile edit) and runs ostree admin upgrade; boot 2 checks
# image 2 as booted (dpkg-query against its lockfile, its new service, the
# device's state, the /etc merge, dpkg --verify) and rolls back; boot 3
# checks image 1's packages again.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/bench/libbench.sh"

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

# The device's two images.  Both have the probe (tests/device/): a small
# package, a2o-probe, version 1 in image 1 and 2 in image 2, whose conffile
# /etc/a2o-probe.conf changes between them.  Image 1 adds less and pins
# one package locked from bookworm-updates or -security to bookworm's own
# older version; image 2 adds chrony (a service with its own /var/lib
# directory), removes less and takes that package's newer version.
# make_probe VERSION CONF: the probe's .deb in $W, for the package lists.
make_probe () {
    local s=$W/probe-$1
    mkdir -p "$s/DEBIAN" "$s/usr/lib/systemd/system/multi-user.target.wants" "$s/usr/libexec" "$s/etc"
    cp "$TOP_SRCDIR/tests/device/a2o-probe.service" "$s/usr/lib/systemd/system/"
    ln -s ../a2o-probe.service "$s/usr/lib/systemd/system/multi-user.target.wants/a2o-probe.service"
    install -m 755 "$TOP_SRCDIR/tests/device/a2o-probe" "$s/usr/libexec/"
    echo "$2" > "$s/etc/a2o-probe.conf"
    echo /etc/a2o-probe.conf > "$s/DEBIAN/conffiles"
    (cd "$W" && make_deb "$s" a2o-probe "$1" all "Depends: systemd, mount")
}

# pairs LOCKFILE: its packages as "NAME VERSION", sorted (as dpkg-query -W
# lists them below).
pairs () {
    grep -o '"name": "[^"]*", "version": "[^"]*"' "$1" | awk -F'"' '{ print $4, $8 }' | LC_ALL=C sort
}

test_expect_success 'ostree admin deploys it; the device'"'"'s image 1 (less, the probe, one package pinned older), built --deployable, deploys as the upgrade' '
    cd "$W"
    mkdir -p "$SYS"
    ostree admin init-fs "$SYS"
    ostree admin os-init --sysroot="$SYS" debian
    ostree --repo="$SYS/ostree/repo" pull-local "$REPO" os-deploy
    ostree admin deploy --sysroot="$SYS" --os=debian --karg=console=ttyS0 os-deploy
    c1=$(cat "$REPO/refs/heads/os-deploy")
    cmp "$SYS/ostree/deploy/debian/deploy/$c1.0/etc/passwd" img/usr/etc/passwd
    other_version bookworm os.lock.json > pinned
    read -r name locked arrow older < pinned
    say "image 1 pins $name $older (image 2: $locked)"
    make_probe 1 one > /dev/null
    make_probe 2 two > /dev/null
    { cat os.txt; echo less; echo "$name=$older"; echo ./a2o-probe_1_all.deb; } > dev1.txt
    { cat os.txt; echo chrony; echo ./a2o-probe_2_all.deb; } > dev2.txt
    a2o lock dev1.txt --variant minbase --arch amd64 -o dev1.lock.json > /dev/null
    a2o lock dev2.txt --variant minbase --arch amd64 -o dev2.lock.json > /dev/null
    pairs dev1.lock.json > dev1.pairs
    pairs dev2.lock.json > dev2.pairs
    assert_file_has_content dev1.pairs "^$name $older\$"
    assert_file_has_content dev2.pairs "^$name $locked\$"
    # Image 1 through "build --deployable" (os used the tree command).
    a2o build dev1.lock.json --deployable --ref device > build2.out 2>&1 || { tail -30 build2.out; false; }
    test -f "$REPO/refs/heads/before-deployable/device"
    cat "$REPO/refs/heads/device" > dev1.commit
    ostree --repo="$SYS/ostree/repo" pull-local "$REPO" device
    ostree admin deploy --sysroot="$SYS" --os=debian --karg=console=ttyS0 device
    c2=$(cat dev1.commit)
    ostree admin status --sysroot="$SYS" > status
    cat status
    assert_streq "$(grep -o "debian [0-9a-f]\{64\}\.0" status | tr "\n" " ")" "debian $c2.0 debian $c1.0 "
'

# as_booted NAME COMMIT: the boot's work on /var without booting (as
# tests/test-deployable.sh plays it) for COMMIT's deployment: the
# stateroot's /var on the deployment's, systemd-tmpfiles over its
# tmpfiles.d; then the packages dpkg lists there (NAME.pkgs) and what dpkg
# --verify says (NAME.verify).
as_booted () {
    unshare -m sh -ec '
        mount --bind "$1/ostree/deploy/debian/var" "$2/var"
        systemd-tmpfiles --create --root="$2" > /dev/null 2>&1 || :
        dpkg-query --admindir="$2/var/lib/dpkg" -W -f "\${Package}\n" > "$3.pkgs"
        dpkg --root="$2" --verify > "$3.verify" 2>&1 || :
    ' sh "$SYS" "$SYS/ostree/deploy/debian/deploy/$2.0" "$W/$1"
}

test_expect_success 'each deployment, as booted: dpkg lists its own packages and dpkg --verify finds every file' '
    cd "$W"
    as_booted os "$(cat "$REPO/refs/heads/os-deploy")"
    as_booted dev1 "$(cat dev1.commit)"
    for n in os dev1; do
        cat $n.verify
        test ! -s $n.verify
        assert_file_has_content $n.pkgs "^ostree-boot\$"
    done
    assert_not_file_has_content os.pkgs "^less\$"
    assert_file_has_content dev1.pkgs "^less\$"
'

# steps_done: how many of the update disk's steps have a status (out/N/rc).
steps_done () {
    local n=0 i
    for i in 1 2 3; do
        ! debugfs -R "stat /out/$i/rc" updates.img 2> /dev/null | grep -q "^Inode:" || n=$i
    done
    echo $n
}

# boot_device NAME: the device (disk.img) with the update disk (updates.img)
# booted under qemu with OVMF until it powers off (KVM when the guest gets
# to the probe with it: a nested /dev/kvm may stop OVMF with an "emulation
# failure"; else TCG); the console in NAME.log, the update disk's out/
# read back into NAME.out/, the time in boot.times.
boot_device () {
    local accel start qemu waited before
    before=$(steps_done)
    # (a second TCG run only when the first ended within seconds without
    # booting: qemu itself failed to start, which the raw output says)
    for accel in kvm tcg tcg; do
        [ $accel = tcg ] || { [ -r /dev/kvm ] && [ -w /dev/kvm ]; } || continue
        start=$(date +%s)
        qemu-system-x86_64 -accel $accel -m 1536 -nographic -no-reboot \
            -bios /usr/share/ovmf/OVMF.fd \
            -drive file=disk.img,format=raw,if=virtio \
            -drive file=updates.img,format=raw,if=virtio > "$1.raw" 2>&1 &
        qemu=$!
        # A KVM that fails may stop the guest without ending qemu; the
        # next qemu starts once this one has let the disks go.
        waited=0
        while kill -0 $qemu 2> /dev/null; do
            if grep -aqs "emulation failure" "$1.raw" || [ $waited -ge 900 ]; then
                kill $qemu
            fi
            sleep 1
            waited=$((waited + 1))
        done
        wait $qemu || :
        # KVM did its work when the probe ran (its line on the console, or
        # one more step's status on the update disk); else (an emulation
        # failure, or a qemu that ended at once) the boot again, with TCG.
        grep -aq "a2o-probe: running" "$1.raw" && break
        [ "$(steps_done)" -le "$before" ] || break
        if [ $accel = tcg ]; then
            say "$1: qemu ($accel) ended after $(( $(date +%s) - start )) s without running the probe; its last output:"
            tail -n 20 "$1.raw" | sed "s/\x1b\[[0-9;]*m//g" | tr -d "\r" | sed "s/^/#   /"
            [ $(( $(date +%s) - start )) -lt 10 ] || break
        fi
    done
    say "$1 ($accel): $(( $(date +%s) - start )) s from power on to power off"
    echo "$1 ($accel): $(( $(date +%s) - start )) s from power on to power off" >> boot.times
    sed "s/\x1b\[[0-9;]*m//g" "$1.raw" | tr -d "\r" > "$1.log"
    rm -rf "$1.out"
    debugfs -R "rdump /out $W" updates.img > /dev/null 2>&1
    [ -d out ] || { say "$1: the update disk holds no out/: the device ran no step"; mkdir out; }
    mv out "$1.out"
}

# boot_said NAME: what the console of boot NAME says of the boot's stages
# and failures (a check of a boot that fails prints it: the scratch
# directory, with the whole console, is gone when the run ends).
boot_said () {
    say "$1: the console's milestones and failures:"
    grep -a -n -E "Linux version|ostree-prepare-root|Welcome to|a2o-probe|emergency|Kernel panic|Failed|FAILED|Timed out|Dependency failed|Reached target|login:" \
        "$1.log" | tail -n 40 | sed "s/^/#   /"
    say "$1: the console's last lines:"
    tail -n 25 "$1.log" | sed "s/^/#   /"
}

# step_ok NAME N: boot NAME ran the update disk's step N, and it exited 0.
step_ok () {
    grep -a "a2o-probe" "$1.log" || :
    test -f "$1.out/$2/rc" || { boot_said "$1"; false; }
    cat "$1.out/$2/log"
    assert_streq "$(cat "$1.out/$2/rc")" 0
}

if ! command -v qemu-system-x86_64 > /dev/null || [ ! -e /usr/share/ovmf/OVMF.fd ]; then
    test_skip 'the device boots, upgrades and rolls back under qemu' "qemu-system-x86_64 or OVMF is not installed (tools/setup installs qemu-system-x86 and ovmf)"
else
    test_expect_success 'image 2 (chrony, not less, the pinned package newer, the probe'"'"'s new conffile) is built; both are published with a history to the update disk; disk-image makes the device from version 1' '
        cd "$W"
        a2o --repo "$REPO" publish --to updates/repo --history device > /dev/null
        a2o --repo updates/repo disk-image device -o disk.img --size 4G --karg console=ttyS0 \
            --remote origin=file:///mnt/updates/repo --remote-option gpg-verify=false
        a2o build dev2.lock.json --deployable --ref device > build3.out 2>&1 || { tail -30 build3.out; false; }
        cat "$REPO/refs/heads/device" > dev2.commit
        a2o --repo "$REPO" publish --to updates/repo --history device > /dev/null
        ostree --repo=updates/repo log device > published
        assert_streq "$(grep -c "^commit " published)" 2
        cp "$TOP_SRCDIR/tests/device/run" "$TOP_SRCDIR"/tests/device/boot?.sh updates/
        mkfs.ext4 -q -F -L updates -d updates updates.img $(( $(du -sm updates | cut -f1) * 2 + 64 ))M
    '

    test_expect_success 'boot 1 (image 1, from GRUB on the disk disk-image made): ostree-prepare-root, the device makes its own state, ostree admin upgrade from the file:// remote' '
        cd "$W"
        boot_device boot1
        step_ok boot1 1
        assert_streq "$(cat boot1.out/1/ostree-booted)" yes
        assert_streq "$(cat boot1.out/1/os-release)" "Debian GNU/Linux 12 (bookworm)"
        diff dev1.pairs boot1.out/1/pkgs
        cat boot1.out/1/admin-status
        assert_streq "$(grep -c "debian [0-9a-f]\{64\}\.0" boot1.out/1/admin-status)" 2
    '

    test_expect_success 'boot 2 (image 2): dpkg reports image 2, chrony runs, the device'"'"'s state, user and conffile edit are kept, the new conffile arrives (/etc merged three ways), dpkg --verify reports only the device'"'"'s edit; then ostree admin rollback' '
        cd "$W"
        boot_device boot2
        step_ok boot2 2
        O=boot2.out/2
        diff dev2.pairs $O/pkgs
        cat $O/chrony.status
        assert_streq "$(cat $O/chrony.active)" active
        assert_streq "$(cat $O/chrony.var)" "_chrony directory"
        assert_streq "$(cat $O/state)" "the device'"'"'s own"
        grep -q "^deviceuser:x:[0-9]*:[0-9]*:the device'"'"'s user:/home/deviceuser:" $O/user
        assert_streq "$(cat $O/useradd.tail)" "# edited on the device"
        assert_streq "$(cat $O/probe.conf)" two
        # dpkg reports the conffile the device changed, and nothing else.
        cat $O/verify
        assert_streq "$(cat $O/verify)" "??5?????? c /etc/default/useradd"
        cat $O/admin-status $O/rollback.out
    '

    test_expect_success 'boot 3 (the rollback): dpkg reports image 1 again; the device'"'"'s state stays' '
        cd "$W"
        boot_device boot3
        step_ok boot3 3
        diff dev1.pairs boot3.out/3/pkgs
        assert_streq "$(cat boot3.out/3/state)" "the device'"'"'s own"
        cat boot3.out/3/admin-status
        grep -q "^\* debian $(ostree --repo=updates/repo rev-parse "device^")\.[0-9]*\$" boot3.out/3/admin-status
    '
fi

# Each boot's time, from power on to power off (TCG without a usable KVM).
[ ! -f "$W/boot.times" ] || sed "s/^/# /" "$W/boot.times"

# Deployments are immutable (chattr +i): let the scratch directory go.
for d in "$SYS"/ostree/deploy/*/deploy/*.0; do
    [ ! -d "$d" ] || chattr -i "$d"
done

test_done
