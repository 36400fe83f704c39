#!/bin/bash
# apt2ostree run: a shell or a command inside an image, in the sandbox
# stage 2 uses (overlay over a hardlink checkout, /dev, /proc, /tmp from the
# sandbox, no network unless --network); nothing is committed unless
# --commit.  As root (bare repository).
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/mod-lib.sh"

[ "$(id -u)" = 0 ] || skip_all "run as root (a bare repository); the unprivileged sandbox is mod's tests'"
command -v bwrap > /dev/null || skip_all "bubblewrap is not installed (apt-get install bubblewrap)"

R="$SCRATCH/repo"
setup_base_repo "$R" || { echo "Bail out! cannot build the base tree"; exit 1; }
r () { a2o --repo "$R" run "$@"; }

test_expect_success 'run IMAGE -- COMMAND runs it inside the image with the caller'"'"'s output; what it changes is not committed' '
    (cd "$R" && find refs -type f | sort | xargs cat) > refs-before
    r base -- sh -c "cat /etc/hello; echo changed > /etc/hello; echo new > /new; echo to-stderr >&2" > out 2> err
    assert_streq "$(cat out)" "hello"
    assert_streq "$(cat err)" "to-stderr"
    (cd "$R" && find refs -type f | sort | xargs cat) > refs-after
    diff -u refs-before refs-after
    assert_streq "$(ostree --repo="$R" cat base /etc/hello)" "hello"
    no_scratch_left "$R"
'

test_expect_success 'with no command it is a shell reading the caller'"'"'s standard input' '
    printf "echo from-stdin; cat /etc/motd\n" | r base > out
    assert_streq "$(cat out)" "$(printf "from-stdin\nmotd")"
'

test_expect_success '/dev, /proc and /tmp are the sandbox'"'"'s, and there is no network' '
    r base -- sh -c "cat /proc/mounts; : > /dev/null; echo x > /tmp/x; ls -l /proc/self/ns/net" > out
    grep -q " /tmp tmpfs " out || fail "/tmp is not a tmpfs"
    grep -q " /proc proc " out || fail "no /proc"
    grep -q " /dev " out || fail "no /dev"
    inside=$(sed -n "s/.*net:\[\([0-9]*\)\].*/\1/p" out)
    host=$(readlink /proc/self/ns/net | sed "s/.*\[\([0-9]*\)\]/\1/")
    [ -n "$inside" ] && [ "$inside" != "$host" ] || fail "the network namespace is the host'"'"'s ($inside)"
    r base --network -- sh -c "ls -l /proc/self/ns/net" > out
    assert_file_has_content out "net:\[$host\]"
'

test_expect_success '--bind SRC:DST shows a host directory, writable, and never committed' '
    mkdir host-dir
    echo from-host > host-dir/file
    r base --bind "$PWD/host-dir:/mnt" --commit bound -- sh -c "cat /mnt/file; echo back > /mnt/back" > out
    assert_streq "$(cat out)" "from-host"
    assert_streq "$(cat host-dir/back)" "back"
    ! ostree --repo="$R" ls bound /mnt/file 2> /dev/null || fail "the bind was committed"
'

test_expect_success '--commit REF commits what the command changed' '
    r base --commit edited -- sh -c "echo new > /new" 2> err
    assert_has_file "$R/refs/heads/edited"
    assert_file_has_content err "edited: commit $(cat "$R/refs/heads/edited")"
    assert_streq "$(ostree --repo="$R" cat edited /new)" "new"
'

test_expect_success 'a failing command is one line with its status; nothing committed, no ref written' '
    expect_failure err r base --commit failed -- sh -c "echo x > /new; exit 3"
    assert_one_line err
    assert_file_has_content err "exited with status 3 over base; ref failed not written"
    assert_not_has_file "$R/refs/heads/failed"
    expect_failure err r base --bind nocolon
    assert_file_has_content err "\-\-bind nocolon: expected SRC:DST"
    expect_failure err r missing-image -- true
    assert_file_has_content err "missing-image"
'

test_done
