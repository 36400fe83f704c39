#!/bin/bash
# Progress on a terminal (issue #36): a long download shows one line on
# standard error, redrawn in place, with the bytes done of the total, the
# share, the rate and the time left, as apt does: for lock's indices and
# for "unpack-deb URL".  Nothing of the kind when standard error is not a
# terminal.  The terminal is script(1)'s pseudo-terminal; the downloads are
# slow because tests/httpd.py's /fault/slow/ sends 256 KiB every 0.1 s.
#
# "build" under ninja (issue #42, point 1): on a terminal one line, redrawn
# in place, says the steps done of the steps to run and what a running step
# does now (a download's line, the package stage 2 sets up, N of M), and a
# total ends the build (steps, time, .debs fetched, the longest step); in a
# log, plain lines (ninja's and the total); plain ninja in a log says
# nothing more than ninja does.  A long cache-pull says what it has fetched.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

command -v script > /dev/null || skip_all "script (util-linux) is not installed: it gives the tests a terminal"
unset http_proxy https_proxy no_proxy

# A 3 MB package of random bytes (xz cannot shrink them) and an index as
# large (a package whose X-Padding field is 4 MB of base64 text): each takes
# about a second through /fault/slow/.
SRV="$SCRATCH/srv"
D="$SRV/debian"
mkdir -p "$D/pool/main"
(
    cd "$D/pool/main"
    mkdir -p stage/usr/share/big && head -c 3000000 /dev/urandom > stage/usr/share/big/blob
    make_deb stage big 1.0 all > /dev/null
    rm -rf stage && mkdir -p stage/usr/share/padded && echo padded > stage/usr/share/padded/file
    make_deb stage padded 1.0 all "X-Padding: $(head -c 3000000 /dev/urandom | base64 -w0)" > /dev/null
    rm -rf stage
) || { echo "Bail out! cannot build the test packages"; exit 1; }
# The builds' base (real .debs) and a package whose postinst takes a
# second, so that stage 2 is seen setting it up.
CAN_BUILD=
if [ "$(id -u)" = 0 ] && command -v ninja > /dev/null; then
    CAN_BUILD=1
    base_repo "$D"
    test_deb slowpost 1.0 "sleep 1"
fi
repo_key archive
repo_publish "$D" bookworm amd64 archive
repo_serve "$SRV"
SLOW="$HTTPD_URL/fault/slow/debian"
DEB_SHA=$(sha256sum < "$D/pool/main/big_1.0_all.deb" | cut -d' ' -f1)

# on_terminal OUT CMD...: run CMD on a pseudo-terminal (its standard input,
# output and error); what the terminal showed goes to OUT, its exit status is
# CMD's.
on_terminal () {
    local out=$1; shift
    # A terminal that can erase a line: build draws none on a "dumb" one
    # (as ninja), and whoever runs the tests may have TERM=dumb.
    TERM=xterm script -q -e -c "$(printf '%q ' "$@")" /dev/null < /dev/null > "$out"
}

# progress_lines OUT NAME: the progress lines OUT shows for file NAME, one
# line each (a line is redrawn after "\r\e[K").
progress_lines () {
    tr '\r' '\n' < "$1" | grep -a "^$(printf '\033')\[K[0-9]*% $2: " || true
}

# assert_progress OUT NAME TOTAL: OUT shows NAME's progress more than once,
# each time as "N% NAME: DONE of TOTAL, RATE/s, TIME left", and erases
# the line once the download is done.
assert_progress () {
    progress_lines "$1" "$2" > lines
    cat -v lines
    [ "$(wc -l < lines)" -ge 2 ] || fail "$1: fewer than two progress lines for $2"
    ! grep -a -v "^.\[K[0-9]*% $2: [0-9.]*[^ ]*\([kM]B\|bytes\) of $3, [0-9.]*[^ ]*\([kM]B\|bytes\)/s, [0-9hmins ]* left\$" lines \
        || fail "$1: a progress line is not N% NAME: DONE of TOTAL, RATE/s, TIME left"
    tr '\r' '\n' < "$1" > split
    local last
    last=$(grep -a -n "^.\[K[0-9]*% $2: " split | tail -n 1 | cut -d: -f1)
    sed -n "$((last + 1))p" split | grep -a -q "^$(printf '\033')\[K" \
        || fail "$1: the progress line is not erased"
}

test_expect_success 'unpack-deb URL on a terminal shows the bytes done of the total, the rate and the time left, on one line' '
    new_repo
    on_terminal tty.out "$APT2OSTREE" --repo repo unpack-deb --cache cache --ref big \
        --sha256 $DEB_SHA "$SLOW/pool/main/big_1.0_all.deb"
    assert_progress tty.out big_1.0_all.deb "3\.0[^ ]*MB"
    assert_has_file repo/refs/heads/big
'

test_expect_success 'unpack-deb URL prints no progress when standard error is not a terminal' '
    new_repo
    a2o --repo repo unpack-deb --cache cache --ref big --sha256 $DEB_SHA "$SLOW/pool/main/big_1.0_all.deb" > out 2> err
    [ ! -s err ] || { cat -v err; fail "unpack-deb wrote to standard error"; }
    assert_has_file repo/refs/heads/big
'

test_expect_success 'lock on a terminal shows the progress of its index downloads' '
    repo_sources_line "$SLOW" bookworm archive > sources.list
    echo padded > p.txt
    on_terminal tty.out "$APT2OSTREE" lock p.txt --sources sources.list --arch amd64 --cache cache
    assert_progress tty.out Packages.xz "[0-9.]*[^ ]*MB"
    assert_has_file p.lock.json
'

test_expect_success 'lock prints no progress when standard error is not a terminal' '
    repo_sources_line "$SLOW" bookworm archive > sources.list
    echo padded > p.txt
    a2o lock p.txt --sources sources.list --arch amd64 --cache cache > out 2> err
    [ ! -s err ] || { cat -v err; fail "lock wrote to standard error"; }
    assert_has_file p.lock.json
'

# build_test NAME BODY: a test that builds, skipped where stage 2 cannot run.
build_test () {
    if [ -n "$CAN_BUILD" ]; then
        test_expect_success "$1" "$2"
    else
        test_skip "$1" "stage 2 needs root and ninja"
    fi
}

B="$SCRATCH/build"
# status_lines OUT: the lines the build's status line showed, one a line
# ("\r\e[K" before each).
status_lines () {
    tr '\r' '\n' < "$1" | grep -a "^$(printf '\033')\[K\[[0-9]*/[0-9]*\] " || true
}

build_test 'build on a terminal shows what runs now under ninja (a download line, the package stage 2 sets up, N of M) and a total at the end' '
    mkdir -p "$B" && cd "$B"
    # locked from the fast URL, built from the slow one (the downloads)
    repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list
    repo_sources_line "$SLOW" bookworm archive > slow.list
    base_lock img big slowpost
    # a terminal wide enough for the longest line (on 80 columns it is cut)
    on_terminal tty.out sh -c "stty cols 200 && \"\$@\"" sh "$APT2OSTREE" build img.lock.json --sources slow.list
    status_lines tty.out > lines
    cat -v lines | sort -u | head -n 40
    grep -a -q "^.\[K\[[0-9]*/[0-9]*\] [0-9]*% [^ ]*: [0-9.]*[^ ]* of [0-9.]*[^ ]*, [0-9.]*[^ ]*/s, [0-9hmins ]* left" lines \
        || fail "no download line under ninja"
    grep -a -q "^.\[K\[[0-9]*/[0-9]*\] configure img: setting up slowpost ([0-9]* of [0-9]*)" lines \
        || fail "stage 2 did not say which package it sets up, N of M"
    ! grep -a -q "a2o " tty.out || fail "ninja'"'"'s status format shows"
    tr "\r" "\n" < tty.out | tail -n 6 | cat -v
    # (which step was the longest depends on the load of the machine: a slow
    # download can outlast stage 2, so any step may be named)
    tr "\r" "\n" < tty.out | grep -a -q "^$(printf "\033")\[Kapt2ostree build: [0-9]* steps in [0-9.]* s, 2[0-9] \.debs fetched ([0-9.]*[^ ]* \?MB); the longest: [^()]* ([0-9.]* s)\$" \
        || fail "no total at the end, on a line of its own"
    grep -a -q "^image img: commit " tty.out
'

# (The step that runs here is the bill of materials: one cheap step.)
build_test 'build in a log prints plain lines, ninja'"'"'s and a total; plain ninja in a log adds nothing' '
    cd "$B"
    a2o build img.lock.json --sources slow.list --sbom img.spdx.json > log.out 2> log.err
    cat log.out log.err
    ! grep -a -q "$(printf "[\r\033]")" log.out log.err || fail "terminal codes in a log"
    grep -a -x -q "\[1/1\] sbom img" log.out || fail "not ninja'"'"'s line"
    grep -a -q "^apt2ostree build: 1 step in [0-9.]* s$" log.out || fail "no total"
    [ ! -s log.err ] || fail "build wrote to standard error"
    rm img.spdx.json
    ninja -f build/img.ninja > ninja.out 2>&1
    cat ninja.out
    assert_streq "$(cat ninja.out)" "[1/1] sbom img"
'

test_expect_success 'cache-pull on a terminal shows the objects and bytes it has fetched, on one line it erases; in a log nothing' '
    mkdir -p tree/usr/share && head -c 3000000 /dev/urandom > tree/usr/share/blob
    rm -rf src pulled && new_repo src && new_repo pulled
    a2o --repo src import --ref tree tree > /dev/null
    a2o --repo src publish --to "$SRV/pub" tree > /dev/null
    on_terminal tty.out "$APT2OSTREE" --repo pulled cache-pull --cache-url "$HTTPD_URL/fault/slow/pub" tree
    tr "\r" "\n" < tty.out > split
    grep -a "^$(printf "\033")\[Kcache tree: " split > lines || true
    cat -v lines
    [ "$(wc -l < lines)" -ge 2 ] || fail "fewer than two progress lines"
    ! grep -a -v "^.\[Kcache tree: [0-9]* objects\?, [0-9.]*[^ ]* \?\([kM]B\|bytes\), [0-9.]*[^ ]* \?\([kM]B\|bytes\)/s ([0-9]* more known)\$" lines \
        || fail "a line is not: cache REF: N objects, SIZE, RATE/s (N more known)"
    last=$(grep -a -n "^.\[Kcache tree: " split | tail -n 1 | cut -d: -f1)
    sed -n "$((last + 1))p" split | grep -a -q "^$(printf "\033")\[K" || fail "the line is not erased"
    rm -rf pulled && new_repo pulled
    a2o --repo pulled cache-pull --cache-url "$HTTPD_URL/fault/slow/pub" tree > out 2> err
    [ ! -s err ] || { cat -v err; fail "cache-pull wrote to standard error"; }
'

test_done
