#!/bin/bash
# test-sandbox-limits.sh again as a normal user
# (uid/gid 65534): a user namespace, fakeroot, and limits held by
# rlimits where no cgroup can be made.
. "$TOP_SRCDIR/tests/libtest.sh"

again_as_nobody test-sandbox-limits.sh
