#!/bin/bash
# Crash safety: a command killed with SIGKILL at any instant leaves a
# repository that "ostree fsck" calls clean (unreferenced objects are fine,
# a commit that names a missing object never), and running the command again
# reaches the same commit as a run that was never killed, with no
# commitpartial marker left.  unpack-deb (the lean front and the full
# binary), combine, mod and a whole build are each killed at random
# instants within the time an unkilled run takes.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"

# How many trials of each command (A2O_CRASH_TRIALS scales them all).
SCALE=${A2O_CRASH_TRIALS:-1}

# The repositories live on a tmpfs where there is one: there syncfs returns
# at once, so a kill lands in the writing and publishing, not in a wait for
# the disk (and the file stays well under its time budget).
FAST=$SCRATCH
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
    FAST=$(mktemp -d /dev/shm/a2o-crash.XXXXXX)
    trap 'rm -rf "$FAST"; cleanup_scratch' EXIT
fi

# A package big enough for the kills to land inside the writing: a few
# thousand files, each its own object, in nested directories.
(
    cd "$SCRATCH"
    for d in $(seq 40); do
        mkdir -p "big/usr/share/big/d$d/sub"
        for f in $(seq 30); do
            echo "file $d/$f" > "big/usr/share/big/d$d/f$f"
            echo "deeper $d/$f" > "big/usr/share/big/d$d/sub/g$f"
        done
    done
    mv "$(make_deb big big 1.0 amd64 "Priority: optional")" big.deb
    mkdir -p small/usr/share/small && echo small > small/usr/share/small/README
    mv "$(make_deb small small 1.0 amd64)" small.deb
) > "$SCRATCH/log" 2>&1 || { cat "$SCRATCH/log"; echo "Bail out! cannot build the test packages"; exit 1; }

# fsck_after_kill REPO: ostree fsck finds no corruption, and even the
# commits a killed run left marked partial name no missing object (checked
# on a copy without the markers, which fsck would otherwise skip).
fsck_after_kill () {
    # Killed before the repository existed: libostree calls a directory a
    # repository once it has objects/; the rerun finishes one left without.
    [ -d "$1/objects" ] || return 0
    ostree --repo="$1" fsck > fsck.out 2>&1 || { cat fsck.out; fail "fsck of $1 after a kill"; }
    ls "$1"/state/ | grep -q commitpartial || return 0
    marked=$((marked + 1))
    rm -rf unmarked && cp -al "$1" unmarked && rm -f unmarked/state/*.commitpartial
    ostree --repo=unmarked fsck > fsck.out 2>&1 \
        || { cat fsck.out; fail "a commit of $1 marked partial names a missing object"; }
    rm -rf unmarked
}

# fsck_final REPO: clean, and no partial commit at all.
fsck_final () {
    ostree --repo="$1" fsck > fsck.out 2>&1 || { cat fsck.out; fail "fsck of $1 after the rerun"; }
    ! grep -q "partial" fsck.out || { cat fsck.out; fail "partial commits left in $1"; }
    ! ls "$1"/state/ | grep -q commitpartial || { ls "$1"/state; fail "commitpartial markers left in $1"; }
}

# kill_trials N PRISTINE COPY REPO REF -- CMD...: N times, with COPY a
# copy of PRISTINE (hardlinked), run CMD (which writes to the repository
# REPO) and kill it, every process of it, with SIGKILL (tests/kill-run.py);
# then fsck, run CMD again to the end, and compare REF with an unkilled
# run's commit.  Every other kill comes after a random delay within the
# time an unkilled run takes; the others once the run has put objects into
# a random number of the XX directories of objects/ (of as many as an
# unkilled run does), where a kill does harm if any.
kill_trials () {
    local n=$1 pristine=$2 copy=$3 repo=$4 ref=$5
    shift 6
    cd "$(mktemp -d "$FAST/trial.XXXXXX")"
    rm -rf "$copy" && cp -al "$pristine" "$copy"
    local before=0 t0 t1 ms made
    [ ! -d "$repo/objects" ] || before=$(find "$repo/objects" -type f | wc -l)
    t0=$(date +%s%N)
    "$@" > unkilled.out 2>&1 || { cat unkilled.out; fail "an unkilled run of $* failed"; }
    t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000000 + 1 ))
    made=$(( $(find "$repo/objects" -type f | wc -l) - before ))
    local want
    want=$(ref_commit "$repo" "$ref")
    fsck_final "$repo"
    local i killed=0 marked=0 when at
    for i in $(seq "$n"); do
        rm -rf "$copy" && cp -al "$pristine" "$copy"
        at=$(( RANDOM * 32768 + RANDOM ))
        if [ $((i % 2)) -eq 1 ] || [ ! -d "$repo/objects" ]; then
            when=start at=$(( at % ms ))
        else
            when=objects at=$(( 1 + at % (made < 256 ? made : 256) ))
        fi
        ! python3 "$TOP_SRCDIR/tests/kill-run.py" "$when" "$at" "$repo/objects" "$@" \
            || killed=$((killed + 1))
        fsck_after_kill "$repo"
        "$@" > rerun.out 2>&1 || { cat rerun.out; fail "the rerun after a kill ($when $at) failed"; }
        assert_streq "$(ref_commit "$repo" "$ref")" "$want"
        fsck_final "$repo"
    done
    echo "$killed of $n runs killed, $marked left a commit marked partial (an unkilled run: $ms ms, $made objects): $*" >> "$SCRATCH/kills"
}

# An empty repository, and one with the tree commands' inputs.
cd "$FAST"
new_repo empty
cp -al empty with-inputs
a2o --repo with-inputs unpack-deb --ref big "$SCRATCH/big.deb" > /dev/null
a2o --repo with-inputs unpack-deb --ref small "$SCRATCH/small.deb" > /dev/null

test_expect_success 'unpack-deb (the lean front) killed at any instant: fsck clean, the rerun reaches the same commit' '
    kill_trials $((8 * SCALE)) "$FAST/empty" repo repo big -- \
        "$APT2OSTREE" --repo repo unpack-deb --ref big "$SCRATCH/big.deb"
'

test_expect_success 'unpack-deb (the full binary) killed at any instant: fsck clean, the rerun reaches the same commit' '
    kill_trials $((8 * SCALE)) "$FAST/empty" repo repo big -- \
        env APT2OSTREE_LEAN=0 "$APT2OSTREE" --repo repo unpack-deb --ref big "$SCRATCH/big.deb"
'

test_expect_success 'combine killed at any instant: fsck clean, the rerun reaches the same commit' '
    kill_trials $((6 * SCALE)) "$FAST/with-inputs" repo repo image -- \
        "$APT2OSTREE" --repo repo combine --ref image big small
'

if command -v bwrap > /dev/null; then
    test_expect_success 'mod killed at any instant: fsck clean, the rerun reaches the same commit' '
        kill_trials $((6 * SCALE)) "$FAST/with-inputs" repo repo modded -- \
            "$APT2OSTREE" --repo repo mod --ref modded big -- \
            sh -c "i=0; while [ \$i -lt 1500 ]; do echo \"mod \$i\" > /work/m\$i; i=\$((i + 1)); done"
    '
else
    test_skip 'mod killed at any instant: fsck clean, the rerun reaches the same commit' \
        "bubblewrap is not installed"
fi

# A whole build (the lean unpack-deb steps, combine, stage 2 in the
# sandbox): real Debian .debs as tests/test-build.sh uses them, plus the big
# package, served on 127.0.0.1; every trial starts from an empty build
# directory.
build_ready () {
    [ "$(id -u)" = 0 ] && command -v ninja > /dev/null && command -v bwrap > /dev/null \
        && [ "$(dpkg --print-architecture)" = amd64 ] && _base_manifest_ok
}
if build_ready; then
    SRV="$SCRATCH/srv"
    base_repo "$SRV/debian"
    cp "$SCRATCH/big.deb" "$SRV/debian/pool/main/big_1.0_amd64.deb"
    repo_key archive
    repo_dists "$SRV/debian" bookworm amd64
    repo_sign "$SRV/debian" bookworm archive
    repo_serve "$SRV"
    trap '_repo_stop_agents; kill ${_httpd_pids:-} 2>/dev/null; [ "$FAST" = "$SCRATCH" ] || rm -rf "$FAST"; cleanup_scratch' EXIT
    mkdir -p "$FAST/image" "$FAST/no-build"
    (
        cd "$FAST/image" \
        && repo_sources_line "$HTTPD_URL/debian" bookworm archive > sources.list \
        && printf "%s\n" $BASE_REQUEST big > image.txt \
        && a2o lock image.txt --sources sources.list --variant custom --merged-usr yes \
               --cache cache -o image.lock.json
    ) > "$SCRATCH/lock.log" 2>&1 || { cat "$SCRATCH/lock.log"; echo "Bail out! cannot lock the image"; exit 1; }
    test_expect_success 'a whole build killed at any instant: fsck clean, the rerun reaches the same image commit' '
        kill_trials $((2 * SCALE)) "$FAST/no-build" build build/ostree image -- \
            "$APT2OSTREE" build "$FAST/image/image.lock.json"
    '
else
    test_skip 'a whole build killed at any instant: fsck clean, the rerun reaches the same image commit' \
        "needs root, ninja, bubblewrap, amd64 and the base .debs cached by tests/test-build.sh"
fi

# The markers a run leaves when it is killed between marking its commit
# partial and unmarking it, planted by hand: ours hold "apt2ostree".
# mark REPO COMMIT [CONTENT]
mark () { printf "%s" "${3-apt2ostree
}" > "$1/state/$2.commitpartial"; }

test_expect_success 'a marker of ours left on a complete commit is removed by the next run of any command, lean or full' '
    cd "$(mktemp -d "$FAST/trial.XXXXXX")"
    cp -al "$FAST/with-inputs" repo
    big=$(ref_commit repo big) small=$(ref_commit repo small)
    mark repo "$big"
    ostree --repo=repo fsck > fsck.out 2>&1
    assert_file_has_content fsck.out "1 partial commits not verified"
    a2o --repo repo unpack-deb --ref other "$SCRATCH/small.deb" > /dev/null
    assert_streq "$(ls repo/state)" ""
    mark repo "$small"
    APT2OSTREE_LEAN=0 a2o --repo repo unpack-deb --ref other2 "$SCRATCH/small.deb" > /dev/null
    assert_streq "$(ls repo/state)" ""
    mark repo "$small"
    a2o --repo repo combine --ref image big small > /dev/null
    assert_streq "$(ls repo/state)" ""
    fsck_final repo
'

test_expect_success 'a commit of ours that misses an object keeps its marker, is refused as an input, and is completed by a rerun' '
    cd "$(mktemp -d "$FAST/trial.XXXXXX")"
    cp -a "$FAST/with-inputs" repo
    big=$(ref_commit repo big)
    rm repo/refs/heads/big
    mark repo "$big"
    victim=$(find repo/objects -name "*.file" | head -n 1)
    rm "$victim"
    a2o --repo repo unpack-deb --ref other "$SCRATCH/small.deb" > /dev/null
    assert_has_file "repo/state/$big.commitpartial"
    expect_failure err a2o --repo repo combine --ref image "$big" small
    assert_file_has_content err "commit $big is partial"
    assert_not_has_file repo/refs/heads/image
    a2o --repo repo unpack-deb --ref big "$SCRATCH/big.deb" > out
    assert_streq "$(cat out)" "$big"
    assert_has_file "$victim"
    fsck_final repo
'

test_expect_success 'markers of commits a run does not write are left alone, whoever made them; a marker a live transaction holds stays' '
    cd "$(mktemp -d "$FAST/trial.XXXXXX")"
    cp -al "$FAST/with-inputs" repo
    big=$(ref_commit repo big) small=$(ref_commit repo small)
    mark repo "$big" ""
    a2o --repo repo unpack-deb --ref other "$SCRATCH/small.deb" > /dev/null
    assert_streq "$(cat "repo/state/$big.commitpartial")" ""
    rm repo/state/*
    mark repo "$small"
    python3 -c "
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(sys.argv[2], \"w\").close()
time.sleep(60)
" "repo/state/$small.commitpartial" locked &
    holder=$!
    while [ ! -e locked ]; do sleep 0.05; done
    a2o --repo repo unpack-deb --ref other2 "$SCRATCH/small.deb" > /dev/null
    assert_has_file "repo/state/$small.commitpartial"
    kill "$holder" && wait "$holder" || true
    a2o --repo repo unpack-deb --ref other3 "$SCRATCH/small.deb" > /dev/null
    assert_streq "$(ls repo/state)" ""
'

test_expect_success 'another program'"'"'s marker (a pull that failed part-way, fsck) on a commit a run writes in full is taken over and removed with its objects durable' '
    cd "$(mktemp -d "$FAST/trial.XXXXXX")"
    cp -al "$FAST/with-inputs" repo
    small=$(ref_commit repo small)
    mark repo "$small" f
    a2o --repo repo unpack-deb --ref other4 "$SCRATCH/small.deb" > /dev/null
    assert_streq "$(ref_commit repo other4)" "$small"
    assert_streq "$(ls repo/state)" ""
    fsck_final repo
'

[ ! -f "$SCRATCH/kills" ] || sed "s|^|# |; s|$SCRATCH/||g; s|$FAST/||g" "$SCRATCH/kills"
test_done
