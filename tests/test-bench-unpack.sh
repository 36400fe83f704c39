#!/bin/bash
# bench/unpack.sh reports what it measured: it runs its three sides over a
# few hermetic .debs with the real binary, and, timed by a stand-in for GNU
# time that reports fixed numbers, prints each side's user + system time,
# the ratios of those numbers, and the best round's wall-clock time with
# the final sync added.  (No test here depends on how fast anything runs.)
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

command -v /usr/bin/time > /dev/null || skip_all "GNU time is not installed (tools/setup installs it)"

BENCH="$TOP_SRCDIR/bench/unpack.sh"
FIX="${SCRATCH:?}/fixtures"
mkdir -p "$FIX/debs"
(
    cd "$FIX/debs"
    for p in alpha beta gamma; do
        mkdir -p "$p/usr/share/$p"
        echo "$p" > "$p/usr/share/$p/README"
        head -c 20000 /dev/urandom > "$p/usr/share/$p/data"
        make_deb "$p" "$p" 1.0 all > /dev/null
        rm -r "$p"
    done
) > "$FIX/log" 2>&1 || { cat "$FIX/log"; echo "Bail out! cannot build the test packages"; exit 1; }

# The stand-in for GNU time (BENCH_TIME): -f FORMAT -o FILE CMD...  It runs
# CMD and writes "WALL USER SYSTEM" to FILE, chosen by the side (the
# command line names dpkg-deb, --batch or neither) and the round: each
# side's first round takes 1000 s of wall-clock time, so the second is the
# best.
cat > "$FIX/fake-time" <<'EOF'
#!/bin/bash
set -e
[ "$1" = -f ] && [ "$3" = -o ] || { echo "fake-time: usage: -f FORMAT -o FILE CMD..." >&2; exit 2; }
out=$4
shift 4
"$@"
case "$*" in
    *dpkg-deb*) side=dpkg ;;
    *--batch*) side=batch ;;
    *) side=a2o ;;
esac
state="$FAKE_TIME_STATE/$side"
round=$(( $(cat "$state" 2>/dev/null || echo 0) + 1 ))
echo "$round" > "$state"
case "$side.$round" in
    *.1) echo "1000.00 9.00 9.00" ;;
    dpkg.*) echo "4.00 3.00 1.00" ;;
    a2o.*) echo "3.00 1.50 1.50" ;;
    batch.*) echo "2.00 0.75 0.25" ;;
esac > "$out"
EOF
chmod +x "$FIX/fake-time"

# row OUTPUT LABEL: the numbers of the table row that starts with LABEL.
row () { grep "^$2" "$1" | sed "s/^$2 *//"; }

test_expect_success 'the three sides run over the .debs and the table names them all' '
    mkdir tmp
    TMPDIR=$PWD/tmp APT2OSTREE="$APT2OSTREE" ARCH=any "$BENCH" "$FIX/debs" > out 2> err
    assert_file_has_content out "^3 \.debs, .* 2 processes each, best of 1, repository fsync on"
    for side in "dpkg-deb -x, a process a package" "unpack-deb, a process a package" \
                "unpack-deb --batch, 2 processes"; do
        grep -q "^$side  *[0-9]" out || fail "no row for $side"
    done
    assert_streq "$(ls tmp)" ""
'

test_expect_success 'each side reports its best round: CPU is user + system, wall-clock includes the sync' '
    mkdir tmp state
    FAKE_TIME_STATE=$PWD/state BENCH_TIME="$FIX/fake-time" TMPDIR=$PWD/tmp APT2OSTREE="$APT2OSTREE" \
        ARCH=any ROUNDS=2 FSYNC=0 "$BENCH" "$FIX/debs" > out 2> err
    cat out
    assert_file_has_content out "best of 2, repository fsync off"
    read -r dw dc <<< "$(row out "dpkg-deb -x, a process a package")"
    read -r aw ac ar acr <<< "$(row out "unpack-deb, a process a package")"
    read -r bw bc br bcr <<< "$(row out "unpack-deb --batch, 2 processes")"
    assert_streq "$dc $ac $bc" "4.00 3.00 1.00"
    assert_streq "$acr $bcr" "0.75 0.25"
    # The second round (4, 3 and 2 s) plus a sync, which takes no less than nothing.
    awk -v d="$dw" -v a="$aw" -v b="$bw" "BEGIN { exit !(d >= 4 && d < 1000 && a >= 3 && a < 1000 && b >= 2 && b < 1000) }" \
        || fail "wall-clock times $dw $aw $bw are not the second round plus the sync"
'

test_done
