#!/bin/bash
# Issue #36, point 1: a build looks each mirror up once and keeps its
# connections, whatever the number of .debs and however the graph is run
# ("apt2ostree build", plain ninja over the file "apt2ostree ninja" wrote
# with -j1 and -j8, a parent build that includes it with subninja).
# Hermetic: every command runs in a network of the test's own where only
# loopback is up; tests/dnsd.py answers the mirror's name and logs each
# lookup, tests/httpd.py serves the signed repository with persistent
# connections (HTTP/1.1, as a real mirror) and logs each connection it
# accepts.  The counts of each run are printed as TAP comments.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

skip_unless_stage2
skip_unless_private_net

# The mirror's name in the private network (.test is reserved, RFC 2606).
MIRROR_NAME=mirror.a2o.test
# The most connections one build may open to the mirror, however many
# .debs it fetches: the fetch service's connections, as configured.
MAX_CONNECTIONS=8
export APT2OSTREE_DOWNLOAD_CONNECTIONS=$MAX_CONNECTIONS
# Small packages besides the base .debs: about 40 .debs to fetch in all,
# well over MAX_CONNECTIONS, so that one connection per .deb cannot pass.
SMALL_DEBS=14

SRV="$SCRATCH/srv"
D="$SRV/debian"
many_debs_repo "$D" "$SMALL_DEBS"

private_net_start "$MIRROR_NAME"
CONNECTION_LOG="$SCRATCH/connections.log"
repo_serve --keep-alive --connection-log "$CONNECTION_LOG" "$SRV"
MIRROR_URL="http://$MIRROR_NAME:${HTTPD_URL##*:}"
W="$SCRATCH/work"
mkdir -p "$W/counts"
cd "$W" || exit 1
repo_sources_line "$MIRROR_URL/debian" bookworm archive > sources.list
printf '%s\n' $MANY_DEBS_REQUEST > image.txt

# counted NAME CMD...: CMD in the private network, from empty logs, its
# output in NAME.out; then $W/counts/NAME holds what it cost: A and AAAA
# lookups of the mirror's name, connections to the mirror, .debs fetched.
counted () {
    local name=$1; shift
    : > "$DNS_LOG"
    : > "$CONNECTION_LOG"
    : > "$HTTPD_LOG"
    in_private_net "$@" > "$name.out" 2>&1 || { cat "$name.out"; return 1; }
    echo "$(count_lines "A $MIRROR_NAME" "$DNS_LOG")" \
        "$(count_lines "AAAA $MIRROR_NAME" "$DNS_LOG")" \
        "$(wc -l < "$CONNECTION_LOG")" \
        "$(grep -c '\.deb$' "$HTTPD_LOG")" > "$W/counts/$name"
}

# report NAME: the counts of run NAME, as a TAP comment.
report () {
    local a aaaa connections debs
    if [ -f "$W/counts/$1" ] && read -r a aaaa connections debs < "$W/counts/$1"; then
        say "$1: $debs .debs fetched; lookups of $MIRROR_NAME: $a A, $aaaa AAAA; connections: $connections"
    else
        say "$1: no counts (the run failed)"
    fi
}

# assert_shared NAME: run NAME fetched every .deb of the lockfile with at
# most one lookup of the mirror's name (A query) and MAX_CONNECTIONS
# connections.
assert_shared () {
    local a aaaa connections debs
    read -r a aaaa connections debs < "$W/counts/$1"
    assert_streq "$debs .debs fetched" "$(cat "$W/debs") .debs fetched"
    assert_one_lookup "$1" "$a" "$connections" "$debs"
}


test_expect_success 'the counting itself: one curl fetching two files from the mirror makes one lookup and one connection' '
    counted curl curl -fsS -o /dev/null -o /dev/null \
        "$MIRROR_URL/debian/dists/bookworm/Release" "$MIRROR_URL/debian/dists/bookworm/InRelease"
    read -r a aaaa connections debs < "$W/counts/curl"
    assert_streq "$a lookup(s), $connections connection(s)" "1 lookup(s), 1 connection(s)"
'
report curl

test_expect_success "lock resolves about 40 packages from the mirror, by its name, in the private network" '
    cd "$W"
    counted lock "$APT2OSTREE" lock image.txt --sources sources.list --variant custom \
        --merged-usr yes --cache cache -o image.lock.json
    grep -c "\"sha256\"" image.lock.json > debs
    [ "$(cat debs)" -gt $((4 * MAX_CONNECTIONS)) ] \
        || fail "only $(cat debs) packages locked: too few to tell shared connections from one per .deb"
'
report lock
say "lock: $(cat "$W/debs" 2> /dev/null) packages in the lockfile"

test_expect_success "a cold apt2ostree build looks the mirror up once at most and opens at most $MAX_CONNECTIONS connections for all its .debs" '
    fresh_dir build
    counted build "$APT2OSTREE" build image.lock.json --builddir build
    assert_has_file build/ostree/refs/heads/image
    assert_shared build
'
report build

for jobs in 1 8; do
    test_expect_success "plain ninja -j$jobs over the file apt2ostree ninja wrote looks the mirror up once at most and opens at most $MAX_CONNECTIONS connections" '
        fresh_dir ninja-j$jobs
        in_private_net "$APT2OSTREE" ninja image.lock.json -o image.ninja --builddir build > generate.out
        counted ninja-j$jobs ninja -f image.ninja -j$jobs
        assert_has_file build/ostree/refs/heads/image
        assert_shared ninja-j$jobs
    '
    report "ninja-j$jobs"
done

# The edges' fetch service stays only while it is used (3 s idle).
test_expect_success "the fetch service a build started exits once idle, with its downloads and lists done" '
    cache=$W/build/build/cache/debs
    assert_has_file "$cache/.downloads"
    for i in $(seq 150); do
        pgrep -f "fetch-service --cache $cache" > /dev/null || break
        sleep 0.1
    done
    if pgrep -af "fetch-service --cache $cache" >&2; then
        fail "the fetch service of $cache is still running 15 s after the build"
    fi
'

test_expect_success "a parent build that includes the generated file with subninja looks the mirror up once at most and opens at most $MAX_CONNECTIONS connections" '
    fresh_dir subninja
    in_private_net "$APT2OSTREE" ninja image.lock.json -o image.ninja --subninja --builddir build \
        > generate.out
    printf "%s\n" "# The project build, with the image rules in it." "subninja image.ninja" > build.ninja
    counted subninja ninja
    assert_has_file build/ostree/refs/heads/image
    assert_shared subninja
'
report subninja

test_done
