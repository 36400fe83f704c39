#!/bin/bash
# Downloads: unpack-deb URL through the sha256-keyed cache, over HTTP from
# tests/httpd.py (with its fault injection) and file://.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

WWW="${SCRATCH:?}/www"
mkdir -p "$WWW/pool"
(
    cd "$WWW/pool"
    mkdir -p stage/usr/share/hello && echo hello > stage/usr/share/hello/greeting
    mv "$(make_deb stage hello 1.0-1 all)" hello.deb
    rm -rf stage
    echo "not a package" > broken.deb
) || { echo "Bail out! cannot build the test packages"; exit 1; }
DEB="$WWW/pool/hello.deb"
SHA=$(sha256sum "$DEB" | cut -d' ' -f1)
SIZE=$(stat -c %s "$DEB")
BROKEN_SHA=$(sha256sum "$WWW/pool/broken.deb" | cut -d' ' -f1)
start_httpd "$WWW"

# requests PATH: how many times the server was asked for PATH.
requests () { grep -c -x -F "$1" "$HTTPD_LOG" || true; }

# cache_is_clean DIR: no file under DIR at all (no partial download, no
# temporary file).
# (The fetch service's lock and log are no downloads.)
cache_is_clean () {
    [ ! -d "$1" ] || [ -z "$(find "$1" -type f ! -name '.fetch-service.*')" ] \
        || { find "$1" -type f >&2; fail "$1 is not empty"; }
}

test_expect_success 'a package is downloaded over HTTP into the cache under its sha256 and unpacked' '
    new_repo
    a2o --repo repo unpack-deb --cache cache --ref pkg --sha256 $SHA --size $SIZE "$HTTPD_URL/pool/hello.deb" > out 2> err
    cmp cache/$SHA "$DEB"
    assert_streq "$(ls cache)" "$SHA"
    ostree --repo=repo cat "$(cat out)" /usr/share/hello/greeting > greeting
    assert_file_has_content greeting "^hello$"
    [ ! -s err ]
'

test_expect_success 'the cache is build/cache/debs by default' '
    new_repo
    a2o --repo repo unpack-deb --ref pkg --sha256 $SHA "$HTTPD_URL/pool/hello.deb" > /dev/null
    cmp build/cache/debs/$SHA "$DEB"
'

test_expect_success 'a second run with the same sha256 does not ask the server again' '
    new_repo
    a2o --repo repo unpack-deb --cache cache --ref one --sha256 $SHA "$HTTPD_URL/pool/hello.deb?cachetest" > c1
    assert_streq "$(requests "/pool/hello.deb?cachetest")" 1
    a2o --repo repo unpack-deb --cache cache --ref two --sha256 $SHA "$HTTPD_URL/pool/hello.deb?cachetest" > c2
    assert_streq "$(requests "/pool/hello.deb?cachetest")" 1
    assert_streq "$(cat c2)" "$(cat c1)"
'

test_expect_success 'a ref that already holds the package is kept: no download, not even from the cache' '
    new_repo
    a2o --repo repo unpack-deb --cache cache --ref pkg --sha256 $SHA "$HTTPD_URL/pool/hello.deb?held" > c1
    before=$(mtime repo/refs/heads/pkg)
    a2o --repo repo unpack-deb --cache other-cache --ref pkg --sha256 $SHA "$HTTPD_URL/pool/hello.deb?held" > c2
    assert_streq "$(cat c2)" "$(cat c1)"
    assert_streq "$(requests "/pool/hello.deb?held")" 1
    assert_not_has_file other-cache
    assert_streq "$(mtime repo/refs/heads/pkg)" "$before"
'

test_expect_success 'without --sha256 the download is stored under the sha256 it has' '
    new_repo
    a2o --repo repo unpack-deb --cache cache --ref pkg "$HTTPD_URL/pool/hello.deb" > /dev/null
    cmp cache/$SHA "$DEB"
    assert_streq "$(ostree --repo=repo show pkg --print-metadata-key=apt2ostree.deb-sha256)" "'"'$SHA'"'"
'

test_expect_success 'a damaged file in the cache under the sha256 is replaced by a good download' '
    new_repo
    mkdir cache && echo damaged > cache/$SHA
    a2o --repo repo unpack-deb --cache cache --ref pkg --sha256 $SHA "$HTTPD_URL/pool/hello.deb" > /dev/null
    cmp cache/$SHA "$DEB"
'

test_expect_success 'temporary files of killed downloads are swept after an hour, fresh ones and the fetch service'"'"'s lock and log are left' '
    new_repo
    mkdir cache
    echo partial > cache/.fetch-OLD123 && touch -d "2 hours ago" cache/.fetch-OLD123
    echo partial > cache/.fetch-NEW123
    # the fetch service'"'"'s lock and log are not downloads, however old
    : > cache/.fetch-service.lock && touch -d "2 hours ago" cache/.fetch-service.lock
    echo said > cache/.fetch-service.log && touch -d "2 hours ago" cache/.fetch-service.log
    a2o --repo repo unpack-deb --cache cache --ref pkg --sha256 $SHA "$HTTPD_URL/pool/hello.deb" > /dev/null
    assert_not_has_file cache/.fetch-OLD123
    assert_has_file cache/.fetch-NEW123
    assert_has_file cache/.fetch-service.lock
    assert_has_file cache/.fetch-service.log
'

test_expect_success 'a file:// URL works like HTTP' '
    new_repo
    a2o --repo repo unpack-deb --cache cache --ref pkg --sha256 $SHA "file://$DEB" > /dev/null
    cmp cache/$SHA "$DEB"
'

# fetch_fails PATTERN URL [ARGS]: the download fails with a one-line error
# matching PATTERN; no ref, nothing in the cache.
fetch_fails () {
    local pattern=$1 url=$2
    shift 2
    new_repo
    expect_failure err a2o --repo repo unpack-deb --cache cache --ref broken "$@" "$url"
    assert_one_line err
    assert_file_has_content err "^apt2ostree unpack-deb: error: $pattern"
    assert_not_has_file repo/refs/heads/broken
    cache_is_clean cache
}

test_expect_success 'a truncated download is an error naming the URL; nothing stays in the cache' '
    fetch_fails "$HTTPD_URL/fault/truncate/pool/hello.deb: truncated download.*(gave up after 4 attempts)" \
        "$HTTPD_URL/fault/truncate/pool/hello.deb" --sha256 $SHA
    assert_streq "$(requests /fault/truncate/pool/hello.deb)" 4
'

test_expect_success 'a download with the wrong sha256 is an error naming both sums; nothing stays in the cache' '
    fetch_fails "$HTTPD_URL/pool/hello.deb: sha256 mismatch (expected 1111111111111111111111111111111111111111111111111111111111111111, got $SHA)" \
        "$HTTPD_URL/pool/hello.deb" --sha256 1111111111111111111111111111111111111111111111111111111111111111
'

test_expect_success 'a download of the wrong size is an error; nothing stays in the cache' '
    fetch_fails "$HTTPD_URL/pool/hello.deb: size mismatch (expected $((SIZE + 1)) bytes, got $SIZE)" \
        "$HTTPD_URL/pool/hello.deb" --sha256 $SHA --size $((SIZE + 1))
    fetch_fails "$HTTPD_URL/pool/hello.deb: the download is larger than the expected 100 bytes" \
        "$HTTPD_URL/pool/hello.deb" --sha256 $SHA --size 100
'

test_expect_success 'a server answering 503 twice is retried and the download succeeds' '
    new_repo
    a2o --repo repo unpack-deb --cache cache --ref pkg --sha256 $SHA "$HTTPD_URL/fault/flaky-2/pool/hello.deb" > /dev/null
    cmp cache/$SHA "$DEB"
    assert_streq "$(requests /fault/flaky-2/pool/hello.deb)" 3
'

test_expect_success 'a server that keeps answering 503 is an error naming the URL and the status' '
    fetch_fails "$HTTPD_URL/fault/status-503/pool/hello.deb: HTTP status 503 (gave up after 4 attempts)" \
        "$HTTPD_URL/fault/status-503/pool/hello.deb" --sha256 $SHA
    assert_streq "$(requests /fault/status-503/pool/hello.deb)" 4
'

test_expect_success 'a connection reset twice is retried and the download succeeds' '
    new_repo
    a2o --repo repo unpack-deb --cache cache --ref pkg --sha256 $SHA "$HTTPD_URL/fault/reset-2/pool/hello.deb" > /dev/null
    cmp cache/$SHA "$DEB"
    assert_streq "$(requests /fault/reset-2/pool/hello.deb)" 3
'

test_expect_success 'a connection that is always reset is an error naming the URL' '
    fetch_fails "$HTTPD_URL/fault/reset-99/pool/hello.deb: .*(gave up after 4 attempts)" \
        "$HTTPD_URL/fault/reset-99/pool/hello.deb" --sha256 $SHA
    assert_streq "$(requests /fault/reset-99/pool/hello.deb)" 4
'

test_expect_success 'a stalled transfer times out after APT2OSTREE_FETCH_TIMEOUT seconds, is retried, then fails' '
    export APT2OSTREE_FETCH_TIMEOUT=1
    fetch_fails "$HTTPD_URL/fault/hang/pool/hello.deb: .*(gave up after 4 attempts)" \
        "$HTTPD_URL/fault/hang/pool/hello.deb" --sha256 $SHA
    assert_streq "$(requests /fault/hang/pool/hello.deb)" 4
'

test_expect_success 'a 404 is not retried and says "not found"' '
    fetch_fails "$HTTPD_URL/pool/missing.deb: not found (HTTP status 404)" "$HTTPD_URL/pool/missing.deb"
    assert_streq "$(requests /pool/missing.deb)" 1
'

test_expect_success 'a missing file:// path says "no such file"' '
    fetch_fails "file:///nonexistent/x.deb: no such file" file:///nonexistent/x.deb
'

test_expect_success 'a server that does not answer is an error naming the URL' '
    port=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])")
    fetch_fails "http://127.0.0.1:$port/x.deb: .*connect" "http://127.0.0.1:$port/x.deb"
'

test_expect_success 'a download that is not a .deb is an error, and is not kept in the cache' '
    fetch_fails "$HTTPD_URL/pool/broken.deb: not a Debian package" "$HTTPD_URL/pool/broken.deb" --sha256 $BROKEN_SHA
'

test_expect_success 'no progress line when stderr is not a terminal' '
    new_repo
    a2o --repo repo unpack-deb --cache cache --ref pkg "$HTTPD_URL/pool/hello.deb" > /dev/null 2> err
    [ ! -s err ]
'

test_expect_success 'a progress line with bytes and rate when stderr is a terminal' '
    command -v script > /dev/null || exit 0
    new_repo
    big="$WWW/pool/big-$$.deb"
    mkdir -p stage/usr/share/big && head -c 3000000 /dev/urandom > stage/usr/share/big/blob
    DEB_COMPRESSION=none make_deb stage big 1.0 all > name && mv "$(cat name)" "$big"
    script -qec "$APT2OSTREE --repo repo unpack-deb --cache cache --ref pkg $HTTPD_URL/fault/slow/pool/$(basename "$big")" typescript > /dev/null
    assert_file_has_content typescript "big-$$.deb: .*B of .*B, .*/s"
'

test_done
