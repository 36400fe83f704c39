#!/bin/bash
# Real mirror: every .deb of a Debian bookworm minbase (Essential: yes,
# Priority: required, and apt, with their dependencies, as apt resolves
# them) unpacks into a tree equal to dpkg-deb -x of the same file after the
# merged-/usr rewrite.  Downloads go through unpack-deb itself into a cache
# keyed by sha256 that survives the test (/var/cache/apt2ostree-tests/debs,
# else $TMPDIR), so reruns do not download again.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

require_mirror
command -v apt-get > /dev/null || skip_all "apt-get is not installed"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$KEYRING" ] || skip_all "$KEYRING is missing (package debian-archive-keyring)"

CACHE=/var/cache/apt2ostree-tests/debs
mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] || CACHE="${TMPDIR:-/tmp}/apt2ostree-tests/debs"
mkdir -p "$CACHE"

# The package set, resolved by apt in a private root: URL, file name, size
# and sha256 of each .deb.
APTROOT="$SCRATCH/aptroot"
mkdir -p "$APTROOT/etc/apt/sources.list.d" "$APTROOT/etc/apt/preferences.d" \
    "$APTROOT/var/lib/apt/lists/partial" "$APTROOT/var/cache/apt/archives/partial" \
    "$APTROOT/var/lib/dpkg"
: > "$APTROOT/var/lib/dpkg/status"
echo "deb [signed-by=$KEYRING] $MIRROR bookworm main" > "$APTROOT/etc/apt/sources.list"
: > "$APTROOT/apt.conf"
apt_private () {
    APT_CONFIG="$APTROOT/apt.conf" apt-get -q -o Dir="$APTROOT" -o Dir::State::status="$APTROOT/var/lib/dpkg/status" \
        -o APT::Architecture="$(dpkg --print-architecture)" -o APT::Architectures::="$(dpkg --print-architecture)" \
        -o Acquire::Languages=none -o Debug::NoLocking=1 "$@"
}
apt_private update > "$SCRATCH/apt-update.log" 2>&1 \
    || skip_all "apt-get update against $MIRROR failed: $(tail -n 1 "$SCRATCH/apt-update.log")"
/usr/lib/apt/apt-helper cat-file "$APTROOT"/var/lib/apt/lists/*_Packages* > "$SCRATCH/Packages"
PACKAGES=$(awk '
    BEGIN { RS = ""; FS = "\n" }
    { name = ""; want = 0
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^Package:/) { name = $i; sub(/^Package: */, "", name) }
        if ($i ~ /^Essential: yes/ || $i ~ /^Priority: required/) want = 1
      }
      if (want) print name }' "$SCRATCH/Packages" | sort -u)
apt_private install --print-uris -y -qq $PACKAGES apt > "$SCRATCH/uris" 2> "$SCRATCH/uris.err" \
    || { cat "$SCRATCH/uris.err"; echo "Bail out! apt cannot resolve the minbase set"; exit 1; }
# One line a package: URL FILE SIZE SHA256 (apt prints MD5Sum; the sha256
# and size come from the Packages index, matched by the pool file name).
python3 - "$SCRATCH/Packages" "$SCRATCH/uris" > "$SCRATCH/debs" <<'EOF'
import os, sys, urllib.parse
index = {}
for stanza in open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n\n"):
    fields = dict(l.split(": ", 1) for l in stanza.splitlines() if ": " in l and not l.startswith(" "))
    if "Filename" in fields:
        index[os.path.basename(fields["Filename"])] = (fields["Size"], fields["SHA256"])
for line in open(sys.argv[2]):
    if not line.startswith("'"):
        continue
    url = line.split()[0].strip("'")
    name = urllib.parse.unquote(os.path.basename(url))
    size, sha = index[name]
    print(url, name, size, sha)
EOF
count=$(wc -l < "$SCRATCH/debs")
say "$count packages from $MIRROR; cache $CACHE"

cd "$SCRATCH"
new_repo repo

# Unpack and compare in two processes; one result file per package.
mkdir -p results
unpack_and_compare () {
    local url=$1 file=$2 size=$3 sha=$4
    local out="results/$file"
    {
        "$APT2OSTREE" --repo repo unpack-deb --cache "$CACHE" --sha256 "$sha" --size "$size" \
            --ref "test/$sha" "$url" \
        && compare_with_dpkg "$CACHE/$sha" repo "test/$sha"
    } > "$out.log" 2>&1
    echo $? > "$out.rc"
}
export -f unpack_and_compare compare_with_dpkg checkout_deb_tree dir_listing merge_usr
export CACHE APT2OSTREE SCRATCH
xargs -P 2 -L 1 bash -c 'unpack_and_compare "$@"' _ < "$SCRATCH/debs"

test_expect_success "apt resolved a minbase of about 90 packages ($count)" '
    [ "$count" -ge 80 ]
'

while read -r url file size sha; do
    test_expect_success "$file from the mirror unpacks into the same tree as dpkg-deb -x" '
        cat "$SCRATCH/results/'"$file"'.log"
        [ "$(cat "$SCRATCH/results/'"$file"'.rc")" = 0 ]
        [ "$(cat "$SCRATCH/repo/refs/heads/test/'"$sha"'")" != "" ]
    '
done < "$SCRATCH/debs"

# host_stanza NAME ARCH: the host's own status stanza for the package, with
# the Status and Priority lines left out (Priority is the archive's
# override there, the control file's in a .deb).
host_stanza () {
    python3 - "$1" "$2" <<'EOF'
import sys
name, arch = sys.argv[1], sys.argv[2]
for stanza in open("/var/lib/dpkg/status", encoding="utf-8").read().split("\n\n"):
    lines = stanza.strip("\n").split("\n")
    if lines[0] == "Package: " + name and "Architecture: " + arch in lines:
        print("\n".join(l for l in lines if not l.startswith(("Status:", "Priority:"))))
EOF
}

test_expect_success 'where the host has the same version installed, the .list file and the status stanza equal dpkg'"'"'s own' '
    compared=0
    while read -r url file size sha; do
        fields=$(dpkg-deb -f "$CACHE/$sha" Package Version Architecture Multi-Arch)
        p=$(echo "$fields" | sed -n "s/^Package: //p")
        v=$(echo "$fields" | sed -n "s/^Version: //p")
        a=$(echo "$fields" | sed -n "s/^Architecture: //p")
        ma=$(echo "$fields" | sed -n "s/^Multi-Arch: //p")
        [ "$(dpkg-query -W -f="\${Version}" "$p:$a" 2>/dev/null)" = "$v" ] || continue
        base=$p; [ "$ma" != same ] || base=$p:$a
        commit=$(cat "$SCRATCH/repo/refs/heads/test/$sha")
        ostree --repo="$SCRATCH/repo" cat "$commit" "/var/lib/dpkg/info/$base.list" > list
        cmp list "/var/lib/dpkg/info/$base.list" || { echo "$p: .list differs"; false; }
        ostree --repo="$SCRATCH/repo" cat "$commit" "/var/lib/apt2ostree/status/$p:$a" > stanza
        assert_file_has_content stanza "^Status: install ok unpacked$"
        grep -v "^Status:\|^Priority:" stanza > ours
        host_stanza "$p" "$a" > host
        diff -u host ours || { echo "$p: status stanza differs"; false; }
        compared=$((compared + 1))
    done < "$SCRATCH/debs"
    say "$compared packages compared with the host'"'"'s dpkg database"
'

test_expect_success 'the cache holds each .deb under its sha256, verified' '
    while read -r url file size sha; do
        [ "$(stat -c %s "$CACHE/$sha")" = "$size" ]
    done < "$SCRATCH/debs"
'

test_done
