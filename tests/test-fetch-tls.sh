#!/bin/bash
# Issue #36, point 1, over https: a mirror signed by a CA of its own is
# trusted the way apt is told to (Acquire::https::CaInfo and its per-host
# forms, in $APT_CONFIG or apt.conf.d), and a build keeps its TLS
# connections: at most $APT2OSTREE_DOWNLOAD_CONNECTIONS for every .deb,
# HTTP/2 where the server offers it, one name lookup.
# Hermetic: every command runs in a network of the test's own where only
# loopback is up (tests/dnsd.py answers the mirror's name and logs each
# lookup); nginx serves the signed repository over TLS with a certificate
# signed by a CA made at test time, on port 443 with HTTP/2 and on 8443
# with HTTP/1.1 only, and logs each request's connection, protocol and
# status.  The counts of each run are printed as TAP comments.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
skip_unless_private_net

# The apt configuration of whoever runs the tests is not the tests'.
unset APT_CONFIG

# The mirror's name in the private network (.test is reserved, RFC 2606).
MIRROR_NAME=mirror.a2o.test
# The most connections one build may open to the mirror, however many
# .debs it fetches: the fetch service's connections, as configured.
MAX_CONNECTIONS=4
export APT2OSTREE_DOWNLOAD_CONNECTIONS=$MAX_CONNECTIONS
# About 40 .debs in all, well over MAX_CONNECTIONS, so that one connection
# per .deb cannot pass.
SMALL_DEBS=14

SRV="$SCRATCH/srv"
many_debs_repo "$SRV/debian" "$SMALL_DEBS"
private_net_start "$MIRROR_NAME"
start_tls_mirror "$SRV" "$MIRROR_NAME"
H2_URL="https://$MIRROR_NAME/debian"
H1_URL="https://$MIRROR_NAME:8443/debian"

W="$SCRATCH/work"
mkdir -p "$W/counts" "$W/no-ca"
cd "$W" || exit 1
repo_sources_line "$H2_URL" bookworm archive > sources.list
printf '%s\n' $MANY_DEBS_REQUEST > image.txt
# The configurations the runs read: none (no-ca), $APT_CONFIG naming the
# CA, apt.conf.d naming it for the mirror's host in each form apt knows.
printf 'Acquire::https::CaInfo "%s";\n' "$TLS_CA" > apt.conf
mkdir -p host-first/etc/apt/apt.conf.d host-last/etc/apt/apt.conf.d
printf 'Acquire::https::%s::CaInfo "%s";\n' "$MIRROR_NAME" "$TLS_CA" \
    > host-first/etc/apt/apt.conf.d/60mirror-ca
printf 'Acquire {\n  https {\n    CAInfo::%s "%s";\n  };\n};\n' "$MIRROR_NAME" "$TLS_CA" \
    > host-last/etc/apt/apt.conf.d/60mirror-ca
export APT2OSTREE_APT_ROOT="$W/no-ca"

# counted NAME CMD...: CMD in the private network, from empty logs, its
# output in NAME.out; then $W/counts/NAME holds what it cost: lookups of
# the mirror's name (A queries), TLS connections, requests, requests that
# failed (not 200), requests not over HTTP/2.0, .debs fetched.
counted () {
    local name=$1; shift
    : > "$DNS_LOG"
    : > "$TLS_LOG"
    in_private_net "$@" > "$name.out" 2>&1 || { cat "$name.out"; return 1; }
    echo "$(count_lines "A $MIRROR_NAME" "$DNS_LOG")" \
        "$(awk '{ print $1 }' "$TLS_LOG" | sort -u | wc -l)" \
        "$(wc -l < "$TLS_LOG")" \
        "$(awk '$5 != 200' "$TLS_LOG" | wc -l)" \
        "$(awk '$3 != "HTTP/2.0"' "$TLS_LOG" | wc -l)" \
        "$(grep -c '\.deb$' "$TLS_LOG")" > "$W/counts/$name"
}

# report NAME: the counts of run NAME, as a TAP comment.
report () {
    local a connections requests failed not_h2 debs
    if [ -f "$W/counts/$1" ] && read -r a connections requests failed not_h2 debs < "$W/counts/$1"; then
        say "$1: $requests requests ($debs .debs, $failed failed, $not_h2 not HTTP/2.0) over $connections TLS connections; lookups of $MIRROR_NAME: $a"
    else
        say "$1: no counts (the run failed)"
    fi
}

# assert_kept NAME PROTOCOL: run NAME fetched every .deb of the lockfile,
# every request succeeded, over PROTOCOL (h2: HTTP/2.0; h1: HTTP/1.1),
# with at most one lookup of the mirror's name and MAX_CONNECTIONS TLS
# connections.
assert_kept () {
    local a connections requests failed not_h2 debs
    read -r a connections requests failed not_h2 debs < "$W/counts/$1"
    assert_streq "$debs .debs fetched, $failed failed" "$(cat "$W/debs") .debs fetched, 0 failed"
    if [ "$2" = h2 ]; then
        assert_streq "$not_h2 requests not over HTTP/2.0" "0 requests not over HTTP/2.0"
    else
        assert_streq "$not_h2 requests not over HTTP/2.0" "$requests requests not over HTTP/2.0"
    fi
    assert_one_lookup "$1" "$a" "$connections" "$debs" "TLS connections"
}


test_expect_success 'without a CaInfo setting, lock fails on the certificate of the https mirror, naming its URL, and writes no lockfile' '
    cd "$W"
    expect_failure no-ca.err in_private_net "$APT2OSTREE" lock image.txt --sources sources.list \
        --variant custom --merged-usr yes --cache cache -o no-ca.lock.json
    assert_one_line no-ca.err
    assert_file_has_content no-ca.err "source \"bookworm\": $H2_URL/dists/bookworm/InRelease: .*certificate.*Acquire::https::CaInfo"
    assert_not_has_file no-ca.lock.json
'

test_expect_success 'a CaInfo naming a file that is not there is one error naming the file and line that set it, the key and the path' '
    cd "$W"
    printf "// the mirror'"'"'s CA\nAcquire::https::CaInfo \"%s\";\n" "$W/nowhere/ca.pem" > missing-ca.conf
    expect_failure missing-ca.err in_private_net env APT_CONFIG="$W/missing-ca.conf" "$APT2OSTREE" lock image.txt \
        --sources sources.list --variant custom --merged-usr yes --cache cache -o missing.lock.json
    assert_one_line missing-ca.err
    assert_file_has_content missing-ca.err "$W/missing-ca.conf:2: Acquire::https::CaInfo: $W/nowhere/ca.pem: No such file or directory"
    assert_not_has_file missing.lock.json
'

test_expect_success "lock -v with Acquire::https::CaInfo in \$APT_CONFIG resolves about 40 packages over HTTP/2 and says the CA file" '
    cd "$W"
    counted lock env APT_CONFIG="$W/apt.conf" "$APT2OSTREE" lock -v image.txt \
        --sources sources.list --variant custom --merged-usr yes --cache cache -o image.lock.json
    assert_file_has_content lock.out "$H2_URL: direct (.*); CA file $TLS_CA (Acquire::https::CaInfo in $W/apt.conf:1)"
    grep -c "\"sha256\"" image.lock.json > debs
    [ "$(cat debs)" -gt $((4 * MAX_CONNECTIONS)) ] \
        || fail "only $(cat debs) packages locked: too few to tell kept connections from one per .deb"
    read -r a connections requests failed not_h2 debs < "$W/counts/lock"
    assert_streq "$failed failed, $not_h2 not over HTTP/2.0" "0 failed, 0 not over HTTP/2.0"
'
report lock
say "lock: $(cat "$W/debs" 2> /dev/null) packages in the lockfile"

test_expect_success "a cold build from the HTTP/2 server (Acquire::https::HOST::CaInfo in apt.conf.d) keeps at most $MAX_CONNECTIONS TLS connections for all its .debs, every request HTTP/2" '
    fresh_dir build-h2
    counted build-h2 env APT2OSTREE_APT_ROOT="$W/host-first" "$APT2OSTREE" build -v image.lock.json \
        --builddir build
    assert_has_file build/ostree/refs/heads/image
    assert_file_has_content build-h2.out "CA file $TLS_CA (Acquire::https::$MIRROR_NAME::CaInfo in $W/host-first/etc/apt/apt.conf.d/60mirror-ca:1)"
    assert_kept build-h2 h2
'
report build-h2

test_expect_success "a cold build from the HTTP/1.1 server (Acquire::https::CaInfo::HOST in apt.conf.d) keeps at most $MAX_CONNECTIONS TLS connections for all its .debs" '
    fresh_dir build-h1
    repo_sources_line "$H1_URL" bookworm archive > sources.list
    counted build-h1 env APT2OSTREE_APT_ROOT="$W/host-last" "$APT2OSTREE" build image.lock.json \
        --builddir build
    assert_has_file build/ostree/refs/heads/image
    assert_kept build-h1 h1
'
report build-h1

# The fetch service a build starts reads the apt configuration once: a
# build after the configuration changed must not borrow it.
test_expect_success "a build that failed on the mirror's certificate succeeds at once when apt.conf.d names the CA (no fetch service of the old configuration is borrowed)" '
    fresh_dir ca-added
    mkdir -p root/etc/apt/apt.conf.d
    ! in_private_net env APT2OSTREE_APT_ROOT="$PWD/root" "$APT2OSTREE" build image.lock.json \
        --builddir build > before.out 2>&1 || fail "the build without the CA succeeded"
    assert_file_has_content before.out "$H2_URL/pool/main/.*certificate"
    cp "$W/host-first/etc/apt/apt.conf.d/60mirror-ca" root/etc/apt/apt.conf.d/
    in_private_net env APT2OSTREE_APT_ROOT="$PWD/root" "$APT2OSTREE" build image.lock.json \
        --builddir build > after.out 2>&1 || { cat after.out; false; }
    assert_has_file build/ostree/refs/heads/image
'

test_done
