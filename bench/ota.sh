#!/bin/bash
# bench/ota.sh — the update loop of a device: a deployable amd64 image of
# $SUITE (default bookworm; minbase with $PACKAGES, default a kernel,
# dracut, ostree-boot and systemd-sysv) from the mirror the host's apt
# configuration names, published and deployed once on a scratch sysroot
# (the "device"; not timed), then one package changed (a package locked
# from -updates or -security, pinned to the version the release itself
# has) and the loop timed step by step:
#
#   lock      the changed package list
#   build     build --deployable --incremental (stage 2 from the image before)
#   publish   publish --history: a new commit and a static delta from the
#             published one before
#   upgrade   ostree admin upgrade on the device, from the published
#             repository served over HTTP on 127.0.0.1 (tests/httpd.py):
#             the bytes it downloaded, against the changed .deb and the
#             whole image
#   boot      the upgraded device booted under qemu-system-x86_64 from a
#             disk holding its sysroot, to the login prompt; ACCEL=kvm
#             where the machine's KVM works (default tcg: software
#             emulation; some nested KVMs stop OVMF or the kernel with an
#             internal error); BOOT=0 leaves it out
#
# and then the change back, the same way.  Run it as root from a build
# directory (it uses ./apt2ostree unless $APT2OSTREE is set); it needs the
# network, ostree, and for the boot qemu-system-x86; it writes under
# $TMPDIR (default /var/tmp) and removes what it wrote.
set -eu
A2O=${APT2OSTREE:-$PWD/apt2ostree}
TOP_SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench/ota.sh: run as root (stage 2 and ostree admin)" >&2; exit 1; }
command -v ostree > /dev/null || { echo "bench/ota.sh: ostree is not installed" >&2; exit 1; }
[ "$(dpkg --print-architecture)" = amd64 ] || { echo "bench/ota.sh: the image and its boot are amd64" >&2; exit 1; }
SUITE=${SUITE:-bookworm}
PACKAGES=${PACKAGES:-linux-image-amd64 dracut ostree-boot systemd-sysv}
BOOT=${BOOT:-1}
ACCEL=${ACCEL:-tcg}
command -v qemu-system-x86_64 > /dev/null || BOOT=0

. "$TOP_SRCDIR/tests/libsources.sh"
. "$TOP_SRCDIR/bench/libbench.sh"
dir=$(mktemp -d "${TMPDIR:-/var/tmp}/a2o-bench-ota.XXXXXX")
server=
finish () {
    [ -z "$server" ] || kill "$server" 2> /dev/null || true
    local d
    for d in "$dir"/sys/ostree/deploy/*/deploy/*.0; do
        [ ! -d "$d" ] || chattr -i "$d" 2> /dev/null || true
    done
    rm -rf "$dir"
}
trap finish EXIT
unset SOURCE_DATE_EPOCH
cd "$dir"
SYS=$dir/sys

# --- the device, once (not timed) ----------------------------------------------
# shellcheck disable=SC2086 # one package a word
printf '%s\n' $PACKAGES > os.txt
timed first.lock "$A2O" lock os.txt --suite "$SUITE" --variant minbase -o os.lock.json
timed first.build "$A2O" build os.lock.json --deployable --ref os
mkdir -p srv
timed first.publish "$A2O" publish --to srv/pub --history os
python3 "$TOP_SRCDIR/tests/httpd.py" srv port served.log &
server=$!
for _ in $(seq 100); do [ -s port ] && break; sleep 0.1; done
[ -s port ] || { echo "bench/ota.sh: tests/httpd.py did not start" >&2; exit 1; }
mkdir -p "$SYS"
ostree admin init-fs "$SYS" > /dev/null
ostree admin os-init --sysroot="$SYS" debian > /dev/null
ostree --repo="$SYS/ostree/repo" remote add --no-gpg-verify origin "http://127.0.0.1:$(cat port)/pub"
ostree --repo="$SYS/ostree/repo" pull origin os > /dev/null
ostree admin deploy --sysroot="$SYS" --os=debian --karg=console=ttyS0 origin:os > /dev/null
n=$(grep -c '"sha256": ' os.lock.json)
image_kib=$(kib srv/pub/objects)

# served_kib: KiB of the files the device asked the server for since
# served.log was emptied.
served_kib () {
    local path sum=0
    while read -r path; do
        path=${path%% *}
        [ -f "srv$path" ] && sum=$((sum + $(stat -c %s "srv$path")))
    done < served.log
    echo $((sum / 1024))
}

# deb_kib NAME LOCKFILE: the size of NAME's .deb, as the build downloaded it.
deb_kib () {
    local sha
    sha=$(grep -o "{\"name\": \"$1\", [^}]*" "$2" | grep -o '"sha256": "[0-9a-f]*"' | cut -d'"' -f4)
    echo $(( $(stat -c %s "build/cache/debs/$sha") / 1024 ))
}

# boot NAME: the device's default deployment booted from a disk holding its
# sysroot, to the login prompt; its seconds in NAME (or "-" without qemu).
boot () {
    if [ "$BOOT" = 0 ]; then echo - > "$1"; return; fi
    local entry cpu=() t0
    entry=$(grep -l "(ostree:0)" "$SYS"/boot/loader/entries/*.conf)
    [ "$ACCEL" != kvm ] || cpu=(-cpu host)
    echo "$ACCEL" > "$1.accel"
    rm -f disk.img
    mkfs.ext4 -q -F -L root -d "$SYS" disk.img 4G
    t0=$(now)
    timeout 900 qemu-system-x86_64 -accel "$ACCEL" "${cpu[@]}" -m 1536 -nographic -no-reboot \
        -kernel "$SYS/boot$(sed -n 's/^linux //p' "$entry")" \
        -initrd "$SYS/boot$(sed -n 's/^initrd //p' "$entry")" \
        -append "$(sed -n 's/^options //p' "$entry") root=LABEL=root rw panic=5" \
        -drive file=disk.img,format=raw,if=virtio > "$1.log" 2>&1 &
    local qemu=$! i
    for i in $(seq 9000); do
        grep -aq "login:" "$1.log" 2> /dev/null && break
        kill -0 $qemu 2> /dev/null || break
        sleep 0.1
    done
    calc "$(now) - $t0" > "$1"
    kill $qemu 2> /dev/null || true
    wait $qemu 2> /dev/null || true
    grep -aq "login:" "$1.log" || { echo "bench/ota.sh: the device did not reach its login prompt ($1.log):" >&2; tail -n 20 "$1.log" >&2; exit 1; }
}

# loop NAME LOCKFILE: one turn of the loop to LOCKFILE's image.
loop () {
    timed "$1.build" "$A2O" build "$2" --deployable --incremental --ref os
    timed "$1.publish" "$A2O" publish --to srv/pub --history os
    : > served.log
    timed "$1.upgrade" ostree admin upgrade --sysroot="$SYS" --os=debian
    served_kib > "$1.kib"
    boot "$1.boot"
}

# --- the loop -------------------------------------------------------------------
changed=$(other_version "$SUITE" os.lock.json)
set -- $changed
{ cat os.txt; echo "$1=$4"; } > change.txt
timed change.lock "$A2O" lock change.txt --suite "$SUITE" --variant minbase -o change.lock.json
loop change change.lock.json
cp os.txt back.txt
timed back.lock "$A2O" lock back.txt --suite "$SUITE" --variant minbase -o back.lock.json
loop back back.lock.json

# report ROW NAME PACKAGE LOCKFILE: one turn's lines.
report () {
    local total deb
    total=$(calc "$(cat "$2.lock") + $(cat "$2.build") + $(cat "$2.publish") + $(cat "$2.upgrade")")
    deb=$(deb_kib "$3" "$4")
    cat <<EOF
 $1  lock                             $(cat "$2.lock")
    build --deployable --incremental $(cat "$2.build")
    publish --history (with a delta) $(cat "$2.publish")
    ostree admin upgrade             $(cat "$2.upgrade")
    the loop without the boot        $total       (<= 10)
    downloaded by the device         $(cat "$2.kib") KiB   $(calc "$(cat "$2.kib") / $deb")x the .deb ($deb KiB)  (<= 2); the whole image $image_kib KiB
EOF
    if [ "$(cat "$2.boot")" != - ]; then
        cat <<EOF
    boot to the login prompt ($(cat "$2.boot.accel"))   $(cat "$2.boot")
    the loop with the boot           $(calc "$total + $(cat "$2.boot")")       (<= 60 with KVM)
EOF
    fi
}

cat <<EOF

$SUITE deployable minbase + $PACKAGES: $n packages; first build $(cat first.build) s
change: $changed                                seconds
$(report 1 change "$1" change.lock.json)
$(report 2 back "$1" back.lock.json)
EOF
