#!/bin/bash
# bench/build.sh's cases and its count of slow .deb edges: the count is
# read from a ninja log written here (no test depends on how fast anything
# runs), and a case the bench does not have, or a COLD_PAIRS that is not a
# count, is refused before it starts; median_range on known ratios.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/bench/libbench.sh"

# ninja_log LINES...: a .ninja_log (v5) holding LINES, "START END OUTPUT"
# in milliseconds.
ninja_log () {
    echo '# ninja log v5'
    local l
    for l in "$@"; do
        # shellcheck disable=SC2086 # three words
        set -- $l
        printf '%s\t%s\t0\t%s\t0123456789abcdef\n' "$1" "$2" "$3"
    done
}

test_expect_success 'slow_edges counts the .deb edges of 5 s or more, the last run of each' '
    ninja_log "0 4999 build/ostree/refs/heads/deb/a/1/all/00" \
              "0 5000 build/ostree/refs/heads/deb/b/1/all/11" \
              "0 9000 build/ostree/refs/heads/deb/c/1/all/22" \
              "9000 9100 build/ostree/refs/heads/deb/c/1/all/22" \
              "0 7000 build/ostree/refs/heads/deb/d/1/all/33" \
              "0 60000 build/ostree/refs/heads/img" \
              "0 8000 build/ostree/refs/heads/stage1/img" > log
    assert_streq "$(slow_edges log)" 2
'

test_expect_success 'slow_edges says 0 when no edge took 5 s' '
    ninja_log "0 100 build/ostree/refs/heads/deb/a/1/all/00" > log
    assert_streq "$(slow_edges log)" 0
'

test_expect_success 'edge_seconds sums the matching edges, the last run of each' '
    ninja_log "0 1500 build/ostree/refs/heads/deb/a/1/all/00" \
              "0 9000 build/ostree/refs/heads/deb/b/1/all/11" \
              "9000 9250 build/ostree/refs/heads/deb/b/1/all/11" \
              "9250 12000 build/ostree/refs/heads/img" > log
    assert_streq "$(edge_seconds log "refs/heads/deb/")" 1.75
    assert_streq "$(edge_seconds log "refs/heads/img$")" 2.75
    assert_streq "$(edge_seconds log "refs/heads/none$")" 0.00
'

test_expect_success 'median_range gives the median of the ratios and their range, odd and even counts' '
    assert_streq "$(median_range 0.41 0.30 0.52)" "0.41x (0.30 to 0.52)"
    assert_streq "$(median_range 0.40 0.30 0.50 0.36)" "0.38x (0.30 to 0.50)"
    assert_streq "$(median_range 0.33)" "0.33x (0.33 to 0.33)"
'

# two_debs: cache/debs holding two .debs (xz and gzip data) and a file
# that is not one.
two_debs () {
    local p
    for p in one two; do
        mkdir -p "pkg-$p/DEBIAN" "pkg-$p/usr/share/$p"
        printf "Package: %s\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: t\n" "$p" \
            > "pkg-$p/DEBIAN/control"
        echo "$p" > "pkg-$p/usr/share/$p/file"
    done
    mkdir -p cache/debs
    dpkg-deb -Zxz --build pkg-one cache/debs/aa > /dev/null
    dpkg-deb -Zgzip --build pkg-two cache/debs/bb > /dev/null
    echo "not a .deb" > cache/debs/partial
}

test_expect_success 'extract_wall writes every .deb'"'"'s files, skips what is not a .deb, leaves nothing behind' '
    two_debs
    t=$(extract_wall cache/debs)
    awk "BEGIN { exit !($t >= 0) }" || fail "extract_wall said \"$t\""
    assert_streq "$(ls cache)" debs
    assert_streq "$(ls cache/debs | paste -sd " ")" "aa bb partial"
'

# extract_wall with a tar that records what it was given and writes the
# files where it was told.
test_expect_success 'extract_wall runs tar over each .deb, in each of two runs, and the files are written' '
    two_debs
    mkdir -p bin && cat > bin/tar <<EOF
#!/bin/sh
echo "\$*" >> "$PWD/tar.log"
/bin/tar "\$@" || exit
find "\$2" -type f >> "$PWD/written.log"
EOF
    chmod +x bin/tar
    PATH="$PWD/bin:$PATH" extract_wall cache/debs > /dev/null
    assert_streq "$(wc -l < tar.log)" 4
    assert_streq "$(grep -c "/data/aa\$" tar.log)" 2
    assert_streq "$(grep -c "/data/bb\$" tar.log)" 2
    grep -q "/root/usr/share/one/file\$" written.log || fail "the files of one.deb were not written"
    grep -q "/root/usr/share/two/file\$" written.log || fail "the files of two.deb were not written"
'

# stat LINE: a /proc/stat whose first line is LINE (user nice system idle
# iowait irq softirq steal guest guest_nice, in ticks).
stat () { printf 'cpu  %s\ncpu0 1 1 1 1 1 1 1 1 0 0\n' "$1" > stat; }

test_expect_success 'steal_since gives the share of CPU time since the mark that went to other guests' '
    stat "100 0 50 800 10 0 0 40 0 0" && mark=$(PROC_STAT=stat cpu_mark)
    assert_streq "$mark" "1000 40"
    stat "300 0 100 1300 20 0 0 280 0 0"
    assert_streq "$(PROC_STAT=stat steal_since "$mark")" 24
    stat "100 0 50 800 10 0 0 40 0 0"
    assert_streq "$(PROC_STAT=stat steal_since "$mark")" 0
'

test_expect_success 'bench/build.sh refuses a COLD_PAIRS that is not a count' '
    [ "$(id -u)" = 0 ] && command -v mmdebstrap > /dev/null || exit 0
    for bad in 0 x -1 2x; do
        ! COLD_PAIRS="$bad" bash "$TOP_SRCDIR/bench/build.sh" > out 2>&1 || fail "bench/build.sh ran with COLD_PAIRS=$bad"
        assert_file_has_content out "COLD_PAIRS: \"$bad\": expected a number of 1 or more"
    done
'

test_expect_success 'bench/build.sh refuses a case it does not have, naming the ones it has' '
    [ "$(id -u)" = 0 ] && command -v mmdebstrap > /dev/null || exit 0
    ! CASES="minbase laptop" bash "$TOP_SRCDIR/bench/build.sh" > out 2>&1 || fail "bench/build.sh ran the case laptop"
    assert_file_has_content out "CASES: \"laptop\": expected minbase, desktop or latency"
'

test_done
