#!/bin/bash
# Who mounts the overlay a command runs on (issue #25).  As root with
# bubblewrap 0.11 or later, bubblewrap does (--overlay-src/--overlay); with
# an older bubblewrap, and always without root, apt2ostree mounts it first
# and binds the merged directory: fakeroot's daemon is seeded by the
# overlay's device number, which is known only once the overlay is mounted
# and before the command starts.  A bookworm host (bubblewrap 0.8) runs one
# side as root, a trixie host (0.11 or later) the other; on both, a
# directory the command replaces is replaced in OUT (bubblewrap's own
# overlay marks it opaque with a user.* attribute, apt2ostree's as root
# with a trusted.* one).
. "$TOP_SRCDIR/tests/libtest.sh"
. "$TOP_SRCDIR/tests/mod-lib.sh"

[ "$(id -u)" = 0 ] || skip_all "not root: the root side needs root, and test-mod.sh covers the unprivileged one"
command -v bwrap > /dev/null || skip_all "bubblewrap is not installed (apt-get install bubblewrap)"
minor=$(bwrap --version | sed -n 's/^bubblewrap 0\.\([0-9]*\).*/\1/p')
[ -n "$minor" ] || skip_all "\"bwrap --version\" says \"$(bwrap --version)\", not bubblewrap 0.N"
say "bubblewrap 0.$minor"

make_base_tar "$SCRATCH/base.tar" || { echo "Bail out! cannot build the base tree"; exit 1; }
chmod 755 "$SCRATCH" && chmod 644 "$SCRATCH/base.tar"

# The command: note what the sandbox's / is, and replace a directory.
PROBE='cat /proc/self/mountinfo > /mountinfo; rm -r /data/dir; mkdir /data/dir; echo new > /data/dir/new'

# run_probe REPO: a repository (bare as root, bare-user otherwise) with the
# base tree, and ref "t" made by PROBE over it.  Arguments, not the
# environment, carry the paths: "as_nobody" runs it as another user.
run_probe () {
    "$APT2OSTREE" --repo "$1" init \
        && "$APT2OSTREE" --repo "$1" import --ref base --tar "$SCRATCH/base.tar" > /dev/null \
        && "$APT2OSTREE" --repo "$1" mod --ref t base --chroot -- sh -c "$PROBE" > /dev/null
}

# mounted_by REPO: who mounted the overlay "t" ran on.  apt2ostree's own
# mount names the checkout in its scratch directory (REPO/tmp/mod-*/lower)
# as the lower layer; bubblewrap's names it otherwise (/proc/self/fd/N).
mounted_by () {
    ostree --repo="$1" cat t /mountinfo | awk '$5 == "/"' > root-mount
    if ! grep -q " - overlay " root-mount; then
        echo "no overlay: $(cat root-mount)"
    elif grep -q "lowerdir=[^,]*/tmp/mod-[^,/]*/lower," root-mount; then
        echo apt2ostree
    else
        echo bubblewrap
    fi
}

# replaced_whole REPO: /data/dir of "t" holds only what the command made.
replaced_whole () {
    assert_streq "$(ostree --repo="$1" ls t /data/dir | awk '{ print $NF }' | tr '\n' ' ')" \
        "/data/dir /data/dir/new "
}

if [ "$minor" -ge 11 ]; then expected=bubblewrap; else expected=apt2ostree; fi
test_expect_success "as root, bubblewrap 0.11 or later mounts the overlay itself and an older one is given one apt2ostree mounted (here: $expected)" '
    run_probe "$PWD/repo"
    assert_streq "$(mounted_by repo)" "$expected"
    replaced_whole repo
'

if ! command -v setpriv > /dev/null; then
    test_skip "without root, apt2ostree mounts the overlay itself" "setpriv (util-linux) is needed to drop to another user"
elif ! as_nobody unshare --user --map-root-user true 2> /dev/null; then
    test_skip "without root, apt2ostree mounts the overlay itself" "unprivileged user namespaces are not available"
elif ! as_nobody test -x "$APT2OSTREE"; then
    test_skip "without root, apt2ostree mounts the overlay itself" "uid 65534 cannot run $APT2OSTREE"
else
    test_expect_success "without root, apt2ostree mounts the overlay itself whatever bubblewrap's version, so that fakeroot is seeded with its device number" '
        mkdir home && chown 65534:65534 home && chmod 755 .
        as_nobody env HOME="$PWD/home" TMPDIR="$PWD/home" APT2OSTREE="$APT2OSTREE" \
            PROBE="$PROBE" SCRATCH="$SCRATCH" bash -c "$(declare -f run_probe); run_probe \"\$1\"" \
            _ "$PWD/home/repo"
        assert_streq "$(mounted_by home/repo)" apt2ostree
        replaced_whole home/repo
    '
fi

test_done
