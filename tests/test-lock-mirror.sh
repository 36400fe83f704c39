#!/bin/bash
# apt2ostree lock against the real Debian bookworm archive, through the
# host's own apt configuration (no --sources): the locked minbase set must be
# exactly the packages and versions mmdebstrap installs from the same
# sources on the same day.
#
# Verified indices are cached in /var/cache/apt2ostree-tests/lists (or under
# $TMPDIR), keyed by SHA256 as lock always does; mmdebstrap's answer is
# cached there too, keyed by the InRelease files it was computed from.

. "$TOP_SRCDIR/tests/libtest.sh"

require_mirror

CACHE=/var/cache/apt2ostree-tests
mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] || CACHE="${TMPDIR:-/tmp}/apt2ostree-tests"
mkdir -p "$CACHE/lists"

# The host's apt sources files, in apt's order (what lock reads without --sources).
host_sources_files () {
    local f
    [ -f /etc/apt/sources.list ] && echo /etc/apt/sources.list
    for f in $(ls /etc/apt/sources.list.d/ 2>/dev/null | LC_ALL=C sort); do
        case "$f" in *.list|*.sources) echo "/etc/apt/sources.list.d/$f" ;; esac
    done
}

# names_versions LOCKFILE: "name=version" of every package, sorted.
names_versions () {
    python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["packages"]:
    print("%s=%s" % (p["name"], p["version"]))' "$1" | LC_ALL=C sort
}

# The release the host's sources name (bookworm, or trixie on a trixie host):
# what mmdebstrap is asked for.
HOST_RELEASE=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
LOCKED="$SCRATCH/minbase-amd64.lock.json"
: > "$SCRATCH/empty.txt"
if ! a2o lock "$SCRATCH/empty.txt" --variant minbase --arch amd64 --cache "$CACHE/lists" \
        -o "$LOCKED" > "$SCRATCH/lock.out" 2>&1; then
    if grep -q "Could not resolve\|Couldn't connect\|Timeout\|timed out" "$SCRATCH/lock.out"; then
        skip_all "the host's mirror does not answer: $(cat "$SCRATCH/lock.out")"
    fi
fi

test_expect_success 'lock --variant minbase with the host apt configuration verifies every source and writes a lockfile' '
    cat "$SCRATCH/lock.out"
    assert_has_file "$LOCKED"
    python3 -c "
import json, sys
lock = json.load(open(sys.argv[1]))
assert lock[\"merged-usr\"] is True, \"bookworm is merged-/usr\"
for s in lock[\"sources\"]:
    assert len(s[\"fingerprint\"]) == 40, s
    assert len(s[\"inrelease-sha256\"]) == 64, s
    assert s[\"origin\"] == \"Debian\", s
assert lock[\"request\"][\"sources-file\"] is None
assert len(lock[\"packages\"]) > 50
assert len(lock[\"install-order\"]) == len(lock[\"packages\"])
" "$LOCKED"
    ! grep -q "://" "$LOCKED" || fail "the lockfile names a URI"
'

if [ "$(id -u)" = 0 ] && command -v mmdebstrap >/dev/null; then
    test_expect_success 'the locked minbase set is exactly the packages and versions mmdebstrap installs from the same sources' '
        key=$(python3 -c "
import json, sys
print(\"-\".join(s[\"inrelease-sha256\"][:16] for s in json.load(open(sys.argv[1]))[\"sources\"]))" "$LOCKED")
        theirs="$CACHE/mmdebstrap-minbase-amd64-$key.txt"
        if [ ! -s "$theirs" ]; then
            mmdebstrap --quiet --variant=minbase --architectures=amd64 --format=null \
                --customize-hook="chroot \"\$1\" dpkg-query -W -f=\"\\\${Package}=\\\${Version}\\n\" > \"$theirs.part\"" \
                "$HOST_RELEASE" /dev/null $(host_sources_files) >&2
            LC_ALL=C sort "$theirs.part" > "$theirs"
            rm -f "$theirs.part"
        fi
        names_versions "$LOCKED" > mine.txt
        say "lock: $(wc -l < mine.txt) packages; mmdebstrap: $(wc -l < "$theirs")"
        diff -u "$theirs" mine.txt
    '
else
    test_skip 'the locked minbase set is exactly the packages and versions mmdebstrap installs from the same sources' \
        'mmdebstrap needs root and must be installed'
fi

test_expect_success 're-locking from the cache gives the same bytes, and lock --update too' '
    : > empty.txt
    a2o lock empty.txt --variant minbase --arch amd64 --cache "$CACHE/lists" -o again.lock.json >/dev/null
    cmp "$LOCKED" again.lock.json
    a2o lock --update again.lock.json --cache "$CACHE/lists" >/dev/null
    cmp "$LOCKED" again.lock.json
'

test_expect_success 'a source without Signed-By is verified with the keyrings apt2ostree ships' '
    echo "deb $MIRROR bookworm main" > sources.list
    : > empty.txt
    APT2OSTREE_KEYRINGS="$TOP_SRCDIR/data/keyrings" \
        a2o lock empty.txt --sources sources.list --variant essential --arch amd64 --cache "$CACHE/lists" -o e.json >/dev/null
    assert_file_has_content e.json "\"name\": \"bookworm\".*\"origin\": \"Debian\""
    mkdir nokeys
    APT2OSTREE_KEYRINGS="$PWD/nokeys" expect_failure err \
        a2o lock empty.txt --sources sources.list --variant essential --arch amd64 --cache "$CACHE/lists"
    assert_file_has_content err "holds no keyring"
'

test_expect_success 'lock for arm64 pins only arm64 and all packages, with the names minbase has on amd64' '
    : > empty.txt
    a2o lock empty.txt --variant minbase --arch arm64 --cache "$CACHE/lists" -o arm64.lock.json >/dev/null
    python3 -c "
import json, sys
for p in json.load(open(sys.argv[1]))[\"packages\"]:
    assert p[\"architecture\"] in (\"arm64\", \"all\"), p
" arm64.lock.json
    names_versions arm64.lock.json | cut -d= -f1 > arm64.names
    names_versions "$LOCKED" | cut -d= -f1 > amd64.names
    diff -u amd64.names arm64.names
'

test_done
