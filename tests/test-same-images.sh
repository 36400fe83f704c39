#!/bin/bash
# The same lockfile gives the same configured image: Debian's own base .debs
# (tests/libbuildtest.sh) and a probe package, built for amd64 and for arm64
# (stage 2 under qemu-user), must give the stage-1 and image commits recorded
# below.  They were recorded with the code as it was when issue #23 (a
# faster stage 2 that changes nothing in the result) was taken up, so a
# change to stage 2 that alters an image, or its commit, fails here.  The
# commit holds the stage-2 script's text (mod's "apt2ostree.mod.command"),
# so even an edit of that script that leaves every file alone fails here.
#
# The probe exercises what that change touched: its preinst records the
# variables dpkg gives a preinst (DPKG_MAINTSCRIPT_ARCH,
# DPKG_RUNNING_VERSION...) and diverts another package's file without
# --rename (stage 2 moves it), and it declares a trigger interest and a file
# trigger its own files activate (stage 2 records both for dpkg).
#
# A checksum that changes on purpose is re-recorded with A2O_RECORD=1, which
# prints the new table (as TAP comments) to paste below.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/librepo.sh"

[ "$(id -u)" = 0 ] || skip_all "stage 2 runs maintainer scripts as root in bubblewrap; run as root"
command -v ninja > /dev/null || skip_all "ninja is not installed"
umask 022

ARCHES=amd64
if grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null \
   && grep -q '^flags: .*F' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
    ARCHES="amd64 arm64"
fi

D="$SCRATCH/srv/debian"
for BASE_ARCH in $ARCHES; do
    . "$TOP_SRCDIR/tests/libbuildtest.sh"
    base_repo "$D"
done

# probe_deb ARCH: the probe, byte for byte the same on every run.
probe_deb () {
    local s="probe-$1"
    mkdir -p "$s/DEBIAN" "$s/usr/share/probe"
    echo probe > "$s/usr/share/probe/file"
    cat > "$s/DEBIAN/preinst" <<'EOF'
#!/bin/sh
set -e
printf '%s\n' "$*" "$DPKG_MAINTSCRIPT_PACKAGE" "$DPKG_MAINTSCRIPT_ARCH" \
    "$DPKG_MAINTSCRIPT_NAME" "$DPKG_RUNNING_VERSION" > /etc/probe-preinst
dpkg-divert --package probe --no-rename --divert /usr/bin/cmp.distrib --add /usr/bin/cmp
EOF
    cat > "$s/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
echo "$*" >> /etc/probe-postinst
EOF
    printf 'interest probe-trigger\ninterest-noawait /usr/share/probe\n' > "$s/DEBIAN/triggers"
    find "$s" -exec touch -h -d @0 {} +
    DEB_COMPRESSION=none make_deb "$s" probe 1.0 "$1" "Depends: diffutils"
}
for arch in $ARCHES; do
    (cd "$SCRATCH" && mv "$(probe_deb "$arch")" "$D/pool/main/") > "$SCRATCH/probe.log" 2>&1 \
        || { cat "$SCRATCH/probe.log"; echo "Bail out! cannot build the probe package"; exit 1; }
done
repo_key archive
repo_dists "$D" bookworm "$ARCHES"
repo_sign "$D" bookworm archive
repo_serve "$SCRATCH/srv"

# build_image ARCH DIR: lock and build the base and the probe for ARCH in
# DIR; prints "ARCH packages SHA256" (of the lockfile's package lines), then "ARCH REF CHECKSUM" for the image
# and its stage-1 tree.
build_image () {
    local arch=$1 w=$2
    mkdir -p "$w" && cd "$w"
    repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
    printf '%s\n' $BASE_REQUEST probe > image.txt
    a2o lock image.txt --sources sources.list --arch "$arch" --variant custom --merged-usr yes \
        --cache cache -o image.lock.json > /dev/null
    a2o build image.lock.json > build.out
    # the inputs: the base .debs are those of the test cache's manifest
    # (tests/libbuildtest.sh); a cache filled after a bookworm point release
    # changes this line, and the commits are then recorded again
    echo "$arch packages $(grep "\"sha256\": " image.lock.json | sha256sum | cut -d" " -f1)"
    echo "$arch image $(cat build/ostree/refs/heads/image)"
    echo "$arch image/stage1 $(cat build/ostree/refs/heads/stage1/image)"
}

# (The image commits were recorded again after af3e8ec edited the stage-2
# script, whose text the commit holds, and again when step 3b looked for a
# diverted file's owner with one grep, and again when dpkg's output went
# through a file rather than a pipe a postinst's background process could
# hold, and again when the image's commit subject came to say what it is
# ("Debian GNU/Linux 12 (bookworm): N packages for ARCH, configured",
# issue #42), and again when the script's first steps made "ischroot" answer
# yes, as in debootstrap's and mmdebstrap's chroots, and its preinst loop
# read each package's architecture and version itself (issue #36); the
# stage-1 commits did not move, nor did the images' trees.)
cat > "$SCRATCH/expected" <<'END'
amd64 packages 81d53401671639a3f7bd5ba6390841dcb664c982bccfd15920e86d5e9f57a87b
amd64 image 378d1b521678d803ceca0920aadfd071c861c61687f2ebad59f648ee4d061127
amd64 image/stage1 4170ccbe8c1cb0e9aeddfd91103f48d42ea26718bda2b8144b2c759b75bcfd7e
arm64 packages 3a34b60b48f17346074f4c2f27f9f3747091d2b82ab5acedcc056427bb458de1
arm64 image 89246f47ce0ebe3cad32485e3348810feaaae908475718d1f5fe7c22d74f3a9c
arm64 image/stage1 26a785fb3ac3269b409881446820a0345b1339b2c3c70f6f31f844592e20a84b
END

for arch in $ARCHES; do
    if [ -n "${A2O_RECORD:-}" ]; then
        (build_image "$arch" "$SCRATCH/record-$arch" 2> /dev/null) | sed 's/^/# /'
        continue
    fi
    test_expect_success "the $arch base image with the probe builds to the stage-1 and image commits recorded for it" '
        (build_image '"$arch"' "$SCRATCH/image-'"$arch"'") > got
        grep "^'"$arch"' " "$SCRATCH/expected" > want
        diff -u want got
        # the probe did what it is there for
        r="$SCRATCH/image-'"$arch"'/build/ostree"
        ostree --repo="$r" cat image /etc/probe-preinst > preinst
        printf "%s\n" install probe '"$arch"' preinst > want
        head -n 4 preinst | diff -u want -
        [ -n "$(sed -n 5p preinst)" ]
        ostree --repo="$r" ls image /usr/bin/cmp.distrib > /dev/null
        ostree --repo="$r" cat image /var/lib/dpkg/triggers/File | grep -qx "/usr/share/probe probe/noawait"
        ostree --repo="$r" cat image /var/lib/dpkg/triggers/probe-trigger | grep -qx probe
        ostree --repo="$r" cat image /etc/probe-postinst | grep -q "^configure"
    '
done
[ "$ARCHES" != amd64 ] \
    || test_skip 'the arm64 base image with the probe builds to the stage-1 and image commits recorded for it' \
        "no enabled qemu-aarch64 binfmt_misc handler with the F flag"

test_done
