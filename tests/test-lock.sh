#!/bin/bash
# apt2ostree lock against signed repositories made and served here: trust
# (signatures, keys, Valid-Until, index hashes), the cache, sources formats,
# the lockfile's layout, --update, and the errors.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"

SRV="$SCRATCH/srv"
mkdir -p "$SRV"

repo_key archive
repo_key other

# "good": suite bookworm, signed by "archive".
G="$SRV/good"
repo_deb "$G" base-essential 1.0 amd64 "Essential: yes\nPriority: required"
repo_deb "$G" hello 1.0 amd64 "Depends: libfoo (>= 2)"
repo_deb "$G" libfoo 2.0 amd64 "Multi-Arch: same"
repo_deb "$G" broken 1.0 amd64 "Depends: libfoo (>= 3)"
repo_publish "$G" bookworm amd64 archive

# "extra": suite extra, a newer libfoo, signed by "other".
E="$SRV/extra"
repo_deb "$E" libfoo 3.0 amd64 "Multi-Arch: same"
repo_publish "$E" extra amd64 other

repo_serve "$SRV"

# copy_repo NAME: a copy of the good repository at $SRV/NAME (to tamper with).
copy_repo () {
    rm -rf "${SRV:?}/$1"
    cp -a "$G" "$SRV/$1"
}

# sources_for NAME [KEY] [SUITE]: a one-line sources file for $SRV/NAME.
sources_for () {
    repo_sources_line "$HTTPD_URL/$1" "${3:-bookworm}" "${2:-archive}" > sources.list
}

# good_lock: a lockfile made from the good repository, and a copy to compare.
good_lock () {
    sources_for good
    echo hello > packages.txt
    a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json >/dev/null
    cp out.lock.json before.lock.json
}

test_expect_success 'lock pins every package by version, architecture, size, sha256 and pool file' '
    sources_for good
    printf "# what we want\n\nhello   # and its dependencies\n" > packages.txt
    a2o lock packages.txt --sources sources.list --variant custom --cache cache > out
    assert_file_has_content out "^packages.lock.json: 2 packages from 1 sources"
    assert_has_file packages.lock.json
    deb="$G/pool/main/hello_1.0_amd64.deb"
    line=$(grep "{\"name\": \"hello\"" packages.lock.json)
    case "$line" in *"\"version\": \"1.0\", \"architecture\": \"amd64\", \"source\": \"bookworm\""*) ;; *) fail "$line";; esac
    case "$line" in *"\"size\": $(stat -c %s "$deb"), \"sha256\": \"$(sha256sum < "$deb" | cut -d" " -f1)\", \"filename\": \"pool/main/hello_1.0_amd64.deb\""*) ;; *) fail "$line";; esac
    assert_file_has_content packages.lock.json "{\"name\": \"libfoo\", \"version\": \"2.0\".*\"multi-arch\": \"same\""
    assert_file_has_content packages.lock.json "\"fingerprint\": \"$(cat "$SCRATCH/keys/archive.fpr")\""
    assert_file_has_content packages.lock.json "\"inrelease-sha256\": \"$(sha256sum < "$G/dists/bookworm/InRelease" | cut -d" " -f1)\""
    assert_file_has_content packages.lock.json "\"packages\": \[\"hello\"\],"
    assert_file_has_content packages.lock.json "\"sources-file\": \"sources.list\","
    assert_not_file_has_content packages.lock.json "127.0.0.1"
    python3 -m json.tool packages.lock.json > /dev/null
'

test_expect_success 'the package list takes name=version and name:arch, and refuses two words on a line' '
    sources_for good
    printf "hello=1.0\nlibfoo:amd64\n" > packages.txt
    a2o lock packages.txt --sources sources.list --variant custom --cache cache >/dev/null
    assert_file_has_content packages.lock.json "\"packages\": \[\"hello=1.0\", \"libfoo:amd64\"\],"
    printf "hello=9.9\n" > wrong.txt
    expect_failure err a2o lock wrong.txt --sources sources.list --cache cache
    assert_one_line err
    assert_file_has_content err "hello"
    assert_not_has_file wrong.lock.json
    printf "hello libfoo\n" > two.txt
    expect_failure err a2o lock two.txt --sources sources.list --cache cache
    assert_file_has_content err "two.txt:1: \"hello libfoo\": one package a line"
'

test_expect_success 'the lockfile lists packages sorted by name, one a line, and the install order dependencies first' '
    sources_for good
    echo hello > packages.txt
    a2o lock packages.txt --sources sources.list --cache cache -o l.json >/dev/null
    sed -n "s/^    {\"name\": \"\([^\"]*\)\", \"version\".*/\1/p" l.json > names
    printf "base-essential\nhello\nlibfoo\n" > expected
    diff -u expected names
    sed -n "/\"install-order\"/,/\]/p" l.json | grep -n "\"" > order
    libfoo=$(grep "\"libfoo\"" order | cut -d: -f1)
    hello=$(grep "\"hello\"" order | cut -d: -f1)
    [ "$libfoo" -lt "$hello" ] || fail "libfoo must come before hello in the install order"
'

test_expect_success 'the default variant adds the Essential packages to the listed ones; custom does not' '
    sources_for good
    echo hello > packages.txt
    a2o lock packages.txt --sources sources.list --cache cache -o default.json >/dev/null
    assert_file_has_content default.json "{\"name\": \"base-essential\".*\"essential\": true, \"priority\": \"required\""
    assert_file_has_content default.json "\"variant\": null"
    a2o lock packages.txt --sources sources.list --cache cache --variant custom -o custom.json >/dev/null
    assert_not_file_has_content custom.json "\"name\": \"base-essential\""
'

test_expect_success 're-locking with nothing changed gives the same bytes and leaves the file untouched' '
    good_lock
    touch -d @1000000000 out.lock.json
    a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json >/dev/null
    cmp before.lock.json out.lock.json
    [ "$(stat -c %Y out.lock.json)" = 1000000000 ] || fail "an unchanged lockfile was rewritten"
    a2o lock packages.txt --sources sources.list --cache other-cache -o fresh.lock.json >/dev/null
    cmp before.lock.json fresh.lock.json
'

test_expect_success 'a cached index whose hash matches is not fetched again; InRelease always is' '
    sources_for good
    echo hello > packages.txt
    a2o lock packages.txt --sources sources.list --cache cache >/dev/null
    grep -c "^/good/dists/bookworm/main/binary-amd64/Packages" "$HTTPD_LOG" > first
    : > "$HTTPD_LOG"
    a2o lock packages.txt --sources sources.list --cache cache >/dev/null
    assert_file_has_content "$HTTPD_LOG" "^/good/dists/bookworm/InRelease$"
    assert_not_file_has_content "$HTTPD_LOG" "Packages"
    find cache -maxdepth 1 -type f > cached
    [ "$(wc -l < cached)" -eq 1 ] || fail "the cache should hold one verified index"
    # and, in cache/parsed, what the resolver read from it
    ls cache/parsed/*.solv > /dev/null
'

test_expect_success 'the cache holds indices under their SHA256; a damaged cached index is fetched again' '
    sources_for good
    echo hello > packages.txt
    a2o lock packages.txt --sources sources.list --cache cache -o a.json >/dev/null
    f=$(find cache -maxdepth 1 -type f)
    [ "$(basename "$f")" = "$(sha256sum < "$f" | cut -d" " -f1)" ] || fail "$f is not named by its sha256"
    : > "$f"
    : > "$HTTPD_LOG"
    a2o lock packages.txt --sources sources.list --cache cache -o b.json >/dev/null
    assert_file_has_content "$HTTPD_LOG" "Packages"
    cmp a.json b.json
'

test_expect_success 'lock --update re-resolves from the request the lockfile records' '
    copy_repo upd
    sources_for upd
    mkdir sub
    printf "hello\n" > packages.txt
    a2o lock packages.txt --sources sources.list --cache cache -o sub/img.lock.json >/dev/null
    assert_file_has_content sub/img.lock.json "\"sources-file\": \"../sources.list\""
    cp sub/img.lock.json unchanged.json
    a2o lock --update sub/img.lock.json --cache cache >/dev/null
    cmp unchanged.json sub/img.lock.json
    repo_deb "$SRV/upd" hello 1.1 amd64 "Depends: libfoo (>= 2)"
    rm "$SRV/upd/pool/main/hello_1.0_amd64.deb"
    repo_dists "$SRV/upd" bookworm amd64
    repo_sign "$SRV/upd" bookworm archive
    rm packages.txt
    a2o lock --update sub/img.lock.json --cache cache > out
    assert_file_has_content sub/img.lock.json "{\"name\": \"hello\", \"version\": \"1.1\""
    assert_file_has_content out "^upgraded   hello:amd64 1.0 (bookworm) -> 1.1 (bookworm)$"
    assert_file_has_content out "^0 added, 0 removed, 1 upgraded, 0 downgraded$"
    [ "$(grep -c "^[a-z]* *[a-z0-9.+-]*:[a-z0-9]* " out)" = 1 ] || fail "only hello changed"
    diff <(sed -n "/\"request\"/,/}/p" unchanged.json) <(sed -n "/\"request\"/,/}/p" sub/img.lock.json)
'

test_expect_success 're-locking a package list over a different lockfile prints what changed' '
    copy_repo relock
    sources_for relock
    printf "hello\n" > relock.txt
    a2o lock relock.txt --sources sources.list --cache cache -o relock.json > out
    assert_not_file_has_content out "added"
    a2o lock relock.txt --sources sources.list --cache cache -o relock.json > out
    assert_not_file_has_content out "added"
    repo_deb "$SRV/relock" hello 1.1 amd64 "Depends: libfoo (>= 2)"
    repo_deb "$SRV/relock" tool 1.0 amd64
    rm "$SRV/relock/pool/main/hello_1.0_amd64.deb"
    repo_dists "$SRV/relock" bookworm amd64
    repo_sign "$SRV/relock" bookworm archive
    printf "hello\ntool\n" > relock.txt
    a2o lock relock.txt --sources sources.list --cache cache -o relock.json > out
    assert_file_has_content out "^added      tool:amd64 1.0 (bookworm)$"
    assert_file_has_content out "^upgraded   hello:amd64 1.0 (bookworm) -> 1.1 (bookworm)$"
    assert_file_has_content out "^1 added, 0 removed, 1 upgraded, 0 downgraded$"
'

test_expect_success 'lock --update --sources finds the same source names in another sources file' '
    good_lock
    cp -a "$G" "$SRV/elsewhere"
    repo_sources_line "$HTTPD_URL/elsewhere" bookworm archive > moved.list
    : > "$HTTPD_LOG"
    a2o lock --update out.lock.json --sources moved.list --cache cache >/dev/null
    assert_file_has_content "$HTTPD_LOG" "^/elsewhere/dists/bookworm/InRelease$"
    assert_file_has_content out.lock.json "\"sources-file\": \"moved.list\""
    diff <(grep -v sources-file before.lock.json) <(grep -v sources-file out.lock.json)
    repo_sources_line "$HTTPD_URL/extra" extra other > wrong.list
    cp out.lock.json kept.json
    expect_failure err a2o lock --update out.lock.json --sources wrong.list --cache cache
    assert_file_has_content err "no source named \"bookworm\""
    cmp kept.json out.lock.json
'

test_expect_success 'lock --update refuses a Release older than the one the lockfile was made from' '
    good_lock
    copy_repo older
    sed -i "s/^Date: .*/Date: Sat, 01 Jan 2000 00:00:00 UTC/" "$SRV/older/dists/bookworm/Release"
    repo_sign "$SRV/older" bookworm archive
    repo_sources_line "$HTTPD_URL/older" bookworm archive > older.list
    expect_failure err a2o lock --update out.lock.json --sources older.list --cache cache
    assert_one_line err
    assert_file_has_content err "source \"bookworm\": the Release is dated Sat, 01 Jan 2000 00:00:00 UTC, before"
    cmp before.lock.json out.lock.json
    a2o lock packages.txt --sources older.list --cache cache -o fresh.lock.json >/dev/null
    assert_file_has_content fresh.lock.json "\"date\": \"Sat, 01 Jan 2000 00:00:00 UTC\""
'

test_expect_success 'deb822 sources with an inline Signed-By key' '
    {
        echo "Types: deb"
        echo "URIs: $HTTPD_URL/good"
        echo "Suites: bookworm"
        echo "Components: main"
        echo "Signed-By:"
        sed "s/^$/./; s/^/ /" "$SCRATCH/keys/archive.asc"
    } > test.sources
    echo hello > packages.txt
    a2o lock packages.txt --sources test.sources --cache cache -o l.json >/dev/null
    assert_file_has_content l.json "\"name\": \"hello\""
    sed -i "s/^ [A-Za-z0-9+\/]\{20\}/ AAAAAAAAAAAAAAAAAAAA/" test.sources
    expect_failure err a2o lock packages.txt --sources test.sources --cache cache -o l.json
    assert_one_line err
'

test_expect_success 'deb822 X-Name and Pin-Priority; the one-line format takes name= and pin-priority=' '
    {
        echo "Types: deb"
        echo "X-Name: main-archive"
        echo "URIs: $HTTPD_URL/good"
        echo "Suites: bookworm"
        echo "Components: main"
        echo "Signed-By: $SCRATCH/keys/archive.gpg"
        echo "Pin-Priority: 600"
    } > test.sources
    echo hello > packages.txt
    a2o lock packages.txt --sources test.sources --cache cache -o l.json >/dev/null
    assert_file_has_content l.json "{\"name\": \"main-archive\", \"suite\": \"bookworm\".*\"pin-priority\": 600"
    assert_file_has_content l.json "{\"name\": \"hello\".*\"source\": \"main-archive\""
    repo_sources_line "$HTTPD_URL/good" bookworm archive "name=other-name pin-priority=700" > s.list
    a2o lock packages.txt --sources s.list --cache cache -o l2.json >/dev/null
    assert_file_has_content l2.json "\"sources\": \[\"other-name\"\],"
    assert_file_has_content l2.json "\"pin-priority\": 700"
'

test_expect_success 'Acquire-By-Hash: yes fetches the index by its hash' '
    copy_repo byhash
    repo_dists "$SRV/byhash" bookworm amd64 "Acquire-By-Hash: yes"
    repo_sign "$SRV/byhash" bookworm archive
    rm "$SRV/byhash/dists/bookworm/main/binary-amd64/Packages.xz"
    sources_for byhash
    echo hello > packages.txt
    : > "$HTTPD_LOG"
    a2o lock packages.txt --sources sources.list --cache cache >/dev/null
    assert_file_has_content "$HTTPD_LOG" "^/byhash/dists/bookworm/main/binary-amd64/by-hash/SHA256/[0-9a-f]\{64\}$"
'

test_expect_success 'an archive that keeps arch:all packages in binary-all has both indices read' '
    copy_repo withall
    repo_deb "$SRV/withall" hello-data 1.0 all
    repo_deb "$SRV/withall" hello 1.0 amd64 "Depends: libfoo (>= 2), hello-data"
    repo_dists "$SRV/withall" bookworm "amd64 all"
    repo_sign "$SRV/withall" bookworm archive
    assert_not_file_has_content "$SRV/withall/dists/bookworm/main/binary-amd64/Packages" "^Package: hello-data"
    sources_for withall
    echo hello > packages.txt
    : > "$HTTPD_LOG"
    a2o lock packages.txt --sources sources.list --cache cache -o l.json >/dev/null
    assert_file_has_content "$HTTPD_LOG" "^/withall/dists/bookworm/main/binary-all/Packages.xz$"
    assert_file_has_content l.json "{\"name\": \"hello-data\", \"version\": \"1.0\", \"architecture\": \"all\""
    assert_file_has_content l.json "\"architectures\": \[\"amd64\", \"all\"\]"
'

test_expect_success 'without InRelease, Release is checked against Release.gpg' '
    copy_repo detached
    rm "$SRV/detached/dists/bookworm/InRelease"
    sources_for detached
    echo hello > packages.txt
    : > "$HTTPD_LOG"
    a2o lock packages.txt --sources sources.list --cache cache -o l.json >/dev/null
    assert_file_has_content "$HTTPD_LOG" "^/detached/dists/bookworm/Release.gpg$"
    assert_file_has_content l.json "\"inrelease-sha256\": \"$(sha256sum < "$SRV/detached/dists/bookworm/Release" | cut -d" " -f1)\""
'

test_expect_success 'a tampered InRelease is refused and the existing lockfile is untouched' '
    good_lock
    copy_repo tampered
    sed -i "s/^Components: main$/Components: main contrib/" "$SRV/tampered/dists/bookworm/InRelease"
    sources_for tampered
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json
    assert_one_line err
    assert_file_has_content err "InRelease carries a bad signature"
    cmp before.lock.json out.lock.json
'

test_expect_success 'a tampered Release next to Release.gpg is refused' '
    good_lock
    copy_repo tampered2
    rm "$SRV/tampered2/dists/bookworm/InRelease"
    echo "Label: changed" >> "$SRV/tampered2/dists/bookworm/Release"
    sources_for tampered2
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json
    assert_file_has_content err "Release carries a bad signature"
    cmp before.lock.json out.lock.json
'

test_expect_success 'a Release signed by another key than Signed-By is refused' '
    good_lock
    copy_repo wrongkey
    repo_sign "$SRV/wrongkey" bookworm other
    sources_for wrongkey archive
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json
    assert_one_line err
    assert_file_has_content err "a signature by an unknown key"
    cmp before.lock.json out.lock.json
'

test_expect_success 'an unsigned Release is refused' '
    copy_repo unsigned
    rm "$SRV/unsigned/dists/bookworm/InRelease" "$SRV/unsigned/dists/bookworm/Release.gpg"
    sources_for unsigned
    echo hello > packages.txt
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache
    assert_file_has_content err "no InRelease, no signed Release"
'

test_expect_success 'a Valid-Until in the past is refused' '
    good_lock
    copy_repo stale
    repo_dists "$SRV/stale" bookworm amd64 "Valid-Until: Sat, 01 Jan 2000 00:00:00 UTC"
    repo_sign "$SRV/stale" bookworm archive
    sources_for stale
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json
    assert_file_has_content err "expired (Valid-Until: Sat, 01 Jan 2000 00:00:00 UTC)"
    cmp before.lock.json out.lock.json
    repo_dists "$SRV/stale" bookworm amd64 "Valid-Until: Fri, 01 Jan 2100 00:00:00 UTC"
    repo_sign "$SRV/stale" bookworm archive
    a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json >/dev/null
'

test_expect_success 'check-valid-until=no (one-line and deb822) accepts an expired Release, as apt does; a bad value is an error' '
    good_lock
    copy_repo stale
    repo_dists "$SRV/stale" bookworm amd64 "Valid-Until: Sat, 01 Jan 2000 00:00:00 UTC"
    repo_sign "$SRV/stale" bookworm archive
    repo_sources_line "$HTTPD_URL/stale" bookworm archive check-valid-until=no > sources.list
    a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json >/dev/null
    grep -q "\"hello\"" out.lock.json
    printf "Types: deb\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: %s\nCheck-Valid-Until: no\n" \
        "$HTTPD_URL/stale" "$SCRATCH/keys/archive.gpg" > stale.sources
    a2o lock packages.txt --sources stale.sources --cache cache2 -o out2.lock.json >/dev/null
    diff <(grep -v sources-file out.lock.json) <(grep -v sources-file out2.lock.json)
    sed -i "s/^Check-Valid-Until: no/Check-Valid-Until: maybe/" stale.sources
    expect_failure err a2o lock packages.txt --sources stale.sources --cache cache2 -o out3.lock.json
    assert_file_has_content err "stale.sources:1: Check-Valid-Until must be \"yes\" or \"no\", not \"maybe\""
    test ! -e out3.lock.json
'

test_expect_success 'a signature by an expired key is refused' '
    repo_key expired 1d 20200101T000000
    copy_repo expiredkey
    REPO_SIGN_TIME=20200101T120000 repo_sign "$SRV/expiredkey" bookworm expired
    sources_for expiredkey expired
    echo hello > packages.txt
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache
    assert_file_has_content err "a signature by an expired key"
'

test_expect_success 'a signature by a revoked key is refused' '
    repo_key revoked
    copy_repo revokedkey
    repo_sign "$SRV/revokedkey" bookworm revoked
    sources_for revokedkey revoked
    echo hello > packages.txt
    a2o lock packages.txt --sources sources.list --cache cache >/dev/null
    repo_revoke revoked
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache
    assert_file_has_content err "a signature by a revoked key"
'

test_expect_success 'a Release for another suite than the one asked for is refused' '
    copy_repo moved
    mv "$SRV/moved/dists/bookworm" "$SRV/moved/dists/trixie"
    sources_for moved archive trixie
    echo hello > packages.txt
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache
    assert_one_line err
    assert_file_has_content err "is for suite \"bookworm\" (codename \"bookworm\"), not \"trixie\""
'

test_expect_success 'a file:// source works like an http one' '
    echo "deb [signed-by=$SCRATCH/keys/archive.gpg] file://$G bookworm main" > file.list
    echo hello > packages.txt
    a2o lock packages.txt --sources file.list --cache cache -o file.json >/dev/null
    sources_for good
    a2o lock packages.txt --sources sources.list --cache cache -o http.json >/dev/null
    diff <(grep -v sources-file file.json) <(grep -v sources-file http.json)
'

test_expect_success 'transient server errors are retried; a truncated download is an error' '
    repo_sources_line "$HTTPD_URL/fault/flaky-1/good" bookworm archive > flaky.list
    echo hello > packages.txt
    a2o lock packages.txt --sources flaky.list --cache fresh -o flaky.json >/dev/null
    assert_file_has_content flaky.json "\"name\": \"hello\""
    repo_sources_line "$HTTPD_URL/fault/truncate/good" bookworm archive > truncated.list
    expect_failure err a2o lock packages.txt --sources truncated.list --cache fresh2
    assert_one_line err
    assert_file_has_content err "source \"bookworm\""
'

test_expect_success 'a Packages index whose hash does not match the Release is refused' '
    good_lock
    copy_repo badindex
    d="$SRV/badindex/dists/bookworm/main/binary-amd64"
    echo "Package: evil" > "$d/Packages"
    for c in xz gz; do cp "$G/dists/bookworm/main/binary-amd64/Packages.$c" "$d/Packages.$c"; done
    printf "Package: evil\nVersion: 1\n" | xz > "$d/Packages.xz"
    sources_for badindex
    expect_failure err a2o lock packages.txt --sources sources.list --cache fresh-cache -o out.lock.json
    assert_one_line err
    assert_file_has_content err "source \"bookworm\": .*Packages.xz"
    assert_file_has_content err "sha256\|size"
    cmp before.lock.json out.lock.json
    [ -z "$(ls fresh-cache 2>/dev/null)" ] || fail "a bad index was left in the cache"
'

test_expect_success 'a package no source has is an error naming it, and the lockfile is untouched' '
    good_lock
    printf "hello\nno-such-package\n" > packages.txt
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json
    assert_one_line err
    assert_file_has_content err "no-such-package"
    cmp before.lock.json out.lock.json
'

test_expect_success 'an unsatisfiable dependency fails in apt-like words, and the lockfile is untouched' '
    good_lock
    printf "broken\n" > packages.txt
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json
    assert_one_line err
    assert_file_has_content err "broken"
    assert_file_has_content err "libfoo"
    cmp before.lock.json out.lock.json
'

test_expect_success 'two sources with overlapping packages: the higher version wins unless Pin-Priority says otherwise' '
    { repo_sources_line "$HTTPD_URL/good" bookworm archive
      repo_sources_line "$HTTPD_URL/extra" extra other; } > two.list
    printf "hello\nbroken\n" > packages.txt
    a2o lock packages.txt --sources two.list --cache cache -o two.json >/dev/null
    assert_file_has_content two.json "{\"name\": \"libfoo\", \"version\": \"3.0\", \"architecture\": \"amd64\", \"source\": \"extra\""
    assert_file_has_content two.json "\"sources\": \[\"bookworm\", \"extra\"\],"
    assert_file_has_content two.json "\"fingerprint\": \"$(cat "$SCRATCH/keys/other.fpr")\""
    { repo_sources_line "$HTTPD_URL/good" bookworm archive "pin-priority=990"
      repo_sources_line "$HTTPD_URL/extra" extra other; } > pinned.list
    echo hello > packages.txt
    a2o lock packages.txt --sources pinned.list --cache cache -o pinned.json >/dev/null
    assert_file_has_content pinned.json "{\"name\": \"libfoo\", \"version\": \"2.0\", \"architecture\": \"amd64\", \"source\": \"bookworm\""
'

test_expect_success 'a source without Signed-By is checked against the shipped keyrings' '
    echo "deb $HTTPD_URL/good bookworm main" > sources.list
    echo hello > packages.txt
    mkdir keyrings
    APT2OSTREE_KEYRINGS=$PWD/keyrings expect_failure err a2o lock packages.txt --sources sources.list --cache cache
    assert_file_has_content err "holds no keyring"
    cp "$SCRATCH/keys/other.gpg" keyrings/
    APT2OSTREE_KEYRINGS=$PWD/keyrings expect_failure err a2o lock packages.txt --sources sources.list --cache cache
    assert_file_has_content err "unknown key"
    cp "$SCRATCH/keys/archive.asc" keyrings/
    APT2OSTREE_KEYRINGS=$PWD/keyrings a2o lock packages.txt --sources sources.list --cache cache >/dev/null
    assert_has_file packages.lock.json
'

test_expect_success 'without --sources the host apt configuration is read, both formats, and --arch defaults to the host' '
    mkdir -p root/etc/apt/sources.list.d
    repo_sources_line "$HTTPD_URL/good" bookworm archive > root/etc/apt/sources.list
    { echo "Types: deb"; echo "URIs: $HTTPD_URL/extra"; echo "Suites: extra"
      echo "Components: main"; echo "Signed-By: $SCRATCH/keys/other.gpg"; } > root/etc/apt/sources.list.d/x.sources
    echo "deb http://127.0.0.1:1/ignored sid main" > root/etc/apt/sources.list.d/ignored.list.disabled
    echo hello > packages.txt
    APT2OSTREE_APT_ROOT=$PWD/root a2o lock packages.txt --cache cache >/dev/null
    assert_file_has_content packages.lock.json "\"sources\": \[\"bookworm\", \"extra\"\],"
    assert_file_has_content packages.lock.json "\"sources-file\": null"
    assert_file_has_content packages.lock.json "\"architecture\": \"$(dpkg --print-architecture)\""
    cp packages.lock.json before.json
    APT2OSTREE_APT_ROOT=$PWD/root a2o lock --update packages.lock.json --cache cache >/dev/null
    cmp before.json packages.lock.json
'

test_expect_success 'without gpgv a signed source is one line naming the package to install, and the lockfile is untouched' '
    good_lock
    mkdir -p nogpgv
    for f in /usr/bin/* /bin/* /usr/sbin/* /sbin/*; do
        case ${f##*/} in gpgv) ;; *) [ -e "nogpgv/${f##*/}" ] || ln -s "$f" "nogpgv/${f##*/}" ;; esac
    done
    PATH=$PWD/nogpgv expect_failure err a2o lock packages.txt --sources sources.list --cache cache -o out.lock.json
    assert_one_line err
    assert_file_has_content err "InRelease: cannot check its signature: .*(apt-get install gpgv)"
    cmp before.lock.json out.lock.json
'

test_expect_success '--mirror fetches a named source from another URI and is not recorded' '
    good_lock
    cp -a "$G" "$SRV/mirror-copy"
    : > "$HTTPD_LOG"
    a2o lock packages.txt --sources sources.list --cache cache -o m.json --mirror bookworm=$HTTPD_URL/mirror-copy >/dev/null
    assert_file_has_content "$HTTPD_LOG" "^/mirror-copy/dists/bookworm/InRelease$"
    cmp before.lock.json m.json
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache --mirror nosuch=$HTTPD_URL/x
    assert_file_has_content err "no source named \"nosuch\""
'

test_expect_success 'several URIs of one source are tried in order: a dead first one falls back to the next' '
    good_lock
    printf "Types: deb\nURIs: http://127.0.0.1:9/dead %s\nSuites: bookworm\nComponents: main\nSigned-By: %s\n" \
        "$HTTPD_URL/good" "$SCRATCH/keys/archive.gpg" > two.sources
    a2o lock packages.txt --sources two.sources --cache cache-two -o two.json >/dev/null
    diff <(grep -v sources-file before.lock.json) <(grep -v sources-file two.json)
    a2o lock packages.txt --sources sources.list --cache cache-m -o m2.json \
        --mirror bookworm=http://127.0.0.1:9/dead --mirror bookworm=$HTTPD_URL/good >/dev/null
    cmp before.lock.json m2.json
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache-m -o m3.json \
        --mirror bookworm=http://127.0.0.1:9/dead --mirror bookworm=$HTTPD_URL/nothing-here
    assert_one_line err
    assert_file_has_content err "none of its 2 URIs serves its Release"
    assert_file_has_content err "127.0.0.1:9/dead"
    assert_file_has_content err "nothing-here"
    test ! -e m3.json
'

test_expect_success 'URIs are written only with --record-uris, which --update keeps' '
    sources_for good
    echo hello > packages.txt
    a2o lock packages.txt --sources sources.list --cache cache --record-uris -o uris.json >/dev/null
    assert_file_has_content uris.json "\"date\": \"[^\"]*\", \"uri\": \"$HTTPD_URL/good\"}"
    assert_file_has_content uris.json "\"record-uris\": true"
    cp uris.json before.json
    a2o lock --update uris.json --cache cache >/dev/null
    cmp before.json uris.json
    a2o lock packages.txt --sources sources.list --cache cache -o plain.json >/dev/null
    assert_not_file_has_content plain.json "uri"
'

test_expect_success 'a source that does not carry the architecture is an error naming it' '
    sources_for good
    echo hello > packages.txt
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache --arch arm64
    assert_one_line err
    assert_file_has_content err "main/binary-arm64/Packages"
'

test_expect_success 'usage errors exit with status 2' '
    echo hello > packages.txt
    set +e
    a2o lock 2>err; [ $? -eq 2 ] || fail "no argument"
    a2o lock packages.txt --variant nosuch 2>err; [ $? -eq 2 ] || fail "bad variant"
    assert_file_has_content err "expected essential|"
    a2o lock --update x.json --variant minbase 2>err; [ $? -eq 2 ] || fail "--update with --variant"
    a2o lock packages.txt --merged-usr maybe 2>err; [ $? -eq 2 ] || fail "bad --merged-usr"
    set -e
'

test_expect_success 'a damaged lockfile given to --update is a one-line error naming it' '
    echo "{\"format\": 1}" > bad.json
    expect_failure err a2o lock --update bad.json
    assert_one_line err
    assert_file_has_content err "lockfile bad.json: .*request"
    echo "{\"format\": 99}" > future.json
    expect_failure err a2o lock --update future.json
    assert_file_has_content err "format 99"
'

test_expect_success 'a missing package list or sources file is a one-line error naming it' '
    expect_failure err a2o lock nosuch.txt
    assert_file_has_content err "nosuch.txt"
    echo hello > packages.txt
    expect_failure err a2o lock packages.txt --sources nosuch.list
    assert_file_has_content err "nosuch.list"
    echo "deb-invalid x y" > bad.list
    expect_failure err a2o lock packages.txt --sources bad.list
    assert_file_has_content err "bad.list:1"
'

test_expect_success 'merged-usr follows the Release: Debian 12 and Ubuntu 20.10 on, not before' '
    echo hello > packages.txt
    for case in "Debian 11.9 false" "Debian 12.5 true" "Ubuntu 20.04 false" "Ubuntu 22.04 true" "Other 99 false"; do
        set -- $case
        copy_repo "origin-$1-$2"
        REPO_ORIGIN=$1 repo_dists "$SRV/origin-$1-$2" bookworm amd64 "Version: $2"
        repo_sign "$SRV/origin-$1-$2" bookworm archive
        sources_for "origin-$1-$2"
        a2o lock packages.txt --sources sources.list --cache cache -o l.json >/dev/null
        assert_file_has_content l.json "^  \"merged-usr\": $3,"
        assert_file_has_content l.json "\"origin\": \"$1\", \"version\": \"$2\""
    done
'

test_expect_success '--merged-usr overrides what the Release implies' '
    sources_for good
    echo hello > packages.txt
    a2o lock packages.txt --sources sources.list --cache cache -o auto.json >/dev/null
    assert_file_has_content auto.json "^  \"merged-usr\": false,"
    a2o lock packages.txt --sources sources.list --cache cache --merged-usr yes -o yes.json >/dev/null
    assert_file_has_content yes.json "^  \"merged-usr\": true,"
    assert_file_has_content yes.json "\"merged-usr\": \"yes\""
'

test_expect_success 'lock --components gives every source those components, as mmdebstrap does, and --update keeps them' '
    # a copy of the good archive with a contrib component holding one package
    repo_deb "$SCRATCH/contrib-src" contribonly 1.0 amd64
    repo_dists "$SCRATCH/contrib-src" bookworm amd64
    copy_repo comp
    cp "$SCRATCH/contrib-src"/pool/main/*.deb "$SRV/comp/pool/main/"
    mkdir -p "$SRV/comp/dists/bookworm/contrib"
    cp -r "$SCRATCH/contrib-src/dists/bookworm/main/binary-amd64" "$SRV/comp/dists/bookworm/contrib/"
    (cd "$SRV/comp" && apt-ftparchive -o APT::FTPArchive::Release::Suite=bookworm \
        -o APT::FTPArchive::Release::Codename=bookworm -o APT::FTPArchive::Release::Architectures=amd64 \
        -o APT::FTPArchive::Release::Components="main contrib" -o APT::FTPArchive::Md5=false \
        -o APT::FTPArchive::SHA1=false -o APT::FTPArchive::SHA512=false \
        release dists/bookworm > "$SCRATCH/comp-Release" && mv "$SCRATCH/comp-Release" dists/bookworm/Release)
    repo_sign "$SRV/comp" bookworm archive
    sources_for comp
    printf "hello\ncontribonly\n" > packages.txt
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache
    assert_file_has_content err "contribonly"
    a2o lock packages.txt --sources sources.list --cache cache --components main,contrib > out
    assert_file_has_content packages.lock.json "\"components\": \[\"main\", \"contrib\"\]"
    grep -q "{\"name\": \"contribonly\"" packages.lock.json
    cp packages.lock.json first.lock.json
    a2o lock --update packages.lock.json --cache cache > out
    cmp first.lock.json packages.lock.json
    expect_failure err a2o lock --update packages.lock.json --components main
    assert_file_has_content err "only -o, --sources, --cache and --mirror go with it"
    expect_failure err a2o lock packages.txt --sources sources.list --cache cache --components "main,../x" -o bad.lock.json
    assert_one_line err
    assert_file_has_content err "\-\-components: \"../x\""
    assert_not_has_file bad.lock.json
'

test_done
