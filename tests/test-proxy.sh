#!/bin/bash
# Proxies (issue #36): lock and build go through the proxy that apt's
# configuration (apt.conf.d under $APT2OSTREE_APT_ROOT) or the environment
# names, in apt's order, and -v says which.  tests/proxy.py logs every
# request it forwards and is the only one that can reach the name
# repo.invalid (it connects to 127.0.0.1 for it): a run from
# http://repo.invalid:PORT/ that works went through it.  libcurl proxies
# 127.0.0.1 when told to (the first direct-connection test shows it), so a
# run from 127.0.0.1 that the proxy never saw was direct by our choice.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

# The settings of whoever runs the tests are not the tests'.
unset http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY all_proxy ALL_PROXY APT_CONFIG

base_archive
repo_publish "$D" bookworm amd64 archive
repo_serve "$SRV"
start_proxy repo.invalid=127.0.0.1
PORT=${HTTPD_URL##*:}
NAMED="http://repo.invalid:$PORT/debian"    # reachable through the proxy only
LOOP="$HTTPD_URL/debian"                    # reachable directly too
CAN_BUILD=yes
[ "$(id -u)" = 0 ] && command -v ninja > /dev/null || CAN_BUILD=

# apt_conf FILE TEXT: FILE (e.g. apt.conf.d/01proxy) of the apt
# configuration the test's commands read ($PWD/root/etc/apt).
apt_conf () {
    mkdir -p "root/etc/apt/$(dirname "$1")"
    printf '%s\n' "$2" > "root/etc/apt/$1"
}

# mark_logs: later, served and proxied count the requests made since.
mark_logs () {
    served_before=$(wc -l < "$HTTPD_LOG")
    proxied_before=$(wc -l < "$PROXY_LOG")
}
served () { tail -n +$((served_before + 1)) "$HTTPD_LOG" | wc -l; }
proxied () { tail -n +$((proxied_before + 1)) "$PROXY_LOG" | wc -l; }

# all_through_proxy: the server answered requests since mark_logs, and
# each of them came through the proxy, for repo.invalid.
all_through_proxy () {
    local n
    n=$(served)
    [ "$n" -gt 0 ] || fail "the server saw no request"
    assert_streq "$(proxied)" "$n"
    tail -n +$((proxied_before + 1)) "$PROXY_LOG" > proxied.log
    assert_not_file_has_content proxied.log "^NOT-PROXIED"
    ! grep -v "^GET http://repo.invalid:$PORT/debian/" proxied.log || fail "requests for another URL"
}

# none_through_proxy: the server answered requests since mark_logs, and
# the proxy saw none.
none_through_proxy () {
    [ "$(served)" -gt 0 ] || fail "the server saw no request"
    assert_streq "$(proxied)" 0
}

# lock_from URI [ARGS]: lock the base from URI with -v into base.lock.json
# (fresh index cache); -v's lines in lock.err.
lock_from () {
    local uri=$1; shift
    repo_sources_line "$uri" bookworm archive > sources.list
    printf '%s\n' $BASE_REQUEST > base.txt
    a2o lock -v base.txt --sources sources.list --arch amd64 --variant custom --merged-usr yes \
        --cache cache -o base.lock.json "$@" > lock.out 2> lock.err
    local rc=$?
    cat lock.err
    return $rc
}

# build_locked: build base.lock.json with -v (every .deb downloaded: a
# fresh build directory); -v's lines in build.err.
build_locked () {
    a2o build -v base.lock.json --builddir build > build.out 2> build.err \
        || { cat build.out build.err; return 1; }
    grep '^apt2ostree build: source' build.err
    assert_has_file build/ostree/refs/heads/base
}

# lock_and_build URI CHECK: lock from URI then build, each followed by
# CHECK (all_through_proxy or none_through_proxy).
lock_and_build () {
    mark_logs
    lock_from "$1"
    $2
    [ -n "$CAN_BUILD" ] || { say "build not run: it needs root and ninja"; return 0; }
    mark_logs
    build_locked
    $2
}

# both_say LINE: lock -v said LINE, and so did build -v when it ran.
both_say () {
    assert_file_has_content lock.err "^apt2ostree lock: $1\$"
    [ -z "$CAN_BUILD" ] || assert_file_has_content build.err "^apt2ostree build: $1\$"
}

test_expect_success 'lock and build go through the proxy Acquire::http::Proxy names in apt.conf.d, and -v names it' '
    apt_conf apt.conf.d/01proxy "Acquire::http::Proxy \"$PROXY_URL/\";"
    export APT2OSTREE_APT_ROOT=$PWD/root
    lock_and_build "$NAMED" all_through_proxy
    want="source bookworm: $NAMED: proxy $PROXY_URL/ (Acquire::http::Proxy in $PWD/root/etc/apt/apt.conf.d/01proxy:1)"
    both_say "$want"
'

test_expect_success 'lock and build go through the proxy http_proxy names, and -v says so' '
    export APT2OSTREE_APT_ROOT=$PWD/root http_proxy=$PROXY_URL
    lock_and_build "$NAMED" all_through_proxy
    want="source bookworm: $NAMED: proxy $PROXY_URL (http_proxy in the environment)"
    both_say "$want"
'

test_expect_success 'lock and build go through the per-host Acquire::http::Proxy::HOST (nested syntax, comments), and -v names it' '
    apt_conf apt.conf.d/50proxy "// the mirror goes through the cache
Acquire {
  http {
    Proxy::other.invalid \"http://127.0.0.1:9/\";   /* another host: not used */
    Proxy::repo.invalid \"$PROXY_URL\";
  };
};"
    export APT2OSTREE_APT_ROOT=$PWD/root
    lock_and_build "$NAMED" all_through_proxy
    want="proxy $PROXY_URL (Acquire::http::Proxy::repo.invalid in $PWD/root/etc/apt/apt.conf.d/50proxy:5)"
    both_say "source bookworm: $NAMED: $want"
'

test_expect_success 'a source on 127.0.0.1 goes through a configured proxy like any other (libcurl proxies loopback)' '
    apt_conf apt.conf.d/01proxy "Acquire::http::Proxy \"$PROXY_URL\";"
    export APT2OSTREE_APT_ROOT=$PWD/root
    mark_logs
    lock_from "$LOOP"
    [ "$(served)" -gt 0 ]
    assert_streq "$(proxied)" "$(served)"
'

test_expect_success 'with no_proxy naming the host, lock and build connect directly, whatever apt.conf and http_proxy say' '
    apt_conf apt.conf.d/01proxy "Acquire::http::Proxy \"$PROXY_URL\";"
    export APT2OSTREE_APT_ROOT=$PWD/root http_proxy=$PROXY_URL no_proxy=localhost,127.0.0.1
    lock_and_build "$LOOP" none_through_proxy
    want="source bookworm: $LOOP: direct (no_proxy in the environment covers 127.0.0.1)"
    both_say "$want"
'

test_expect_success 'with Acquire::http::Proxy::HOST "DIRECT", lock and build connect directly, and -v says why' '
    apt_conf apt.conf.d/01proxy "Acquire::http::Proxy \"$PROXY_URL\";
Acquire::http::Proxy::127.0.0.1 \"DIRECT\";"
    export APT2OSTREE_APT_ROOT=$PWD/root http_proxy=$PROXY_URL
    lock_and_build "$LOOP" none_through_proxy
    want="source bookworm: $LOOP: direct (Acquire::http::Proxy::127.0.0.1 is DIRECT in $PWD/root/etc/apt/apt.conf.d/01proxy:2)"
    both_say "$want"
'

DEAD="http://127.0.0.1:9/"    # nothing listens there: a run through it fails

test_expect_success 'apt.conf.d is read by name (no extension or .conf), a later file wins, files apt ignores are ignored, apt.conf beats http_proxy' '
    apt_conf apt.conf.d/10dead "Acquire::http::Proxy \"$DEAD\";"
    apt_conf apt.conf.d/20proxy.conf "Acquire::http::Proxy \"$PROXY_URL\";"
    apt_conf apt.conf.d/90proxy.disabled "Acquire::http::Proxy \"$DEAD\";"
    apt_conf apt.conf.d/91proxy.conf.dpkg-old "Acquire::http::Proxy \"$DEAD\";"
    export APT2OSTREE_APT_ROOT=$PWD/root http_proxy=$DEAD
    mark_logs
    lock_from "$NAMED"
    all_through_proxy
    assert_file_has_content lock.err "proxy $PROXY_URL (Acquire::http::Proxy in $PWD/root/etc/apt/apt.conf.d/20proxy.conf:1)"
'

test_expect_success 'apt.conf is read after apt.conf.d: its settings and #clear win' '
    apt_conf apt.conf.d/10dead "Acquire::http::Proxy \"$DEAD\";
Acquire::http::Proxy::repo.invalid \"$DEAD\";"
    apt_conf apt.conf "#clear Acquire::http::Proxy::repo.invalid;
acquire::HTTP::proxy \"$PROXY_URL\";"
    export APT2OSTREE_APT_ROOT=$PWD/root
    mark_logs
    lock_from "$NAMED"
    all_through_proxy
    assert_file_has_content lock.err "proxy $PROXY_URL (acquire::HTTP::proxy in $PWD/root/etc/apt/apt.conf:2)"
'

test_expect_success 'https:// sources take Acquire::https::Proxy first, then Acquire::http::Proxy; https_proxy over http_proxy' '
    apt_conf apt.conf.d/01proxy "Acquire::https::Proxy \"http://https-proxy.invalid:3142\";
Acquire::http::Proxy \"http://http-proxy.invalid:3142\";"
    printf "deb [trusted=yes] https://secure.invalid/debian bookworm main\n" > sources.list
    printf "hello\n" > p.txt
    APT2OSTREE_APT_ROOT=$PWD/root a2o lock -v p.txt --sources sources.list --arch amd64 --cache cache 2> err && false
    assert_file_has_content err "source bookworm: https://secure.invalid/debian: proxy http://https-proxy.invalid:3142 (Acquire::https::Proxy in"
    apt_conf apt.conf.d/01proxy "Acquire::http::Proxy \"http://http-proxy.invalid:3142\";"
    APT2OSTREE_APT_ROOT=$PWD/root a2o lock -v p.txt --sources sources.list --arch amd64 --cache cache 2> err && false
    assert_file_has_content err "https://secure.invalid/debian: proxy http://http-proxy.invalid:3142 (Acquire::http::Proxy in"
    rm root/etc/apt/apt.conf.d/01proxy
    APT2OSTREE_APT_ROOT=$PWD/root http_proxy=http://h.invalid:1 https_proxy=http://s.invalid:2 \
        a2o lock -v p.txt --sources sources.list --arch amd64 --cache cache 2> err && false
    assert_file_has_content err "https://secure.invalid/debian: proxy http://s.invalid:2 (https_proxy in the environment)"
'

# refused ERROR-PATTERN: lock from $NAMED fails with one line matching
# ERROR-PATTERN, before any request.
refused () {
    mark_logs
    if lock_from "$NAMED" > /dev/null; then fail "lock succeeded"; fi
    mv lock.err err
    assert_one_line err
    assert_file_has_content err "^apt2ostree lock: error: $1"
    assert_streq "$(served)" 0
    assert_streq "$(proxied)" 0
}

test_expect_success 'a malformed proxy setting is one error naming the file, the line and the key, before any download' '
    export APT2OSTREE_APT_ROOT=$PWD/root
    apt_conf apt.conf.d/01proxy "Acquire::http::Proxy \"ftp://cache.invalid:21/\";"
    refused "$PWD/root/etc/apt/apt.conf.d/01proxy:1: Acquire::http::Proxy: \"ftp://cache.invalid:21/\" is not a proxy URL (scheme ftp: apt takes http, https and socks5h); write .* or DIRECT\$"
    apt_conf apt.conf.d/01proxy "Acquire { http { Proxy::repo.invalid \"http://cache.invalid:port\"; }; };"
    refused "$PWD/root/etc/apt/apt.conf.d/01proxy:1: Acquire::http::Proxy::repo.invalid: \"http://cache.invalid:port\" is not a proxy URL"
    apt_conf apt.conf.d/01proxy "Acquire::http::Proxy \"$PROXY_URL\""
    refused "$PWD/root/etc/apt/apt.conf.d/01proxy:1: syntax error: the last setting has no \";\""
    rm root/etc/apt/apt.conf.d/01proxy
    export http_proxy="http://cache.invalid:3142/path"
    refused "environment variable http_proxy: \"http://cache.invalid:3142/path\" is not a proxy URL (something after the host and port); write scheme://\\[user\\[:pass\\]@\\]host\\[:port\\]/\$"
'

test_expect_success 'build refuses a malformed proxy setting in one line before ninja runs' '
    export APT2OSTREE_APT_ROOT=$PWD/root
    lock_from "$LOOP" > /dev/null
    apt_conf apt.conf.d/01proxy "Acquire::http::Proxy \"http://cache.invalid:3142/apt/\";"
    mark_logs
    expect_failure err a2o build base.lock.json --builddir build
    assert_one_line err
    assert_file_has_content err "^apt2ostree build: error: $PWD/root/etc/apt/apt.conf.d/01proxy:1: Acquire::http::Proxy: \"http://cache.invalid:3142/apt/\" is not a proxy URL"
    assert_not_has_file build/ostree
    assert_streq "$(served)" 0
'

test_done
