#!/bin/bash
# Nothing leaks when a run is killed: a killed mod or configure leaves its
# scratch tree (a hardlinked checkout in REPO/tmp/mod-XXXXXX), and the next
# run on that repository removes it, but never one a live run still uses; a
# killed or interrupted "apt2ostree build" ends its ninja, every step and
# every step's sandbox (no process, no mount left), and the next build
# succeeds.  Hermetic: the image is real Debian bookworm .debs served on
# 127.0.0.1, and stage 2 is held in a configure hook that sleeps.
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/librepo.sh"
. "$TOP_SRCDIR/tests/libdeb.sh"
. "$TOP_SRCDIR/tests/libbuildtest.sh"
. "$TOP_SRCDIR/tests/mod-lib.sh"

[ "$(id -u)" = 0 ] || skip_all "stage 2 runs maintainer scripts as root in bubblewrap; run as root"
command -v bwrap > /dev/null || skip_all "bubblewrap is not installed (apt-get install bubblewrap)"
command -v ninja > /dev/null || skip_all "ninja is not installed"

# A number no other process has in its command line: each run of this file
# marks the processes, paths and mounts it makes with it.
MARK=$(date +%s%N)$$

# --- waiting and looking, bounded ---

# marked PATTERN: the pids of the processes whose command line matches
# PATTERN (an extended regular expression), one a line.
marked () { pgrep -f -- "$1" || true; }

# mounted TEXT: the processes that see a mount whose line names TEXT.
mounted () { grep -l -F -- "$1" /proc/[0-9]*/mountinfo 2> /dev/null || true; }

# wait_until SECONDS COMMAND…: poll COMMAND until it succeeds, or fail
# after SECONDS (a bound for a stuck run, not a measurement).
wait_until () {
    local limit=$(( $1 * 10 )) i=0; shift
    until "$@"; do
        i=$((i + 1))
        [ $i -le $limit ] || return 1
        sleep 0.1
    done
}

sleeping () { [ -n "$(marked "^sleep 300\.$1\$")" ]; }

nothing_left () { [ -z "$(marked "$1")" ] && [ -z "$(mounted "$2")" ]; }

# assert_nothing_left PATTERN [PATH]: within a few seconds no process
# matches PATTERN and no mount names PATH (default: PATTERN), in any mount
# namespace of any process.
assert_nothing_left () {
    wait_until 10 nothing_left "$1" "${2:-$1}" && return 0
    ps -o pid,pgid,args -p "$(marked "$1" | paste -sd, -)" >&2 || true
    mounted "${2:-$1}" >&2
    fail "processes or mounts of the killed run are left ($1)"
}

# end_marked TEXT: the test's own cleanup, whatever it proved: kill (by
# pid) every process left that names TEXT, so a failure never hangs.
end_marked () {
    local pid
    for pid in $(marked "$1"); do kill -9 "$pid" 2> /dev/null || true; done
}

# scratch_trees REPO: the scratch directories in REPO/tmp, one a line.
scratch_trees () { ls -d "$1"/tmp/mod-* 2> /dev/null || true; }

# --- mod ---

R="$SCRATCH/repo-$MARK"
setup_base_repo "$R" || { echo "Bail out! cannot build the base tree"; exit 1; }
# A tree with directories nobody may write or search: its checkout must
# still go.
a2o --repo "$R" mod --ref ro base --chroot -- sh -c \
    'mkdir -p /ro/sub && echo x > /ro/sub/f && chmod 500 /ro/sub && chmod 0 /ro' > /dev/null

# start_mod REPO N [RUNAS…]: mod over "ro" sleeping as "sleep 300.N", in the
# background; sets MOD_PID (apt2ostree's) once the command runs.
start_mod () {
    local repo=$1 n=$2; shift 2
    "$@" "$APT2OSTREE" --repo "$repo" mod --ref slept ro -- sleep "300.$n" > /dev/null 2>&1 &
    wait_until 30 sleeping "$n" || fail "mod did not start its command"
    MOD_PID=$(pgrep -f -- "--repo $repo mod --ref slept ro -- sleep 300\.$n\$")
    [ -n "$MOD_PID" ] || fail "no mod process"
}

test_expect_success 'mod killed by SIGKILL ends its sandbox, leaves its scratch tree, and the next mod removes it' '
    n=${MARK}1
    trap "end_marked \"300\\.$n|$R/tmp/\"" EXIT
    start_mod "$R" "$n"
    kill -9 $MOD_PID
    assert_nothing_left "300\.$n|$R/tmp/" "$R/tmp/"
    left=$(scratch_trees "$R")
    [ -n "$left" ] || fail "no scratch tree left: nothing was proved"
    test -d "$left/lower/etc" || fail "$left holds no checkout"
    a2o --repo "$R" mod --ref after ro -- true > /dev/null
    assert_streq "$(scratch_trees "$R")" ""
'

test_expect_success 'a concurrent mod removes a killed run'"'"'s scratch tree but not the one a live run uses' '
    n=${MARK}2
    trap "end_marked \"300\\.$n|$R/tmp/\"" EXIT
    start_mod "$R" "$n"
    dead=$(scratch_trees "$R")
    kill -9 $MOD_PID
    assert_nothing_left "300\.$n|$R/tmp/" "$R/tmp/"
    test -d "$dead/lower/etc" || fail "no scratch tree left by the killed run"
    start_mod "$R" "$n"
    live=$(scratch_trees "$R" | grep -v -x -F "$dead")
    [ -n "$live" ] || fail "the live mod has no scratch tree"
    a2o --repo "$R" mod --ref beside ro -- true > /dev/null
    assert_streq "$(scratch_trees "$R")" "$live"
    test -d "$live/lower/etc" || fail "the live run'"'"'s checkout was touched"
    kill -9 $MOD_PID
    assert_nothing_left "300\.$n|$R/tmp/" "$R/tmp/"
    a2o --repo "$R" mod --ref after ro -- true > /dev/null
    assert_streq "$(scratch_trees "$R")" ""
'

test_expect_success 'a scratch tree kept by --keep-on-failure is left to the user' '
    expect_failure err a2o --repo "$R" mod --ref kept ro --keep-on-failure -- false
    kept=$(sed -n "s/.*scratch kept in \([^ ]*\) .*/\1/p" err)
    test -d "$kept/lower" || fail "no scratch kept"
    a2o --repo "$R" mod --ref after2 ro -- true > /dev/null
    test -d "$kept/lower/etc" || fail "the kept scratch tree was removed"
    chmod -R u+rwx "$kept/work" 2>/dev/null || true
    rm -rf "$kept"
'

# The same as a normal user: a bare-user repository, a user namespace and
# fakeroot; the leftover holds overlayfs' work directory (mode 0) and the
# checkout's read-only directories, owned by that user.
if command -v setpriv > /dev/null && as_nobody unshare --user --map-root-user true 2> /dev/null \
   && as_nobody test -x "$APT2OSTREE"; then
test_expect_success 'unprivileged, a killed mod'"'"'s scratch tree is removed by the next mod' '
    n=${MARK}3
    trap "end_marked \"300\\.$n|$SCRATCH/user-$MARK/repo/tmp/\"" EXIT
    chmod 755 "$SCRATCH"
    U="$SCRATCH/user-$MARK"
    mkdir -p "$U" && chown 65534:65534 "$U"
    as_nobody "$APT2OSTREE" --repo "$U/repo" init
    as_nobody "$APT2OSTREE" --repo "$U/repo" import --ref base --tar "$SCRATCH/base.tar" > /dev/null
    as_nobody "$APT2OSTREE" --repo "$U/repo" mod --ref ro base --chroot -- sh -c \
        "mkdir -p /ro/sub && echo x > /ro/sub/f && chmod 500 /ro/sub && chmod 0 /ro" > /dev/null
    start_mod "$U/repo" "$n" as_nobody
    kill -9 $MOD_PID
    assert_nothing_left "300\.$n|$U/repo/tmp/" "$U/repo/tmp/"
    left=$(scratch_trees "$U/repo")
    [ -n "$left" ] || fail "no scratch tree left: nothing was proved"
    as_nobody "$APT2OSTREE" --repo "$U/repo" mod --ref after ro -- true > /dev/null
    assert_streq "$(scratch_trees "$U/repo")" ""
'
else
test_skip 'unprivileged, a killed mod'"'"'s scratch tree is removed by the next mod' \
    "no setpriv, no unprivileged user namespaces, or uid 65534 cannot run $APT2OSTREE"
fi

# --- configure and build ---

base_archive
repo_publish "$D" bookworm amd64 archive

serve_work_dir "$SRV"
base_lock img
# Every process of these builds names the build directory, and every mount
# its path.
B="b-$MARK"
BR="$W/$B/ostree"

# start_build N [SETSID]: "apt2ostree build" in the background, held in
# stage 2 by a hook that sleeps as "sleep 300.N"; sets BUILD_PID once the
# hook runs.  With SETSID, the build leads a session (and process group) of
# its own, as under a terminal or a CI runner.
start_build () {
    local n=$1
    ${2:+setsid} "$APT2OSTREE" build img.lock.json --builddir "$B" \
        --configure-hook "sleep 300.$n" > "build-$n.log" 2>&1 &
    BUILD_PID=$!
    wait_until 300 sleeping "$n" || { cat "build-$n.log" >&2; fail "the build did not reach stage 2"; }
}

test_expect_success 'SIGKILL of apt2ostree build in stage 2 leaves no process and no mount behind' '
    cd "$W"
    n=${MARK}4
    trap "end_marked $B" EXIT
    start_build "$n"
    kill -9 $BUILD_PID
    assert_nothing_left "$B"
'

# SIGTERM (a CI runner's stop), SIGINT (^C), SIGHUP (a closed terminal).
i=0
for sig in TERM INT HUP; do
i=$((i + 1))
test_expect_success "SIG$sig to apt2ostree build's process group in stage 2 stops ninja before build exits, and leaves no process and no mount" '
    cd "$W"
    n=${MARK}5'$i'
    trap "end_marked $B" EXIT
    start_build "$n" setsid
    kill -'$sig' -- -$BUILD_PID
    status=0; wait $BUILD_PID || status=$?
    [ -z "$(marked "ninja -f $B/")" ] || fail "build exited before its ninja"
    [ $status -ne 0 ] || fail "the interrupted build exited 0"
    assert_file_has_content "build-$n.log" "interrupted by signal [0-9]*.*ninja and its steps were stopped"
    assert_nothing_left "$B"
'
done

test_expect_success 'SIGKILL of apt2ostree build'"'"'s process group in stage 2 leaves no process and no mount behind' '
    cd "$W"
    n=${MARK}6
    trap "end_marked $B" EXIT
    start_build "$n" setsid
    kill -KILL -- -$BUILD_PID
    assert_nothing_left "$B"
'

test_expect_success 'configure killed by SIGKILL ends its sandbox, and the next build removes the scratch tree it left' '
    cd "$W"
    n=${MARK}7
    trap "end_marked $B" EXIT
    "$APT2OSTREE" --repo "$BR" configure --ref killed --configure-hook "sleep 300.$n" stage1/img \
        > /dev/null 2>&1 &
    pid=$!
    wait_until 60 sleeping "$n" || fail "configure did not reach its hook"
    kill -9 $pid
    assert_nothing_left "$B"
    left=$(scratch_trees "$BR")
    [ -n "$left" ] || fail "no scratch tree left by the killed configure: nothing to prove"
    for dir in $left; do test -f "$dir/lower/var/lib/dpkg/status" || fail "$dir holds no image"; done
    a2o build img.lock.json --builddir "$B" > build.out
    assert_file_has_content build.out "^image img: commit "
    assert_streq "$(scratch_trees "$BR")" ""
'

test_done
