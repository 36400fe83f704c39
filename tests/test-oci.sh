#!/bin/bash
# export --oci: a tree as an OCI image layout (directory) or archive (.tar),
# read back by real clients from Debian: skopeo inspects and copies it,
# umoci unpacks it into the same files, owners, modes and capabilities as
# export --dir; the same ref gives the same bytes; an image built from a
# lockfile runs its dpkg-query from the unpacked layer.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libpodman.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

[ "$(id -u)" = 0 ] || skip_all "owners and capabilities need root (chown, setcap, umoci unpack)"
for tool in skopeo umoci jq setcap; do
    command -v $tool > /dev/null || skip_all "$tool is not installed (tools/setup installs it)"
done

W="$SCRATCH/work"
mkdir -p "$W"
cd "$W"
REPO="$W/repo"
a2o init --repo "$REPO" --mode bare > /dev/null

# A tree with what a layer must keep: owners, setuid and sticky bits, a
# symlink, a file capability.
T="$W/tree"
mkdir -p "$T/usr/bin" "$T/etc" "$T/home/user" "$T/tmp" "$T/var/lib/dpkg"
echo amd64 > "$T/var/lib/dpkg/arch"
printf '#!/bin/sh\necho hi\n' > "$T/usr/bin/hello" && chmod 0755 "$T/usr/bin/hello"
cp "$T/usr/bin/hello" "$T/usr/bin/suid" && chmod 4755 "$T/usr/bin/suid"
cp "$T/usr/bin/hello" "$T/usr/bin/ping" && setcap cap_net_raw+ep "$T/usr/bin/ping"
echo secret > "$T/etc/shadow" && chmod 0640 "$T/etc/shadow" && chgrp 42 "$T/etc/shadow"
echo mine > "$T/home/user/file" && chown -R 1000:1000 "$T/home/user"
chmod 1777 "$T/tmp"
ln -s hello "$T/usr/bin/hi"
a2o --repo "$REPO" import --ref tree "$T" > /dev/null

test_expect_success 'export --oci writes a layout skopeo reads: architecture, os, PATH, created = the commit time' '
    cd "$W"
    a2o --repo "$REPO" export tree --oci layout --tag test:1
    assert_streq "$(jq -r .imageLayoutVersion layout/oci-layout)" 1.0.0
    skopeo inspect --config oci:layout:test:1 > config.json
    assert_streq "$(jq -r .architecture config.json)" amd64
    assert_streq "$(jq -r .os config.json)" linux
    assert_streq "$(jq -r ".config.Env[0]" config.json)" "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    ts=$(ostree --repo="$REPO" show tree | sed -n "s/^Date: *//p")
    assert_streq "$(jq -r .created config.json)" "$(date -u -d "$ts" +%Y-%m-%dT%H:%M:%SZ)"
'

test_expect_success 'the same ref gives the same bytes, as a layout and as an archive; skopeo reads the archive' '
    cd "$W"
    a2o --repo "$REPO" export tree --oci layout2 --tag test:1
    diff -r layout layout2
    a2o --repo "$REPO" export tree --oci one.tar --tag test:1
    a2o --repo "$REPO" export tree --oci two.tar --tag test:1
    cmp one.tar two.tar
    assert_streq "$(skopeo inspect oci-archive:one.tar | jq -r .Architecture)" amd64
'

test_expect_success 'umoci unpacks the layer into the files, owners, modes, links and capabilities export --dir gives' '
    cd "$W"
    umoci unpack --image layout:test:1 bundle > /dev/null
    a2o --repo "$REPO" export tree --dir plain
    listing plain > want
    listing bundle/rootfs > got
    diff want got
    diff -r plain bundle/rootfs
    assert_streq "$(getcap bundle/rootfs/usr/bin/ping | sed "s/.* //")" "cap_net_raw=ep"
'

test_expect_success 'skopeo copies the image to another layout and back: the same manifest' '
    cd "$W"
    skopeo copy -q oci:layout:test:1 oci:copied:again
    assert_streq "$(skopeo inspect --raw oci:copied:again | jq -r ".layers[0].digest")" \
        "$(skopeo inspect --raw oci:layout:test:1 | jq -r ".layers[0].digest")"
'

test_expect_success 'an arm64 tree is arm64, variant v8; --arch names the architecture of a tree without dpkg' '
    cd "$W"
    a2o --repo "$REPO" export tree --oci arm.tar --arch arm64
    skopeo inspect --config oci-archive:arm.tar > arm.json
    assert_streq "$(jq -r "[.architecture, .variant] | join(\" \")" arm.json)" "arm64 v8"
    mkdir -p bare/etc && echo x > bare/etc/x
    a2o --repo "$REPO" import --ref bare bare > /dev/null
    expect_failure err a2o --repo "$REPO" export bare --oci bare.tar
    assert_file_has_content err "no var/lib/dpkg/arch"
    assert_file_has_content err "give --arch"
    test ! -e bare.tar
'

test_expect_success 'bad usage: a non-empty directory, --tag without --oci, two outputs; nothing is written' '
    cd "$W"
    mkdir full && echo keep > full/file
    expect_failure err a2o --repo "$REPO" export tree --oci full
    assert_file_has_content err "full exists and is not empty"
    assert_streq "$(cat full/file)" keep
    expect_failure err a2o --repo "$REPO" export tree --tar x.tar --tag t
    expect_failure err a2o --repo "$REPO" export tree --tar x.tar --oci y.tar
    assert_not_has_file x.tar
    assert_not_has_file y.tar
    ! ls -d .apt2ostree-oci-* 2>/dev/null
'

command -v ninja > /dev/null || { test_skip 'a built image runs dpkg-query from its OCI layer' "ninja is not installed"; test_done; exit; }
SRV="$SCRATCH/srv"
base_repo "$SRV/debian"
repo_key archive
# linked: three paths of one file (hard links in its data.tar); twins: two
# identical files that are not linked, and one identical to linked's.
mkdir -p "$W/linked/usr/share/linked" "$W/twins/usr/share/twins"
echo linked > "$W/linked/usr/share/linked/a"
ln "$W/linked/usr/share/linked/a" "$W/linked/usr/share/linked/b"
ln "$W/linked/usr/share/linked/a" "$W/linked/usr/share/linked/c"
echo twin > "$W/twins/usr/share/twins/one"
echo twin > "$W/twins/usr/share/twins/two"
echo linked > "$W/twins/usr/share/twins/like-a"
( cd "$SRV/debian/pool/main" \
  && make_deb "$W/linked" linked 1.0 amd64 "Priority: optional" \
  && make_deb "$W/twins" twins 1.0 amd64 "Priority: optional" ) > /dev/null
repo_dists "$SRV/debian" bookworm amd64
repo_sign "$SRV/debian" bookworm archive
repo_serve "$SRV"

test_expect_success 'a built image, exported as OCI and unpacked by umoci, lists every locked package with dpkg-query' '
    cd "$W"
    repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
    printf "%s\n" $BASE_REQUEST linked twins > base.txt
    a2o lock base.txt --sources sources.list --variant custom --merged-usr yes --cache cache \
        -o base.lock.json > /dev/null
    a2o build base.lock.json > /dev/null
    a2o --repo build/ostree export base --oci base.tar --tag base:latest
    mkdir base-layout && tar -C base-layout -xf base.tar
    umoci unpack --image base-layout:base:latest base-bundle > /dev/null
    n=$(chroot base-bundle/rootfs /bin/sh -c "dpkg-query -W | wc -l")
    assert_streq "$n" "$(grep -c "\"sha256\": " base.lock.json)"
'

# layer_links TAR: the hard-link entries of the plain or gzip tar TAR, as
# "PATH -> TARGET", sorted.
layer_links () {
    python3 - "$1" <<'EOF'
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    for m in sorted(t.getmembers(), key=lambda m: m.name):
        if m.islnk():
            print(m.name, "->", m.linkname)
EOF
}
LINKS="./usr/share/linked/b -> ./usr/share/linked/a
./usr/share/linked/c -> ./usr/share/linked/a"

test_expect_success 'the OCI layer has the hard links a package shipped, and no others: identical files stay apart' '
    cd "$W"
    manifest=$(jq -r ".manifests[0].digest" base-layout/index.json | sed "s/:/\//")
    layer=$(jq -r ".layers[0].digest" "base-layout/blobs/$manifest" | sed "s/:/\//")
    layer_links "base-layout/blobs/$layer" > links
    assert_streq "$(cat links)" "$LINKS"
    a2o --repo build/ostree export base --tar base-export.tar
    assert_streq "$(layer_links base-export.tar)" "$LINKS"
'

test_expect_success 'umoci unpacks the linked paths as one inode, the identical unlinked files as separate ones' '
    cd "$W"
    r=base-bundle/rootfs/usr/share
    assert_streq "$(stat -c %i $r/linked/a $r/linked/b $r/linked/c | sort -u | wc -l)" 1
    assert_streq "$(stat -c %h $r/linked/a)" 3
    assert_streq "$(stat -c %i $r/linked/a $r/twins/one $r/twins/two $r/twins/like-a | sort -u | wc -l)" 4
    assert_streq "$(stat -c %h $r/twins/one $r/twins/two $r/twins/like-a | sort -u)" 1
'

test_expect_success 'the same image exported twice with its hard links gives the same bytes' '
    cd "$W"
    a2o --repo build/ostree export base --oci again.tar --tag base:latest
    cmp base.tar again.tar
'

test_expect_success 'a linked path a later command changed is a plain file; the rest stay linked' '
    cd "$W"
    a2o --repo build/ostree mod --ref changed --chroot base -- sh -c "echo more >> /usr/share/linked/b" > /dev/null
    a2o --repo build/ostree export changed --tar changed.tar
    assert_streq "$(layer_links changed.tar)" "./usr/share/linked/c -> ./usr/share/linked/a"
    mkdir changed && tar -C changed -xf changed.tar
    assert_streq "$(cat changed/usr/share/linked/b)" "linked
more"
    assert_streq "$(stat -c %h changed/usr/share/linked/a changed/usr/share/linked/b)" "2
1"
    a2o --repo build/ostree mod --ref gone --chroot base -- rm /usr/share/linked/a > /dev/null
    a2o --repo build/ostree export gone --tar gone.tar
    assert_streq "$(layer_links gone.tar)" "./usr/share/linked/c -> ./usr/share/linked/b"
'

if ! podman_usable; then
    test_skip 'podman loads the OCI archive and runs dpkg-query in it' "podman or runc is not installed (tools/setup installs them)"
else
    test_expect_success 'podman loads the OCI archive and runs dpkg-query in it, without a network; the linked paths are one inode there' '
        cd "$W"
        n=$(podman_run base.tar localhost/base:latest sh -c "dpkg-query -W | wc -l")
        assert_streq "$n" "$(grep -c "\"sha256\": " base.lock.json)"
        podman_run base.tar localhost/base:latest sh -c \
            "cd /usr/share && stat -c \"%n %i %h\" linked/a linked/b linked/c twins/one twins/two" > inodes
        cat inodes
        assert_streq "$(awk "{ print \$2 }" inodes | head -n 3 | sort -u | wc -l)" 1
        assert_streq "$(awk "{ print \$3 }" inodes | tr "\n" " ")" "3 3 3 1 1 "
        assert_streq "$(awk "{ print \$2 }" inodes | sort -u | wc -l)" 3
    '
fi

# --- layers by package (issue #41) ---

# layer_of_path LAYOUT TAG PATH: the number (from 0) of the layer of the
# image TAG in LAYOUT whose tar has ./PATH; "none" when none has it.  The
# layers' listings are read once, into LAYOUT-TAG.index.
layer_of_path () {
    local index="$1-$2.index" manifest i=0 d
    if [ ! -f "$index" ]; then
        manifest=$(manifest_of "$1" "$2" | jq -r ".layers[].digest" | sed "s/:/\//")
        for d in $manifest; do
            tar -tzf "$1/blobs/$d" | sed "s/^/$i /"
            i=$((i + 1))
        done > "$index"
    fi
    awk -v p="./$3" '$2 == p { print $1; found = 1; exit } END { if (!found) print "none" }' "$index"
}

# manifest_of LAYOUT TAG: the image's manifest, as skopeo reads it.
manifest_of () {
    skopeo inspect --raw "oci:$1:$2"
}

test_expect_success 'export --oci --layers 8: umoci unpacks the files of the one-layer image; each package in a lower layer, the dpkg database and every directory in the top one' '
    cd "$W"
    a2o --repo build/ostree export base --oci layered --layers 8 --tag base:1 --lockfile base.lock.json
    n=$(manifest_of layered base:1 | jq ".layers | length")
    test "$n" -ge 3 && test "$n" -le 8
    umoci unpack --image layered:base:1 layered-bundle > /dev/null
    listing base-bundle/rootfs > want
    listing layered-bundle/rootfs > got
    diff want got
    diff -r base-bundle/rootfs layered-bundle/rootfs
    top=$((n - 1))
    assert_streq "$(layer_of_path layered base:1 var/lib/dpkg/status)" $top
    assert_streq "$(layer_of_path layered base:1 usr/bin/dpkg)" "$(layer_of_path layered base:1 usr/bin/dpkg-query)"
    test "$(layer_of_path layered base:1 usr/bin/dpkg)" -lt $top
    test "$(layer_of_path layered base:1 usr/share/twins/one)" -lt $top
    manifest_of layered base:1 | jq -r ".layers[] | .digest" | sort -u | wc -l > distinct
    assert_streq "$(cat distinct)" "$n"
'

test_expect_success 'the layered export has the hard links the package shipped, inside its own layer, and no others' '
    cd "$W"
    i=$(layer_of_path layered base:1 usr/share/linked/a)
    d=$(manifest_of layered base:1 | jq -r ".layers[$i].digest" | sed "s/:/\//")
    assert_streq "$(layer_of_path layered base:1 usr/share/linked/b)" "$i"
    layer_links "layered/blobs/$d" > links
    assert_streq "$(cat links)" "$LINKS"
    r=layered-bundle/rootfs/usr/share
    assert_streq "$(stat -c %i $r/linked/a $r/linked/b $r/linked/c | sort -u | wc -l)" 1
    assert_streq "$(stat -c %i $r/twins/one $r/twins/two $r/twins/like-a | sort -u | wc -l)" 3
'

test_expect_success 'the same commit and options give the same bytes, layered' '
    cd "$W"
    a2o --repo build/ostree export base --oci layered-again --layers 8 --tag base:1 --lockfile base.lock.json
    diff -r layered layered-again
'

test_expect_success 'the labels say what the image is: the lockfile SHA256, the commit, the package count' '
    cd "$W"
    commit=$(ostree --repo=build/ostree rev-parse base)
    skopeo inspect oci:layered:base:1 > inspect.json
    assert_streq "$(jq -r ".Labels.\"apt2ostree.lockfile.sha256\"" inspect.json)" "$(sha256sum < base.lock.json | cut -d" " -f1)"
    assert_streq "$(jq -r ".Labels.\"org.opencontainers.image.revision\"" inspect.json)" "$commit"
    assert_streq "$(jq -r ".Labels.\"apt2ostree.packages\"" inspect.json)" "$(grep -c "\"sha256\": " base.lock.json)"
    assert_streq "$(manifest_of layered base:1 | jq -r ".annotations.\"apt2ostree.commit\"")" "$commit"
'

test_expect_success 'bad --layers: 0, 128, a tree with no dpkg database; nothing is written' '
    cd "$W"
    expect_failure err a2o --repo build/ostree export base --oci l0 --layers 0
    assert_file_has_content err "expected 1 to 127"
    expect_failure err a2o --repo build/ostree export base --oci l128 --layers 128
    expect_failure err a2o --repo "$REPO" export tree --oci ltree --layers 4
    assert_file_has_content err "not a Debian image"
    expect_failure err a2o --repo build/ostree export base --tar x.tar --layers 4
    test ! -e l0 && test ! -e l128 && test ! -e ltree && test ! -e x.tar
'

# One package changed: twins 1.1 ships one more file.
echo three > "$W/twins/usr/share/twins/three"
( cd "$SRV/debian/pool/main" && make_deb "$W/twins" twins 1.1 amd64 "Priority: optional" ) > /dev/null
repo_dists "$SRV/debian" bookworm amd64
repo_sign "$SRV/debian" bookworm archive

test_expect_success 'one package changed: its layer and the top layer are new, skopeo copies only those blobs (and the config and manifest)' '
    cd "$W"
    a2o lock base.txt --sources sources.list --variant custom --merged-usr yes --cache cache \
        -o next.lock.json > /dev/null
    grep -q "\"1.1\"" next.lock.json
    a2o build next.lock.json > /dev/null
    a2o --repo build/ostree export next --oci layered2 --layers 8 --tag base:2 --lockfile next.lock.json
    manifest_of layered base:1 | jq -r ".layers[].digest" > layers1
    manifest_of layered2 base:2 | jq -r ".layers[].digest" > layers2
    assert_streq "$(wc -l < layers1)" "$(wc -l < layers2)"
    changed=$(diff layers1 layers2 | grep -c "^>")
    assert_streq "$changed" 2
    i=$(layer_of_path layered2 base:2 usr/share/twins/three)
    assert_streq "$(sed -n "$((i + 1))p" layers1 | grep -c -x -f layers2)" 0
    skopeo copy -q oci:layered:base:1 oci:mirror:base:1
    ls mirror/blobs/sha256 | sort > before
    skopeo copy -q oci:layered2:base:2 oci:mirror:base:2
    ls mirror/blobs/sha256 | sort > after
    assert_streq "$(comm -13 before after | wc -l)" 4
    comm -13 before after | sed "s/^/sha256:/" > new
    assert_streq "$(grep -c -x -f new layers2)" 2
'

if ! podman_usable; then
    test_skip 'podman runs both layered images: dpkg-query gives each lockfile'"'"'s packages' "podman or runc is not installed (tools/setup installs them)"
else
    test_expect_success 'podman runs both layered images: dpkg-query gives each lockfile'"'"'s packages' '
        cd "$W"
        for n in 1 2; do
            lock=base.lock.json; [ $n = 1 ] || lock=next.lock.json
            skopeo copy -q oci:mirror:base:$n oci-archive:layered-$n.tar:localhost/layered:$n
            podman_run layered-$n.tar localhost/layered:$n dpkg-query -W -f "\${Package} \${Version}\n" | sort > got-$n
            jq -r ".packages[] | \"\(.name) \(.version)\"" $lock | sort > want-$n
            diff want-$n got-$n
        done
        grep -x "twins 1.1" got-2
    '
fi

# config_of LAYOUT: the hex digest of the config of the layout's one image.
config_of () {
    local m
    m=$(jq -r ".manifests[0].digest" "$1/index.json" | sed "s/sha256://")
    jq -r ".config.digest" "$1/blobs/sha256/$m" | sed "s/sha256://"
}

# moved_layout FROM TO I J SOURCE: a copy TO of the layout FROM whose
# history moves the source package SOURCE from layer I's list to layer
# J's, with the config, manifest and index rewritten to match.
moved_layout () {
    local c m digest
    cp -r "$1" "$2"
    c=$(config_of "$2")
    jq -c --argjson i "$3" --argjson j "$4" --arg s "$5" '
        def words: ltrimstr("source packages: ") | split(" ");
        .history[$i].comment |= ("source packages: " + (words | map(select(. != $s)) | join(" ")))
        | .history[$j].comment |= ("source packages: " + (words + [$s] | sort | join(" ")))' \
        "$2/blobs/sha256/$c" > "$2/config.new"
    digest=$(sha256sum < "$2/config.new" | cut -d" " -f1)
    mv "$2/config.new" "$2/blobs/sha256/$digest"
    m=$(jq -r ".manifests[0].digest" "$2/index.json" | sed "s/sha256://")
    jq -c --arg d "sha256:$digest" --argjson n "$(stat -c %s "$2/blobs/sha256/$digest")" \
        ".config.digest = \$d | .config.size = \$n" "$2/blobs/sha256/$m" > "$2/manifest.new"
    digest=$(sha256sum < "$2/manifest.new" | cut -d" " -f1)
    mv "$2/manifest.new" "$2/blobs/sha256/$digest"
    jq -c --arg d "sha256:$digest" --argjson n "$(stat -c %s "$2/blobs/sha256/$digest")" \
        ".manifests[0].digest = \$d | .manifests[0].size = \$n" "$2/index.json" > "$2/index.new"
    mv "$2/index.new" "$2/index.json"
}

test_expect_success '--previous keeps each package in the layer it had in the earlier image, not where the hash puts it' '
    cd "$W"
    t=$(layer_of_path layered base:1 usr/share/twins/one); o=$((t == 0 ? 1 : 0))
    moved_layout layered moved "$t" "$o" twins
    a2o --repo build/ostree export next --oci after-moved --previous moved --tag base:2
    i=$(layer_of_path after-moved base:2 usr/share/twins/three)
    want=$(jq -r ".history[$o].comment" moved/blobs/sha256/$(config_of moved))
    assert_streq "$(jq -r ".history[$i].comment" after-moved/blobs/sha256/$(config_of after-moved))" "$want"
    test "$(manifest_of after-moved base:2 | jq ".layers | length")" -le "$(manifest_of layered base:1 | jq ".layers | length")"
    expect_failure err a2o --repo build/ostree export next --oci p1 --previous layout
    assert_file_has_content err "not an image \"export --oci --layers\" wrote"
    expect_failure err a2o --repo build/ostree export next --oci p2 --previous moved --layers 4
    test ! -e p1 && test ! -e p2
'

test_expect_success '--previous refuses a layout of more layers than an export writes (its last would be out of range)' '
    cd "$W"
    cp -r layered many-layers
    c=$(config_of many-layers); m=$(jq -r ".manifests[0].digest" many-layers/index.json | sed "s/sha256://")
    jq -c "(.history[0]) as \$h | .history = [range(200) | \$h]
           | .history[198].comment = \"source packages: twins\"" \
        many-layers/blobs/sha256/$c > many-layers/config.new
    digest=$(sha256sum < many-layers/config.new | cut -d" " -f1)
    mv many-layers/config.new many-layers/blobs/sha256/$digest
    jq -c --arg d "sha256:$digest" "(.layers[0]) as \$l | .layers = [range(200) | \$l] | .config.digest = \$d" \
        many-layers/blobs/sha256/$m > many-layers/manifest.new
    digest=$(sha256sum < many-layers/manifest.new | cut -d" " -f1)
    mv many-layers/manifest.new many-layers/blobs/sha256/$digest
    jq -c --arg d "sha256:$digest" ".manifests[0].digest = \$d" many-layers/index.json > many-layers/index.new
    mv many-layers/index.new many-layers/index.json
    expect_failure err a2o --repo build/ostree export next --oci p3 --previous many-layers
    assert_file_has_content err "^apt2ostree export: error: --previous many-layers: 200 layers, more than the 127"
    test ! -e p3
'

test_expect_success 'a package whose tree is not in the repository: its files in the top layer, a warning counts it' '
    cd "$W"
    ostree --repo=build/ostree refs | grep "^deb/twins/1.1/" > twins-ref
    ostree --repo=build/ostree refs --delete "$(cat twins-ref)"
    a2o --repo build/ostree export next --oci no-tree --layers 8 --tag base:2 2> err
    assert_file_has_content err "next: 1 packages have no package tree in the repository"
    n=$(manifest_of no-tree base:2 | jq ".layers | length")
    assert_streq "$(layer_of_path no-tree base:2 usr/share/twins/three)" $((n - 1))
    test "$(layer_of_path no-tree base:2 usr/share/linked/a)" -lt $((n - 1))
'

test_done
