#!/bin/bash
# test-sandbox-limits.sh again as a normal user
# (uid/gid 65534): a user namespace, fakeroot, and limits held by
# rlimits where no cgroup can be made.
. "$TOP_SRCDIR/tests/libtest.sh"

[ "$(id -u)" = 0 ] || skip_all "not root: test-sandbox-limits.sh itself already runs unprivileged here"
command -v setpriv > /dev/null || skip_all "setpriv (util-linux) is needed to drop to another user"

as_nobody unshare --user --map-root-user true 2> /dev/null \
    || skip_all "unprivileged user namespaces are not available (kernel.unprivileged_userns_clone, user.max_user_namespaces)"
as_nobody test -x "$APT2OSTREE" -a -r "$TOP_SRCDIR/tests/test-sandbox-limits.sh" \
    || skip_all "uid 65534 cannot read the build tree ($APT2OSTREE)"

home="$SCRATCH/nobody"
mkdir -p "$home" && chown 65534:65534 "$home"
chmod 755 "$SCRATCH"
cd "$home"
as_nobody env HOME="$home" TMPDIR="$home" APT2OSTREE="$APT2OSTREE" TOP_SRCDIR="$TOP_SRCDIR" \
    PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" bash "$TOP_SRCDIR/tests/test-sandbox-limits.sh"
