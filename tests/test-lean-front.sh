#!/bin/bash
# The lean front of the one program (src/cmd/main.c): `apt2ostree` runs
# unpack-deb itself, without libostree, when the repository and the
# packages allow it, and otherwise loads the commands module
# (apt2ostree-commands.so, with libostree) into the same process and runs
# the command there.  What ran is watched with strace (execve, and the
# module opened or not); what the front writes is compared, object by
# object, with what the commands module writes.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"

command -v strace > /dev/null || skip_all "strace is not installed (tools/setup installs it)"
: "${TOP_BUILDDIR:?}"
MODULE="$TOP_BUILDDIR/apt2ostree-commands.so"
[ -f "$MODULE" ] || skip_all "the commands module $MODULE is not built"
MODULE=$(realpath "$MODULE")
FRONT=$(realpath "$APT2OSTREE")

FIX="${SCRATCH:?}/fixtures"
mkdir -p "$FIX"

(
    cd "$FIX"
    make_everything_debs
    # A small package with symlinks (bare repositories stage those in tmp/).
    mkdir -p links/usr/bin links/usr/share/links
    echo links > links/usr/bin/links && chmod 0755 links/usr/bin/links
    ln -s links links/usr/bin/links-relative
    ln -s /usr/bin/links links/usr/bin/links-absolute
    ln -s ../../bin links/usr/share/links/bin
    echo doc > links/usr/share/links/README
    mv "$(make_deb links links 1.0 amd64)" links.deb
    head -c $(( $(stat -c %s everything.deb) * 2 / 3 )) everything.deb > cut.deb
) > "$FIX/log" 2>&1 || { cat "$FIX/log"; echo "Bail out! cannot build the test packages"; exit 1; }

EVERYTHING="$FIX/everything.deb"
LINKS="$FIX/links.deb"
LINKS_SHA=$(sha256sum "$LINKS" | cut -d' ' -f1)

# The commit the commands module makes of links.deb (the same in every
# repository mode).
mkdir "$FIX/reference"
APT2OSTREE_LEAN=0 "$APT2OSTREE" --repo "$FIX/reference/repo" init --mode bare > /dev/null 2>&1
LINKS_COMMIT=$(APT2OSTREE_LEAN=0 "$APT2OSTREE" --repo "$FIX/reference/repo" \
    unpack-deb --ref links "$LINKS" 2> /dev/null)
[ ${#LINKS_COMMIT} = 64 ] || { echo "Bail out! the commands module cannot unpack links.deb"; exit 1; }

# execs OUT CMD...: run CMD (a program, not a shell function) under strace;
# OUT gets the name of every program it exec'd and of the commands module
# when it was opened, one a line, in order.  Returns CMD's exit status.
execs () {
    local out=$1 rc=0
    shift
    strace -f -qq -o "$out.strace" -e trace=execve,openat "$@" || rc=$?
    sed -n -e 's/^[0-9]* *execve("\([^"]*\)",.* = 0$/\1/p' \
        -e 's/^[0-9]* *openat([^"]*"\([^"]*apt2ostree-commands\.so\)",.* = [0-9][0-9]*$/\1/p' \
        "$out.strace" | while read -r p; do basename "$p"; done > "$out"
    return $rc
}

# ran_lean FILE: execs saw the front alone, and nothing else.
ran_lean () {
    [ "$(cat "$1")" = "$(basename "$FRONT")" ] \
        || { sed 's/^/  | /' "$1" >&2; fail "expected the front alone to run"; }
}

# handed_over FILE: execs saw the program, once, load the commands module
# (no second program).
handed_over () {
    [ "$(cat "$1" | tr "\n" " ")" = "$(basename "$FRONT") apt2ostree-commands.so " ] \
        || { sed 's/^/  | /' "$1" >&2; fail "expected the program to load apt2ostree-commands.so, and run nothing else"; }
}


# tmp_contents REPO: what REPO/tmp holds, less the transactions' own
# staging directories when they are empty (they are kept for the next
# transaction); a file left in one of them is listed.
tmp_contents () {
    (cd "$1/tmp" && find . -mindepth 1 \( -path "./apt2ostree-staging-*" -prune -type d -empty \) \
        -o -print | sort)
}

# refs_list REPO: every ref with its commit, sorted.
refs_list () {
    (cd "$1/refs/heads" && find . -type f | sort | while read -r r; do echo "$r $(cat "$r")"; done)
}

# --- what the front is ------------------------------------------------------

test_expect_success 'the front links neither libostree nor libcurl nor libgio; the commands module links libostree' '
    ldd "$APT2OSTREE" > front.libs
    assert_file_has_content front.libs "libglib-2.0"
    assert_not_file_has_content front.libs "libostree"
    assert_not_file_has_content front.libs "libcurl"
    assert_not_file_has_content front.libs "libgio"
    ldd "$MODULE" > full.libs
    assert_file_has_content full.libs "libostree-1"
'

test_expect_success 'a local .deb into a fresh bare repository is unpacked by the front alone (one execve, the commands module not loaded)' '
    new_repo repo bare
    execs ex "$APT2OSTREE" --repo repo unpack-deb --ref links "$LINKS" > out 2> err
    ran_lean ex
    assert_streq "$(grep -c "^[0-9]* *execve(" ex.strace)" 1
    assert_not_file_has_content ex.strace "apt2ostree-commands.so"
    assert_streq "$(cat out)" "$LINKS_COMMIT"
    assert_streq "$(ref_commit repo links)" "$LINKS_COMMIT"
    [ ! -s err ]
'

# --- the front writes what the commands module writes ---------------------------

# unpack_three WHO REPO: into REPO, with the front (WHO=front, checked to
# run alone) or the commands module (WHO=full): everything.deb, then the
# Multi-Arch: same package, then a --batch list of two without the merged-/usr
# rewrite; the commits printed go to c.REPO.
unpack_three () {
    local who=$1 r=$2 lean=
    [ "$who" = full ] && lean=0
    printf "c %s\nd/links %s\n" "$EVERYTHING" "$LINKS" > list.$r
    : > c.$r
    APT2OSTREE_LEAN=$lean execs ex.$r.1 "$APT2OSTREE" --repo $r unpack-deb --ref a "$EVERYTHING" >> c.$r 2> /dev/null
    APT2OSTREE_LEAN=$lean execs ex.$r.2 "$APT2OSTREE" --repo $r unpack-deb --ref b "$FIX/libsame1.deb" >> c.$r 2> /dev/null
    APT2OSTREE_LEAN=$lean execs ex.$r.3 "$APT2OSTREE" --repo $r unpack-deb --no-merged-usr --batch list.$r >> c.$r 2> /dev/null
    local i
    for i in 1 2 3; do
        if [ "$who" = front ]; then ran_lean ex.$r.$i; else handed_over ex.$r.$i; fi
    done
}

test_expect_success 'the front and the commands module write the same commits and the same objects (bare and bare-user, fsync on and off); ostree fsck passes' '
    for mode in bare bare-user; do
        for fsync in true false; do
            new_repo front.$mode.$fsync $mode
            new_repo full.$mode.$fsync $mode
            if [ $fsync = false ]; then
                ostree --repo=front.$mode.$fsync config set core.fsync false
                ostree --repo=full.$mode.$fsync config set core.fsync false
            fi
            unpack_three front front.$mode.$fsync
            unpack_three full full.$mode.$fsync
            assert_streq "$(wc -l < c.front.$mode.$fsync)" 4
            assert_streq "$(cat c.front.$mode.$fsync)" "$(cat c.full.$mode.$fsync)"
            assert_streq "$(refs_list front.$mode.$fsync)" "$(refs_list full.$mode.$fsync)"
            objects_stat front.$mode.$fsync > stat.front
            objects_stat full.$mode.$fsync > stat.full
            test -s stat.front
            grep -q " -> " stat.front || [ $mode = bare-user ]
            diff -u stat.full stat.front
            ostree fsck --repo=front.$mode.$fsync > fsck.out 2>&1 || { cat fsck.out; false; }
        done
    done
'

# --- what the front hands over, and that the commands module then does it -------

test_expect_success 'an archive repository is handed over, and the ref gets the commit the commands module makes' '
    new_repo repo archive
    assert_file_has_content repo/config "^mode=archive"
    execs ex "$APT2OSTREE" --repo repo unpack-deb --ref links "$LINKS" > out 2> /dev/null
    handed_over ex
    assert_streq "$(cat out)" "$LINKS_COMMIT"
    assert_streq "$(ref_commit repo links)" "$LINKS_COMMIT"
'

test_expect_success 'a config key the front does not know (core.auto-update-summary) is handed over, and honoured' '
    new_repo repo bare
    ostree --repo=repo config set core.auto-update-summary true
    execs ex "$APT2OSTREE" --repo repo unpack-deb --ref links "$LINKS" > out 2> /dev/null
    handed_over ex
    assert_streq "$(ref_commit repo links)" "$LINKS_COMMIT"
    assert_has_file repo/summary
'

test_expect_success 'a ref that is an alias is handed over; the commands module makes it a ref of its own' '
    new_repo repo bare
    execs ex0 "$APT2OSTREE" --repo repo unpack-deb --ref base "$EVERYTHING" > base 2> /dev/null
    ran_lean ex0
    ostree --repo=repo refs --create=al --alias base
    test -L repo/refs/heads/al
    execs ex "$APT2OSTREE" --repo repo unpack-deb --ref al "$LINKS" > out 2> /dev/null
    handed_over ex
    test -f repo/refs/heads/al
    test ! -L repo/refs/heads/al
    assert_streq "$(ref_commit repo al)" "$LINKS_COMMIT"
    assert_streq "$(ref_commit repo base)" "$(cat base)"
'

test_expect_success 'a URL not in the --cache directory is handed over (the commands module downloads it); once cached, it is the front'"'"'s' '
    new_repo repo bare
    url="file://$LINKS"
    execs ex1 "$APT2OSTREE" --repo repo unpack-deb --cache cache --sha256 "$LINKS_SHA" --ref u1 "$url" > out1 2> /dev/null
    handed_over ex1
    assert_streq "$(ref_commit repo u1)" "$LINKS_COMMIT"
    cmp "cache/$LINKS_SHA" "$LINKS"
    execs ex2 "$APT2OSTREE" --repo repo unpack-deb --cache cache --sha256 "$LINKS_SHA" --ref u2 "$url" > out2 2> /dev/null
    ran_lean ex2
    assert_streq "$(cat out2)" "$LINKS_COMMIT"
    assert_streq "$(ref_commit repo u2)" "$LINKS_COMMIT"
    # Without --sha256 the front cannot name the cache entry: handed over.
    execs ex3 "$APT2OSTREE" --repo repo unpack-deb --cache cache --ref u3 "$url" > out3 2> /dev/null
    handed_over ex3
    assert_streq "$(ref_commit repo u3)" "$LINKS_COMMIT"
    # A ref that holds the package needs no download: the front answers.
    rm "cache/$LINKS_SHA"
    execs ex4 "$APT2OSTREE" --repo repo unpack-deb --cache cache --sha256 "$LINKS_SHA" --ref u2 "$url" > out4 2> /dev/null
    ran_lean ex4
    assert_streq "$(cat out4)" "$LINKS_COMMIT"
    assert_not_has_file "cache/$LINKS_SHA"
'

test_expect_success '--help, --version, init, another command and a usage error are handed over' '
    execs ex1 "$APT2OSTREE" --help > help 2>&1
    handed_over ex1
    assert_file_has_content help "^Usage: apt2ostree"
    execs ex2 "$APT2OSTREE" unpack-deb --help > help2 2>&1
    handed_over ex2
    assert_file_has_content help2 "\-\-batch"
    execs ex3 "$APT2OSTREE" --version > version 2>&1
    handed_over ex3
    assert_file_has_content version "^apt2ostree "
    execs ex4 "$APT2OSTREE" --repo repo init > /dev/null 2>&1
    handed_over ex4
    assert_file_has_content repo/config "^mode=bare"
    execs ex5 "$APT2OSTREE" --repo repo unpack-deb --ref links "$LINKS" > /dev/null 2>&1
    ran_lean ex5
    execs ex6 "$APT2OSTREE" --repo repo mkdir --ref out links /new-dir > /dev/null 2>&1
    handed_over ex6
    ostree --repo=repo ls out /new-dir > /dev/null
    set +e
    execs ex7 "$APT2OSTREE" --repo repo unpack-deb --ref x 2> err; rc=$?
    set -e
    handed_over ex7
    assert_streq "$rc" 2
    assert_one_line err
    assert_file_has_content err "expected one FILE.deb or URL"
'

# hold_lock REPO: take an exclusive open-file-description lock on REPO/.lock
# (as a prune does) in a process of its own, until release_lock.
hold_lock () {
    rm -f locked
    python3 - "$1/.lock" > lock.log 2>&1 <<'EOF' &
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
# struct flock on x86_64: short l_type, short l_whence, off_t l_start,
# off_t l_len, pid_t l_pid (0 for OFD locks), padding.
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
open("locked", "w").close()
while True:
    time.sleep(60)
EOF
    LOCK_PID=$!
    trap 'kill $LOCK_PID 2> /dev/null || true' EXIT
    local i
    for i in $(seq 400); do
        [ -e locked ] && return 0
        kill -0 $LOCK_PID 2> /dev/null || break
        sleep 0.05
    done
    fail "the lock was not taken"
}
release_lock () { kill $LOCK_PID; wait $LOCK_PID 2> /dev/null || true; }

test_expect_success 'the repository lock held exclusively is handed over: the commands module times out on it (one line, no ref), or waits for it' '
    new_repo repo bare
    # (lock-timeout-secs is a key the front knows: it still runs alone.)
    ostree --repo=repo config set core.lock-timeout-secs 1
    execs ex0 "$APT2OSTREE" --repo repo unpack-deb --ref first "$EVERYTHING" > /dev/null 2>&1
    ran_lean ex0
    hold_lock repo
    set +e
    execs ex1 "$APT2OSTREE" --repo repo unpack-deb --ref links "$LINKS" > out 2> err; rc=$?
    set -e
    release_lock
    handed_over ex1
    assert_streq "$rc" 1
    assert_one_line err
    assert_file_has_content err "^apt2ostree unpack-deb: error: .*[Ll]ock"
    assert_not_has_file repo/refs/heads/links
    [ ! -s out ]
    # With the default timeout the commands module waits until the lock is freed.
    ostree --repo=repo config unset core.lock-timeout-secs
    hold_lock repo
    "$APT2OSTREE" --repo repo unpack-deb --ref links "$LINKS" > out 2> err &
    pid=$!
    for i in $(seq 400); do
        grep -q -F "$MODULE" /proc/$pid/maps 2> /dev/null && break
        sleep 0.05
    done
    loaded=$(grep -c -F "$MODULE" /proc/$pid/maps 2> /dev/null || true)
    release_lock
    rc=0; wait $pid || rc=$?
    [ "$loaded" -gt 0 ]
    assert_streq "$rc" 0
    assert_streq "$(cat out)" "$LINKS_COMMIT"
    assert_streq "$(ref_commit repo links)" "$LINKS_COMMIT"
'

test_expect_success 'APT2OSTREE_LEAN=0 hands over what the front would run itself' '
    new_repo repo bare
    APT2OSTREE_LEAN=0 execs ex "$APT2OSTREE" --repo repo unpack-deb --ref links "$LINKS" > out 2> /dev/null
    handed_over ex
    assert_streq "$(ref_commit repo links)" "$LINKS_COMMIT"
    APT2OSTREE_LEAN=1 execs ex "$APT2OSTREE" --repo repo unpack-deb --ref links2 "$LINKS" > out 2> /dev/null
    ran_lean ex
'

# --- errors, and what is left behind ----------------------------------------

test_expect_success 'a corrupt .deb fails in the front with the commands module'"'"'s one-line message and exit status, and no ref' '
    new_repo front bare
    new_repo full bare
    tmp_contents front > tmp.before
    set +e
    execs ex "$APT2OSTREE" --repo front unpack-deb --ref broken "$FIX/cut.deb" > out.front 2> err.front
    rc_front=$?
    APT2OSTREE_LEAN=0 "$APT2OSTREE" --repo full unpack-deb --ref broken "$FIX/cut.deb" > out.full 2> err.full
    rc_full=$?
    set -e
    ran_lean ex
    assert_streq "$rc_front" 1
    assert_streq "$rc_front" "$rc_full"
    assert_one_line err.front
    assert_file_has_content err.front "^apt2ostree unpack-deb: error: .*cut.deb: "
    assert_streq "$(cat err.front)" "$(cat err.full)"
    [ ! -s out.front ]
    [ ! -s out.full ]
    assert_not_has_file front/refs/heads/broken
    [ -z "$(ls front/refs/heads)" ]
    assert_streq "$(tmp_contents front)" "$(cat tmp.before)"
'

test_expect_success 'the front leaves nothing behind in tmp/ but its own staging directory, empty (bare and bare-user, fsync on and off)' '
    for mode in bare bare-user; do
        for fsync in true false; do
            r=repo.$mode.$fsync
            new_repo $r $mode
            [ $fsync = true ] || ostree --repo=$r config set core.fsync false
            tmp_contents $r > before
            execs ex "$APT2OSTREE" --repo $r unpack-deb --ref links "$LINKS" > /dev/null 2>&1
            ran_lean ex
            execs ex "$APT2OSTREE" --repo $r unpack-deb --ref everything "$EVERYTHING" > /dev/null 2>&1
            ran_lean ex
            tmp_contents $r > after
            assert_not_file_has_content after "staging-"
            assert_not_file_has_content after "apt2ostree-"
            diff -u before after
            assert_streq "$(ref_commit $r links)" "$LINKS_COMMIT"
            [ $mode = bare-user ] || [ -n "$(find $r/objects -type l)" ]
        done
    done
'

test_expect_success 'a --batch whose second package fails leaves nothing in tmp/ (its first one'"'"'s symlinks waited there)' '
    new_repo repo bare
    printf "a %s\nb %s\n" "$LINKS" "$FIX/cut.deb" > list
    execs ex "$APT2OSTREE" --repo repo unpack-deb --batch list > /dev/null 2>&1 && false
    ran_lean ex
    tmp_contents repo > after
    assert_not_file_has_content after "apt2ostree-"
    assert_not_has_file repo/refs/heads/a
'

test_expect_success 'a --batch the front must hand over for its second package is handed over before anything is written' '
    new_repo repo bare
    ostree --repo=repo config set core.fsync false
    printf "a %s\nb file://%s %s\n" "$LINKS" "$EVERYTHING" "$(sha256sum < "$EVERYTHING" | cut -d" " -f1)" > list
    strace -f -qq -o st -e trace=execve,linkat,renameat,symlinkat,openat "$APT2OSTREE" --repo repo \
        unpack-deb --cache cache --batch list > /dev/null 2>&1
    # (up to the loading of the commands module: no object made, linked or renamed)
    sed -n "/openat([^\"]*\"[^\"]*apt2ostree-commands.so\"/q;p" st > before-exec
    test "$(wc -l < before-exec)" -lt "$(wc -l < st)"
    assert_not_file_has_content before-exec "O_TMPFILE"
    assert_not_file_has_content before-exec "^[0-9]* *\(linkat\|renameat\|symlinkat\)("
    assert_streq "$(ref_commit repo a)" "$LINKS_COMMIT"
    tmp_contents repo > after
    assert_not_file_has_content after "apt2ostree-"
'

test_expect_success 'a --batch list on standard input or a pipe is handed over unread, so the commands module reads it whole' '
    new_repo repo bare
    sha=$(sha256sum < "$EVERYTHING" | cut -d" " -f1)
    # (the second line needs a download: the commands module must see both)
    printf "a %s\nb file://%s %s\n" "$LINKS" "$EVERYTHING" "$sha" > list
    execs ex "$APT2OSTREE" --repo repo unpack-deb --cache cache --batch - < list > out 2> err
    handed_over ex
    assert_streq "$(wc -l < out)" 2
    assert_streq "$(ref_commit repo a)" "$LINKS_COMMIT"
    assert_has_file repo/refs/heads/b
    new_repo repo2 bare
    execs ex "$APT2OSTREE" --repo repo2 unpack-deb --cache cache2 --batch <(cat list) > out 2> err
    handed_over ex
    assert_streq "$(ref_commit repo2 a)" "$LINKS_COMMIT"
    assert_streq "$(ref_commit repo2 b)" "$(ref_commit repo b)"
'

# --- the Ninja rules run the front ------------------------------------------

test_expect_success '`apt2ostree ninja` (run by the commands module) writes rules that run the front, not apt2ostree-commands.so' '
    cp "$TOP_SRCDIR/lockfiles/trixie-minbase-amd64/packages.lock.json" one.lock.json
    execs ex "$APT2OSTREE" ninja one.lock.json -o build/one.ninja --builddir build > /dev/null 2>&1
    handed_over ex
    assert_streq "$(sed -n "s/^a2o = //p" build/one.ninja)" "$FRONT"
    [ "$(grep -c "apt2ostree-commands" build/one.ninja)" = 0 ] || { grep -n "apt2ostree-commands" build/one.ninja; false; }
    assert_file_has_content build/one.ninja "command = \$a2o --repo \$repo_arg unpack-deb "
    assert_file_has_content build/one.ninja "command = \$a2o ninja one.lock.json"
'

test_done
